package cpu

import (
	"math"

	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// The loops of the unary math ops on f32 and f64: each element computed
// in float64 by the op's one definition (tile.FloatFunc, which the tile
// programs use too) and rounded once, as the evaluator does. Square root,
// floor, ceiling and the roundings are single instructions the compiler
// inlines, so they keep loops of their own: through a function value each
// element would cost a call.

// floatMathLoop returns the loop of op, or nil.
func floatMathLoop[T float32 | float64](op hlo.Opcode) func(dst, src []T) {
	switch op {
	case hlo.OpSqrt:
		return mathSqrt[T]
	case hlo.OpFloor:
		return mathFloor[T]
	case hlo.OpCeil:
		return mathCeil[T]
	case hlo.OpRoundNearestEven:
		return mathRoundToEven[T]
	}
	if f, ok := tile.FloatFunc(op); ok && op != hlo.OpSign {
		return func(dst, src []T) {
			dst = dst[:len(src)]
			for i, v := range src {
				dst[i] = T(f(float64(v)))
			}
		}
	}
	return nil
}

func mathSqrt[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Sqrt(float64(v)))
	}
}

func mathFloor[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Floor(float64(v)))
	}
}

func mathCeil[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Ceil(float64(v)))
	}
}

func mathRoundToEven[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.RoundToEven(float64(v)))
	}
}
