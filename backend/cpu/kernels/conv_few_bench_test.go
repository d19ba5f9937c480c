package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// fewChannelShapes are the channels-last convolutions of the OCR and
// ResNet models with few output channels, few input channels (first
// layers, whose channels-first image is copied channels-last first) or
// a small pointwise product: batch, image side(s), channels in and out,
// kernel side, stride, and whether the image comes channels-first.
var fewChannelShapes = []struct {
	name                         string
	batch, h, w, cin, cout, k, s int
	nchw                         bool
}{
	{"det_head80", 1, 80, 80, 96, 24, 3, 1, false},
	{"det_head40", 1, 40, 40, 96, 24, 3, 1, false},
	{"det_head20", 1, 20, 20, 96, 24, 3, 1, false},
	{"det_pw80_48to12", 1, 80, 80, 48, 12, 1, 1, false},
	{"det_pw40_96to18", 1, 40, 40, 96, 18, 1, 1, false},
	{"det_stem", 1, 320, 320, 3, 16, 3, 2, true},
	{"cls_stem", 2, 48, 192, 3, 8, 3, 2, true},
	{"resnet_stem", 1, 224, 224, 3, 32, 7, 2, true},
	{"cls_pw24", 2, 24, 96, 8, 8, 1, 1, false},
	{"cls_pw12", 2, 12, 96, 8, 8, 1, 1, false},
	{"cls_pw6", 2, 6, 96, 32, 8, 1, 1, false},
}

// BenchmarkConvFewChannels runs fewChannelShapes on two threads with a
// cached kernel, as the backend does: a channels-first image is read in
// place (the direct kernel stages it channels-last itself).
func BenchmarkConvFewChannels(b *testing.B) {
	for _, s := range fewChannelShapes {
		pad := []int{s.k / 2, s.k / 2}
		p := newConv(s.batch, s.cin, s.cout, 1, []int{s.h, s.w}, []int{s.k, s.k}, []int{s.s, s.s}, pad, pad, []int{1, 1}, []int{1, 1}, s.nchw)
		rng := rand.New(rand.NewPCG(1, 1))
		in := randSlice[float32](inputLen(p), rng)
		kern := randSlice[float32](kernelLen(p), rng)
		out := make([]float32, s.batch*p.OutSpatial[0]*p.OutSpatial[1]*s.cout)
		flops := 2.0 * float64(len(out)*s.cin*s.k*s.k)
		b.Run(fmt.Sprintf("%s_%dx%dx%dto%d_k%ds%d", s.name, s.h, s.w, s.cin, s.cout, s.k, s.s), func(b *testing.B) {
			var cache ConvKernelCache
			for b.Loop() {
				if err := ConvPackedF32(p, in, kern, out, 2, nil, &cache); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "us/op")
		})
	}
}
