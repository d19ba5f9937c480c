package opt

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	m "github.com/axle-ml/axle/hlo/match"
)

// simplifyRules is the rule table, in the order rules are tried.
func simplifyRules() []rule {
	var all []rule
	for _, t := range [][]rule{arithRules, shapeRules, reduceRules} {
		all = append(all, t...)
	}
	return all
}

func ops(o ...hlo.Opcode) []hlo.Opcode { return o }

// sameType reports whether x can stand in for in: same element type and
// dimensions.
func sameType(x, in *hlo.Instruction) bool {
	return x != nil && x.Shape.DType == in.Shape.DType && x.Shape.SameDims(in.Shape)
}

// identityOperand returns x when in is `op(x, c)` (either order if
// anyOrder) with c an effective scalar constant equal to v.
func identityOperand(in *hlo.Instruction, v float64, anyOrder bool) *hlo.Instruction {
	var x *hlo.Instruction
	p := m.Op(in.Opcode, m.Any().Capture(&x), m.ScalarConstant(v))
	if anyOrder {
		p = p.AnyOrder()
	}
	if p.Match(in) && sameType(x, in) {
		return x
	}
	return nil
}

var arithRules = []rule{
	// x+0 = x. For floats this turns -0+0 (= +0) into -0, which XLA
	// accepts too: the two compare equal.
	{"add-zero", ops(hlo.OpAdd), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		return identityOperand(in, 0, true)
	}},
	{"subtract-zero", ops(hlo.OpSubtract), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		return identityOperand(in, 0, false)
	}},
	{"multiply-one", ops(hlo.OpMultiply), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		return identityOperand(in, 1, true)
	}},
	{"divide-one", ops(hlo.OpDivide), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		return identityOperand(in, 1, false)
	}},
	// x*0 = 0 only for integers: for floats NaN*0 and inf*0 are NaN.
	{"multiply-zero-integer", ops(hlo.OpMultiply), func(b *builder, in *hlo.Instruction) *hlo.Instruction {
		if in.Shape.DType.IsInteger() && identityOperand(in, 0, true) != nil {
			return b.splat(in, 0)
		}
		return nil
	}},
	// x-x = 0 only for integers (inf-inf is NaN).
	{"subtract-self-integer", ops(hlo.OpSubtract), func(b *builder, in *hlo.Instruction) *hlo.Instruction {
		if in.Shape.DType.IsInteger() && in.Operands[0] == in.Operands[1] {
			return b.splat(in, 0)
		}
		return nil
	}},
	// max(x,x) = min(x,x) = and(x,x) = or(x,x) = x, NaN included.
	{"idempotent-self", ops(hlo.OpMaximum, hlo.OpMinimum, hlo.OpAnd, hlo.OpOr), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		if in.Operands[0] == in.Operands[1] {
			return in.Operands[0]
		}
		return nil
	}},
	{"double-negate", ops(hlo.OpNegate, hlo.OpNot), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		var x *hlo.Instruction
		if m.Op(in.Opcode, m.Op(in.Opcode, m.Any().Capture(&x))).Match(in) {
			return x
		}
		return nil
	}},
	// x/c = x*(1/c) when c is a power of two, so 1/c is exact.
	{"divide-power-of-two", ops(hlo.OpDivide), func(b *builder, in *hlo.Instruction) *hlo.Instruction {
		c, ok := m.EffectiveScalar(in.Operands[1])
		if !ok || !in.Shape.DType.IsFloat() {
			return nil
		}
		v := c.GetFloat64(0)
		frac, _ := math.Frexp(v)
		if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) || math.Abs(frac) != 0.5 {
			return nil
		}
		if !b.scalarRoundTrips(in.Shape.DType, 1/v) {
			return nil
		}
		return b.add(hlo.OpMultiply, []*hlo.Instruction{in.Operands[0], b.splat(in, 1/v)})
	}},
	{"power-constant", ops(hlo.OpPower), powerConstant},
	{"unary-of-broadcast", unaryElementwise, unaryOfBroadcast},
	// compare(x, x) on integers is decided by the direction alone.
	{"compare-self-integer", ops(hlo.OpCompare), func(b *builder, in *hlo.Instruction) *hlo.Instruction {
		x := in.Operands[0]
		if x != in.Operands[1] || !(x.Shape.DType.IsInteger() || x.Shape.DType.IsPred()) {
			return nil
		}
		dir, _ := in.EnumAttr("direction")
		switch dir {
		case "EQ", "LE", "GE":
			return b.splat(in, 1)
		case "NE", "LT", "GT":
			return b.splat(in, 0)
		}
		return nil
	}},
	{"select-constant-predicate", ops(hlo.OpSelect), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		p, ok := m.EffectiveScalar(in.Operands[0])
		if !ok || !in.Shape.IsArray() {
			return nil
		}
		if p.GetBool(0) {
			return in.Operands[1]
		}
		return in.Operands[2]
	}},
	{"select-same-branches", ops(hlo.OpSelect), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		if in.Operands[1] == in.Operands[2] {
			return in.Operands[1]
		}
		return nil
	}},
}

// unaryElementwise are the elementwise ops of one operand whose result
// has the operand's dimensions (bitcast-convert may change them).
var unaryElementwise = ops(hlo.OpAbs, hlo.OpCbrt, hlo.OpCeil, hlo.OpConvert, hlo.OpCos, hlo.OpErf, hlo.OpExp,
	hlo.OpExpm1, hlo.OpFloor, hlo.OpIsFinite, hlo.OpLog, hlo.OpLog1p, hlo.OpLogistic, hlo.OpNegate, hlo.OpNot,
	hlo.OpRoundNearestAfz, hlo.OpRoundNearestEven, hlo.OpRsqrt, hlo.OpSign, hlo.OpSqrt, hlo.OpTanh)

// unaryOfBroadcast computes a unary op before the broadcast feeding it:
// op(broadcast(x)) = broadcast(op(x)), on x's fewer elements (XLA's
// algebraic simplifier sinks broadcasts the same way). Exporters write
// this all the time — ONNX's Cast of a splat exponent or scale, an f16
// model's constants widened for an op computed in f32 — and once the
// convert is on the scalar, constant folding makes it a constant that
// other rules read (power(x, 2) becomes x·x; the f16 layer norm's
// variance spent 40% of its time in a general power otherwise).
func unaryOfBroadcast(b *builder, in *hlo.Instruction) *hlo.Instruction {
	x := in.Operands[0]
	if x.Opcode != hlo.OpBroadcast || len(x.Operands) != 1 || !in.Shape.IsArray() {
		return nil
	}
	src := x.Operands[0]
	op := b.withShape(in.Opcode, hlo.ArrayShape(in.Shape.DType, src.Shape.Dims...), []*hlo.Instruction{src}, in.Attrs...)
	if op == nil {
		return nil
	}
	return b.broadcast(op, in.Shape.Dims, x.Dimensions())
}

// scalarRoundTrips reports whether v is exactly representable in t.
func (b *builder) scalarRoundTrips(t hlo.DType, v float64) bool {
	l := hlo.NewLiteral(hlo.ScalarShape(t))
	l.SetFloat64(0, v)
	return l.GetFloat64(0) == v
}

// powerConstant: x^0 = 1, x^1 = x, x^2 = x*x, x^-1 = 1/x for floats
// (pow(x, 0) is 1 even for NaN in XLA and C). x^0.5 is not rewritten to
// sqrt: they differ at -0 and -inf.
func powerConstant(b *builder, in *hlo.Instruction) *hlo.Instruction {
	c, ok := m.EffectiveScalar(in.Operands[1])
	x := in.Operands[0]
	if !ok || !in.Shape.DType.IsFloat() || !sameType(x, in) {
		return nil
	}
	switch c.GetFloat64(0) {
	case 0:
		return b.splat(in, 1)
	case 1:
		return x
	case 2:
		return b.add(hlo.OpMultiply, []*hlo.Instruction{x, x})
	case -1:
		return b.add(hlo.OpDivide, []*hlo.Instruction{b.splat(in, 1), x})
	}
	return nil
}
