package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The AVX-512 skinny kernel (twelve rows of A in place, one 16-column B
// sliver, columns stored under a mask) against the 6-row taps path bit
// for bit (the same FMAs in the same order, K sliced alike) and against
// the float64 triple loop: every width 1..16, row counts around the
// twelve-row groups and the last short group, K across slice edges,
// accumulating, row strides past the data's width, and one to three
// threads. C's padding columns and rows must come out untouched.
func TestGemmSkinnyZ(t *testing.T) {
	if useAVX512Var == nil || !*useAVX512Var {
		t.Skip("no AVX-512 kernels on this machine")
	}
	defer func(old bool) { skinnyZAlways = old }(skinnyZAlways)
	skinnyZAlways = true
	rng := rand.New(rand.NewPCG(21, 22))
	for _, m := range []int{12, 13, 23, 24, 25, 35, 261} {
		for n := 1; n <= sgemmNR; n++ {
			for _, k := range []int{8, 9, 255, 256, 257, 600} {
				for _, acc := range []bool{false, true} {
					threads := 1 + (m+n+k)%3
					t.Run(fmt.Sprintf("%dx%dx%d/acc=%v/threads=%d", m, n, k, acc, threads), func(t *testing.T) {
						checkSkinnyZ(t, rng, m, n, k, acc, threads)
					})
				}
			}
		}
	}
}

func checkSkinnyZ(t *testing.T, rng *rand.Rand, m, n, k int, accumulate bool, threads int) {
	lda, ldc := k+3, n+5
	a := Strided[float32]{Data: randSlice[float32](m*lda, rng), Row: lda, Col: 1}
	b := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
	c0 := randSlice[float32](m*ldc, rng)
	run := func(z bool) []float32 {
		defer func(old bool) { skinnyZ = old }(skinnyZ)
		skinnyZ = z
		c := append([]float32(nil), c0...)
		GemmF32(m, n, k, a, b, c, ldc, accumulate, threads)
		return c
	}
	got, want := run(true), run(false)
	ref := refGemm(m, n, k, a, b)
	for i := range m {
		for j := range ldc {
			x := i*ldc + j
			if j >= n {
				if got[x] != c0[x] {
					t.Fatalf("C[%d,%d] past the %d columns changed: %v, was %v", i, j, n, got[x], c0[x])
				}
				continue
			}
			if math.Float32bits(got[x]) != math.Float32bits(want[x]) {
				t.Fatalf("C[%d,%d] = %v, the 6-row path %v", i, j, got[x], want[x])
			}
			r := ref[i*n+j]
			if accumulate {
				r += float64(c0[x])
			}
			if math.Abs(float64(got[x])-r) > 1e-5*float64(k) {
				t.Fatalf("C[%d,%d] = %v, want %v", i, j, got[x], r)
			}
		}
	}
}
