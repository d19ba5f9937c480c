package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// logicCompare are the ONNX comparisons (numpy broadcasting, bool out).
var logicCompare = map[string]xb.Direction{
	"Equal": xb.EQ, "Less": xb.LT, "Greater": xb.GT, "LessOrEqual": xb.LE, "GreaterOrEqual": xb.GE,
}

func init() {
	for name, dir := range logicCompare {
		op := Op{Name: name, Lower: func(c *Ctx) error {
			x, y := c.Input(0), c.Input(1)
			if x == nil || y == nil {
				return c.Unsupported("%s of non-numeric tensors", c.Node.Op)
			}
			if x.DType() != y.DType() {
				return c.Errorf("input types %s and %s differ", x.DType(), y.DType())
			}
			x, y = elemBroadcast2(c, x, y)
			c.Set(0, xb.Compare(x, y, dir))
			return nil
		}}
		if name == "Equal" {
			op.Host = logicEqualHost
		}
		elemRegister(op)
	}
	logicBinary := map[string]func(x, y *xb.Op) *xb.Op{
		"And": xb.And, "Or": xb.Or, "Xor": xb.Xor,
		"BitwiseAnd": xb.And, "BitwiseOr": xb.Or, "BitwiseXor": xb.Xor,
	}
	for name, f := range logicBinary {
		bitwise := name[0] == 'B'
		elemRegister(Op{Name: name, Lower: func(c *Ctx) error {
			x, y := c.Input(0), c.Input(1)
			if x.DType() != y.DType() {
				return c.Errorf("input types %s and %s differ", x.DType(), y.DType())
			}
			if t := x.DType(); (bitwise && !t.IsInteger()) || (!bitwise && !t.IsPred()) {
				return c.Unsupported("%s of %s", c.Node.Op, t)
			}
			x, y = elemBroadcast2(c, x, y)
			c.Set(0, f(x, y))
			return nil
		}})
	}
	for _, name := range []string{"Not", "BitwiseNot"} {
		bitwise := name[0] == 'B'
		elemRegister(Op{Name: name, Lower: func(c *Ctx) error {
			x := c.Input(0)
			if t := x.DType(); (bitwise && !t.IsInteger()) || (!bitwise && !t.IsPred()) {
				return c.Unsupported("%s of %s", c.Node.Op, t)
			}
			c.Set(0, xb.Not(x))
			return nil
		}})
	}
	elemRegister(Op{Name: "BitShift", Lower: func(c *Ctx) error {
		x, y := c.Input(0), c.Input(1)
		if x.DType() != y.DType() {
			return c.Errorf("input types %s and %s differ", x.DType(), y.DType())
		}
		if !x.DType().IsInteger() {
			return c.Unsupported("BitShift of %s", x.DType())
		}
		x, y = elemBroadcast2(c, x, y)
		switch d := c.Node.Str("direction", ""); d {
		case "LEFT":
			c.Set(0, xb.ShiftLeft(x, y))
		case "RIGHT":
			if x.DType().IsUnsigned() {
				c.Set(0, xb.ShiftRightLogical(x, y))
			} else {
				c.Set(0, xb.ShiftRightArithmetic(x, y))
			}
		default:
			return c.Errorf("direction %q is neither LEFT nor RIGHT", d)
		}
		return nil
	}})
}

// logicEqualHost runs Equal on concrete values: strings here, numbers
// through the lowering on the evaluator.
func logicEqualHost(h *HostCtx) error {
	a, b := h.Tensor(0), h.Tensor(1)
	if a == nil || b == nil {
		return h.Errorf("inputs must be tensors")
	}
	if !a.IsString() && !b.IsString() {
		l := &Lowerer{Opsets: map[string]int{"": h.Opset}, Env: NewEnv(nil)}
		out, err := l.Evaluate(h.Node, []*onnx.Tensor{a, b})
		if err != nil {
			return err
		}
		h.Set(0, onnx.TensorValue(out[0]))
		return nil
	}
	if !a.IsString() || !b.IsString() {
		return h.Errorf("cannot compare a string tensor with a numeric one")
	}
	da, db := a.Dims(), b.Dims()
	out, ok := BroadcastDims(da, db)
	if !ok {
		return h.Errorf("shapes %v and %v do not broadcast", da, db)
	}
	lit := hlo.NewLiteral(hlo.ArrayShape(hlo.Pred, out...))
	res := lit.Data().([]bool)
	ia, ib := logicBroadcastIndex(da, out), logicBroadcastIndex(db, out)
	for i := range res {
		res[i] = a.Strs[ia(i)] == b.Strs[ib(i)]
	}
	h.Set(0, onnx.LiteralValue(lit))
	return nil
}

// logicBroadcastIndex maps a flat index of the broadcast shape out to
// the flat index of an operand of dims in (numpy rules).
func logicBroadcastIndex(in, out []int64) func(int) int {
	r := len(out)
	strides := make([]int64, r) // in's stride per out dim (0 where broadcast)
	s := int64(1)
	for i := len(in) - 1; i >= 0; i-- {
		o := r - len(in) + i
		if in[i] != 1 {
			strides[o] = s
		}
		s *= in[i]
	}
	return func(flat int) int {
		f := int64(flat)
		idx := int64(0)
		for d := r - 1; d >= 0; d-- {
			if out[d] == 0 {
				return 0
			}
			idx += (f % out[d]) * strides[d]
			f /= out[d]
		}
		return int(idx)
	}
}
