package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/hlo/minifloat"
)

// Widening while packing gives exactly what widening first gives (the
// VDPBF16PS path, which rounds otherwise, kept off).
func TestGemmNarrowMatchesWidenedF32(t *testing.T) {
	defer func(p bool) { preferBF16DP = p }(preferBF16DP)
	preferBF16DP = false
	rng := rand.New(rand.NewPCG(9, 9))
	for _, f := range []minifloat.Format{minifloat.BF16, minifloat.F16} {
		m, n, k := 23, 37, 300
		a := Narrow{Data: make([]uint16, m*k), Row: 1, Col: m, Format: f} // A transposed
		b := Narrow{Data: make([]uint16, k*n), Row: n, Col: 1, Format: f}
		for i := range a.Data {
			a.Data[i] = f.FromFloat64(rng.Float64()*2 - 1)
		}
		for i := range b.Data {
			b.Data[i] = f.FromFloat64(rng.Float64()*2 - 1)
		}
		wa, wb := make([]float32, len(a.Data)), make([]float32, len(b.Data))
		for i, x := range a.Data {
			wa[i] = f.ToFloat32(x)
		}
		for i, x := range b.Data {
			wb[i] = f.ToFloat32(x)
		}
		got, want := make([]float32, m*n), make([]float32, m*n)
		GemmNarrowF32(m, n, k, a, b, got, n, false, 2)
		GemmF32(m, n, k, Strided[float32]{wa, 1, m}, Strided[float32]{wb, n, 1}, want, n, false, 2)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: element %d = %v, want %v", f.Name(), i, got[i], want[i])
			}
		}
	}
}
