package kernels

// Grouped convolutions of few channels per group (ResNeXt's 32 groups of
// 4, a QDQ model's 2 of 4): one GEMM per group has a depth of taps × a
// few channels and a few output columns, and its packer gathers a few
// floats per tap per pixel — a ResNeXt 3×3 layer over 56×56×128 in 32
// groups took 11 ms on the im2col path, five times ONNX Runtime's 2 ms.
// Such a convolution is the sum, over the c < InChannels/Groups channels
// of a group, of depthwise convolutions: for channel c, every output
// channel o of group g reads input channel g·cin + c through its kernel
// column w[..., c, o]. Each is run on the depthwise kernel (one input
// channel per output channel, read from an image of OutChannels channels
// gathered for c) and the results added; the epilogue then sees the
// finished sums. The terms are the GEMM's, added in another order.

// groupedMaxChannels is the most input channels per group taken this way:
// the gathered images are OutChannels wide, cin of them, where the GEMM
// packs cin floats a tap.
const groupedMaxChannels = 8

// canConvGrouped reports whether p is a grouped convolution for
// convGrouped: several groups of 2 to groupedMaxChannels input channels.
func canConvGrouped(p *Conv) bool {
	cin := p.InChannels / p.Groups
	return p.Groups > 1 && cin >= 2 && cin <= groupedMaxChannels && len(p.InSpatial) >= 1 && len(p.InSpatial) <= 2 &&
		allOnes(p.LhsDil)
}

func allOnes(v []int) bool {
	for _, x := range v {
		if x != 1 {
			return false
		}
	}
	return true
}

// convGrouped computes grouped convolution p (canConvGrouped) into out.
func convGrouped(p *Conv, in, kernel, out []float32, threads int, epi Epilogue) {
	cin, cout := p.InChannels/p.Groups, p.OutChannels/p.Groups
	pixels, taps := 1, 1
	for d := range p.InSpatial {
		pixels *= p.InSpatial[d]
		taps *= p.Kernel[d]
	}
	dw := depthwiseOf(p)
	img := GetF32(p.Batch * pixels * p.OutChannels)
	defer PutF32(img)
	wk := GetF32(taps * p.OutChannels)
	defer PutF32(wk)
	part := GetF32(len(out))
	defer PutF32(part)
	n := p.OutChannels
	for c := range cin {
		gatherGroupChannel(p, in, img, c, cin, cout, threads)
		groupKernelColumn(p, kernel, wk, c, taps)
		if c == 0 {
			convDepthwise(dw, img, wk, out, threads, nil)
			continue
		}
		// Each block of this channel's sums is added into out as the
		// depthwise kernel finishes it, while it is in cache; after the
		// last channel, the block is final and goes to epi.
		last := c == cin-1
		convDepthwise(dw, img, wk, part, threads, func(i, j, rows, cols int) {
			for r := i; r < i+rows; r++ {
				addTo(out[r*n+j:r*n+j+cols], part[r*n+j:r*n+j+cols])
			}
			if last && epi != nil {
				epi(i, j, rows, cols)
			}
		})
	}
}

// depthwiseOf is the depthwise convolution each input channel of p's
// groups makes: OutChannels channels in, one output channel each, over a
// channels-last image and a [taps..., OutChannels] kernel.
func depthwiseOf(p *Conv) *Conv {
	n := len(p.InSpatial)
	q := *p
	q.InChannels, q.Groups = p.OutChannels, p.OutChannels
	q.InChannelStride, q.KernelOutStride, q.KernelInStride = 1, 1, p.OutChannels
	q.InSpatialStrides, q.KernelSpatialStrides = make([]int, n), make([]int, n)
	is, ks := p.OutChannels, p.OutChannels
	for d := n - 1; d >= 0; d-- {
		q.InSpatialStrides[d], q.KernelSpatialStrides[d] = is, ks
		is *= p.InSpatial[d]
		ks *= p.Kernel[d]
	}
	q.InBatchStride = is
	return &q
}

// gatherGroupChannel fills img ([Batch, InSpatial..., OutChannels]) with
// channel c of each group of p's input: img[..., g·cout + j] = in[...,
// g·cin + c] for every j < cout.
func gatherGroupChannel(p *Conv, in, img []float32, c, cin, cout, threads int) {
	rows := p.Batch
	for d := 0; d < len(p.InSpatial)-1; d++ {
		rows *= p.InSpatial[d]
	}
	w := p.InSpatial[len(p.InSpatial)-1]
	ws := p.InSpatialStrides[len(p.InSpatial)-1]
	tn := min(threads, max(1, rows/8))
	parallel(tn, func(t int) {
		for r := t * rows / tn; r < (t+1)*rows/tn; r++ {
			src := rowOffset(p, r)
			dst := img[r*w*p.OutChannels:]
			for x := range w {
				s := src + x*ws + c*p.InChannelStride
				o := dst[x*p.OutChannels : (x+1)*p.OutChannels]
				for g := 0; len(o) >= cout; g++ {
					v := in[s+g*cin*p.InChannelStride]
					for j := range o[:cout] {
						o[j] = v
					}
					o = o[cout:]
				}
			}
		}
	})
}

// rowOffset is the input offset of row r of p's image seen as [Batch ·
// InSpatial[:n-1]..., InSpatial[n-1]] (its first pixel, channel 0).
func rowOffset(p *Conv, r int) int {
	off := 0
	for d := len(p.InSpatial) - 2; d >= 0; d-- {
		off += r % p.InSpatial[d] * p.InSpatialStrides[d]
		r /= p.InSpatial[d]
	}
	return off + r*p.InBatchStride
}

// groupKernelColumn fills wk ([taps..., OutChannels]) with p's kernel for
// input channel c of every group: wk[tap, o] = kernel[tap..., c, o].
func groupKernelColumn(p *Conv, kernel, wk []float32, c, taps int) {
	for tap := range taps {
		off, tp := c*p.KernelInStride, tap
		for d := len(p.Kernel) - 1; d >= 0; d-- {
			off += tp % p.Kernel[d] * p.KernelSpatialStrides[d]
			tp /= p.Kernel[d]
		}
		row := wk[tap*p.OutChannels : (tap+1)*p.OutChannels]
		for o := range row {
			row[o] = kernel[off+o*p.KernelOutStride]
		}
	}
}
