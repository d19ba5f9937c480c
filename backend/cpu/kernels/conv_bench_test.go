package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkConvResNet is ../shared/bench/conv_resnet_b32.hlo's shape:
// batch 32, 56x56, 64 -> 64 channels, 3x3, pad 1, NHWC / HWIO.
func BenchmarkConvResNet(b *testing.B) {
	one := []int{1, 1}
	p := newConv(32, 64, 64, 1, []int{56, 56}, []int{3, 3}, one, one, one, one, one, false)
	rng := rand.New(rand.NewPCG(1, 1))
	in := randSlice[float32](inputLen(p), rng)
	kern := randSlice[float32](kernelLen(p), rng)
	out := make([]float32, 32*56*56*64)
	flops := 2.0 * 32 * 56 * 56 * 64 * 64 * 9
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				if err := ConvF32(p, in, kern, out, threads); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkConvBF16ResNet is BenchmarkConvResNet's layer in bf16 on the
// bf16 GEMM (ConvBF16), for its rate against the f32 direct convolution.
func BenchmarkConvBF16ResNet(b *testing.B) {
	one := []int{1, 1}
	p := newConv(32, 64, 64, 1, []int{56, 56}, []int{3, 3}, one, one, one, one, one, false)
	rng := rand.New(rand.NewPCG(1, 1))
	in, kern := uniformBF16(inputLen(p), rng), uniformBF16(kernelLen(p), rng)
	out := make([]float32, 32*56*56*64)
	flops := 2.0 * 32 * 56 * 56 * 64 * 64 * 9
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				if err := ConvBF16(p, in, kern, nil, out, threads, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkConvBF16Packed is ResNet-50's last 3×3 layer at batch 1 in
// bf16 (7×7 pixels, 512 → 512 channels: 2.4 M kernel values for 49
// pixels), the kernel packed per call and packed ahead (PackConvBF16, as
// a model's constant weights are).
func BenchmarkConvBF16Packed(b *testing.B) {
	one := []int{1, 1}
	p := newConv(1, 512, 512, 1, []int{7, 7}, []int{3, 3}, one, one, one, one, one, false)
	rng := rand.New(rand.NewPCG(1, 1))
	in, kern := uniformBF16(inputLen(p), rng), uniformBF16(kernelLen(p), rng)
	packed, err := PackConvBF16(p, kern)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]float32, 7*7*512)
	flops := 2.0 * 7 * 7 * 512 * 512 * 9
	for _, threads := range []int{1, 2} {
		for _, ahead := range []bool{false, true} {
			b.Run(fmt.Sprintf("threads=%d/packed-ahead=%v", threads, ahead), func(b *testing.B) {
				pk := packed
				if !ahead {
					pk = nil
				}
				for b.Loop() {
					if err := ConvBF16(p, in, kern, pk, out, threads, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
