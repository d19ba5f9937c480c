package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// depthwiseCase is a depthwise convolution of a test: spatial sizes,
// window, strides, padding and kernel dilation per dimension.
type depthwiseCase struct{ in, kern, stride, padLo, padHi, rhsDil []int }

// depthwiseRowCases cover the row walk's parts: interiors of every length
// (none, shorter than a pixel group, groups of 8 and 4 and single
// pixels), borders at both ends, windows wider than the image, rows and
// columns wholly in the padding, strides, dilation, and 1-D.
var depthwiseRowCases = []depthwiseCase{
	{[]int{7, 13}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1}},
	{[]int{9, 21}, []int{3, 3}, []int{2, 2}, []int{1, 1}, []int{1, 1}, []int{1, 1}},
	{[]int{8, 19}, []int{3, 3}, []int{2, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1}},
	{[]int{5, 23}, []int{5, 5}, []int{1, 1}, []int{2, 2}, []int{2, 2}, []int{1, 1}},
	{[]int{3, 17}, []int{5, 5}, []int{1, 1}, []int{2, 2}, []int{2, 2}, []int{1, 1}},
	{[]int{6, 14}, []int{5, 5}, []int{2, 1}, []int{2, 2}, []int{2, 2}, []int{1, 1}},
	{[]int{4, 5}, []int{3, 3}, []int{1, 2}, []int{3, 2}, []int{1, 4}, []int{2, 3}},
	{[]int{2, 3}, []int{3, 7}, []int{1, 1}, []int{1, 3}, []int{1, 3}, []int{1, 1}},
	{[]int{3, 4}, []int{2, 2}, []int{1, 1}, []int{4, 0}, []int{0, 5}, []int{1, 1}},
	{[]int{6, 11}, []int{3, 2}, []int{3, 1}, []int{0, 0}, []int{2, 1}, []int{2, 2}},
	{[]int{29}, []int{4}, []int{1}, []int{2}, []int{1}, []int{1}},
	{[]int{30}, []int{3}, []int{2}, []int{5}, []int{4}, []int{3}},
}

// TestConvDepthwiseRows: the row walk gives, bit for bit, what the pixel
// walk gives (the same sums in the same order), and the float64 reference
// within rounding, for channel counts that fill vectors, group pixels
// (2, 4, 8 a vector), or leave a partial vector, on every kernel set.
func TestConvDepthwiseRows(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(31, 32))
		for _, tc := range depthwiseRowCases {
			for _, c := range []int{2, 3, 4, 8, 12, 16, 24, 40, 200} {
				name := fmt.Sprintf("%v k%v s%v pad%v/%v dil%v c%d", tc.in, tc.kern, tc.stride, tc.padLo, tc.padHi, tc.rhsDil, c)
				one := make([]int, len(tc.in))
				for i := range one {
					one[i] = 1
				}
				p := newConv(2, c, c, c, tc.in, tc.kern, tc.stride, tc.padLo, tc.padHi, one, tc.rhsDil, false)
				if !canConvDepthwise(p) || !canDepthwiseRows(p) {
					t.Fatalf("%s: not on the row walk", name)
				}
				checkDepthwiseRows(t, name, p, rng)
			}
		}
	})
}

// checkDepthwiseRows runs p by rows and by pixels and compares them with
// each other and with the reference.
func checkDepthwiseRows(t *testing.T, name string, p *Conv, rng *rand.Rand) {
	t.Helper()
	in := randSlice[float32](inputLen(p), rng)
	klen := p.OutChannels // the kernel through its strides
	for d, k := range p.Kernel {
		klen += (k - 1) * p.KernelSpatialStrides[d]
	}
	kern := randSlice[float32](klen, rng)
	want := refConv(p, in, kern)
	got, pix := make([]float32, len(want)), make([]float32, len(want))
	for i := range got { // stale values the kernel must overwrite
		got[i], pix[i] = float32(math.NaN()), float32(math.NaN())
	}
	if err := ConvF32(p, in, kern, got, 2); err != nil {
		t.Fatal(err)
	}
	depthwiseRowsOn = false
	err := ConvF32(p, in, kern, pix, 2)
	depthwiseRowsOn = true
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(pix[i]) {
			t.Fatalf("%s: out[%d] = %v by rows, %v by pixels", name, i, got[i], pix[i])
		}
		if math.Abs(float64(got[i])-want[i]) > 1e-5 {
			t.Fatalf("%s: out[%d] = %v, want %v", name, i, got[i], want[i])
		}
	}
}

// An input read through strides that are not dense (a channels-last view
// whose pixels are wider than its channels, as a slice of a bigger
// tensor's channels) goes by rows without grouping pixels, and a kernel
// with padded rows is read through its strides.
func TestConvDepthwiseRowsStrided(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for _, c := range []int{4, 8, 20} {
		one := []int{1, 1}
		p := newConv(2, c, c, c, []int{6, 10}, []int{3, 3}, one, one, one, one, one, false)
		wide := c + 5 // floats a pixel
		p.InSpatialStrides = []int{10 * wide, wide}
		p.InBatchStride = 6 * 10 * wide
		p.KernelSpatialStrides = []int{3*c + 7, c}
		checkDepthwiseRows(t, fmt.Sprintf("channels %d", c), p, rng)
	}
}

// The epilogue sees every output pixel once, in whole rows of the
// [pixels, channels] matrix, and only after the pixel's values are final.
func TestConvDepthwiseRowsEpilogue(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	one := []int{1, 1}
	for _, tc := range []struct{ h, w, c int }{{40, 40, 16}, {3, 96, 40}, {7, 5, 8}} {
		p := newConv(2, tc.c, tc.c, tc.c, []int{tc.h, tc.w}, []int{3, 3}, one, one, one, one, one, false)
		in := randSlice[float32](inputLen(p), rng)
		kern := randSlice[float32](kernelLen(p), rng)
		want := make([]float32, 2*tc.h*tc.w*tc.c)
		if err := ConvF32(p, in, kern, want, 2); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, len(want))
		seen := make([]int32, 2*tc.h*tc.w)
		bad := make(chan string, 1)
		epi := func(i, j, rows, cols int) {
			for r := i; r < i+rows; r++ {
				seen[r]++
				for ch := range tc.c {
					if got[r*tc.c+ch] != want[r*tc.c+ch] && (j != 0 || cols != tc.c || len(bad) == 0) {
						select {
						case bad <- fmt.Sprintf("pixel %d not final (cols %d+%d)", r, j, cols):
						default:
						}
					}
				}
			}
		}
		if err := ConvEpilogueF32(p, in, kern, got, 2, epi); err != nil {
			t.Fatal(err)
		}
		close(bad)
		for s := range bad {
			t.Fatalf("%v: %s", tc, s)
		}
		for r, n := range seen {
			if n != 1 {
				t.Fatalf("%v: pixel %d handed to the epilogue %d times", tc, r, n)
			}
		}
	}
}
