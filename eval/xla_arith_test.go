package eval_test

import (
	"testing"

	"github.com/axle-ml/axle/internal/xlamath"
)

// A c64 multiply is XLA's CPU backend's: with x = (1+2^-12)(1+i), the real
// part of x·x is fma(a, a, -round(a²)), the rounding error of
// a² = 1+2^-11+2^-24, 2^-24 (an exact product, Go's complex64 multiply,
// gives 0). The form is the one that reproduces all 600 results of
// ../shared/corpus/stablehlo/testdata/integer_pow_complex64_20_30.mlir.
func TestMultiplyC64AsXLA(t *testing.T) {
	e := float32(1 + 1.0/4096)
	x := complex(e, e)
	got := laRunHLO(t, `HloModule m
ENTRY e {
  a = c64[1] parameter(0)
  ROOT m = c64[1] multiply(a, a)
}`, laLit(t, []complex64{x}, 1))
	laWant(t, got, complex(float32(1.0/(1<<24)), float32(2+1.0/1024)))
	if got := xlamath.ComplexMul128(complex(1+0x1p-27, 1+0x1p-27), complex(1+0x1p-27, 1+0x1p-27)); real(got) != 0x1p-54 {
		t.Errorf("ComplexMul128 real part = %v, want 2^-54", real(got))
	}
}
