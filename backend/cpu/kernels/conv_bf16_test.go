package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/hlo/minifloat"
)

// The bf16 convolution against the definition (refConv over the values
// widened exactly), within GemmNarrowF32's bound for k = taps × input
// channels: channels-last and channels-first images (the latter, and an
// odd channel count, gather value by value; the former word by word),
// padding, strides, dilations, one and two spatial dimensions, a K past
// the bf16 GEMM's slice, rows past one block, one and two threads (the
// latter with the image at an odd element, its pairs put together); the
// kernel packed ahead (PackConvBF16) gives the same bits.
func TestConvBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	one, two := []int{1, 1}, []int{2, 2}
	for _, c := range []struct {
		name string
		p    *Conv
	}{
		{"3x3 pad 1", newConv(2, 8, 20, 1, []int{9, 7}, []int{3, 3}, one, one, one, one, one, false)},
		{"3x3 stride 2", newConv(1, 16, 40, 1, []int{11, 12}, []int{3, 3}, two, one, []int{0, 0}, one, one, false)},
		{"pointwise", newConv(3, 24, 33, 1, []int{5, 6}, one, one, []int{0, 0}, []int{0, 0}, one, one, false)},
		{"odd channels", newConv(1, 5, 17, 1, []int{8, 8}, []int{3, 3}, one, one, one, one, one, false)},
		{"channels first", newConv(2, 6, 12, 1, []int{7, 9}, []int{3, 3}, one, one, one, one, one, true)},
		{"dilated", newConv(1, 4, 16, 1, []int{10, 10}, []int{3, 3}, one, two, two, one, two, false)},
		{"1-D", newConv(2, 10, 9, 1, []int{30}, []int{5}, []int{1}, []int{2}, []int{2}, []int{1}, []int{1}, false)},
		{"K past a slice", newConv(1, 256, 36, 1, []int{6, 6}, []int{3, 3}, one, one, one, one, one, false)},
		{"many rows", newConv(4, 6, 40, 1, []int{16, 16}, []int{3, 3}, one, one, one, one, one, false)},
	} {
		for threads := 1; threads <= 2; threads++ {
			t.Run(fmt.Sprintf("%s/threads=%d", c.name, threads), func(t *testing.T) {
				p := c.p
				in, kern := uniformBF16(inputLen(p), rng), uniformBF16(kernelLen(p), rng)
				if threads == 2 { // an image at an odd element: pairs not words in memory
					s := make([]uint16, len(in)+1)
					copy(s[1:], in)
					in = s[1:]
				}
				m, k := convRowsDepth(p)
				out := make([]float32, m*p.OutChannels)
				if err := ConvBF16(p, in, kern, nil, out, threads, nil); err != nil {
					t.Fatal(err)
				}
				wide := func(s []uint16, abs bool) []float32 {
					f := make([]float32, len(s))
					for i, v := range s {
						f[i] = float32(minifloat.BF16.ToFloat64(v))
						if abs {
							f[i] = float32(math.Abs(float64(f[i])))
						}
					}
					return f
				}
				packed, err := PackConvBF16(p, kern)
				if err != nil {
					t.Fatal(err)
				}
				again := make([]float32, len(out))
				if err := ConvBF16(p, in, nil, packed, again, threads, nil); err != nil {
					t.Fatal(err)
				}
				for i := range out {
					if math.Float32bits(again[i]) != math.Float32bits(out[i]) {
						t.Fatalf("element %d: %g with the kernel packed ahead, %g packed per call", i, again[i], out[i])
					}
				}
				want := refConv(p, wide(in, false), wide(kern, false))
				mags := refConv(p, wide(in, true), wide(kern, true))
				for i, w := range want {
					bound := float64(k)*0x1p-23*mags[i] + float64(k)*0x1p-125
					if d := math.Abs(float64(out[i]) - w); !(d <= bound) {
						t.Fatalf("element %d: got %g, want %g (%g apart, bound %g)", i, out[i], w, d, bound)
					}
				}
			})
		}
	}
}

// Lengths short of what the geometry reads, a kernel packed for another
// shape, and more than one feature group, are errors, not panics.
func TestConvBF16BadArgs(t *testing.T) {
	one := []int{1, 1}
	p := newConv(1, 4, 8, 1, []int{5, 5}, []int{3, 3}, one, one, one, one, one, false)
	in, kern := make([]uint16, inputLen(p)), make([]uint16, kernelLen(p))
	m, _ := convRowsDepth(p)
	out := make([]float32, m*p.OutChannels)
	for name, err := range map[string]error{
		"short image":  ConvBF16(p, in[:len(in)-1], kern, nil, out, 1, nil),
		"short kernel": ConvBF16(p, in, kern[:len(kern)-1], nil, out, 1, nil),
		"short output": ConvBF16(p, in, kern, nil, out[:len(out)-1], 1, nil),
		"a kernel packed for another shape": func() error {
			other, _ := PackConvBF16(newConv(1, 4, 9, 1, []int{5, 5}, []int{3, 3}, one, one, one, one, one, false), make([]uint16, 4*9*9))
			return ConvBF16(p, in, nil, other, out, 1, nil)
		}(),
		"two groups": ConvBF16(newConv(1, 4, 8, 2, []int{5, 5}, []int{3, 3}, one, one, one, one, one, false), in, kern, nil, out, 1, nil),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
