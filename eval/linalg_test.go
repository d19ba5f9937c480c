package eval_test

import (
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

func laRunHLO(t *testing.T, text string, args ...*hlo.Literal) *hlo.Literal {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func laLit[T hlo.Native](t *testing.T, data []T, dims ...int64) *hlo.Literal {
	t.Helper()
	l, err := hlo.LiteralFromSlice(data, dims...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func laWant[T hlo.Native](t *testing.T, got *hlo.Literal, want ...T) {
	t.Helper()
	g, err := hlo.LiteralToSlice[T](got)
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != len(want) {
		t.Fatalf("got %v, want %v", g, want)
	}
	for i := range g {
		if g[i] != want[i] {
			t.Fatalf("got %v, want %v", g, want)
		}
	}
}

// XLA's HloEvaluator (HandleDotSlowPath) accumulates an f32 dot in f32,
// each product rounded and added in contracting order: 1e8 + 1 rounds back
// to 1e8, so 1e8 + 1 - 1e8 is 0, not the exact 1.
func TestDotAccumulatesInF32InOrder(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}`, laLit(t, []float32{1e8, 1, -1e8}, 3), laLit(t, []float32{1, 1, 1}, 3))
	laWant(t, got, float32(0))
}

// Each product is fused into the running sum, fma(a, b, acc), as XLA's
// CPU backend's dot loop computes it: with a = 1+2^-12, -1·1 + a·a is
// a² - 1 = 2^-11+2^-24 exactly; rounding a² first would give 2^-11.
func TestDotFusesEachProduct(t *testing.T) {
	a := float32(1 + 1.0/4096)
	got := laRunHLO(t, `HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}`, laLit(t, []float32{-1, a}, 2), laLit(t, []float32{1, a}, 2))
	laWant(t, got, float32(1.0/2048+1.0/(1<<24)))
}

// Row 3 times column 0 of ../shared/corpus/stablehlo/testdata/
// dot_general_int32_4_3_float32_3_6.mlir, whose expected value JAX computed
// on XLA's CPU backend: 6*1.56930411 - 4*2.01026917 - 2*0.684506536 summed
// in f32 in order is 0.00573515892; in float64 and rounded once it would be
// 0.0057349205.
func TestDotMatchesXLAOnCancellingSum(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}`, laLit(t, []float32{6, -4, -2}, 3), laLit(t, []float32{1.56930411, 2.01026917, 0.684506536}, 3))
	laWant(t, got, float32(0.00573515892))
}

// XLA's evaluator accumulates bf16 in float (HloEvaluatorTypedVisitor<
// bfloat16, float>) and rounds once: 256 + 1 + 1 is 258 in f32, which bf16
// holds; summed in bf16 each +1 would round back to 256.
func TestDotBF16AccumulatesInF32(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  a = bf16[3] constant({256, 1, 1})
  b = bf16[3] constant({1, 1, 1})
  d = bf16[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT c = f32[] convert(d)
}`)
	laWant(t, got, float32(258))
}

// A c64 dot multiplies as XLA's CPU backend does (ComplexMul64), the real
// part fma(a, c, -(b*d)): with x = (1+2^-12)(1+i), x·x has real part
// a² - round(a²), the rounding error of a² = 1+2^-11+2^-24, which is
// 2^-24; a product computed exactly (Go's complex64 multiply) or from
// four rounded products gives 0. The imaginary part 2a² rounds to
// 2+2^-10 either way.
func TestDotC64FusesProducts(t *testing.T) {
	e := float32(1 + 1.0/4096)
	x := complex(e, e)
	got := laRunHLO(t, `HloModule m
ENTRY e {
  a = c64[1] parameter(0)
  b = c64[1] parameter(1)
  ROOT d = c64[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}`, laLit(t, []complex64{x}, 1), laLit(t, []complex64{x}, 1))
	laWant(t, got, complex(float32(1.0/(1<<24)), float32(2+1.0/1024)))
}

// operation_semantics, Dot: the result element type may differ from the
// operands' (preferred element type); integer results wrap in that type.
func TestDotIntegerWrapsInResultType(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  a = s32[2] parameter(0)
  b = s32[2] parameter(1)
  ROOT d = s8[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}`, laLit(t, []int32{100, 100}, 2), laLit(t, []int32{1, 1}, 2))
	laWant(t, got, int8(-56))
}

// operation_semantics, Dot (DotGeneral): the result dimensions are the
// batch dimensions, then the lhs free, then the rhs free dimensions.
func TestDotGeneralResultDimensionOrder(t *testing.T) {
	// lhs [k=2, b=1, m=2], rhs [n=1, b=1, k=2]: result [b, m, n].
	got := laRunHLO(t, `HloModule m
ENTRY e {
  a = f32[2,1,2] parameter(0)
  b = f32[1,1,2] parameter(1)
  ROOT d = f32[1,2,1] dot(a, b), lhs_batch_dims={1}, rhs_batch_dims={1}, lhs_contracting_dims={0}, rhs_contracting_dims={2}
}`, laLit(t, []float32{1, 2, 3, 4}, 2, 1, 2), laLit(t, []float32{10, 100}, 1, 1, 2))
	// m=0: 1*10 + 3*100; m=1: 2*10 + 4*100.
	laWant(t, got, float32(310), float32(420))
}

// operation_semantics, Conv: window_reversal flips the kernel along that
// spatial dimension.
func TestConvolutionWindowReversal(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  x = f32[1,1,3] parameter(0)
  k = f32[1,1,2] parameter(1)
  ROOT c = f32[1,1,2] convolution(x, k), window={size=2 rhs_reversal=1}, dim_labels=bf0_oi0->bf0
}`, laLit(t, []float32{1, 2, 3}, 1, 1, 3), laLit(t, []float32{1, 10}, 1, 1, 2))
	laWant(t, got, float32(1*10+2*1), float32(2*10+3*1))
}

// XLA's evaluator accumulates an f32 convolution in f32 too, kernel
// position by position: 1e8 + 1 - 1e8 is 0.
func TestConvolutionAccumulatesInF32InOrder(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  x = f32[1,1,3] parameter(0)
  k = f32[1,1,3] parameter(1)
  ROOT c = f32[1,1,1] convolution(x, k), window={size=3}, dim_labels=bf0_oi0->bf0
}`, laLit(t, []float32{1e8, 1, -1e8}, 1, 1, 3), laLit(t, []float32{1, 1, 1}, 1, 1, 3))
	laWant(t, got, float32(0))
}

// A convolution rounds each product before adding it, as XLA's
// HloEvaluator does: -1·1 + a·a with a = 1+2^-12 is 2^-11 (a² rounds to
// 1+2^-11), where the dot's fused step gives 2^-11+2^-24.
func TestConvolutionRoundsEachProduct(t *testing.T) {
	a := float32(1 + 1.0/4096)
	got := laRunHLO(t, `HloModule m
ENTRY e {
  x = f32[1,1,2] parameter(0)
  k = f32[1,1,2] parameter(1)
  ROOT c = f32[1,1,1] convolution(x, k), window={size=2}, dim_labels=bf0_oi0->bf0
}`, laLit(t, []float32{-1, a}, 1, 1, 2), laLit(t, []float32{1, a}, 1, 1, 2))
	laWant(t, got, float32(1.0/2048))
}

// operation_semantics, ReduceWindow: base dilation inserts holes that hold
// the init value, so they do not change a sum.
func TestReduceWindowBaseDilationHoles(t *testing.T) {
	got := laRunHLO(t, `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[4] reduce-window(x, z), window={size=2 lhs_dilate=2}, to_apply=add
}`, laLit(t, []float32{1, 2, 3}, 3), hlo.ScalarLiteral(float32(0)))
	laWant(t, got, float32(1), float32(2), float32(2), float32(3))
}

// operation_semantics, Sort: with is_stable=true, elements the comparator
// considers equal keep their relative order.
func TestSortStableKeepsEqualKeysInOrder(t *testing.T) {
	got := laRunHLO(t, `HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = s32[5] parameter(0)
  v = s32[5] parameter(1)
  ROOT s = (s32[5], s32[5]) sort(k, v), dimensions={0}, is_stable=true, to_apply=cmp
}`, laLit(t, []int32{2, 1, 2, 1, 0}, 5), laLit(t, []int32{0, 1, 2, 3, 4}, 5))
	laWant(t, got.Elements()[0], int32(0), int32(1), int32(1), int32(2), int32(2))
	laWant(t, got.Elements()[1], int32(4), int32(1), int32(3), int32(0), int32(2))
}

// XLA TopK: largest defaults to true; equal values keep the lower index
// first.
func TestTopKTiesLowerIndexFirst(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  x = f32[5] parameter(0)
  ROOT t = (f32[3], s32[3]) topk(x), k=3
}`, laLit(t, []float32{1, 5, 3, 5, 0}, 5))
	laWant(t, got.Elements()[0], float32(5), float32(5), float32(3))
	laWant(t, got.Elements()[1], int32(1), int32(3), int32(2))
}

// operation_semantics, SelectAndScatter: with a GE select the first of
// equal maxima in the window is chosen, and overlapping windows scatter
// into the same position.
func TestSelectAndScatterOverlappingWindows(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  src = f32[3] parameter(1)
  z = f32[] parameter(2)
  ROOT r = f32[4] select-and-scatter(x, src, z), window={size=2}, select=ge, scatter=add
}`, laLit(t, []float32{1, 7, 7, 2}, 4), laLit(t, []float32{1, 10, 100}, 3), hlo.ScalarLiteral(float32(0)))
	// windows {0,1}->1, {1,2}->1 (first of equal), {2,3}->2.
	laWant(t, got, float32(0), float32(11), float32(100), float32(0))
}
