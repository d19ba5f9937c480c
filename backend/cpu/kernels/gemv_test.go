package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// checkGemv runs GemvF32 on random operands with padded strides and
// compares C with a float64 reference; the padding of C must stay put.
func checkGemv(t *testing.T, m, n, k int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(m), uint64(n*1000+k)))
	lda, ldb, ldc := k+3, n+5, n+2
	a := make([]float32, (m-1)*lda+k)
	b := make([]float32, (k-1)*ldb+n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for i := range b {
		b[i] = float32(rng.NormFloat64())
	}
	c := make([]float32, (m-1)*ldc+n+1)
	for i := range c {
		c[i] = -7
	}
	if !GemvF32(m, n, k, a, lda, b, ldb, c, ldc) {
		if gemvRuns {
			t.Fatalf("%dx%dx%d: not taken", m, n, k)
		}
		return
	}
	for i := range m {
		for j := range ldc {
			if i*ldc+j >= len(c) {
				break
			}
			got := c[i*ldc+j]
			if j >= n {
				if got != -7 {
					t.Fatalf("%dx%dx%d: padding C[%d,%d] = %v", m, n, k, i, j, got)
				}
				continue
			}
			var want, mag float64
			for p := range k {
				x := float64(a[i*lda+p]) * float64(b[p*ldb+j])
				want += x
				mag += math.Abs(x)
			}
			if d := math.Abs(float64(got) - want); d > 1e-5*mag+1e-6 {
				t.Fatalf("%dx%dx%d: C[%d,%d] = %v, want %v", m, n, k, i, j, got, want)
			}
		}
	}
}

func TestGemvF32(t *testing.T) {
	for _, m := range []int{1, 2, 3, 4, 5, 7, 8} {
		for _, n := range []int{1, 7, 8, 16, 17, 40, 64, 70, 288, 512} {
			for _, k := range []int{1, 5, 96, 128} {
				checkGemv(t, m, n, k)
			}
		}
	}
}

func TestGemvF32Declines(t *testing.T) {
	a, b, c := make([]float32, 9*4), make([]float32, 16), make([]float32, 9*4)
	if GemvF32(9, 4, 4, a, 4, b, 4, c, 4) {
		t.Error("9 rows taken")
	}
	if GemvF32(2, 4, 4, a[:5], 4, b, 4, c, 4) {
		t.Error("short A taken")
	}
	if GemvF32(1, 4, 4, a, 4, b, 3, c, 4) {
		t.Error("overlapping B rows taken")
	}
}

func BenchmarkGemvF32(b *testing.B) {
	for _, s := range []struct{ m, n, k int }{{1, 288, 96}, {2, 512, 128}, {1, 512, 128}} {
		a, w, c := make([]float32, s.m*s.k), make([]float32, s.k*s.n), make([]float32, s.m*s.n)
		b.Run("gemv", func(b *testing.B) {
			for b.Loop() {
				GemvF32(s.m, s.n, s.k, a, s.k, w, s.n, c, s.n)
			}
		})
		b.Run("gemm", func(b *testing.B) {
			for b.Loop() {
				GemmF32(s.m, s.n, s.k, Strided[float32]{Data: a, Row: s.k, Col: 1}, Strided[float32]{Data: w, Row: s.n, Col: 1}, c, s.n, false, 1)
			}
		})
	}
}
