package eval

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// Elementwise ops run one typed loop per instruction: a type switch on the
// operands' storage picks a generic kernel instantiated for that Go type,
// so no element is boxed or reached through an interface call. Element
// types without a native Go arithmetic type (f16, bf16, the f8 and f4
// formats) are decoded to float64, computed there and rounded once on the
// way back, which is at least as exact as XLA's compute-in-f32 (and equal
// to it for +, -, *, / and sqrt, whose double rounding through a format
// with more than twice the precision is harmless).

var unaryOps = []hlo.Opcode{
	hlo.OpAbs, hlo.OpCbrt, hlo.OpCeil, hlo.OpCos, hlo.OpErf, hlo.OpExp, hlo.OpExpm1,
	hlo.OpFloor, hlo.OpImag, hlo.OpIsFinite, hlo.OpLog, hlo.OpLog1p, hlo.OpLogistic,
	hlo.OpNegate, hlo.OpNot, hlo.OpPopulationCount, hlo.OpClz, hlo.OpReal, hlo.OpRoundNearestAfz,
	hlo.OpRoundNearestEven, hlo.OpRsqrt, hlo.OpSign, hlo.OpSin, hlo.OpSqrt, hlo.OpTan,
	hlo.OpTanh, hlo.OpAtan, hlo.OpAtanh, hlo.OpCosh, hlo.OpSinh, hlo.OpAcos, hlo.OpAcosh,
	hlo.OpAsin, hlo.OpAsinh,
}

var binaryOps = []hlo.Opcode{
	hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpDivide, hlo.OpRemainder,
	hlo.OpMaximum, hlo.OpMinimum, hlo.OpPower, hlo.OpAtan2, hlo.OpAnd, hlo.OpOr,
	hlo.OpXor, hlo.OpShiftLeft, hlo.OpShiftRightArithmetic, hlo.OpShiftRightLogical,
	hlo.OpMulhi,
}

func init() {
	register(evalUnary, unaryOps...)
	register(evalBinary, binaryOps...)
	register(evalComplex, hlo.OpComplex)
	register(evalCompare, hlo.OpCompare)
	register(evalSelect, hlo.OpSelect)
	register(evalClamp, hlo.OpClamp)
}

// errOpType reports an op applied to an element type it has no meaning for
// (the verifier lets few of these through; the evaluator still refuses
// rather than inventing a result).
func errOpType(op hlo.Opcode, t hlo.DType) error {
	return fmt.Errorf("%s is not defined on element type %s", op, t)
}

// fullSize returns l with n elements: l itself, or l's single element
// repeated when l is a scalar standing in for an array (select's
// predicate, clamp's bounds).
func fullSize(l *hlo.Literal, n int) *hlo.Literal {
	if l.Len() == n || l.Len() != 1 {
		return l
	}
	out := hlo.NewLiteral(hlo.Shape{DType: l.DType(), Dims: []int64{int64(n)}})
	fill(out.Data(), l.Data())
	return out
}

// fill sets every element of dst to src's first element.
func fill(dst, src any) {
	switch d := dst.(type) {
	case []bool:
		fillT(d, src.([]bool))
	case []int8:
		fillT(d, src.([]int8))
	case []int16:
		fillT(d, src.([]int16))
	case []int32:
		fillT(d, src.([]int32))
	case []int64:
		fillT(d, src.([]int64))
	case []uint8:
		fillT(d, src.([]uint8))
	case []uint16:
		fillT(d, src.([]uint16))
	case []uint32:
		fillT(d, src.([]uint32))
	case []uint64:
		fillT(d, src.([]uint64))
	case []float32:
		fillT(d, src.([]float32))
	case []float64:
		fillT(d, src.([]float64))
	case []complex64:
		fillT(d, src.([]complex64))
	case []complex128:
		fillT(d, src.([]complex128))
	}
}

func fillT[T any](dst, src []T) {
	for i := range dst {
		dst[i] = src[0]
	}
}

// narrowFormat is the minifloat format of element types stored as raw bits
// (f16, bf16, f8, f4); ok is false for every other type.
func narrowFormat(t hlo.DType) (minifloat.Format, bool) {
	if !t.IsFloat() || t == hlo.F32 || t == hlo.F64 {
		return minifloat.Format{}, false
	}
	return minifloat.ByName(t.String())
}

// decodeNarrow returns a narrow-float literal's values as float64s.
func decodeNarrow(l *hlo.Literal, f minifloat.Format) []float64 {
	out := make([]float64, l.Len())
	tab := f.Values()
	switch d := l.Data().(type) {
	case []uint16:
		for i, b := range d {
			out[i] = tab[b]
		}
	case []uint8:
		for i, b := range d {
			out[i] = tab[b]
		}
	}
	return out
}

// encodeNarrow rounds v once, to nearest even, into a narrow-float literal.
func encodeNarrow(l *hlo.Literal, f minifloat.Format, v []float64) {
	switch d := l.Data().(type) {
	case []uint16:
		for i, x := range v {
			d[i] = f.FromFloat64(x)
		}
	case []uint8:
		for i, x := range v {
			d[i] = uint8(f.FromFloat64(x))
		}
	}
}

// wrapNarrowInts re-establishes the storage invariant of the 2- and 4-bit
// integer types after arithmetic in their 8-bit storage: signed values
// sign-extended from their width, unsigned ones masked to it.
func wrapNarrowInts(l *hlo.Literal) {
	bits := l.DType().Bits()
	if bits >= 8 {
		return
	}
	switch d := l.Data().(type) {
	case []int8:
		s := 8 - bits
		for i, v := range d {
			d[i] = v << s >> s
		}
	case []uint8:
		m := uint8(1)<<bits - 1
		for i := range d {
			d[i] &= m
		}
	}
}
