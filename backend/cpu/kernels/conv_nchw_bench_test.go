package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// nchwBenchShapes are convolutions of the ONNX CNNs (batch 1): channels
// in and out, image side, kernel side, stride.
var nchwBenchShapes = []struct{ cin, cout, side, k, stride int }{
	{96, 24, 80, 3, 1},   // ppocr_v4_det head
	{64, 64, 56, 3, 1},   // resnet 3x3
	{128, 128, 28, 3, 2}, // resnet downsampling 3x3
	{16, 32, 160, 1, 1},  // ppocr_v4_det pointwise
	{64, 256, 56, 1, 1},  // resnet expanding 1x1
	{3, 32, 224, 7, 2},   // resnet stem
	{32, 32, 56, 3, 1},
	{64, 64, 28, 3, 1},
	{128, 128, 14, 3, 1},
	{256, 256, 7, 3, 1},
	{256, 64, 56, 1, 1},
	{3, 16, 320, 3, 2}, // ppocr_v4_det stem
}

func BenchmarkConvNCHW(b *testing.B) {
	for _, s := range nchwBenchShapes {
		for _, first := range []bool{false, true} {
			sp, kk, st, pad := []int{s.side, s.side}, []int{s.k, s.k}, []int{s.stride, s.stride}, []int{s.k / 2, s.k / 2}
			p := newConv(1, s.cin, s.cout, 1, sp, kk, st, pad, pad, []int{1, 1}, []int{1, 1}, first)
			rng := rand.New(rand.NewPCG(1, 1))
			in := randSlice[float32](inputLen(p), rng)
			kern := randSlice[float32](kernelLen(p), rng)
			out := make([]float32, p.OutChannels*p.OutSpatial[0]*p.OutSpatial[1])
			flops := 2.0 * float64(len(out)*s.cin*s.k*s.k)
			b.Run(fmt.Sprintf("%dx%d_%dto%d_k%ds%d_nchw=%v", s.side, s.side, s.cin, s.cout, s.k, s.stride, first), func(b *testing.B) {
				var cache ConvKernelCache
				for b.Loop() {
					if err := ConvPackedF32(p, in, kern, out, 2, nil, &cache); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
		q := &ConvNCHW{Batch: 1, Groups: 1, InChannels: s.cin, OutChannels: s.cout, InH: s.side, InW: s.side,
			KH: s.k, KW: s.k, StrideH: s.stride, StrideW: s.stride, PadH: s.k / 2, PadW: s.k / 2, DilH: 1, DilW: 1}
		q.OutH = (s.side+2*(s.k/2)-s.k)/s.stride + 1
		q.OutW = q.OutH
		rng := rand.New(rand.NewPCG(1, 1))
		in := randSlice[float32](s.cin*s.side*s.side, rng)
		kern := randSlice[float32](s.cout*s.k*s.k*s.cin, rng)
		out := make([]float32, s.cout*q.OutH*q.OutW)
		flops := 2.0 * float64(len(out)*s.cin*s.k*s.k)
		b.Run(fmt.Sprintf("%dx%d_%dto%d_k%ds%d_gemm", s.side, s.side, s.cin, s.cout, s.k, s.stride), func(b *testing.B) {
			for b.Loop() {
				ConvNCHWF32(q, in, kern, out, 2)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkConvDepthwiseSmall is ppocr_mobile_v2_cls's widest depthwise
// layer, channels-last: 2×2×96 pixels, 200 channels, 5×5, pad 2.
func BenchmarkConvDepthwiseSmall(b *testing.B) {
	p := newConv(2, 200, 200, 200, []int{2, 96}, []int{5, 5}, []int{1, 1}, []int{2, 2}, []int{2, 2}, []int{1, 1}, []int{1, 1}, false)
	rng := rand.New(rand.NewPCG(1, 1))
	in := randSlice[float32](inputLen(p), rng)
	kern := randSlice[float32](kernelLen(p), rng)
	out := make([]float32, 2*2*96*200)
	for b.Loop() {
		if err := ConvPackedF32(p, in, kern, out, 1, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvDepthwiseNCHW is ppocr_v4_det's first depthwise layer
// (16 channels, 160×160, 3×3) channels-first, against the same layer
// channels-last.
func BenchmarkConvDepthwiseNCHW(b *testing.B) {
	for _, first := range []bool{true, false} {
		p := newConv(1, 16, 16, 16, []int{160, 160}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1}, []int{1, 1}, first)
		p.KernelOutStride, p.KernelInStride, p.KernelSpatialStrides = 1, 16, []int{48, 16}
		rng := rand.New(rand.NewPCG(1, 1))
		in := randSlice[float32](inputLen(p), rng)
		kern := randSlice[float32](9*16, rng)
		out := make([]float32, 16*160*160)
		b.Run(fmt.Sprintf("nchw=%v", first), func(b *testing.B) {
			for b.Loop() {
				if first {
					ConvDepthwiseNCHWF32(p, in, kern, out, 2)
				} else if err := ConvPackedF32(p, in, kern, out, 2, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
