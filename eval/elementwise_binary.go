package eval

import (
	"math"
	"math/bits"
	"math/cmplx"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/ddmath"
	"github.com/axle-ml/axle/internal/xlamath"
)

func evalBinary(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	out := hlo.NewLiteral(in.Shape)
	n := out.Len()
	a, b, op, t := fullSize(ops[0], n), fullSize(ops[1], n), in.Opcode, ops[0].DType()
	if f, ok := narrowFormat(t); ok {
		av, bv := decodeNarrow(a, f), decodeNarrow(b, f)
		if !binaryFloat(op, av, av, bv) {
			return nil, errOpType(op, t)
		}
		encodeNarrow(out, f, av)
		return out, nil
	}
	var ok bool
	switch d := a.Data().(type) {
	case []float32:
		ok = binaryFloat(op, out.Data().([]float32), d, b.Data().([]float32))
	case []float64:
		ok = binaryFloat(op, out.Data().([]float64), d, b.Data().([]float64))
	case []complex64:
		ok = binaryComplex(op, out.Data().([]complex64), d, b.Data().([]complex64))
	case []complex128:
		ok = binaryComplex(op, out.Data().([]complex128), d, b.Data().([]complex128))
	case []bool:
		ok = binaryPred(op, out.Data().([]bool), d, b.Data().([]bool))
	default:
		if ints, isInt := integerOps[t]; isInt {
			ok = ints.binary(op, out, a, b, t.Bits())
		}
	}
	if !ok {
		return nil, errOpType(op, t)
	}
	wrapNarrowInts(out)
	return out, nil
}

// binaryFloat applies op elementwise; dst may alias a. It reports false for
// ops without a float meaning.
func binaryFloat[T nativeFloat](op hlo.Opcode, dst, a, b []T) bool {
	return binaryLoop(floatBinaryOp[T](op), dst, a, b)
}

// binaryLoop sets dst[i] = f(a[i], b[i]); it reports false for a nil f.
func binaryLoop[T any](f func(x, y T) T, dst, a, b []T) bool {
	if f == nil {
		return false
	}
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = f(a[i], b[i])
	}
	return true
}

// ringOp is add, subtract or multiply, the same for floats and (wrapping)
// integers, or nil for any other op.
func ringOp[T realNumber](op hlo.Opcode) func(x, y T) T {
	switch op {
	case hlo.OpAdd:
		return func(x, y T) T { return x + y }
	case hlo.OpSubtract:
		return func(x, y T) T { return x - y }
	case hlo.OpMultiply:
		return func(x, y T) T { return x * y }
	}
	return nil
}

// floatBinaryOp is op on one pair of elements, or nil.
func floatBinaryOp[T nativeFloat](op hlo.Opcode) func(x, y T) T {
	if f := ringOp[T](op); f != nil {
		return f
	}
	switch op {
	case hlo.OpDivide:
		return func(x, y T) T { return x / y }
	case hlo.OpMaximum:
		return xlamath.Max[T]
	case hlo.OpMinimum:
		return xlamath.Min[T]
	case hlo.OpRemainder:
		// XLA's float remainder is C's fmod: the result has the dividend's
		// sign.
		return func(x, y T) T { return T(math.Mod(float64(x), float64(y))) }
	case hlo.OpPower:
		// Go's math.Pow is tens of ulps off for large exponents; XLA
		// calls libm's nearly correctly rounded pow.
		return powOf[T]
	case hlo.OpAtan2:
		return func(x, y T) T { return T(math.Atan2(float64(x), float64(y))) }
	}
	return nil
}

// powOf is x**y: ddmath.Pow32 for float32 (one rounding from the exact
// power where Pow's float64 result rounded again could differ), Pow for
// float64.
func powOf[T nativeFloat](x, y T) T {
	var zero T
	if _, ok := any(zero).(float32); ok {
		return T(ddmath.Pow32(float32(x), float32(y)))
	}
	return T(ddmath.Pow(float64(x), float64(y)))
}

// binaryInt applies op with XLA's integer semantics (operation_semantics
// and its elemental IR emitter): wrap-around arithmetic; x/0 is -1 (all
// ones), x%0 is x; INT_MIN/-1 is INT_MIN and INT_MIN%-1 is 0 (Go's own
// rule); shift amounts are compared as unsigned against the bit width.
// width is the element type's width, less than the storage's for s2/s4/
// u2/u4, whose results the caller re-wraps.
func binaryInt[T integer](op hlo.Opcode, dst, a, b []T, width int) bool {
	return binaryLoop(intBinaryOp[T](op, width), dst, a, b)
}

// intBinaryOp is op on one pair of elements, or nil.
func intBinaryOp[T integer](op hlo.Opcode, width int) func(x, y T) T {
	if f := ringOp[T](op); f != nil {
		return f
	}
	switch op {
	case hlo.OpDivide:
		return intDivide[T]
	case hlo.OpRemainder:
		return intRemainder[T]
	case hlo.OpMaximum:
		return func(x, y T) T { return max(x, y) }
	case hlo.OpMinimum:
		return func(x, y T) T { return min(x, y) }
	case hlo.OpAnd:
		return func(x, y T) T { return x & y }
	case hlo.OpOr:
		return func(x, y T) T { return x | y }
	case hlo.OpXor:
		return func(x, y T) T { return x ^ y }
	case hlo.OpPower:
		return intPow[T]
	case hlo.OpMulhi:
		return func(x, y T) T { return mulhi(x, y, width) }
	}
	return intShiftOp[T](op, width)
}

func intDivide[T integer](x, y T) T {
	if y == 0 {
		return ^T(0)
	}
	return x / y
}

func intRemainder[T integer](x, y T) T {
	if y == 0 {
		return x
	}
	return x % y
}

// intShiftOp is a shift op on one pair of elements, or nil. Amounts are
// compared as unsigned against the width.
func intShiftOp[T integer](op hlo.Opcode, width int) func(x, y T) T {
	mask := uint64(math.MaxUint64) >> (64 - width)
	switch op {
	case hlo.OpShiftLeft:
		return func(x, y T) T {
			if n := uint64(y) & mask; n < uint64(width) {
				return x << n
			}
			return 0
		}
	case hlo.OpShiftRightLogical:
		return func(x, y T) T {
			if n := uint64(y) & mask; n < uint64(width) {
				return T((uint64(x) & mask) >> n)
			}
			return 0
		}
	case hlo.OpShiftRightArithmetic:
		// Shifting by the width or more fills with the sign bit, the same
		// as shifting by width-1.
		return func(x, y T) T {
			n := min(uint64(y)&mask, uint64(width-1))
			return T(int64(uint64(x)<<(64-width)) >> (64 - width) >> n)
		}
	}
	return nil
}

// intPow is x**y with wrap-around. For y < 0 XLA returns 0 except for
// the bases 1 and -1, whose reciprocals are integers. The oracle's own
// definition, apart from the backend's: it walks the exponent's bits from
// the top (the backend's squares from the bottom).
func intPow[T integer](x, y T) T {
	if y < 0 {
		minusOne := isSignedType[T]() && x == ^T(0)
		if x != 1 && !minusOne {
			return 0 // 1/x^|y| truncates to 0 (and 0's is taken as 0)
		}
		if minusOne && y%2 != 0 {
			return x
		}
		return 1
	}
	r := T(1)
	for bit := bits.Len64(uint64(y)) - 1; bit >= 0; bit-- {
		r *= r
		if uint64(y)>>uint(bit)&1 == 1 {
			r *= x
		}
	}
	return r
}

// mulhi is the high half of the double-width product.
func mulhi[T integer](a, b T, width int) T {
	signed := isSignedType[T]()
	if width < 64 {
		if signed {
			return T((int64(a) * int64(b)) >> width)
		}
		mask := uint64(math.MaxUint64) >> (64 - width)
		return T(((uint64(a) & mask) * (uint64(b) & mask)) >> width)
	}
	hi, _ := bits.Mul64(uint64(a), uint64(b))
	if signed {
		// Two's-complement correction of the unsigned high word.
		if a < 0 {
			hi -= uint64(b)
		}
		if b < 0 {
			hi -= uint64(a)
		}
	}
	return T(hi)
}

func binaryPred(op hlo.Opcode, dst, a, b []bool) bool {
	b = b[:len(a)]
	for i := range a {
		switch op {
		case hlo.OpAnd, hlo.OpMinimum, hlo.OpMultiply:
			dst[i] = a[i] && b[i]
		case hlo.OpOr, hlo.OpMaximum, hlo.OpAdd:
			dst[i] = a[i] || b[i]
		case hlo.OpXor, hlo.OpSubtract:
			dst[i] = a[i] != b[i]
		default:
			return false
		}
	}
	return true
}

func binaryComplex[T nativeCplx](op hlo.Opcode, dst, a, b []T) bool {
	b = b[:len(a)]
	for i := range a {
		x, y := complex128(a[i]), complex128(b[i])
		switch op {
		case hlo.OpAdd:
			dst[i] = T(x + y)
		case hlo.OpSubtract:
			dst[i] = T(x - y)
		case hlo.OpMultiply:
			dst[i] = T(complexMul[T](x, y))
		case hlo.OpDivide:
			dst[i] = T(x / y)
		case hlo.OpPower:
			dst[i] = T(ComplexPow(x, y))
		case hlo.OpAtan2:
			dst[i] = T(ComplexAtan2(x, y))
		default:
			return false
		}
	}
	return true
}

// ComplexAtan2 is the StableHLO spec's atan2 of complex values,
// -i·log((x + i·y) / sqrt(x² + y²)), the angle of the point (x, y)
// continued to complex coordinates; for real y and x it is math.Atan2(y, x).
func ComplexAtan2(y, x complex128) complex128 {
	return -1i * cmplx.Log((x+1i*y)/cmplx.Sqrt(x*x+y*y))
}

// evalComplex builds complex numbers from real and imaginary parts.
func evalComplex(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	out := hlo.NewLiteral(in.Shape)
	n := out.Len()
	re, im := loadFloat64(fullSize(ops[0], n)), loadFloat64(fullSize(ops[1], n))
	switch d := out.Data().(type) {
	case []complex64:
		for i := range d {
			d[i] = complex(float32(re[i]), float32(im[i]))
		}
	case []complex128:
		for i := range d {
			d[i] = complex(re[i], im[i])
		}
	default:
		return nil, errOpType(hlo.OpComplex, in.Shape.DType)
	}
	return out, nil
}

// ComplexPow is x^y as the evaluator computes it (xlamath.ComplexPow).
func ComplexPow(x, y complex128) complex128 { return xlamath.ComplexPow(x, y) }
