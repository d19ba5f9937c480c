package cpu

import (
	"cmp"
	"math"

	"github.com/axle-ml/axle/hlo"
)

// compare and is-finite, as eval/elementwise_compare.go and
// elementwise_unary.go define them: IEEE comparison for floats (a NaN makes
// every direction but NE false), false < true for pred, and for
// type=TOTALORDER on floats the order -NaN < -inf < -0 < +0 < +inf < +NaN
// of sign-magnitude keys. Go's own operators are exactly the IEEE
// predicates, so one loop per direction serves every type; pred, f16/bf16
// and total-order operands are first converted a chunk at a time.

// lowerCompare picks the loop of in's direction for its operands' type.
func lowerCompare(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if len(in.Operands) != 2 || in.Shape.DType != hlo.Pred {
		return nil, false
	}
	t := in.Operands[0].Shape.DType
	if in.Operands[1].Shape.DType != t {
		return nil, false
	}
	dir, _ := in.EnumAttr("direction")
	if compareLoop[int8](dir) == nil {
		return nil, false
	}
	if typ, _ := in.EnumAttr("type"); typ == "TOTALORDER" && t.IsFloat() {
		return totalOrderCompare(in, t, dir, threads)
	}
	switch t {
	case hlo.F32:
		return binaryKernel(in, compareLoop[float32](dir), threads), true
	case hlo.F64:
		return binaryKernel(in, compareLoop[float64](dir), threads), true
	case hlo.F16, hlo.BF16:
		f, _ := narrowFloat(t)
		tab := f.Values()
		decode := func(dst []float64, src []uint16) {
			for i, v := range src {
				dst[i] = tab[v]
			}
		}
		return keyedCompare(in, decode, compareLoop[float64](dir), threads), true
	case hlo.Pred:
		return keyedCompare(in, predKeys, compareLoop[uint8](dir), threads), true
	}
	return intCompare(in, t, dir, threads)
}

// intCompare instantiates the direction's loop for an integer type.
func intCompare(in *hlo.Instruction, t hlo.DType, dir hlo.Enum, threads int) (kernelFunc, bool) {
	switch t {
	case hlo.S2, hlo.S4, hlo.S8:
		return binaryKernel(in, compareLoop[int8](dir), threads), true
	case hlo.S16:
		return binaryKernel(in, compareLoop[int16](dir), threads), true
	case hlo.S32:
		return binaryKernel(in, compareLoop[int32](dir), threads), true
	case hlo.S64:
		return binaryKernel(in, compareLoop[int64](dir), threads), true
	case hlo.U2, hlo.U4, hlo.U8:
		return binaryKernel(in, compareLoop[uint8](dir), threads), true
	case hlo.U16:
		return binaryKernel(in, compareLoop[uint16](dir), threads), true
	case hlo.U32:
		return binaryKernel(in, compareLoop[uint32](dir), threads), true
	case hlo.U64:
		return binaryKernel(in, compareLoop[uint64](dir), threads), true
	}
	return nil, false
}

// totalOrderCompare compares the keys of the float bit patterns; f8 types
// are left to the evaluator.
func totalOrderCompare(in *hlo.Instruction, t hlo.DType, dir hlo.Enum, threads int) (kernelFunc, bool) {
	switch t {
	case hlo.F32:
		return keyedCompare(in, totalKeysF32, compareLoop[int32](dir), threads), true
	case hlo.F64:
		return keyedCompare(in, totalKeysF64, compareLoop[int64](dir), threads), true
	case hlo.F16, hlo.BF16:
		return keyedCompare(in, totalKeys16, compareLoop[int32](dir), threads), true
	}
	return nil, false
}

// keyedCompare converts ewChunk elements of both operands to keys on the
// stack, then compares the keys. A chunk of both operands is read before
// that chunk of dst is written, so dst may alias either operand.
func keyedCompare[S any, K cmp.Ordered](in *hlo.Instruction, key func(dst []K, src []S), compare func(dst []bool, a, b []K), threads int) kernelFunc {
	return binaryKernel(in, func(dst []bool, a, b []S) {
		var ka, kb [ewChunk]K
		for lo := 0; lo < len(dst); lo += ewChunk {
			hi := min(lo+ewChunk, len(dst))
			key(ka[:hi-lo], a[lo:hi])
			key(kb[:hi-lo], b[lo:hi])
			compare(dst[lo:hi], ka[:hi-lo], kb[:hi-lo])
		}
	}, threads)
}

func predKeys(dst []uint8, src []bool) {
	for i, v := range src {
		dst[i] = 0
		if v {
			dst[i] = 1
		}
	}
}

// totalKeysF32, totalKeysF64 and totalKeys16 flip the magnitude bits of
// negative values so that larger magnitudes sort lower.
func totalKeysF32(dst []int32, src []float32) {
	for i, v := range src {
		k := int32(math.Float32bits(v))
		if k < 0 {
			k ^= math.MaxInt32
		}
		dst[i] = k
	}
}

func totalKeysF64(dst []int64, src []float64) {
	for i, v := range src {
		k := int64(math.Float64bits(v))
		if k < 0 {
			k ^= math.MaxInt64
		}
		dst[i] = k
	}
}

func totalKeys16(dst []int32, src []uint16) {
	for i, v := range src {
		k := int32(int16(v))
		if k < 0 {
			k ^= math.MaxInt16
		}
		dst[i] = k
	}
}

// compareLoop returns the loop of a direction, or nil for an unknown one.
func compareLoop[T cmp.Ordered](dir hlo.Enum) func(dst []bool, a, b []T) {
	switch dir {
	case "EQ":
		return compareEQ[T]
	case "NE":
		return compareNE[T]
	case "LT":
		return compareLT[T]
	case "LE":
		return compareLE[T]
	case "GT":
		return compareGT[T]
	case "GE":
		return compareGE[T]
	}
	return nil
}

func compareEQ[T cmp.Ordered](dst []bool, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] == b[i]
	}
}

func compareNE[T cmp.Ordered](dst []bool, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] != b[i]
	}
}

func compareLT[T cmp.Ordered](dst []bool, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] < b[i]
	}
}

func compareLE[T cmp.Ordered](dst []bool, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] <= b[i]
	}
}

func compareGT[T cmp.Ordered](dst []bool, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] > b[i]
	}
}

func compareGE[T cmp.Ordered](dst []bool, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] >= b[i]
	}
}

// lowerIsFinite covers f32, f64, f16 and bf16 (the evaluator rejects
// integers; f8 types are left to it).
func lowerIsFinite(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if len(in.Operands) != 1 || in.Shape.DType != hlo.Pred {
		return nil, false
	}
	switch t := in.Operands[0].Shape.DType; t {
	case hlo.F32:
		return unaryKernel(in, finiteFloats[float32], threads), true
	case hlo.F64:
		return unaryKernel(in, finiteFloats[float64], threads), true
	case hlo.F16, hlo.BF16:
		f, _ := narrowFloat(t)
		tab := f.Values()
		return unaryKernel(in, func(dst []bool, src []uint16) { finiteNarrow(dst, src, tab) }, threads), true
	}
	return nil, false
}

func finiteFloats[T float32 | float64](dst []bool, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = !math.IsInf(float64(v), 0) && v == v
	}
}

// finiteNarrow decodes through the format's table, as the evaluator does.
func finiteNarrow(dst []bool, src []uint16, tab []float64) {
	dst = dst[:len(src)]
	for i, v := range src {
		x := tab[v]
		dst[i] = !math.IsInf(x, 0) && x == x
	}
}
