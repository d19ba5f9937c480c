package cpu

import (
	"math"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/ddmath"
)

// f32 and f64 elementwise loops, computed as the evaluator computes them
// (eval/elementwise_unary.go, elementwise_binary.go): +, -, *, / in the
// element type, everything else through the same float64 math function
// rounded once to the element type, so results are bit-identical.

// floatKernel picks the loop of in's opcode for T.
func floatKernel[T float32 | float64](in *hlo.Instruction, threads int) (kernelFunc, bool) {
	switch len(in.Operands) {
	case 1:
		if loop := floatUnaryLoop[T](in.Opcode); loop != nil {
			return unaryKernel(in, loop, threads), true
		}
	case 2:
		if loop := floatBinaryLoop[T](in.Opcode); loop != nil {
			return binaryKernel(in, loop, threads), true
		}
	case 3:
		if in.Opcode == hlo.OpClamp {
			return ternaryKernel(in, clampFloats[T], threads), true
		}
	}
	return nil, false
}

func floatBinaryLoop[T float32 | float64](op hlo.Opcode) func(dst, a, b []T) {
	switch op {
	case hlo.OpDivide:
		return divFloats[T]
	case hlo.OpMaximum:
		return maxFloats[T]
	case hlo.OpMinimum:
		return minFloats[T]
	case hlo.OpRemainder:
		return remFloats[T]
	case hlo.OpPower:
		return powFloats[T]
	case hlo.OpAtan2:
		return atan2Floats[T]
	}
	return arithLoop[T](op)
}

func divFloats[T float32 | float64](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = a[i] / b[i]
	}
}

// maxFloats and minFloats propagate NaN, as XLA's maximum and minimum do.
func maxFloats[T float32 | float64](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = kernels.NaNMax(a[i], b[i])
	}
}

func minFloats[T float32 | float64](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = kernels.NaNMin(a[i], b[i])
	}
}

// remFloats is C's fmod, the result taking the dividend's sign.
func remFloats[T float32 | float64](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = T(math.Mod(float64(a[i]), float64(b[i])))
	}
}

// powOf is the evaluator's power: ddmath.Pow32 for float32, Pow for
// float64.
func powOf[T float32 | float64](x, y T) T {
	if x32, ok := any(x).(float32); ok {
		return T(ddmath.Pow32(x32, float32(y)))
	}
	return T(ddmath.Pow(float64(x), float64(y)))
}

func powFloats[T float32 | float64](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = powOf(a[i], b[i])
	}
}

func atan2Floats[T float32 | float64](dst, a, b []T) {
	b, dst = b[:len(a)], dst[:len(a)]
	for i := range a {
		dst[i] = T(math.Atan2(float64(a[i]), float64(b[i])))
	}
}

func clampFloats[T float32 | float64](dst, lo, x, hi []T) {
	lo, hi, dst = lo[:len(x)], hi[:len(x)], dst[:len(x)]
	for i := range x {
		dst[i] = kernels.NaNMin(kernels.NaNMax(x[i], lo[i]), hi[i])
	}
}

// floatUnaryLoop returns the loop of a unary op, or nil.
func floatUnaryLoop[T float32 | float64](op hlo.Opcode) func(dst, src []T) {
	switch op {
	case hlo.OpNegate:
		return negLoop[T]
	case hlo.OpAbs:
		return absFloats[T]
	case hlo.OpSign:
		return signLoop[T]
	case hlo.OpRsqrt:
		return rsqrtFloats[T]
	case hlo.OpLogistic:
		return logisticFloats[T]
	}
	return floatMathLoop[T](op)
}

func absFloats[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Abs(float64(v)))
	}
}

func rsqrtFloats[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(1 / math.Sqrt(float64(v)))
	}
}

func logisticFloats[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(1 / (1 + math.Exp(-float64(v))))
	}
}
