package cpu

import (
	"math/cmplx"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
	"github.com/axle-ml/axle/internal/xlamath"
)

// Elementwise ops over complex values (c64, c128) and the ops that enter
// and leave them (real, imag, abs, complex, convert to complex, compare
// EQ/NE, select), one typed loop per instruction like the real ones in
// lower_elementwise*.go. They compute as eval/elementwise*.go does: each
// value is widened to complex128, the op applied there with the same Go
// operator or math/cmplx function, and the result rounded once to the
// element type, so the bits are the evaluator's by construction (Go
// computes complex64 products and quotients in float64 too, so for the
// arithmetic ops the widening only spells out what it already does).
//
// Shapes follow ewShapesOK: static arrays whose operands all have the
// result's element count. Storage is row-major whatever the layout, so
// layouts do not matter to a loop over storage positions. Every loop reads
// element i of its operands before writing element i of dst, so dst may
// share the storage of an operand of the same width (elementwiseInPlace).

// cplx are the storage types of c64 and c128.
type cplx interface{ complex64 | complex128 }

// lowerComplex returns a kernel for an elementwise instruction that reads
// or writes complex values (or takes real or imag of a real type), or
// false: not its business, shapes ewShapesOK would refuse, or ops the
// evaluator rejects for complex (ordering compares, clamp, max, min,
// remainder, atan2, rounding, cbrt, erf, is-finite, complex to real
// convert).
func lowerComplex(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if !complexBusiness(in) || !complexShapesOK(in) {
		return nil, false
	}
	switch in.Opcode {
	case hlo.OpReal, hlo.OpImag, hlo.OpAbs:
		return lowerComplexPart(in, threads)
	case hlo.OpComplex:
		return lowerMakeComplex(in, threads)
	case hlo.OpConvert:
		return lowerConvertComplex(in, threads)
	case hlo.OpCompare:
		return lowerCompareComplex(in, threads)
	case hlo.OpSelect:
		return lowerSelectComplex(in, threads)
	}
	for _, o := range in.Operands {
		if o.Shape.DType != in.Shape.DType {
			return nil, false
		}
	}
	switch in.Shape.DType {
	case hlo.C64:
		return complexArith[complex64](in, threads)
	case hlo.C128:
		return complexArith[complex128](in, threads)
	}
	return nil, false
}

// complexBusiness is the quick test run on every elementwise instruction:
// a complex result or operand, or real/imag (also defined on real types).
func complexBusiness(in *hlo.Instruction) bool {
	if in.Opcode == hlo.OpReal || in.Opcode == hlo.OpImag || in.Shape.DType.IsComplex() {
		return true
	}
	for _, o := range in.Operands {
		if o.Shape.DType.IsComplex() {
			return true
		}
	}
	return false
}

// complexShapesOK is ewShapesOK without its refusal of complex types.
func complexShapesOK(in *hlo.Instruction) bool {
	if !plainArray(in.Shape) || len(in.Operands) == 0 {
		return false
	}
	n := in.Shape.NumElements()
	for _, o := range in.Operands {
		if !plainArray(o.Shape) || o.Shape.NumElements() != n {
			return false
		}
	}
	return true
}

// complexArith picks the loop of a unary or binary op on T.
func complexArith[T cplx](in *hlo.Instruction, threads int) (kernelFunc, bool) {
	switch len(in.Operands) {
	case 1:
		if in.Opcode == hlo.OpNegate {
			return unaryKernel(in, negComplex[T], threads), true
		}
		if f, ok := xlamath.ComplexUnary(in.Opcode); ok {
			return unaryKernel(in, func(dst, src []T) { mapComplex(dst, src, f) }, threads), true
		}
	case 2:
		if loop := complexBinaryLoop[T](in.Opcode); loop != nil {
			return binaryKernel(in, loop, threads), true
		}
	}
	return nil, false
}

// negComplex is exact in any width, so it needs no widening.
func negComplex[T cplx](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = -v
	}
}

func mapComplex[T cplx](dst, src []T, f func(complex128) complex128) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(f(complex128(v)))
	}
}

func complexBinaryLoop[T cplx](op hlo.Opcode) func(dst, a, b []T) {
	switch op {
	case hlo.OpAdd:
		return addComplex[T]
	case hlo.OpSubtract:
		return subComplex[T]
	case hlo.OpMultiply:
		return mulComplex[T]
	case hlo.OpDivide:
		return divComplex[T]
	case hlo.OpPower:
		return powComplex[T]
	}
	return nil
}

func addComplex[T cplx](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = T(complex128(a[i]) + complex128(b[i]))
	}
}

func subComplex[T cplx](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = T(complex128(a[i]) - complex128(b[i]))
	}
}

// mulComplex multiplies as the evaluator does, with XLA's CPU backend's
// fused products (xlamath.ComplexMul64, xlamath.ComplexMul128).
func mulComplex[T cplx](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	switch d := any(dst).(type) {
	case []complex64:
		x, y := any(a).([]complex64), any(b).([]complex64)
		for i := range x {
			d[i] = xlamath.ComplexMul64(x[i], y[i])
		}
	case []complex128:
		x, y := any(a).([]complex128), any(b).([]complex128)
		for i := range x {
			d[i] = xlamath.ComplexMul128(x[i], y[i])
		}
	}
}

func divComplex[T cplx](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = T(complex128(a[i]) / complex128(b[i]))
	}
}

func powComplex[T cplx](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = T(xlamath.ComplexPow(complex128(a[i]), complex128(b[i])))
	}
}

// lowerComplexPart compiles real, imag and abs of complex values into f32
// or f64 (rounded once, as eval's storeFloat64 does), and real and imag of
// a real type: the operand's bytes, or zeros.
func lowerComplexPart(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	from, to := in.Operands[0].Shape.DType, in.Shape.DType
	if !from.IsComplex() {
		if in.Opcode == hlo.OpAbs || from != to || storageWidth(to) == 0 {
			return nil, false
		}
		return realPartOfReal(in.Opcode == hlo.OpReal, threads), true
	}
	switch {
	case from == hlo.C64 && to == hlo.F32:
		return partKernel[complex64, float32](in, threads), true
	case from == hlo.C64 && to == hlo.F64:
		return partKernel[complex64, float64](in, threads), true
	case from == hlo.C128 && to == hlo.F32:
		return partKernel[complex128, float32](in, threads), true
	case from == hlo.C128 && to == hlo.F64:
		return partKernel[complex128, float64](in, threads), true
	}
	return nil, false
}

func partKernel[S cplx, D float32 | float64](in *hlo.Instruction, threads int) kernelFunc {
	switch in.Opcode {
	case hlo.OpReal:
		return unaryKernel(in, realParts[S, D], threads)
	case hlo.OpImag:
		return unaryKernel(in, imagParts[S, D], threads)
	}
	return unaryKernel(in, absComplex[S, D], threads)
}

func realParts[S cplx, D float32 | float64](dst []D, src []S) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = D(real(complex128(v)))
	}
}

func imagParts[S cplx, D float32 | float64](dst []D, src []S) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = D(imag(complex128(v)))
	}
}

func absComplex[S cplx, D float32 | float64](dst []D, src []S) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = D(cmplx.Abs(complex128(v)))
	}
}

// realPartOfReal is real (a copy) or imag (zeros) of a real type, on the
// storage bytes, whatever the type.
func realPartOfReal(isReal bool, threads int) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst, src := bytesOf(out), bytesOf(ops[0])
		if len(src) != len(dst) {
			return errEwStorage("real/imag")
		}
		ewSplit(len(dst), threads, func(lo, hi int) {
			if isReal {
				copy(dst[lo:hi], src[lo:hi])
			} else {
				clear(dst[lo:hi])
			}
		})
		return nil
	}
}

// lowerMakeComplex compiles complex(re, im) from f32 or f64 parts (eval's
// evalComplex: the parts read as float64 and rounded once).
func lowerMakeComplex(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	a, b, t := in.Operands[0].Shape.DType, in.Operands[1].Shape.DType, in.Shape.DType
	switch {
	case a != b:
		return nil, false
	case a == hlo.F32 && t == hlo.C64:
		return binaryKernel(in, makeC64[float32], threads), true
	case a == hlo.F64 && t == hlo.C64:
		return binaryKernel(in, makeC64[float64], threads), true
	case a == hlo.F32 && t == hlo.C128:
		return binaryKernel(in, makeC128[float32], threads), true
	case a == hlo.F64 && t == hlo.C128:
		return binaryKernel(in, makeC128[float64], threads), true
	}
	return nil, false
}

func makeC64[S float32 | float64](dst []complex64, re, im []S) {
	im, dst = im[:len(re)], dst[:len(re)]
	for i := range re {
		dst[i] = complex(float32(re[i]), float32(im[i]))
	}
}

func makeC128[S float32 | float64](dst []complex128, re, im []S) {
	im, dst = im[:len(re)], dst[:len(re)]
	for i := range re {
		dst[i] = complex(float64(re[i]), float64(im[i]))
	}
}

// lowerCompareComplex compiles EQ and NE, the only directions the
// evaluator defines on complex values.
func lowerCompareComplex(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	dir, _ := in.EnumAttr("direction")
	a, b := in.Operands[0].Shape.DType, in.Operands[1].Shape.DType
	if (dir != "EQ" && dir != "NE") || a != b || in.Shape.DType != hlo.Pred {
		return nil, false
	}
	eq := dir == "EQ"
	switch a {
	case hlo.C64:
		return binaryKernel(in, func(dst []bool, x, y []complex64) { eqComplex(dst, x, y, eq) }, threads), true
	case hlo.C128:
		return binaryKernel(in, func(dst []bool, x, y []complex128) { eqComplex(dst, x, y, eq) }, threads), true
	}
	return nil, false
}

// eqComplex compares in the storage width: widening is exact, so equality
// is the evaluator's complex128 equality (NaN parts unequal).
func eqComplex[T cplx](dst []bool, a, b []T, eq bool) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = (a[i] == b[i]) == eq
	}
}

// lowerSelectComplex compiles select with a predicate array and complex
// branches (a scalar predicate fails complexShapesOK, as in ewShapesOK).
func lowerSelectComplex(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	p, t, f := in.Operands[0].Shape.DType, in.Operands[1].Shape.DType, in.Operands[2].Shape.DType
	if p != hlo.Pred || t != in.Shape.DType || f != t {
		return nil, false
	}
	switch t {
	case hlo.C64:
		return selectComplexKernel[complex64](in, threads), true
	case hlo.C128:
		return selectComplexKernel[complex128](in, threads), true
	}
	return nil, false
}

func selectComplexKernel[T cplx](in *hlo.Instruction, threads int) kernelFunc {
	name := in.Name
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst, ok0 := out.Data().([]T)
		p, ok1 := ops[0].Data().([]bool)
		a, ok2 := ops[1].Data().([]T)
		b, ok3 := ops[2].Data().([]T)
		if !ok0 || !ok1 || !ok2 || !ok3 || len(p) != len(dst) || len(a) != len(dst) || len(b) != len(dst) {
			return errEwStorage(name)
		}
		ewSplit(len(dst), threads, func(lo, hi int) { selectComplex(dst[lo:hi], p[lo:hi], a[lo:hi], b[lo:hi]) })
		return nil
	}
}

func selectComplex[T cplx](dst []T, p []bool, a, b []T) {
	a, b, dst = a[:len(p)], b[:len(p)], dst[:len(p)]
	for i, c := range p {
		if c {
			dst[i] = a[i]
		} else {
			dst[i] = b[i]
		}
	}
}

// lowerConvertComplex compiles convert into complex types (complex to
// real is an error in the evaluator, as in XLA, and declines).
func lowerConvertComplex(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	from, to := in.Operands[0].Shape.DType, in.Shape.DType
	switch to {
	case hlo.C64:
		return convertToComplex[complex64](in, from, threads)
	case hlo.C128:
		return convertToComplex[complex128](in, from, threads)
	}
	return nil, false
}

// convertToComplex follows hlo.Literal.Convert: complex to complex
// through complex128; integers and floats to c64 are rounded once to
// float32 from the source value (not through float64, which could round
// twice), to c128 converted to float64; narrow floats decode exactly
// through their value table; pred is 0 or 1; the imaginary part is zero.
func convertToComplex[D cplx](in *hlo.Instruction, from hlo.DType, threads int) (kernelFunc, bool) {
	if f, ok := narrowFloatFormat(from); ok {
		tab := f.Values()
		if from.Bits() > 8 {
			return unaryKernel(in, func(dst []D, src []uint16) { narrowToComplex(dst, src, tab) }, threads), true
		}
		return unaryKernel(in, func(dst []D, src []uint8) { narrowToComplex(dst, src, tab) }, threads), true
	}
	switch from {
	case hlo.C64:
		return unaryKernel(in, complexToComplex[complex64, D], threads), true
	case hlo.C128:
		return unaryKernel(in, complexToComplex[complex128, D], threads), true
	case hlo.Pred:
		return unaryKernel(in, predToComplex[D], threads), true
	case hlo.F32:
		return unaryKernel(in, realToComplex[float32, D], threads), true
	case hlo.F64:
		return unaryKernel(in, realToComplex[float64, D], threads), true
	}
	if from.IsInteger() {
		return intToComplex[D](in, from, threads)
	}
	return nil, false
}

// narrowFloatFormat is the minifloat format of the float types stored as
// raw bits (f16, bf16, f8, f4).
func narrowFloatFormat(t hlo.DType) (minifloat.Format, bool) {
	if !t.IsFloat() || t == hlo.F32 || t == hlo.F64 {
		return minifloat.Format{}, false
	}
	return minifloat.ByName(t.String())
}

// intToComplex picks the loop by the integer type's storage (s2/s4 live
// sign-extended in int8, u2/u4 masked in uint8, so their values read
// directly).
func intToComplex[D cplx](in *hlo.Instruction, from hlo.DType, threads int) (kernelFunc, bool) {
	switch hlo.NewLiteral(hlo.ArrayShape(from, 0)).Data().(type) {
	case []int8:
		return unaryKernel(in, realToComplex[int8, D], threads), true
	case []int16:
		return unaryKernel(in, realToComplex[int16, D], threads), true
	case []int32:
		return unaryKernel(in, realToComplex[int32, D], threads), true
	case []int64:
		return unaryKernel(in, realToComplex[int64, D], threads), true
	case []uint8:
		return unaryKernel(in, realToComplex[uint8, D], threads), true
	case []uint16:
		return unaryKernel(in, realToComplex[uint16, D], threads), true
	case []uint32:
		return unaryKernel(in, realToComplex[uint32, D], threads), true
	case []uint64:
		return unaryKernel(in, realToComplex[uint64, D], threads), true
	}
	return nil, false
}

// realToComplex converts each value with one Go conversion to the part
// type, which rounds once to nearest even as the evaluator's does.
func realToComplex[S number, D cplx](dst []D, src []S) {
	dst = dst[:len(src)]
	var z D
	if _, c64 := any(z).(complex64); c64 {
		for i, v := range src {
			dst[i] = D(complex(float32(v), 0))
		}
		return
	}
	for i, v := range src {
		dst[i] = D(complex(float64(v), 0))
	}
}

func complexToComplex[S, D cplx](dst []D, src []S) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = D(complex128(v))
	}
}

func predToComplex[D cplx](dst []D, src []bool) {
	dst = dst[:len(src)]
	for i, v := range src {
		if v {
			dst[i] = 1
		} else {
			dst[i] = 0
		}
	}
}

// narrowToComplex decodes through the format's table (exact in float32
// and float64); the mask keeps a bad storage value from indexing past it.
func narrowToComplex[S uint8 | uint16, D cplx](dst []D, src []S, tab []float64) {
	dst = dst[:len(src)]
	m := len(tab) - 1
	for i, v := range src {
		dst[i] = D(complex(tab[int(v)&m], 0))
	}
}
