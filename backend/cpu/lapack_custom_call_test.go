package cpu

import (
	"math"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// JAX's LAPACK custom calls run on the CPU backend through the evaluator
// (no kernel of its own), with the layouts the call states: the same
// hand-worked values as on the evaluator. getrf of [[1,2],[3,4]] in
// column-major layout: pivots 2, 2; LU packed [[3,4],[1/3,2/3]]; potrf of
// [[4,2],[2,3]]: L = [[2,·],[1,√2]] with the upper triangle kept.
func TestLapackCustomCallsRun(t *testing.T) {
	m, x := compileText(t, `HloModule jax_linalg
ENTRY main {
  a = f32[2,2]{0,1} parameter(0)
  s = f64[2,2]{0,1} parameter(1)
  lu = (f32[2,2]{0,1}, s32[2]{0}, s32[]) custom-call(a), custom_call_target="lapack_sgetrf_ffi", operand_layout_constraints={f32[2,2]{0,1}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={}
  ch = (f64[2,2]{0,1}, s32[]) custom-call(s), custom_call_target="lapack_dpotrf_ffi", operand_layout_constraints={f64[2,2]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}
  f = f32[2,2]{0,1} get-tuple-element(lu), index=0
  p = s32[2]{0} get-tuple-element(lu), index=1
  l = f64[2,2]{0,1} get-tuple-element(ch), index=0
  twice = f32[2,2]{0,1} add(f, f)
  ROOT t = (f32[2,2]{0,1}, s32[2]{0}, f64[2,2]{0,1}) tuple(twice, p, l)
}`, Options{Threads: 2})
	a, _ := hlo.LiteralFromSlice([]float32{1, 2, 3, 4}, 2, 2)
	s, _ := hlo.LiteralFromSlice([]float64{4, 2, 2, 3}, 2, 2)
	got, want := evalAndRun(t, m, x, []*hlo.Literal{a, s})
	if !got.Equal(want) {
		t.Fatalf("cpu %v, evaluator %v", got, want)
	}
	el := got.Elements()
	for i, w := range []float64{6, 8, 2.0 / 3, 4.0 / 3} {
		if math.Abs(el[0].GetFloat64(i)-w) > 1e-6 {
			t.Fatalf("2·LU element %d is %v, want %v", i, el[0].GetFloat64(i), w)
		}
	}
	if el[1].GetInt64(0) != 2 || el[1].GetInt64(1) != 2 {
		t.Fatalf("pivots %v, want 2 2", el[1])
	}
	for i, w := range []float64{2, 2, 1, math.Sqrt2} {
		if math.Abs(el[2].GetFloat64(i)-w) > 1e-12 {
			t.Fatalf("cholesky element %d is %v, want %v", i, el[2].GetFloat64(i), w)
		}
	}
	t.Logf("fallbacks %v", x.Fallbacks)
}
