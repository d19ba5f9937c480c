package xb

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// unary adds an elementwise op of one operand.
func unary(op hlo.Opcode, x *Op) *Op {
	b := builderOf(x)
	if b == nil {
		return orphan()
	}
	return b.add(instr{op: op, operands: []*Op{x}})
}

// Unary ops follow hlo.InferShape's element type rules (Exp of an integer
// is an error, Abs of a complex is real, ...).

// Abs is |x| (the magnitude, real, for complex x).
func Abs(x *Op) *Op { return unary(hlo.OpAbs, x) }

// Neg is -x.
func Neg(x *Op) *Op { return unary(hlo.OpNegate, x) }

// Exp is e^x.
func Exp(x *Op) *Op { return unary(hlo.OpExp, x) }

// Expm1 is e^x - 1, accurate near 0.
func Expm1(x *Op) *Op { return unary(hlo.OpExpm1, x) }

// Log is the natural logarithm.
func Log(x *Op) *Op { return unary(hlo.OpLog, x) }

// Log1p is log(1+x), accurate near 0.
func Log1p(x *Op) *Op { return unary(hlo.OpLog1p, x) }

// Tanh is the hyperbolic tangent.
func Tanh(x *Op) *Op { return unary(hlo.OpTanh, x) }

// Logistic is 1/(1+e^-x).
func Logistic(x *Op) *Op { return unary(hlo.OpLogistic, x) }

// Sqrt is the square root.
func Sqrt(x *Op) *Op { return unary(hlo.OpSqrt, x) }

// Rsqrt is 1/sqrt(x).
func Rsqrt(x *Op) *Op { return unary(hlo.OpRsqrt, x) }

// Cbrt is the cube root.
func Cbrt(x *Op) *Op { return unary(hlo.OpCbrt, x) }

// Sin is the sine.
func Sin(x *Op) *Op { return unary(hlo.OpSin, x) }

// Cos is the cosine.
func Cos(x *Op) *Op { return unary(hlo.OpCos, x) }

// Tan is the tangent.
func Tan(x *Op) *Op { return unary(hlo.OpTan, x) }

// Erf is the error function.
func Erf(x *Op) *Op { return unary(hlo.OpErf, x) }

// Floor rounds down.
func Floor(x *Op) *Op { return unary(hlo.OpFloor, x) }

// Ceil rounds up.
func Ceil(x *Op) *Op { return unary(hlo.OpCeil, x) }

// Round rounds to the nearest integer, ties to even.
func Round(x *Op) *Op { return unary(hlo.OpRoundNearestEven, x) }

// Sign is -1, 0 or 1 by the sign of x (NaN stays NaN).
func Sign(x *Op) *Op { return unary(hlo.OpSign, x) }

// Not is logical not for pred, bitwise not for integers.
func Not(x *Op) *Op { return unary(hlo.OpNot, x) }

// IsFinite reports, as pred, which elements are neither infinite nor NaN.
func IsFinite(x *Op) *Op { return unary(hlo.OpIsFinite, x) }

// Real is the real part.
func Real(x *Op) *Op { return unary(hlo.OpReal, x) }

// Imag is the imaginary part.
func Imag(x *Op) *Op { return unary(hlo.OpImag, x) }

// Clz counts leading zero bits.
func Clz(x *Op) *Op { return unary(hlo.OpClz, x) }

// PopCount counts set bits.
func PopCount(x *Op) *Op { return unary(hlo.OpPopulationCount, x) }

// Copy adds a copy of x.
func Copy(x *Op) *Op { return unary(hlo.OpCopy, x) }

// StopGradient is x, as a value Grad and VJP treat as a constant: no
// gradient flows through it to x. It is a copy in the module, which the
// optimizer removes.
func StopGradient(x *Op) *Op {
	c := Copy(x)
	if c.in != nil {
		c.stop = true
	}
	return c
}

// binary adds an elementwise op of two operands. HLO forbids implicit
// broadcasting, so shapes must match; as a convenience a scalar operand
// is broadcast explicitly to the other's shape.
func binary(op hlo.Opcode, x, y *Op, attrs ...hlo.Attr) *Op {
	b := builderOf(x, y)
	if b == nil {
		return orphan()
	}
	if !b.check(op.String(), x, y) {
		return b.poisoned()
	}
	x, y = matchScalars(x, y)
	xs, ys := x.Shape(), y.Shape()
	if xs.IsArray() && ys.IsArray() {
		if !slices.Equal(xs.Dims, ys.Dims) {
			b.errorf("%s: shapes %s and %s differ", op, xs.HumanString(), ys.HumanString())
			return b.poisoned()
		}
		// InferShape lets floats of different widths mix (XLA's mixed
		// precision); a builder user almost always means a Convert.
		if xs.DType != ys.DType {
			b.errorf("%s: element types %s and %s differ; Convert one", op, xs.DType, ys.DType)
			return b.poisoned()
		}
	}
	return b.add(instr{op: op, operands: []*Op{x, y}, attrs: attrs})
}

// matchScalars broadcasts a rank-0 operand to the other operand's shape.
func matchScalars(x, y *Op) (*Op, *Op) {
	xs, ys := x.Shape(), y.Shape()
	if !xs.IsArray() || !ys.IsArray() {
		return x, y
	}
	switch {
	case xs.Rank() == 0 && ys.Rank() > 0:
		x = Broadcast(x, ys.Dims...)
	case ys.Rank() == 0 && xs.Rank() > 0:
		y = Broadcast(y, xs.Dims...)
	}
	return x, y
}

// Binary ops broadcast a scalar operand to the other's shape.

// Add is x + y.
func Add(x, y *Op) *Op { return binary(hlo.OpAdd, x, y) }

// Sub is x - y.
func Sub(x, y *Op) *Op { return binary(hlo.OpSubtract, x, y) }

// Mul is x * y.
func Mul(x, y *Op) *Op { return binary(hlo.OpMultiply, x, y) }

// Div is x / y (truncating for integers).
func Div(x, y *Op) *Op { return binary(hlo.OpDivide, x, y) }

// Rem is the remainder of x / y, with the sign of x.
func Rem(x, y *Op) *Op { return binary(hlo.OpRemainder, x, y) }

// Max is the larger of x and y.
func Max(x, y *Op) *Op { return binary(hlo.OpMaximum, x, y) }

// Min is the smaller of x and y.
func Min(x, y *Op) *Op { return binary(hlo.OpMinimum, x, y) }

// Pow is x^y.
func Pow(x, y *Op) *Op { return binary(hlo.OpPower, x, y) }

// Atan2 is the arctangent of x/y with the quadrant taken from both signs, as math.Atan2(x, y).
func Atan2(x, y *Op) *Op { return binary(hlo.OpAtan2, x, y) }

// And is logical or bitwise and.
func And(x, y *Op) *Op { return binary(hlo.OpAnd, x, y) }

// Or is logical or bitwise or.
func Or(x, y *Op) *Op { return binary(hlo.OpOr, x, y) }

// Xor is logical or bitwise exclusive or.
func Xor(x, y *Op) *Op { return binary(hlo.OpXor, x, y) }

// Complex builds complex numbers from real parts x and imaginary parts y.
func Complex(x, y *Op) *Op { return binary(hlo.OpComplex, x, y) }

// ShiftLeft shifts x left by y bits.
func ShiftLeft(x, y *Op) *Op { return binary(hlo.OpShiftLeft, x, y) }

// ShiftRightArithmetic shifts x right by y bits, copying the sign bit.
func ShiftRightArithmetic(x, y *Op) *Op { return binary(hlo.OpShiftRightArithmetic, x, y) }

// ShiftRightLogical shifts x right by y bits, filling with zeros.
func ShiftRightLogical(x, y *Op) *Op { return binary(hlo.OpShiftRightLogical, x, y) }

// Direction is a comparison direction of Compare.
type Direction string

// The comparison directions.
const (
	EQ Direction = "EQ"
	NE Direction = "NE"
	LT Direction = "LT"
	LE Direction = "LE"
	GT Direction = "GT"
	GE Direction = "GE"
)

// Compare compares x and y elementwise, giving pred. The comparison type
// (signed, unsigned, float) follows the element type.
func Compare(x, y *Op, dir Direction) *Op {
	switch dir {
	case EQ, NE, LT, LE, GT, GE:
	default:
		if b := builderOf(x, y); b != nil {
			b.errorf("compare: unknown direction %q", dir)
			return b.poisoned()
		}
		return orphan()
	}
	return binary(hlo.OpCompare, x, y, hlo.Attr{Name: "direction", Value: hlo.Enum(dir)})
}

// Eq is Compare(x, y, EQ).
func Eq(x, y *Op) *Op { return Compare(x, y, EQ) }

// Ne is Compare(x, y, NE).
func Ne(x, y *Op) *Op { return Compare(x, y, NE) }

// Lt is Compare(x, y, LT).
func Lt(x, y *Op) *Op { return Compare(x, y, LT) }

// Le is Compare(x, y, LE).
func Le(x, y *Op) *Op { return Compare(x, y, LE) }

// Gt is Compare(x, y, GT).
func Gt(x, y *Op) *Op { return Compare(x, y, GT) }

// Ge is Compare(x, y, GE).
func Ge(x, y *Op) *Op { return Compare(x, y, GE) }

// Select picks onTrue where pred holds, else onFalse. A scalar pred
// selects whole arrays; scalar branches are broadcast.
func Select(pred, onTrue, onFalse *Op) *Op {
	b := builderOf(pred, onTrue, onFalse)
	if b == nil {
		return orphan()
	}
	if !b.check("select", pred, onTrue, onFalse) {
		return b.poisoned()
	}
	onTrue, onFalse = matchScalars(onTrue, onFalse)
	return b.add(instr{op: hlo.OpSelect, operands: []*Op{pred, onTrue, onFalse}})
}

// Clamp limits x to [lo, hi]; lo and hi are scalars or x's shape.
func Clamp(lo, x, hi *Op) *Op {
	b := builderOf(lo, x, hi)
	if b == nil {
		return orphan()
	}
	return b.add(instr{op: hlo.OpClamp, operands: []*Op{lo, x, hi}})
}

// Convert converts x's elements to type t.
func Convert(x *Op, t hlo.DType) *Op {
	b := builderOf(x)
	if b == nil {
		return orphan()
	}
	if !b.check("convert", x) {
		return b.poisoned()
	}
	return b.add(instr{op: hlo.OpConvert, operands: []*Op{x}, shape: x.Shape().WithDType(t)})
}

// BitcastConvert reinterprets x's bits as type t (equal widths keep the
// shape; see XLA's BitcastConvertType for the others).
func BitcastConvert(x *Op, t hlo.DType) *Op {
	b := builderOf(x)
	if b == nil {
		return orphan()
	}
	if !b.check("bitcast-convert", x) {
		return b.poisoned()
	}
	s := x.Shape()
	out := s.WithDType(t)
	if ratio := s.DType.Bits() / max(t.Bits(), 1); ratio > 1 {
		out = hlo.ArrayShape(t, append(slices.Clone(s.Dims), int64(ratio))...)
	} else if ratio := t.Bits() / max(s.DType.Bits(), 1); ratio > 1 && s.Rank() > 0 {
		out = hlo.ArrayShape(t, s.Dims[:s.Rank()-1]...)
	}
	return b.add(instr{op: hlo.OpBitcastConvert, operands: []*Op{x}, shape: out})
}

// ReducePrecision rounds x to a float format with the given exponent and
// mantissa bits.
func ReducePrecision(x *Op, exponentBits, mantissaBits int64) *Op {
	b := builderOf(x)
	if b == nil {
		return orphan()
	}
	return b.add(instr{op: hlo.OpReducePrecision, operands: []*Op{x}, attrs: []hlo.Attr{
		{Name: "exponent_bits", Value: exponentBits}, {Name: "mantissa_bits", Value: mantissaBits}}})
}

// Map applies fn, a computation of one scalar per operand, elementwise.
func Map(fn func(sb *Builder, params []*Op) *Op, xs ...*Op) *Op {
	b := builderOf(xs...)
	if b == nil || !b.check("map", xs...) {
		return poison(b)
	}
	params := make([]hlo.Shape, len(xs))
	for i, x := range xs {
		params[i] = hlo.ScalarShape(x.DType())
	}
	c := b.Computation("map_fn", params, fn)
	if c == nil {
		return b.poisoned()
	}
	dims := make([]int64, xs[0].Rank())
	for i := range dims {
		dims[i] = int64(i)
	}
	return b.add(instr{op: hlo.OpMap, operands: xs, attrs: []hlo.Attr{{Name: "dimensions", Value: dims}, {Name: "to_apply", Value: c}}})
}
