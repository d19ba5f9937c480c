package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestColumnCallsMatchTileCalls: the AVX2 macro-kernel's whole tiles
// with ops, run as one call for a column of them (sgemm6x16fot), give the
// bits a call per tile gives, for tile counts from one to many with the
// edge tiles after them, every op (the residual rows apart from C's),
// overwrite and accumulate (two K blocks), one and two threads; and the
// definition within rounding.
func TestColumnCallsMatchTileCalls(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, s := range [][3]int{{6, 16, 32}, {13, 32, 32}, {96, 48, 64}, {131, 128, 32}, {250, 64, 300}} {
			m, n, k := s[0], s[1], s[2]
			a := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
			b := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
			pb, err := PackBF32(k, n, b)
			if err != nil {
				t.Fatal(err)
			}
			ld := n + 5
			ops := &TileOps{Bias: randSlice[float32](n, rng), Res: randSlice[float32](m*ld, rng), LdRes: ld,
				ResBias: randSlice[float32](n, rng), Floor: 0.25, Ceil: 0.5}
			ref := refGemm(m, n, k, a, b)
			for _, flags := range []int{OpsBias, OpsRes, OpsBias | OpsRes | OpsFloor, OpsRes | OpsResBias | OpsFloor, OpsFloor,
				OpsBias | OpsFloor | OpsCeil, OpsCeil} {
				ops.Flags = flags
				for _, threads := range []int{1, 2} {
					run := func(calls bool) []float32 {
						defer func(old bool) { gemmTileCalls = old }(gemmTileCalls)
						gemmTileCalls = calls
						c := make([]float32, m*n)
						epi := func(i, j, rows, cols int) { // what the kernels leave: the edge rows
							for r := i; r < i+rows; r++ {
								for q := j; q < j+cols; q++ {
									c[r*n+q] = opsRef(ops, c[r*n+q], r, q)
								}
							}
						}
						if err := GemmPackedFinishedF32(m, n, k, a, b, pb, c, n, threads, epi, ops, false); err != nil {
							t.Fatal(err)
						}
						return c
					}
					name := fmt.Sprintf("%dx%dx%d flags=%d threads=%d", m, n, k, flags, threads)
					got := run(true)
					sameBits(t, name, got, run(false))
					for i, r := range ref {
						want := float64(opsRef(ops, float32(r), i/n, i%n))
						if !(math.Abs(float64(got[i])-want) <= 1e-5*float64(k)+1e-5) {
							t.Fatalf("%s: C[%d] = %v, want %v", name, i, got[i], want)
						}
					}
				}
			}
		}
	})
}
