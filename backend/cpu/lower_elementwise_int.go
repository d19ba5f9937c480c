package cpu

import (
	"math"
	"math/bits"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Integer and pred elementwise loops, with XLA's integer semantics as the
// evaluator implements them (eval/elementwise_binary.go): wrap-around
// arithmetic, x/0 = -1, x%0 = x, INT_MIN/-1 = INT_MIN, shift amounts
// compared as unsigned against the width. s2/s4/u2/u4 compute in their
// 8-bit storage and are re-wrapped to their width after each op.

// lowerInts instantiates intKernel for the result's storage type.
func lowerInts(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	t := in.Shape.DType
	w := t.Bits()
	switch t {
	case hlo.S2, hlo.S4, hlo.S8:
		return intKernel[int8](in, w, threads)
	case hlo.S16:
		return intKernel[int16](in, w, threads)
	case hlo.S32:
		return intKernel[int32](in, w, threads)
	case hlo.S64:
		return intKernel[int64](in, w, threads)
	case hlo.U2, hlo.U4, hlo.U8:
		return intKernel[uint8](in, w, threads)
	case hlo.U16:
		return intKernel[uint16](in, w, threads)
	case hlo.U32:
		return intKernel[uint32](in, w, threads)
	case hlo.U64:
		return intKernel[uint64](in, w, threads)
	}
	return nil, false
}

// intKernel picks the loop of in's opcode for storage type T and element
// width bits.
func intKernel[T integer](in *hlo.Instruction, width, threads int) (kernelFunc, bool) {
	switch len(in.Operands) {
	case 1:
		if loop := intUnaryLoop[T](in.Opcode, width); loop != nil {
			return unaryKernel(in, wrapUnary(loop, width), threads), true
		}
	case 2:
		if loop := intBinaryLoop[T](in.Opcode, width); loop != nil {
			return binaryKernel(in, wrapBinary(loop, width), threads), true
		}
	case 3:
		// Clamp's result lies between its inputs: nothing to re-wrap.
		if in.Opcode == hlo.OpClamp {
			return ternaryKernel(in, clampInts[T], threads), true
		}
	}
	return nil, false
}

// wrapLoop re-establishes the storage invariant of a width-bit integer in
// 8-bit storage: signed values sign-extended, unsigned ones masked.
func wrapLoop[T integer](width int) func(dst []T) {
	if kernels.Signed[T]() {
		s := 64 - width
		return func(dst []T) {
			for i, v := range dst {
				dst[i] = T(int64(uint64(v)<<s) >> s)
			}
		}
	}
	m := T(1)<<width - 1
	return func(dst []T) {
		for i := range dst {
			dst[i] &= m
		}
	}
}

func wrapUnary[T integer](loop func(dst, src []T), width int) func(dst, src []T) {
	if width >= 8 {
		return loop
	}
	wrap := wrapLoop[T](width)
	return func(dst, src []T) { loop(dst, src); wrap(dst) }
}

func wrapBinary[T integer](loop func(dst, a, b []T), width int) func(dst, a, b []T) {
	if width >= 8 {
		return loop
	}
	wrap := wrapLoop[T](width)
	return func(dst, a, b []T) { loop(dst, a, b); wrap(dst) }
}

// intBinaryLoop returns the loop of a binary op, or nil.
func intBinaryLoop[T integer](op hlo.Opcode, width int) func(dst, a, b []T) {
	if loop := arithLoop[T](op); loop != nil {
		return loop
	}
	switch op {
	case hlo.OpDivide:
		return divInts[T]
	case hlo.OpRemainder:
		return remInts[T]
	case hlo.OpMaximum:
		return maxInts[T]
	case hlo.OpMinimum:
		return minInts[T]
	case hlo.OpAnd:
		return andInts[T]
	case hlo.OpOr:
		return orInts[T]
	case hlo.OpXor:
		return xorInts[T]
	case hlo.OpPower:
		return powInts[T]
	}
	return intShiftLoop[T](op, width)
}

// intShiftLoop returns the loop of a width-dependent binary op, or nil.
func intShiftLoop[T integer](op hlo.Opcode, width int) func(dst, a, b []T) {
	mask := uint64(math.MaxUint64) >> (64 - width)
	switch op {
	case hlo.OpShiftLeft:
		return func(dst, a, b []T) { shiftLeftInts(dst, a, b, mask, width) }
	case hlo.OpShiftRightLogical:
		return func(dst, a, b []T) { shiftRightLogicalInts(dst, a, b, mask, width) }
	case hlo.OpShiftRightArithmetic:
		return func(dst, a, b []T) { shiftRightArithInts(dst, a, b, mask, width) }
	case hlo.OpMulhi:
		if width == 64 {
			if kernels.Signed[T]() {
				return mulhiSigned64[T]
			}
			return mulhiUnsigned64[T]
		}
		return func(dst, a, b []T) { mulhiNarrow(dst, a, b, width) }
	}
	return nil
}

func divInts[T integer](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		if b[i] == 0 {
			dst[i] = ^T(0)
		} else {
			dst[i] = a[i] / b[i]
		}
	}
}

func remInts[T integer](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		if b[i] == 0 {
			dst[i] = a[i]
		} else {
			dst[i] = a[i] % b[i]
		}
	}
}

func maxInts[T integer](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = max(a[i], b[i])
	}
}

func minInts[T integer](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = min(a[i], b[i])
	}
}

func andInts[T integer](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] & b[i]
	}
}

func orInts[T integer](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] | b[i]
	}
}

func xorInts[T integer](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] ^ b[i]
	}
}

func shiftLeftInts[T integer](dst, a, b []T, mask uint64, width int) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		if n := uint64(b[i]) & mask; n < uint64(width) {
			dst[i] = a[i] << n
		} else {
			dst[i] = 0
		}
	}
}

func shiftRightLogicalInts[T integer](dst, a, b []T, mask uint64, width int) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		if n := uint64(b[i]) & mask; n < uint64(width) {
			dst[i] = T((uint64(a[i]) & mask) >> n)
		} else {
			dst[i] = 0
		}
	}
}

// shiftRightArithInts fills with the sign bit for amounts of the width or
// more, the same as shifting by width-1.
func shiftRightArithInts[T integer](dst, a, b []T, mask uint64, width int) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		n := min(uint64(b[i])&mask, uint64(width-1))
		v := int64(uint64(a[i])<<(64-width)) >> (64 - width)
		dst[i] = T(v >> n)
	}
}

func powInts[T integer](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = kernels.IntPow(a[i], b[i])
	}
}

// mulhiNarrow is the high half of the double-width product for widths
// below 64, which fits in 64 bits.
func mulhiNarrow[T integer](dst, a, b []T, width int) {
	b, dst = b[:len(a)], dst[:len(a)]
	if kernels.Signed[T]() {
		for i := range a {
			dst[i] = T((int64(a[i]) * int64(b[i])) >> width)
		}
		return
	}
	mask := uint64(math.MaxUint64) >> (64 - width)
	for i := range a {
		dst[i] = T(((uint64(a[i]) & mask) * (uint64(b[i]) & mask)) >> width)
	}
}

func mulhiUnsigned64[T integer](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		hi, _ := bits.Mul64(uint64(a[i]), uint64(b[i]))
		dst[i] = T(hi)
	}
}

// mulhiSigned64 corrects the unsigned high word for two's complement.
func mulhiSigned64[T integer](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		x, y := a[i], b[i]
		hi, _ := bits.Mul64(uint64(x), uint64(y))
		if x < 0 {
			hi -= uint64(y)
		}
		if y < 0 {
			hi -= uint64(x)
		}
		dst[i] = T(hi)
	}
}

func clampInts[T integer](dst, lo, x, hi []T) {
	lo, hi, dst = lo[:len(x)], hi[:len(x)], dst[:len(x)]
	for i := range x {
		dst[i] = min(max(x[i], lo[i]), hi[i])
	}
}

// intUnaryLoop returns the loop of a unary op, or nil.
func intUnaryLoop[T integer](op hlo.Opcode, width int) func(dst, src []T) {
	mask := uint64(math.MaxUint64) >> (64 - width)
	switch op {
	case hlo.OpNegate:
		return negLoop[T]
	case hlo.OpNot:
		return notInts[T]
	case hlo.OpAbs:
		return absInts[T]
	case hlo.OpSign:
		return signLoop[T]
	case hlo.OpPopulationCount:
		return func(dst, src []T) { popcntInts(dst, src, mask) }
	case hlo.OpClz:
		return func(dst, src []T) { clzInts(dst, src, mask, width) }
	}
	return nil
}

func notInts[T integer](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = ^v
	}
}

func absInts[T integer](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		if v < 0 {
			v = -v
		}
		dst[i] = v
	}
}

func popcntInts[T integer](dst, src []T, mask uint64) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(bits.OnesCount64(uint64(v) & mask))
	}
}

func clzInts[T integer](dst, src []T, mask uint64, width int) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(bits.LeadingZeros64(uint64(v)&mask) - (64 - width))
	}
}

// lowerPred covers the evaluator's pred ops: not, the logical binary ops
// (with min/multiply as and, max/add as or, subtract as xor), and clamp.
func lowerPred(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	switch in.Opcode {
	case hlo.OpNot:
		return unaryKernel(in, notPreds, threads), true
	case hlo.OpAnd, hlo.OpMinimum, hlo.OpMultiply:
		return binaryKernel(in, andPreds, threads), true
	case hlo.OpOr, hlo.OpMaximum, hlo.OpAdd:
		return binaryKernel(in, orPreds, threads), true
	case hlo.OpXor, hlo.OpSubtract:
		return binaryKernel(in, xorPreds, threads), true
	case hlo.OpClamp:
		return ternaryKernel(in, clampPreds, threads), true
	}
	return nil, false
}

func notPreds(dst, src []bool) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = !v
	}
}

func andPreds(dst, a, b []bool) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] && b[i]
	}
}

func orPreds(dst, a, b []bool) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] || b[i]
	}
}

func xorPreds(dst, a, b []bool) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] != b[i]
	}
}

// clampPreds orders false < true: clamp is x || lo, then && hi.
func clampPreds(dst, lo, x, hi []bool) {
	lo, hi, dst = lo[:len(x)], hi[:len(x)], dst[:len(x)]
	for i := range x {
		dst[i] = (x[i] || lo[i]) && hi[i]
	}
}
