package kernels

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// A single row times a transposed B (the turned-around skinny path):
// against the float64 triple loop, with A's row strided or not, on one
// and three threads, accumulating or not, and with an epilogue that must
// see every element of C exactly once, after its value is final.
func TestGemmRowTimesTransposedB(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range []int{17, 32, 100, 512} {
			for _, k := range []int{8, 128, 300} {
				for _, aCol := range []int{1, 5} {
					a := Strided[float32]{Data: randSlice[float32](k*aCol, rng), Row: k * aCol, Col: aCol}
					b := Strided[float32]{Data: randSlice[float32]((k+1)*n, rng), Row: 1, Col: k + 1}
					want := refGemm(1, n, k, a, b)
					for _, threads := range []int{1, 3} {
						c := make([]float32, n+2)
						c[n], c[n+1] = 99, 99
						GemmF32(1, n, k, a, b, c, n, false, threads)
						checkRow(t, "set", n, k, threads, c, want, 0)
						GemmF32(1, n, k, a, b, c, n, true, threads)
						checkRow(t, "accumulate", n, k, threads, c, want, 1)
						var mu sync.Mutex
						seen := make([]int, n)
						GemmEpilogueF32(1, n, k, a, b, c, n, threads, func(i, j, rows, cols int) {
							mu.Lock()
							defer mu.Unlock()
							if i != 0 || rows != 1 {
								t.Fatalf("n=%d k=%d: epilogue block rows [%d,%d)", n, k, i, i+rows)
							}
							for x := j; x < j+cols; x++ {
								seen[x]++
								c[x]++
							}
						}, false)
						checkRow(t, "epilogue", n, k, threads, c, want, 1)
						for x, s := range seen {
							if s != 1 {
								t.Fatalf("n=%d k=%d threads=%d: the epilogue saw C[0,%d] %d times", n, k, threads, x, s)
							}
						}
					}
				}
			}
		}
	})
}

// checkRow compares c[:n] with want·scale+add (scale 2 after
// accumulating) and checks c[n:] was left alone.
func checkRow(t *testing.T, what string, n, k, threads int, c []float32, want []float64, add float64) {
	t.Helper()
	scale := 1.0
	if what == "accumulate" {
		scale, add = 2, 0
	}
	for j := range n {
		g, w := float64(c[j]), want[j]*scale+add
		if !(math.Abs(g-w) <= 1e-5*float64(k)+1e-5) {
			t.Fatalf("%s n=%d k=%d threads=%d: C[0,%d] = %v, want %v", what, n, k, threads, j, g, w)
		}
	}
	if c[n] != 99 || c[n+1] != 99 {
		t.Fatalf("%s n=%d k=%d: wrote past C", what, n, k)
	}
}
