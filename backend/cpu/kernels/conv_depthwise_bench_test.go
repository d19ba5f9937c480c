package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// depthwiseShape is one channels-last depthwise convolution of a model:
// batch, input height, width and channels, a square kernel, the stride
// (height, width) and the padding on every side.
type depthwiseShape struct {
	name              string
	batch, h, w, c, k int
	sy, sx, pad       int
}

// depthwiseBenchShapes are the depthwise layers of MobileNetV2 (224²),
// ppocr_v4_det and ppocr_mobile_v2_cls (channels-last after layout
// assignment).
var depthwiseBenchShapes = []depthwiseShape{
	{"mnv2_112x112x32_3x3", 1, 112, 112, 32, 3, 1, 1, 1},
	{"mnv2_112x112x96_3x3_s2", 1, 112, 112, 96, 3, 2, 2, 1},
	{"mnv2_56x56x144_3x3", 1, 56, 56, 144, 3, 1, 1, 1},
	{"det_160x160x16_3x3", 1, 160, 160, 16, 3, 1, 1, 1},
	{"det_160x160x32_3x3_s2", 1, 160, 160, 32, 3, 2, 2, 1},
	{"det_80x80x48_3x3", 1, 80, 80, 48, 3, 1, 1, 1},
	{"det_80x80x48_3x3_s2", 1, 80, 80, 48, 3, 2, 2, 1},
	{"det_40x40x96_3x3", 1, 40, 40, 96, 3, 1, 1, 1},
	{"det_40x40x96_3x3_s2", 1, 40, 40, 96, 3, 2, 2, 1},
	{"det_20x20x192_5x5", 1, 20, 20, 192, 5, 1, 1, 2},
	{"det_20x20x192_5x5_s2", 1, 20, 20, 192, 5, 2, 2, 2},
	{"det_10x10x384_5x5", 1, 10, 10, 384, 5, 1, 1, 2},
	{"cls_24x96x8_3x3_s21", 2, 24, 96, 8, 3, 2, 1, 1},
	{"cls_12x96x24_3x3_s21", 2, 12, 96, 24, 3, 2, 1, 1},
	{"cls_6x96x32_3x3", 2, 6, 96, 32, 3, 1, 1, 1},
	{"cls_6x96x32_5x5_s21", 2, 6, 96, 32, 5, 2, 1, 2},
	{"cls_3x96x40_5x5", 2, 3, 96, 40, 5, 1, 1, 2},
	{"cls_3x96x48_5x5", 2, 3, 96, 48, 5, 1, 1, 2},
	{"cls_3x96x88_5x5", 2, 3, 96, 88, 5, 1, 1, 2},
	{"cls_3x96x104_5x5_s21", 2, 3, 96, 104, 5, 2, 1, 2},
	{"cls_2x96x200_5x5", 2, 2, 96, 200, 5, 1, 1, 2},
}

// BenchmarkConvDepthwise runs each model's depthwise layer on two
// threads, bare and with a bias epilogue (as the fusions hand one), bare
// on the pixel walk for comparison, and bare on one thread, reporting GFLOP/s and the GB/s of its input and output.
func BenchmarkConvDepthwise(b *testing.B) {
	for _, s := range depthwiseBenchShapes {
		pad := []int{s.pad, s.pad}
		one := []int{1, 1}
		p := newConv(s.batch, s.c, s.c, s.c, []int{s.h, s.w}, []int{s.k, s.k}, []int{s.sy, s.sx}, pad, pad, one, one, false)
		rng := rand.New(rand.NewPCG(3, 4))
		in := randSlice[float32](inputLen(p), rng)
		kern := randSlice[float32](kernelLen(p), rng)
		bias := randSlice[float32](s.c, rng)
		pixels := s.batch * p.OutSpatial[0] * p.OutSpatial[1]
		out := make([]float32, pixels*s.c)
		flops := 2.0 * float64(pixels*s.c*s.k*s.k)
		bytes := 4.0 * float64(len(in)+len(out))
		// The bias repeated over every pixel, added by the vector kernel.
		biases := make([]float32, len(out))
		for i := range biases {
			biases[i] = bias[i%s.c]
		}
		epi := func(i, j, rows, cols int) {
			block := out[i*s.c : (i+rows)*s.c]
			AddF32(block, block, biases[i*s.c:])
		}
		for _, e := range []struct {
			name    string
			f       Epilogue
			rows    bool
			threads int
		}{{"bare", nil, true, 2}, {"epi", epi, true, 2}, {"pixels", nil, false, 2}, {"bare1", nil, true, 1}} {
			b.Run(fmt.Sprintf("%s/%s", s.name, e.name), func(b *testing.B) {
				depthwiseRowsOn = e.rows
				defer func() { depthwiseRowsOn = true }()
				for b.Loop() {
					if err := ConvEpilogueF32(p, in, kern, out, e.threads, e.f); err != nil {
						b.Fatal(err)
					}
				}
				sec := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(flops/sec/1e9, "GFLOP/s")
				b.ReportMetric(bytes/sec/1e9, "GB/s")
			})
		}
	}
}
