package eval

import (
	"math"
	"math/bits"
	"math/cmplx"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/xlamath"
)

// signedInt, unsignedInt and integer are the Go storage types of XLA's
// integer element types (s2/s4 and u2/u4 live in int8 and uint8).
type (
	signedInt interface {
		~int8 | ~int16 | ~int32 | ~int64
	}
	unsignedInt interface {
		~uint8 | ~uint16 | ~uint32 | ~uint64
	}
	integer     interface{ signedInt | unsignedInt }
	nativeFloat interface{ ~float32 | ~float64 }
	nativeCplx  interface{ ~complex64 | ~complex128 }
	realNumber  interface{ nativeFloat | integer }
)

// intOps are the unary and binary integer loops over literals stored as
// one Go integer type: unaryInt and binaryInt instantiated for it, since
// Go cannot pass them uninstantiated.
type intOps interface {
	unary(op hlo.Opcode, out, x *hlo.Literal, width int) error
	binary(op hlo.Opcode, out, a, b *hlo.Literal, width int) bool
}

type intOpsOf[T integer] struct{}

func (intOpsOf[T]) unary(op hlo.Opcode, out, x *hlo.Literal, width int) error {
	return unaryInt(op, out.Data().([]T), x.Data().([]T), width)
}

func (intOpsOf[T]) binary(op hlo.Opcode, out, a, b *hlo.Literal, width int) bool {
	return binaryInt(op, out.Data().([]T), a.Data().([]T), b.Data().([]T), width)
}

// integerOps maps each integer element type to the loops of its storage.
var integerOps = map[hlo.DType]intOps{
	hlo.S2: intOpsOf[int8]{}, hlo.S4: intOpsOf[int8]{}, hlo.S8: intOpsOf[int8]{},
	hlo.S16: intOpsOf[int16]{}, hlo.S32: intOpsOf[int32]{}, hlo.S64: intOpsOf[int64]{},
	hlo.U2: intOpsOf[uint8]{}, hlo.U4: intOpsOf[uint8]{}, hlo.U8: intOpsOf[uint8]{},
	hlo.U16: intOpsOf[uint16]{}, hlo.U32: intOpsOf[uint32]{}, hlo.U64: intOpsOf[uint64]{},
}

func isSignedType[T integer]() bool {
	var z T
	return ^z < z
}

func evalUnary(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x, op, t := ops[0], in.Opcode, ops[0].DType()
	switch {
	case op == hlo.OpIsFinite:
		return isFinite(x, in.Shape)
	case op == hlo.OpReal || op == hlo.OpImag || (op == hlo.OpAbs && t.IsComplex()):
		return complexPart(op, x, in.Shape)
	}
	out := hlo.NewLiteral(in.Shape)
	if f, ok := narrowFormat(t); ok {
		v := decodeNarrow(x, f)
		if err := unaryFloat(op, v, v); err != nil {
			return nil, err
		}
		encodeNarrow(out, f, v)
		return out, nil
	}
	var err error
	switch d := x.Data().(type) {
	case []float32:
		err = unaryFloat(op, out.Data().([]float32), d)
	case []float64:
		err = unaryFloat(op, out.Data().([]float64), d)
	case []complex64:
		err = unaryComplex(op, out.Data().([]complex64), d)
	case []complex128:
		err = unaryComplex(op, out.Data().([]complex128), d)
	case []bool:
		err = unaryPred(op, out.Data().([]bool), d)
	default:
		err = errOpType(op, t)
		if ints, ok := integerOps[t]; ok {
			err = ints.unary(op, out, x, t.Bits())
		}
	}
	if err != nil {
		return nil, errOpType(op, t)
	}
	wrapNarrowInts(out)
	return out, nil
}

// floatFuncs are the float ops computed by a float64 library function and
// rounded once to the element type. Square roots are exact in f64, so one
// rounding to f32 gives the correctly rounded f32 root.
var floatFuncs = map[hlo.Opcode]func(float64) float64{
	hlo.OpAbs:              math.Abs,
	hlo.OpSqrt:             math.Sqrt,
	hlo.OpFloor:            math.Floor,
	hlo.OpCeil:             math.Ceil,
	hlo.OpRoundNearestAfz:  math.Round,
	hlo.OpRoundNearestEven: math.RoundToEven,
	hlo.OpCbrt:             math.Cbrt,
	hlo.OpCos:              math.Cos,
	hlo.OpErf:              math.Erf,
	hlo.OpExp:              math.Exp,
	hlo.OpExpm1:            math.Expm1,
	hlo.OpLog:              math.Log,
	hlo.OpLog1p:            math.Log1p,
	hlo.OpSin:              math.Sin,
	hlo.OpTan:              math.Tan,
	hlo.OpTanh:             math.Tanh,
	hlo.OpAtan:             math.Atan,
	hlo.OpAtanh:            math.Atanh,
	hlo.OpCosh:             math.Cosh,
	hlo.OpSinh:             math.Sinh,
	hlo.OpAcos:             math.Acos,
	hlo.OpAcosh:            math.Acosh,
	hlo.OpAsin:             math.Asin,
	hlo.OpAsinh:            math.Asinh,
	hlo.OpLogistic: func(x float64) float64 {
		return 1 / (1 + math.Exp(-x))
	},
	hlo.OpRsqrt: func(x float64) float64 { return 1 / math.Sqrt(x) },
}

func unaryFloat[T nativeFloat](op hlo.Opcode, dst, src []T) error {
	switch op {
	case hlo.OpNegate:
		negateEach(dst, src)
	case hlo.OpSign:
		signEach(dst, src)
	default:
		f, ok := floatFuncs[op]
		if !ok {
			return errOpType(op, hlo.F32)
		}
		for i, v := range src {
			dst[i] = T(f(float64(v)))
		}
	}
	return nil
}

func unaryInt[T integer](op hlo.Opcode, dst, src []T, width int) error {
	mask := uint64(math.MaxUint64) >> (64 - width)
	switch op {
	case hlo.OpNegate:
		negateEach(dst, src)
	case hlo.OpNot:
		for i, v := range src {
			dst[i] = ^v
		}
	case hlo.OpAbs:
		for i, v := range src {
			if v < 0 {
				v = -v
			}
			dst[i] = v
		}
	case hlo.OpSign:
		signEach(dst, src)
	case hlo.OpPopulationCount:
		for i, v := range src {
			dst[i] = T(bits.OnesCount64(uint64(v) & mask))
		}
	case hlo.OpClz:
		for i, v := range src {
			dst[i] = T(bits.LeadingZeros64(uint64(v)&mask) - (64 - width))
		}
	default:
		return errOpType(op, hlo.S32)
	}
	return nil
}

// negateEach and signEach are negate and sign for floats and integers
// alike (negation wraps for integers).
func negateEach[T realNumber](dst, src []T) {
	for i, v := range src {
		dst[i] = -v
	}
}

// signEach follows XLA: -1 or +1 by sign; zeros (of either sign) and NaN
// are returned unchanged.
func signEach[T realNumber](dst, src []T) {
	var one T = 1
	for i, v := range src {
		switch {
		case v > 0:
			dst[i] = one
		case v < 0:
			dst[i] = -one // only reachable for signed types
		default:
			dst[i] = v
		}
	}
}

func unaryPred(op hlo.Opcode, dst, src []bool) error {
	if op != hlo.OpNot {
		return errOpType(op, hlo.Pred)
	}
	for i, v := range src {
		dst[i] = !v
	}
	return nil
}

// ComplexUnary returns the evaluator's formula for the unary op on
// complex values (package xlamath's, which compiled backends call too).
func ComplexUnary(op hlo.Opcode) (func(complex128) complex128, bool) { return xlamath.ComplexUnary(op) }

// ComplexUnaryOps lists the ops ComplexUnary knows, in opcode order.
func ComplexUnaryOps() []hlo.Opcode { return xlamath.ComplexUnaryOps() }

func unaryComplex[T nativeCplx](op hlo.Opcode, dst, src []T) error {
	f, ok := xlamath.ComplexUnary(op)
	if !ok {
		return errOpType(op, hlo.C64)
	}
	for i, v := range src {
		dst[i] = T(f(complex128(v)))
	}
	return nil
}

// isFinite is true for values that are neither infinite nor NaN.
func isFinite(x *hlo.Literal, s hlo.Shape) (*hlo.Literal, error) {
	out := hlo.NewLiteral(s)
	dst := out.Data().([]bool)
	switch d := x.Data().(type) {
	case []float32:
		for i, v := range d {
			dst[i] = !math.IsInf(float64(v), 0) && v == v
		}
	case []float64:
		for i, v := range d {
			dst[i] = !math.IsInf(v, 0) && v == v
		}
	default:
		f, ok := narrowFormat(x.DType())
		if !ok {
			return nil, errOpType(hlo.OpIsFinite, x.DType())
		}
		for i, v := range decodeNarrow(x, f) {
			dst[i] = !math.IsInf(v, 0) && v == v
		}
	}
	return out, nil
}

// complexPart computes real, imag and the (real-valued) abs of complex
// numbers; on real types real is the identity and imag is zero.
func complexPart(op hlo.Opcode, x *hlo.Literal, s hlo.Shape) (*hlo.Literal, error) {
	if !x.DType().IsComplex() {
		if op == hlo.OpImag {
			return hlo.NewLiteral(s), nil
		}
		return x.Clone(), nil
	}
	v := loadComplex128(x)
	r := make([]float64, len(v))
	for i, z := range v {
		switch op {
		case hlo.OpReal:
			r[i] = real(z)
		case hlo.OpImag:
			r[i] = imag(z)
		default:
			r[i] = cmplx.Abs(z)
		}
	}
	return storeFloat64(s, r), nil
}
