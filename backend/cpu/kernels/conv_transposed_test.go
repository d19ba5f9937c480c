package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Convolutions over a dilated input (transposed convolutions) take the
// product-and-gather path and match the definition: 1-D to 3-D,
// channels-last and -first, pads that cut into the output or go past
// the kernel, kernels narrower than the dilation (output pixels no tap
// reaches: zero), runs of 64 channels and more (the vector adds) and
// fewer; each element finished by the epilogue exactly once, on one to
// three threads, with a kernel cache over repeated calls (its product
// matrix and panels kept) and without.
func TestConvTransposed(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	cases := []*Conv{
		// HiFi-GAN's 8× upsampling, kernel 16, channels-first input.
		newConv(1, 24, 16, 1, []int{9}, []int{16}, ones(1), []int{11}, []int{11}, []int{8}, ones(1), true),
		// U-Net's 3×3 stride-2 ConvTranspose (pad 1, output_padding 1).
		newConv(2, 8, 12, 1, []int{6, 5}, []int{3, 3}, ones(2), []int{1, 1}, []int{2, 2}, []int{2, 2}, ones(2), false),
		// DCGAN's 4×4 stride 2, 64 and more channels out.
		newConv(1, 16, 80, 1, []int{5, 4}, []int{4, 4}, ones(2), []int{2, 2}, []int{2, 2}, []int{2, 2}, ones(2), true),
		// A kernel narrower than the dilation: gaps no tap reaches.
		newConv(2, 5, 3, 1, []int{4, 3}, []int{2, 1}, ones(2), []int{0, 0}, []int{3, 2}, []int{4, 3}, ones(2), false),
		// Pads past the kernel (zeros around) and negative ones (cut).
		newConv(1, 6, 7, 1, []int{7}, []int{3}, ones(1), []int{4}, []int{-1}, []int{3}, ones(1), false),
		// 3-D, dilated along one dimension only.
		newConv(1, 4, 5, 1, []int{3, 4, 5}, []int{2, 3, 2}, ones(3), []int{1, 1, 0}, []int{1, 1, 1}, []int{1, 2, 1}, ones(3), true),
		// Kernel-dilated (ONNX ConvTranspose's dilations): stride 3,
		// dilation 2, kernel 4; and a 1-D one, dilation 3, cut by a
		// negative pad, with a kernel dilation not dividing the pads.
		newConv(1, 8, 4, 1, []int{5, 5}, []int{4, 4}, ones(2), []int{4, 4}, []int{4, 4}, []int{3, 3}, []int{2, 2}, false),
		newConv(2, 3, 5, 1, []int{6}, []int{3}, ones(1), []int{5}, []int{-1}, []int{2}, []int{3}, true),
		// Grouped: a product a group, gathered into its own channels;
		// two groups of four, channels-last; FCN's depthwise upsampling
		// (a group a channel, kernel 4, stride 2), channels-first; three
		// groups of 2 → 3, kernel-dilated, two examples.
		newConv(1, 8, 8, 2, []int{6, 6}, []int{3, 3}, ones(2), []int{1, 1}, []int{2, 2}, []int{2, 2}, ones(2), false),
		newConv(1, 6, 6, 6, []int{5, 7}, []int{4, 4}, ones(2), []int{2, 2}, []int{2, 2}, []int{2, 2}, ones(2), true),
		newConv(2, 6, 9, 3, []int{4, 5}, []int{3, 2}, ones(2), []int{2, 1}, []int{1, 2}, []int{3, 2}, []int{2, 1}, true),
	}
	for ci, p := range cases {
		if got := convPath(p); got != "transposed" {
			t.Fatalf("case %d: the %s path", ci, got)
		}
		in, kern := randSlice[float32](inputLen(p), rng), randSlice[float32](kernelLen(p), rng)
		want := refConv(p, in, kern)
		for _, threads := range []int{1, 2, 3} {
			for _, cache := range []*ConvKernelCache{nil, {}} {
				for call := range 2 {
					t.Run(fmt.Sprintf("case%d/threads=%d/cache=%v/call%d", ci, threads, cache != nil, call), func(t *testing.T) {
						out := make([]float32, len(want))
						for i := range out {
							out[i] = float32(math.NaN()) // every element written
						}
						seen := make([]int, len(want))
						epi := doubling(out, seen, p.OutChannels)
						if err := ConvPackedF32(p, in, kern, out, threads, epi, cache); err != nil {
							t.Fatal(err)
						}
						for i, w := range want {
							if seen[i] != 1 || !(math.Abs(float64(out[i])-2*w) <= 2e-4) {
								t.Fatalf("out[%d] = %v (finished %d times), want %v", i, out[i], seen[i], 2*w)
							}
						}
					})
				}
			}
		}
	}
}

// A strided convolution over a dilated input, or one over an undilated
// input, stays on the general paths.
func TestConvTransposedDeclines(t *testing.T) {
	one := []int{1, 1}
	for _, p := range []*Conv{
		newConv(1, 4, 4, 1, []int{5, 5}, []int{3, 3}, []int{2, 1}, one, one, []int{2, 2}, one, false),
		newConv(1, 4, 4, 1, []int{5, 5}, []int{3, 3}, one, one, one, one, one, false),
	} {
		if canConvTransposed(p) {
			t.Errorf("%+v: taken", p)
		}
	}
}
