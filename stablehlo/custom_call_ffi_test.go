package stablehlo

import (
	"math"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// A module as jax.jit(jnp.linalg.cholesky / lax.linalg.lu).lower(x).as_text()
// prints it for the CPU: typed-FFI LAPACK calls whose attributes sit in
// mhlo.backend_config and whose matrices are column-major.
const lapackFFIModule = `module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x2xf32>, %arg1: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<i32>, tensor<2x2xf32>, tensor<2xi32>) {
    %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0) {mhlo.backend_config = {uplo = 85 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<i32>)
    %1:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%arg1) {mhlo.backend_config = {}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>]} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xi32>, tensor<i32>)
    return %0#0, %0#1, %1#0, %1#1 : tensor<2x2xf32>, tensor<i32>, tensor<2x2xf32>, tensor<2xi32>
  }
}`

// The converter carries the layouts and the FFI attributes into HLO's
// custom-call, and the evaluator's LAPACK kernels honor them: upper
// Cholesky of [[4,2],[2,3]] is U = [[2,1],[0,√2]] (the lower triangle
// keeps the input), and the second call's row-major layouts make getrf
// factor the transpose [[1,3],[2,4]] (pivot row 2, L21 = 1/2, U =
// [[2,4],[0,1]]), which reads back transposed.
func TestLapackFFIConversion(t *testing.T) {
	m, err := ParseText("lapack.mlir", lapackFFIModule, Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := hlotext.Print(m, hlotext.PrintOptions{})
	for _, want := range []string{
		`custom_call_target="lapack_spotrf_ffi", operand_layout_constraints={f32[2,2]{0,1}}`,
		`api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 85 : ui8}`,
		`(f32[2,2]{0,1}, s32[]) custom-call(`,
		`(f32[2,2]{1,0}, s32[2]{0}, s32[]) custom-call(`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("converted module lacks %s:\n%s", want, text)
		}
	}
	a, _ := hlo.LiteralFromSlice([]float32{4, 2, 2, 3}, 2, 2)
	b, _ := hlo.LiteralFromSlice([]float32{1, 2, 3, 4}, 2, 2)
	got, err := eval.Run(m, a, b)
	if err != nil {
		t.Fatal(err)
	}
	el := got.Elements()
	check := func(what string, l *hlo.Literal, want ...float64) {
		t.Helper()
		for i, w := range want {
			if math.Abs(l.GetFloat64(i)-w) > 1e-6 {
				t.Fatalf("%s: element %d is %v, want %v (%v)", what, i, l.GetFloat64(i), w, l)
			}
		}
	}
	check("potrf", el[0], 2, 1, 2, math.Sqrt2)
	check("potrf info", el[1], 0)
	check("getrf", el[2], 2, 0.5, 4, 1)
	check("getrf pivots", el[3], 2, 2)
}

// A layout that is not a permutation is an error, not a silent default.
func TestLapackFFIBadLayout(t *testing.T) {
	bad := strings.Replace(lapackFFIModule, "operand_layouts = [dense<[0, 1]>", "operand_layouts = [dense<[0, 0]>", 1)
	if _, err := ParseText("lapack.mlir", bad, Options{}); err == nil || !strings.Contains(err.Error(), "operand_layouts") {
		t.Fatalf("got %v, want an operand_layouts error", err)
	}
}

// Older JAX returned the legacy calls' results as one tuple-typed value
// with a layout per element: Householder QR of [[3,1],[4,2]] by hand is
// beta = -5, tau = 8/5, v = (1, 1/2), R = [[-5,-11/5],[0,2/5]].
func TestLapackLegacyTupleLayouts(t *testing.T) {
	const src = `func.func @main(%a: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
  %b = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<2> : tensor<i32>
  %w = stablehlo.constant dense<64> : tensor<i32>
  %0 = stablehlo.custom_call @lapack_sgeqrf(%b, %n, %n, %w, %a) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<2x2xf32>) -> tuple<tensor<2x2xf32>, tensor<2xf32>, tensor<i32>, tensor<64xf32>>
  %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<2x2xf32>, tensor<2xf32>, tensor<i32>, tensor<64xf32>>) -> tensor<2x2xf32>
  %2 = stablehlo.get_tuple_element %0[1] : (tuple<tensor<2x2xf32>, tensor<2xf32>, tensor<i32>, tensor<64xf32>>) -> tensor<2xf32>
  return %1, %2 : tensor<2x2xf32>, tensor<2xf32>
}`
	m, err := ParseText("qr.mlir", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if text := hlotext.Print(m, hlotext.PrintOptions{}); !strings.Contains(text, "(f32[2,2]{0,1}, f32[2]{0}, s32[], f32[64]{0}) custom-call(") ||
		!strings.Contains(text, "api_version=API_VERSION_STATUS_RETURNING") {
		t.Fatalf("layouts or API version lost:\n%s", text)
	}
	a, _ := hlo.LiteralFromSlice([]float32{3, 1, 4, 2}, 2, 2)
	got, err := eval.Run(m, a)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []float64{-5, -2.2, 0.5, 0.4, 1.6, 0} {
		g := got.Elements()[i/4].GetFloat64(i % 4)
		if math.Abs(g-w) > 1e-6 {
			t.Fatalf("value %d is %v, want %v (%v)", i, g, w, got)
		}
	}
}
