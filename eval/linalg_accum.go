package eval

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/xlamath"
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
// Complex products are xlamath.ComplexMul64 and xlamath.ComplexMul128 in both.

// macOps is, for one accumulation type T, the loads of both operands
// (already in the result's element type), the dot's and the
// convolution's multiply-accumulate loops and the store into a literal of
// the result's shape.
type macOps[T any] struct {
	load    func(*hlo.Literal) []T
	dotSum  dotRun[T]
	convSum convRun[T]
	store   func(hlo.Shape, []T) *hlo.Literal
}

// accumulation is a dot and a convolution over literals, computed in the
// accumulation type of one result element type: the macOps of each type
// behind one interface, since Go cannot pass the generic loops
// uninstantiated.
type accumulation interface {
	dot(p *dotPlan, s hlo.Shape, l, r *hlo.Literal) *hlo.Literal
	conv(p *convPlan, s hlo.Shape, l, r *hlo.Literal) *hlo.Literal
}

// accumulationFor returns the accumulation for result element type t.
func accumulationFor(t hlo.DType) accumulation {
	switch {
	case t == hlo.F64:
		return &macF64
	case t.IsFloat():
		return &macF32
	case t == hlo.C64:
		return &macC64
	case t.IsComplex():
		return &macC128
	}
	return &macInt
}

// dotRun adds l[lo+lc[k]]·r[ro+rc[k]] to acc for k in order.
type dotRun[T any] func(acc T, l, r []T, lo, ro int, lc, rc []int) T

// convRun adds l[lo+i·ls]·r[ro+i·rs] to acc for i in [0, n) in order.
type convRun[T any] func(acc T, l, r []T, lo, ls, ro, rs, n int) T

func dotF32(acc float32, l, r []float32, lo, ro int, lc, rc []int) float32 {
	for k, c := range lc {
		acc = xlamath.FMA32(l[lo+c], r[ro+rc[k]], acc)
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
	dotC64, convC64   = complexRuns(xlamath.ComplexMul64)
	dotC128, convC128 = complexRuns(xlamath.ComplexMul128)
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

// loadNarrowed returns a load of T values for an accumulation narrower
// than the wide type its literals load as: a literal stored as T is used
// as it is, any other is loaded wide and narrowed element by element.
func loadNarrowed[T, W any](wide func(*hlo.Literal) []W, narrow func(W) T) func(*hlo.Literal) []T {
	return func(l *hlo.Literal) []T {
		if d, ok := l.Data().([]T); ok {
			return d
		}
		return convertEach(wide(l), narrow)
	}
}

// storeWidened returns a store of T values through the wide store.
func storeWidened[T, W any](wide func(hlo.Shape, []W) *hlo.Literal, widen func(T) W) func(hlo.Shape, []T) *hlo.Literal {
	return func(s hlo.Shape, v []T) *hlo.Literal { return wide(s, convertEach(v, widen)) }
}

func convertEach[From, To any](v []From, conv func(From) To) []To {
	out := make([]To, len(v))
	for i, x := range v {
		out[i] = conv(x)
	}
	return out
}

// The accumulations by result element type.
var (
	macF32 = macOps[float32]{
		// Narrowing is exact: the element type is at most f32 wide.
		load:    loadNarrowed(loadFloat64, func(x float64) float32 { return float32(x) }),
		dotSum:  dotF32,
		convSum: convRounded[float32],
		store:   storeWidened(storeFloat64, func(x float32) float64 { return float64(x) }),
	}
	macF64 = macOps[float64]{
		load:    loadFloat64,
		dotSum:  dotF64,
		convSum: convRounded[float64],
		store:   storeFloat64,
	}
	macC64 = macOps[complex64]{
		load:    loadNarrowed(loadComplex128, func(x complex128) complex64 { return complex64(x) }),
		dotSum:  dotC64,
		convSum: convC64,
		store:   storeWidened(storeComplex128, func(x complex64) complex128 { return complex128(x) }),
	}
	macC128 = macOps[complex128]{
		load:    loadComplex128,
		dotSum:  dotC128,
		convSum: convC128,
		store:   storeComplex128,
	}
	macInt = macOps[int64]{
		load:    loadInt64,
		dotSum:  dotInt,
		convSum: convRounded[int64],
		store:   storeInt64,
	}
)

// complexMul is x*y computed in T's precision (x and y hold T's values).
func complexMul[T nativeCplx](x, y complex128) complex128 {
	var z T
	if _, ok := any(z).(complex64); ok {
		return complex128(xlamath.ComplexMul64(complex64(x), complex64(y)))
	}
	return xlamath.ComplexMul128(x, y)
}
