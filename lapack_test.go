package axle_test

import (
	"math"
	"testing"

	"github.com/axle-ml/axle"
)

// A model with jnp.linalg in it runs on both backends: the LU of
// [[1,2],[3,4]] (column-major, as JAX lowers it) has pivots 2, 2 and packed
// factors [[3,4],[1/3,2/3]] (worked by hand), and the eigenvalues of the
// symmetric [[2,1],[1,2]] are 1 and 3, ascending.
func TestLapackCustomCallsOnBackends(t *testing.T) {
	const text = `HloModule jit_linalg
ENTRY main {
  a = f32[2,2]{0,1} parameter(0)
  s = f32[2,2]{0,1} parameter(1)
  lu = (f32[2,2]{0,1}, s32[2]{0}, s32[]) custom-call(a), custom_call_target="lapack_sgetrf_ffi", operand_layout_constraints={f32[2,2]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={}
  eig = (f32[2,2]{0,1}, f32[2]{0}, s32[]) custom-call(s), custom_call_target="lapack_ssyevd_ffi", operand_layout_constraints={f32[2,2]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={mode = 86 : ui8, uplo = 76 : ui8}
  f = f32[2,2]{0,1} get-tuple-element(lu), index=0
  w = f32[2]{0} get-tuple-element(eig), index=1
  ROOT t = (f32[2,2]{0,1}, f32[2]{0}) tuple(f, w)
}`
	for _, backend := range []string{"cpu", "interp"} {
		c := newClient(t, backend)
		x := compile(t, c, text)
		outs, err := x.Execute(buffer(t, c, []float32{1, 2, 3, 4}, 2, 2), buffer(t, c, []float32{2, 1, 1, 2}, 2, 2))
		if err != nil {
			t.Fatalf("%s: %v", backend, err)
		}
		check := func(what string, b *axle.Buffer, want ...float64) {
			t.Helper()
			got := floats(t, b)
			for i, w := range want {
				if math.Abs(float64(got[i])-w) > 1e-6 {
					t.Fatalf("%s %s: got %v, want %v", backend, what, got, want)
				}
			}
		}
		check("LU", outs[0], 3, 4, 1.0/3, 2.0/3)
		check("eigenvalues", outs[1], 1, 3)
	}
}
