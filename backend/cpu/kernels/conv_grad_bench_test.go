package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkConvTraining times the three convolutions of one training step
// of a 3x3, 32 -> 32 channel layer on a batch of 256 26x26 outputs (the
// second layer of the Fashion-MNIST CNN, examples/cnn): the forward pass,
// the input gradient (the output adjoint convolved with the flipped
// kernel, padded by 2) and the kernel gradient (the input convolved with
// the output adjoint, batch and channels swapped), as autodiff builds them.
func BenchmarkConvTraining(b *testing.B) {
	one, zero := []int{1, 1}, []int{0, 0}
	const n, h, c = 256, 28, 32
	fwd := newConv(n, c, c, 1, []int{h, h}, []int{3, 3}, one, zero, zero, one, one, false)
	dx := newConv(n, c, c, 1, []int{h - 2, h - 2}, []int{3, 3}, one, []int{2, 2}, []int{2, 2}, one, one, false)
	// Kernel gradient: "batch" is the input channel, "channels" are the
	// examples, the "kernel" is the output adjoint [n, 26, 26, c].
	dw := &Conv{Batch: c, InChannels: n, OutChannels: c, Groups: 1,
		InSpatial: []int{h, h}, OutSpatial: []int{3, 3}, Kernel: []int{h - 2, h - 2},
		Stride: one, PadLo: zero, LhsDil: one, RhsDil: one,
		InBatchStride: 1, InChannelStride: h * h * c, InSpatialStrides: []int{h * c, c},
		KernelInStride: (h - 2) * (h - 2) * c, KernelOutStride: 1, KernelSpatialStrides: []int{(h - 2) * c, c},
	}
	// The same with the input transposed to [c, 28, 28, n] first, so that
	// the contracted examples are the contiguous dimension.
	dwT := *dw
	dwT.InBatchStride, dwT.InChannelStride, dwT.InSpatialStrides = h*h*n, 1, []int{h * n, n}
	flops := 2.0 * n * (h - 2) * (h - 2) * c * c * 9
	rng := rand.New(rand.NewPCG(1, 1))
	for _, k := range []struct {
		name          string
		p             *Conv
		in, kern, out int
	}{
		{"forward", fwd, n * h * h * c, 9 * c * c, n * (h - 2) * (h - 2) * c},
		{"input-grad", dx, n * (h - 2) * (h - 2) * c, 9 * c * c, n * h * h * c},
		{"kernel-grad", dw, n * h * h * c, n * (h - 2) * (h - 2) * c, 9 * c * c},
		{"kernel-grad-transposed-input", &dwT, n * h * h * c, n * (h - 2) * (h - 2) * c, 9 * c * c},
	} {
		in := randSlice[float32](k.in, rng)
		kern := randSlice[float32](k.kern, rng)
		out := make([]float32, k.out)
		b.Run(fmt.Sprintf("%s/threads=2", k.name), func(b *testing.B) {
			for b.Loop() {
				if err := ConvF32(k.p, in, kern, out, 2); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkConvFirstLayer times the Fashion-MNIST CNN's first
// convolution: one input channel, 3x3, padded, 32 outputs, batch 256 on
// 28x28 (K = 9: the im2col packing, not the arithmetic, sets its pace).
func BenchmarkConvFirstLayer(b *testing.B) {
	one := []int{1, 1}
	p := newConv(256, 1, 32, 1, []int{28, 28}, []int{3, 3}, one, one, one, one, one, false)
	rng := rand.New(rand.NewPCG(1, 1))
	in := randSlice[float32](inputLen(p), rng)
	kern := randSlice[float32](kernelLen(p), rng)
	out := make([]float32, 256*28*28*32)
	for b.Loop() {
		if err := ConvF32(p, in, kern, out, 2); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*9*32*256*784*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
