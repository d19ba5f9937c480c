package match

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// Constant matches a constant instruction whose value is known (not
// elided).
func Constant() *Pattern {
	return Op(hlo.OpConstant).Where("a known constant", func(in *hlo.Instruction) bool {
		return in.Literal != nil && !in.Literal.IsElided()
	})
}

// EffectiveScalar returns the single value every element of in equals,
// looking through broadcasts and reshapes of constants (XLA's "effective
// scalar"): a constant scalar, a constant array with all elements equal,
// or a broadcast of one. ok is false otherwise.
func EffectiveScalar(in *hlo.Instruction) (lit *hlo.Literal, ok bool) {
	for in != nil && (in.Opcode == hlo.OpBroadcast || in.Opcode == hlo.OpReshape) && len(in.Operands) == 1 {
		in = in.Operands[0]
	}
	if in == nil || in.Opcode != hlo.OpConstant || in.Literal == nil || in.Literal.IsElided() || !in.Shape.IsArray() {
		return nil, false
	}
	l := in.Literal
	if l.Len() == 0 {
		return nil, false
	}
	for i := 1; i < l.Len(); i++ {
		if l.Bits(i) != l.Bits(0) || (l.DType().IsComplex() && l.GetComplex128(i) != l.GetComplex128(0)) {
			return nil, false
		}
	}
	return l, true
}

// ScalarConstant matches an effective scalar (see EffectiveScalar) equal
// to v: for floats by value (so -0 matches 0, and NaN never matches),
// for integers and pred exactly, for complex numbers with zero imaginary
// part.
func ScalarConstant(v float64) *Pattern {
	return Any().Where(fmt.Sprintf("a constant %v everywhere", v), func(in *hlo.Instruction) bool {
		l, ok := EffectiveScalar(in)
		if !ok {
			return false
		}
		t := l.DType()
		switch {
		case t.IsComplex():
			return l.GetComplex128(0) == complex(v, 0)
		case t.IsFloat():
			return l.GetFloat64(0) == v
		case t.IsUnsigned():
			return v >= 0 && float64(l.GetUint64(0)) == v
		default:
			return float64(l.GetInt64(0)) == v
		}
	})
}

// AnyScalarConstant matches any effective scalar constant.
func AnyScalarConstant() *Pattern {
	return Any().Where("a constant with all elements equal", func(in *hlo.Instruction) bool {
		_, ok := EffectiveScalar(in)
		return ok
	})
}
