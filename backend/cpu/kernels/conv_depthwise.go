package kernels

// Depthwise convolution (one input channel per group, as MobileNet's
// separable layers): a GEMM per group would have one output column and a
// K of only the kernel taps, so instead each output pixel accumulates, tap
// by tap, a whole vector of channels: contiguous loads from a
// channels-last image and a channels-minor kernel.

func canConvDepthwise(p *Conv) bool {
	return p.Groups == p.InChannels && p.Groups > 1 && p.InChannelStride == 1 && p.KernelOutStride == 1
}

func convDepthwise(p *Conv, in, kernel, out []float32, threads int, epi Epilogue) {
	mult := p.OutChannels / p.Groups
	pixels, taps := 1, 1
	for d := range p.OutSpatial {
		pixels *= p.OutSpatial[d]
		taps *= p.Kernel[d]
	}
	m := p.Batch * pixels
	if m == 0 {
		return
	}
	im := &im2col{p: p, in: in, cin: 1, pixels: pixels, taps: taps}
	threads = max(1, min(threads, m))
	parallel(threads, func(t int) {
		var org [8]int
		var kpos [8]int
		lo, hi := t*m/threads, (t+1)*m/threads
		done := lo // rows before done have been through the epilogue
		for i := lo; i < hi; i++ {
			if epi != nil && (i-done)*p.OutChannels >= depthwiseEpilogueBlock {
				epi(done, 0, i-done, p.OutChannels)
				done = i
			}
			acc := out[i*p.OutChannels : (i+1)*p.OutChannels]
			clear(acc)
			b, rem := i/pixels, i%pixels
			for d := len(p.OutSpatial) - 1; d >= 0; d-- {
				org[d] = rem%p.OutSpatial[d]*p.Stride[d] - p.PadLo[d]
				rem /= p.OutSpatial[d]
			}
			for tap := range taps {
				koff, tp := 0, tap
				for d := len(p.Kernel) - 1; d >= 0; d-- {
					kpos[d] = tp % p.Kernel[d]
					koff += kpos[d] * p.KernelSpatialStrides[d]
					tp /= p.Kernel[d]
				}
				off, ok := im.tapOffset(true, b*p.InBatchStride, &org, &kpos)
				if !ok {
					continue
				}
				x := in[off : off+p.InChannels]
				w := kernel[koff : koff+p.OutChannels]
				if mult == 1 {
					axpyVec(acc, x, w)
					continue
				}
				for c, xc := range x {
					for j := range mult {
						acc[c*mult+j] += xc * w[c*mult+j]
					}
				}
			}
		}
		if epi != nil && hi > done {
			epi(done, 0, hi-done, p.OutChannels)
		}
	})
}

// depthwiseEpilogueBlock is the output elements (16 KiB) a depthwise
// convolution computes before finishing them, so they are still in L1.
const depthwiseEpilogueBlock = 4096

// axpyVec is acc[i] += x[i]*w[i].
func axpyVec(acc, x, w []float32) {
	x, w = x[:len(acc)], w[:len(acc)]
	for i := range acc {
		acc[i] += x[i] * w[i]
	}
}
