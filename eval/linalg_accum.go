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
// convolution's multiply-accumulate step and the store into a literal of
// the result's shape.
type macOps[T any] struct {
	load      func(*hlo.Literal) []T
	dot, conv func(acc, a, b T) T
	store     func(hlo.Shape, []T) *hlo.Literal
}

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

// The accumulations by result element type. The explicit conversions of
// products round them, so that no platform fuses them on its own.
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
		dot:  func(acc, a, b float32) float32 { return FMA32(a, b, acc) },
		conv: func(acc, a, b float32) float32 { return acc + float32(a*b) },
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
		dot:   func(acc, a, b float64) float64 { return math.FMA(a, b, acc) },
		conv:  func(acc, a, b float64) float64 { return acc + float64(a*b) },
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
		dot:  addMulC64,
		conv: addMulC64,
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
		dot:   addMulC128,
		conv:  addMulC128,
		store: storeComplex128,
	}
	macInt = macOps[int64]{
		load:  loadInt64,
		dot:   addMulInt,
		conv:  addMulInt,
		store: storeInt64,
	}
)

func addMulC64(acc, a, b complex64) complex64 {
	p := ComplexMul64(a, b)
	return complex(real(acc)+real(p), imag(acc)+imag(p))
}

func addMulC128(acc, a, b complex128) complex128 {
	p := ComplexMul128(a, b)
	return complex(real(acc)+real(p), imag(acc)+imag(p))
}

func addMulInt(acc, a, b int64) int64 { return acc + a*b }
