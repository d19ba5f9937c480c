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

// GemvStripsF32 over B laid out in strips gives, column for column, the
// plain product: integer values, exact in any order, so a value read from
// the wrong strip or row shows; strips of the AVX2 kernels' 32 columns,
// the AVX-512 ones' 128 and an odd 7, ranges cutting strips, m of 1 to
// 8, padded strides; C outside the range stays put.
func TestGemvStripsF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, m := range []int{1, 2, 3, 4, 5, 8} {
		for _, n := range []int{1, 31, 32, 40, 100, 288} {
			for _, strip := range []int{7, 32, 128} {
				const k = 37
				lda, ldc := k+2, n+3
				a := make([]float32, (m-1)*lda+k)
				for i := range a {
					a[i] = float32(rng.IntN(9) - 4)
				}
				plain := make([]float32, k*n)
				for i := range plain {
					plain[i] = float32(rng.IntN(9) - 4)
				}
				strips := make([]float32, k*n)
				for s := 0; s < n; s += strip {
					w := min(strip, n-s)
					for p := range k {
						copy(strips[s*k+p*w:s*k+p*w+w], plain[p*n+s:p*n+s+w])
					}
				}
				for _, r := range [][2]int{{0, n}, {n / 3, n - n/4}, {n - 1, n}} {
					j0, j1 := r[0], r[1]
					if j0 >= j1 {
						continue
					}
					c := make([]float32, (m-1)*ldc+n)
					for i := range c {
						c[i] = -99
					}
					if !GemvStripsF32(m, n, k, a, lda, strips, strip, c, ldc, j0, j1) {
						if gemvRuns {
							t.Fatalf("m %d n %d strip %d: not taken", m, n, strip)
						}
						return
					}
					for i := range m {
						for j := range n {
							want := float32(-99)
							if j >= j0 && j < j1 {
								want = 0
								for p := range k {
									want += a[i*lda+p] * plain[p*n+j]
								}
							}
							if got := c[i*ldc+j]; got != want {
								t.Fatalf("m %d n %d strip %d columns [%d, %d): C[%d,%d] = %v, want %v", m, n, strip, j0, j1, i, j, got, want)
							}
						}
					}
				}
			}
		}
	}
	if GemvStripsF32(1, 10, 4, make([]float32, 4), 4, make([]float32, 39), 8, make([]float32, 10), 10, 0, 10) {
		t.Error("a B one value short ran")
	}
	if GemvStripsF32(1, 10, 4, make([]float32, 4), 4, make([]float32, 40), 8, make([]float32, 10), 10, 5, 11) {
		t.Error("a range past n ran")
	}
}
