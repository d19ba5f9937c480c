package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// unscale against float64, which holds v·2^-24 exactly and rounds it to
// float32 once (to nearest even): every exponent from 0 to 40, both
// signs, mantissas at random and at the rounding boundaries.
func TestUnscale(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	mants := []uint32{0, 1, 2, 3, 1 << 22, 1<<23 - 1, 1<<22 | 1, 0x7ffff0, 0x400000, 0x600000}
	for range 2000 {
		mants = append(mants, rng.Uint32()&(1<<23-1))
	}
	for e := uint32(0); e <= 40; e++ {
		for _, m := range mants {
			for _, sign := range []uint32{0, 1 << 31} {
				v := math.Float32frombits(sign | e<<23 | m)
				want := float32(float64(v) / (1 << subnormalShift))
				got := []float32{v}
				if unscale(got); math.Float32bits(got[0]) != math.Float32bits(want) {
					t.Fatalf("unscale(%g = %#x) = %g (%#x), want %g (%#x)", v, math.Float32bits(v), got[0], math.Float32bits(got[0]), want, math.Float32bits(want))
				}
			}
		}
	}
}

// A weight gradient xᵀ·g whose g holds subnormals (a softmax's gradient
// for classes it has ruled out) is computed on a scaled copy of g:
//   - where every column's sum starts from a normal value and stays
//     normal, the same bits as unscaled;
//   - where whole columns of g are subnormal, within a subnormal ULP of
//     the float64 product where it is subnormal (unscaled, each FMA's sum
//     is rounded to a multiple of 2^-149) and never further off than the
//     unscaled result;
//   - where the scaled sums overflow, the unscaled result, Inf included.
func TestGemmSubnormalScaling(t *testing.T) {
	if FlushDenormals() {
		t.Skip("AXLE_DENORMALS=flush: subnormals are read as zero, not scaled")
	}
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(33, 34))
		for _, s := range [][3]int{{784, 10, 100}, {300, 16, 37}, {64, 3, 8}} {
			m, n, k := s[0], s[1], s[2]
			for _, threads := range []int{1, 2} {
				t.Run(fmt.Sprintf("%dx%dx%d/threads=%d", m, n, k, threads), func(t *testing.T) {
					x := make([]float32, k*m) // A = xᵀ, x k×m row-major
					for i := range x {
						x[i] = float32(rng.IntN(256))
					}
					a := Strided[float32]{Data: x, Row: 1, Col: m}
					g := make([]float32, k*n)
					for p := range k {
						for j := range n {
							g[p*n+j] = float32(rng.Float64()*2-1) * 1e-41 // subnormal, sums normal
							if j%4 == 3 {
								g[p*n+j] = float32(rng.Float64()*2-1) * 1e-44 // sums subnormal too
							}
							if j%2 == 0 {
								g[p*n+j] = float32(rng.Float64()*2 - 1) // normal columns
								if p > 0 && p%3 == 0 {
									g[p*n+j] *= 1e-39
								}
							}
						}
					}
					b := Strided[float32]{Data: g, Row: n, Col: 1}
					run := func(scale bool) []float32 {
						defer func(old bool) { subnormalScaling = old }(subnormalScaling)
						subnormalScaling = scale
						c := make([]float32, m*n)
						GemmF32(m, n, k, a, b, c, n, false, threads)
						return c
					}
					got, plain := run(true), run(false)
					ref := refGemm(m, n, k, a, b)
					for i := range m {
						for j := range n {
							v, w, r := got[i*n+j], plain[i*n+j], ref[i*n+j]
							if j%2 == 0 && math.Abs(float64(w)) >= 0x1p-126 {
								if math.Float32bits(v) != math.Float32bits(w) {
									t.Fatalf("C[%d,%d] = %v scaled, %v unscaled", i, j, v, w)
								}
								continue
							}
							errV, errW := math.Abs(float64(v)-r), math.Abs(float64(w)-r)
							tol := 0x1p-149 // within one subnormal ULP
							if math.Abs(r) >= 0x1p-126 {
								tol = 0x1p-22 * math.Abs(r)
							}
							if j%2 == 1 && (errV > tol || errV > errW+0x1p-149) {
								t.Fatalf("C[%d,%d] = %v scaled, %v unscaled, want %v", i, j, v, w, r)
							}
						}
					}
					// Factors that overflow once scaled: the unscaled bits.
					x[0] = 3e38
					got, plain = run(true), run(false)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(plain[i]) {
							t.Fatalf("overflowing product: C[%d] = %v scaled, %v unscaled", i, got[i], plain[i])
						}
					}
				})
			}
		}
	})
}

// Eight products of a quarter of the smallest subnormal each: unscaled,
// every FMA's sum rounds back to zero; scaled, the sum is exact, 2^-148.
func TestGemmSubnormalScalingExact(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		const m, n, k = 64, 1, 8
		x := make([]float32, k*m)
		for i := range x {
			x[i] = 0.25
		}
		g := make([]float32, k*n)
		for i := range g {
			g[i] = math.Float32frombits(1) // 2^-149
		}
		for _, scale := range []bool{true, false} {
			defer func(old bool) { subnormalScaling = old }(subnormalScaling)
			subnormalScaling = scale
			c := make([]float32, m*n)
			GemmF32(m, n, k, Strided[float32]{Data: x, Row: 1, Col: m}, Strided[float32]{Data: g, Row: n, Col: 1}, c, n, false, 1)
			want := float32(0x1p-148)
			if !scale || FlushDenormals() {
				want = 0
			}
			for i, v := range c {
				if v != want {
					t.Fatalf("scaling %v: C[%d] = %g, want %g", scale, i, v, want)
				}
			}
		}
	})
}

// upscale against float64, which holds v·2^24 exactly (and float32
// holds it too, below 2^64): every exponent from 0 to 80, both signs.
func TestUpscale(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	mants := []uint32{0, 1, 2, 3, 5, 1 << 22, 1<<23 - 1, 0x400001}
	for range 2000 {
		mants = append(mants, rng.Uint32()&(1<<23-1))
	}
	for e := uint32(0); e <= 80; e++ {
		for _, m := range mants {
			for _, sign := range []uint32{0, 1 << 31} {
				v := math.Float32frombits(sign | e<<23 | m)
				want := float32(float64(v) * (1 << subnormalShift))
				if got := upscale(v); math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("upscale(%g = %#x) = %g (%#x), want %g (%#x)", v, math.Float32bits(v), got, math.Float32bits(got), want, math.Float32bits(want))
				}
			}
		}
	}
}
