package eval

import (
	"math"

	"github.com/axle-ml/axle/hlo"
)

// Dot and convolution accumulate in the result's element type, in order,
// as XLA does, rather than exactly: the operands are converted to the
// result's element type, and products are added one at a time in order of
// the contracting index (dot) or of kernel position, then input feature
// (convolution). The accumulator is the result's own type for f32, f64,
// c64 and c128; float32 for the narrower floats (f16, bf16, f8, f4; XLA's
// HloEvaluatorTypedVisitor<bfloat16, float>), rounded once to the result;
// and 64-bit wraparound for integers, truncated to the result width.
//
// Where the two XLA implementations differ, the corpus decides (its
// expected values are JAX's on XLA's CPU backend):
//   - a dot fuses each product into the running sum, acc = fma(a, b, acc),
//     as the loop XLA's CPU backend emits does once LLVM contracts it. Of
//     the 43 dot_general files ../shared/corpus/stablehlo runs, this
//     matches every element bit for bit in 42 (all but c64×c64→c128,
//     which XLA computes another way, within the check's tolerance);
//     rounding each product first (the evaluator's acc += a*b) in 34.
//   - a convolution rounds each product, acc += a*b, as XLA's
//     HloEvaluator does. XLA's CPU backend emits some convolutions as its
//     own loops and hands others to Eigen, so neither rule is its: of the
//     11 conv_general_dilated files the fused rule matches 8 bit for bit
//     and this one 2, but the fused one falls outside the check's
//     tolerance on conv_general_dilated_float32_2_3_9_float32_12_1_3.mlir
//     (whose element 20 is the rounded sum) where this one stays inside
//     it on all 11.
// Complex products are ComplexMul64 and ComplexMul128 in both.

// macOps is, for one accumulation type T, the loads of both operands
// (already in the result's element type), the dot's and the
// convolution's multiply-accumulate loops and the store into a literal of
// the result's shape.
type macOps[T any] struct {
	load  func(*hlo.Literal) []T
	dot   dotRun[T]
	conv  convRun[T]
	store func(hlo.Shape, []T) *hlo.Literal
}

// dotRun adds l[lo+lc[k]]·r[ro+rc[k]] to acc for k in order.
type dotRun[T any] func(acc T, l, r []T, lo, ro int, lc, rc []int) T

// convRun adds l[lo+i·ls]·r[ro+i·rs] to acc for i in [0, n) in order.
type convRun[T any] func(acc T, l, r []T, lo, ls, ro, rs, n int) T

func dotF32(acc float32, l, r []float32, lo, ro int, lc, rc []int) float32 {
	for k, c := range lc {
		acc = FMA32(l[lo+c], r[ro+rc[k]], acc)
	}
	return acc
}

func dotF64(acc float64, l, r []float64, lo, ro int, lc, rc []int) float64 {
	for k, c := range lc {
		acc = math.FMA(l[lo+c], r[ro+rc[k]], acc)
	}
	return acc
}

func dotInt(acc int64, l, r []int64, lo, ro int, lc, rc []int) int64 {
	for k, c := range lc {
		acc += l[lo+c] * r[ro+rc[k]]
	}
	return acc
}

// convRounded rounds each product before adding it (the conversion keeps
// any platform from fusing the two).
func convRounded[T float32 | float64 | int64](acc T, l, r []T, lo, ls, ro, rs, n int) T {
	for i := range n {
		acc += T(l[lo+i*ls] * r[ro+i*rs])
	}
	return acc
}

// complexRuns are the dot's and convolution's loops over a complex
// multiply.
func complexRuns[T complex64 | complex128](mul func(a, b T) T) (dotRun[T], convRun[T]) {
	return func(acc T, l, r []T, lo, ro int, lc, rc []int) T {
			for k, c := range lc {
				acc += mul(l[lo+c], r[ro+rc[k]])
			}
			return acc
		}, func(acc T, l, r []T, lo, ls, ro, rs, n int) T {
			for i := range n {
				acc += mul(l[lo+i*ls], r[ro+i*rs])
			}
			return acc
		}
}

var (
	dotC64, convC64   = complexRuns(ComplexMul64)
	dotC128, convC128 = complexRuns(ComplexMul128)
)

// AccumOperand is a dot or convolution operand converted to the result's
// element type t, as XLA converts an operand whose type differs from the
// result's (preferred_element_type) before accumulating. Integer and pred
// operands are returned as they are: their 64-bit wrapping sums, truncated
// to the result, give the same bits as converting first.
func AccumOperand(l *hlo.Literal, t hlo.DType) *hlo.Literal {
	if l.DType() == t {
		return l
	}
	s := hlo.Shape{DType: t, Dims: l.Shape().Dims}
	switch kindOf(t) {
	case kindFloat:
		return storeFloat64(s, loadFloat64(l))
	case kindComplex:
		return storeComplex128(s, loadComplex128(l))
	}
	return l
}

// The accumulations by result element type.
var (
	macF32 = macOps[float32]{
		load: func(l *hlo.Literal) []float32 {
			if d, ok := l.Data().([]float32); ok {
				return d
			}
			v := loadFloat64(l)
			out := make([]float32, len(v))
			for i, x := range v {
				out[i] = float32(x) // exact: the element type is at most f32 wide
			}
			return out
		},
		dot:  dotF32,
		conv: convRounded[float32],
		store: func(s hlo.Shape, v []float32) *hlo.Literal {
			w := make([]float64, len(v))
			for i, x := range v {
				w[i] = float64(x)
			}
			return storeFloat64(s, w)
		},
	}
	macF64 = macOps[float64]{
		load:  loadFloat64,
		dot:   dotF64,
		conv:  convRounded[float64],
		store: storeFloat64,
	}
	macC64 = macOps[complex64]{
		load: func(l *hlo.Literal) []complex64 {
			if d, ok := l.Data().([]complex64); ok {
				return d
			}
			v := loadComplex128(l)
			out := make([]complex64, len(v))
			for i, x := range v {
				out[i] = complex64(x)
			}
			return out
		},
		dot:  dotC64,
		conv: convC64,
		store: func(s hlo.Shape, v []complex64) *hlo.Literal {
			w := make([]complex128, len(v))
			for i, x := range v {
				w[i] = complex128(x)
			}
			return storeComplex128(s, w)
		},
	}
	macC128 = macOps[complex128]{
		load:  loadComplex128,
		dot:   dotC128,
		conv:  convC128,
		store: storeComplex128,
	}
	macInt = macOps[int64]{
		load:  loadInt64,
		dot:   dotInt,
		conv:  convRounded[int64],
		store: storeInt64,
	}
)
