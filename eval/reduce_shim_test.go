package eval

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
)

// InstallTestShims fills, for this package's tests only, the dispatch rows
// of the few scalar ops the reducer and comparator computations of the
// conformance cases use, where no real handler is registered yet. It runs
// after every init, so it never races a real registration.
func InstallTestShims() {
	shim := func(op hlo.Opcode, fn handler) {
		if handlers[op] == nil {
			handlers[op] = fn
		}
	}
	shim(hlo.OpCompare, shimCompare)
	shim(hlo.OpSelect, func(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
		out := hlo.NewLiteral(in.Shape)
		for i := 0; i < out.Len(); i++ {
			src := ops[2]
			if ops[0].GetBool(i % ops[0].Len()) {
				src = ops[1]
			}
			setFrom(out, i, src, i)
		}
		return out, nil
	})
	arith := func(fInt func(a, b int64) int64, fFloat func(a, b float64) float64) handler {
		return func(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
			out := hlo.NewLiteral(in.Shape)
			t := in.Shape.DType
			for i := 0; i < out.Len(); i++ {
				b := ops[0]
				if len(ops) > 1 {
					b = ops[1]
				}
				switch {
				case t.IsFloat():
					out.SetFloat64(i, fFloat(ops[0].GetFloat64(i), b.GetFloat64(i)))
				case t.IsUnsigned():
					out.SetUint64(i, uint64(fInt(int64(ops[0].GetUint64(i)), int64(b.GetUint64(i)))))
				default:
					out.SetInt64(i, fInt(ops[0].GetInt64(i), b.GetInt64(i)))
				}
			}
			return out, nil
		}
	}
	shim(hlo.OpAdd, arith(func(a, b int64) int64 { return a + b }, func(a, b float64) float64 { return a + b }))
	shim(hlo.OpSubtract, arith(func(a, b int64) int64 { return a - b }, func(a, b float64) float64 { return a - b }))
	shim(hlo.OpIota, func(_ *Evaluator, in *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
		out := hlo.NewLiteral(in.Shape)
		d, _ := in.Int("iota_dimension")
		st := rowMajorStrides(in.Shape.Dims)
		for i := 0; i < out.Len(); i++ {
			out.SetInt64(i, int64(i/st[d])%in.Shape.Dims[d])
		}
		return out, nil
	})
	shim(hlo.OpBroadcast, func(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
		if ops[0].Len() != 1 {
			return nil, fmt.Errorf("test shim broadcasts scalars only: %w", ErrUnimplemented)
		}
		out := hlo.NewLiteral(in.Shape)
		for i := 0; i < out.Len(); i++ {
			setFrom(out, i, ops[0], 0)
		}
		return out, nil
	})
	shim(hlo.OpMultiply, arith(func(a, b int64) int64 { return a * b }, func(a, b float64) float64 { return a * b }))
	shim(hlo.OpAnd, arith(func(a, b int64) int64 { return a & b }, nil))
	shim(hlo.OpOr, arith(func(a, b int64) int64 { return a | b }, nil))
	shim(hlo.OpMaximum, arith(func(a, b int64) int64 { return max(a, b) }, func(a, b float64) float64 { return applyBinary(hlo.OpMaximum, a, b) }))
	shim(hlo.OpMinimum, arith(func(a, b int64) int64 { return min(a, b) }, func(a, b float64) float64 { return applyBinary(hlo.OpMinimum, a, b) }))
	shim(hlo.OpAbs, arith(func(a, _ int64) int64 { return max(a, -a) }, func(a, _ float64) float64 { return math.Abs(a) }))
}

func shimCompare(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	dir, _ := in.EnumAttr("direction")
	out := hlo.NewLiteral(in.Shape)
	t := ops[0].DType()
	for i := 0; i < out.Len(); i++ {
		var c int // -2 unordered
		total, _ := in.EnumAttr("type")
		switch {
		case t.IsFloat() && total == "TOTALORDER":
			a, b := totalKey(ops[0].GetFloat64(i)), totalKey(ops[1].GetFloat64(i))
			c = map[bool]int{true: -1, false: 0}[a < b] + map[bool]int{true: 1, false: 0}[a > b]
		case t.IsFloat():
			a, b := ops[0].GetFloat64(i), ops[1].GetFloat64(i)
			switch {
			case a < b:
				c = -1
			case a > b:
				c = 1
			case a == b:
				c = 0
			default:
				c = -2
			}
		case t.IsUnsigned() || t.IsPred():
			a, b := ops[0].GetUint64(i), ops[1].GetUint64(i)
			c = map[bool]int{true: -1, false: 0}[a < b] + map[bool]int{true: 1, false: 0}[a > b]
		default:
			a, b := ops[0].GetInt64(i), ops[1].GetInt64(i)
			c = map[bool]int{true: -1, false: 0}[a < b] + map[bool]int{true: 1, false: 0}[a > b]
		}
		var v bool
		switch dir {
		case "EQ":
			v = c == 0
		case "NE":
			v = c != 0
		case "LT":
			v = c == -1
		case "LE":
			v = c == -1 || c == 0
		case "GT":
			v = c == 1
		case "GE":
			v = c == 1 || c == 0
		}
		out.SetBool(i, v)
	}
	return out, nil
}

func totalKey(f float64) uint64 {
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}
