package cpu

import (
	"math"

	"github.com/axle-ml/axle/hlo"
)

// One loop per float64 math function the evaluator applies to f32 and f64
// (its floatFuncs table plus sqrt, floor, ceil and the roundings): a
// function value called per element would cost more than the cheap ones.

// floatMathLoop returns the loop of op, or nil.
func floatMathLoop[T float32 | float64](op hlo.Opcode) func(dst, src []T) {
	switch op {
	case hlo.OpSqrt:
		return mathSqrt[T]
	case hlo.OpFloor:
		return mathFloor[T]
	case hlo.OpCeil:
		return mathCeil[T]
	case hlo.OpRoundNearestAfz:
		return mathRound[T]
	case hlo.OpRoundNearestEven:
		return mathRoundToEven[T]
	case hlo.OpCbrt:
		return mathCbrt[T]
	case hlo.OpCos:
		return mathCos[T]
	case hlo.OpErf:
		return mathErf[T]
	case hlo.OpExp:
		return mathExp[T]
	case hlo.OpExpm1:
		return mathExpm1[T]
	case hlo.OpLog:
		return mathLog[T]
	case hlo.OpLog1p:
		return mathLog1p[T]
	case hlo.OpSin:
		return mathSin[T]
	case hlo.OpTan:
		return mathTan[T]
	case hlo.OpTanh:
		return mathTanh[T]
	case hlo.OpAtan:
		return mathAtan[T]
	case hlo.OpAtanh:
		return mathAtanh[T]
	case hlo.OpCosh:
		return mathCosh[T]
	case hlo.OpSinh:
		return mathSinh[T]
	case hlo.OpAcos:
		return mathAcos[T]
	case hlo.OpAcosh:
		return mathAcosh[T]
	case hlo.OpAsin:
		return mathAsin[T]
	case hlo.OpAsinh:
		return mathAsinh[T]
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

func mathRound[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Round(float64(v)))
	}
}

func mathRoundToEven[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.RoundToEven(float64(v)))
	}
}

func mathCbrt[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Cbrt(float64(v)))
	}
}

func mathCos[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Cos(float64(v)))
	}
}

func mathErf[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Erf(float64(v)))
	}
}

func mathExp[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Exp(float64(v)))
	}
}

func mathExpm1[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Expm1(float64(v)))
	}
}

func mathLog[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Log(float64(v)))
	}
}

func mathLog1p[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Log1p(float64(v)))
	}
}

func mathSin[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Sin(float64(v)))
	}
}

func mathTan[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Tan(float64(v)))
	}
}

func mathTanh[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Tanh(float64(v)))
	}
}

func mathAtan[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Atan(float64(v)))
	}
}

func mathAtanh[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Atanh(float64(v)))
	}
}

func mathCosh[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Cosh(float64(v)))
	}
}

func mathSinh[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Sinh(float64(v)))
	}
}

func mathAcos[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Acos(float64(v)))
	}
}

func mathAcosh[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Acosh(float64(v)))
	}
}

func mathAsin[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Asin(float64(v)))
	}
}

func mathAsinh[T float32 | float64](dst, src []T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = T(math.Asinh(float64(v)))
	}
}
