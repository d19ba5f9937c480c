package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// WindowFoldF32 against the fold written out: each output value is the
// first of its window's taps (in the taps' order) that no later tap
// beats, a NaN being the first NaN; on values with repeats, ±0, NaNs of
// several payloads and infinities (and the same without NaNs, where the
// AVX2 kernels keep to their fast fold), for channel counts of whole
// vectors (of 8 and 16 lanes) and not, pixels one and several, both ops.
func TestWindowFold(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		pool := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 2, float32(math.Inf(1)), float32(math.Inf(-1)),
			math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00002), math.Float32frombits(0x7f800003), 1e-45}
		for _, c := range []int{16, 32, 48, 8, 24, 3, 20} {
			for _, n := range []int{1, 2, 7} {
				for _, v := range []int{0, 1} {
					min, nans := v == 1, rng.IntN(2) == 0
					step := c + rng.IntN(3)*c
					taps := []int{0, c, 2 * c, 5 * c, 3*c + 1, 4 * c}[:1+rng.IntN(6)]
					src := make([]float32, (n-1)*step+6*c+1)
					for i := range src {
						if p := pool[rng.IntN(len(pool))]; rng.IntN(4) == 0 && (nans || p == p) {
							src[i] = p
						} else {
							src[i] = float32(rng.IntN(5) - 2)
						}
					}
					dst := make([]float32, n*c+3)
					for i := range dst {
						dst[i] = 77
					}
					if err := WindowFoldF32(dst[:n*c], src, taps, n, c, step, min); err != nil {
						t.Fatal(err)
					}
					for o := range n {
						for ch := range c {
							var want float32
							for k, tp := range taps {
								v := src[o*step+tp+ch]
								switch {
								case k == 0:
									want = v
								case want != want:
								case v != v || !min && v > want || min && v < want:
									want = v
								}
							}
							if got := dst[o*c+ch]; math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("c %d n %d min %v taps %v: pixel %d channel %d: %#x, want %#x", c, n, min, taps, o, ch, math.Float32bits(got), math.Float32bits(want))
							}
						}
					}
					for i := n * c; i < len(dst); i++ {
						if dst[i] != 77 {
							t.Fatalf("wrote past the outputs at %d", i)
						}
					}
				}
			}
		}
		if err := WindowFoldF32(make([]float32, 16), make([]float32, 20), []int{8}, 1, 16, 0, false); err == nil {
			t.Error("a tap reading past src: no error")
		}
	})
}
