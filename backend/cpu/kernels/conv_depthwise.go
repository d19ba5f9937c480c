package kernels

// Depthwise convolution (one input channel per group, as MobileNet's
// separable layers): a GEMM per group would have one output column and a
// K of only the kernel taps, so instead each output pixel accumulates, tap
// by tap, a whole vector of channels: contiguous loads from a
// channels-last image and a channels-minor kernel. One- and
// two-dimensional ones go by output rows (conv_depthwise_rows.go); this
// file's pixel-by-pixel walk takes the others (3-D, input dilation,
// several output channels per input channel).

//go:generate sh -c "cd _asm && go run ./depthwise -out ../conv_depthwise_amd64.s -stubs ../conv_depthwise_stub_amd64.go -pkg kernels"

func canConvDepthwise(p *Conv) bool {
	return p.Groups == p.InChannels && p.Groups > 1 && p.InChannelStride == 1 && p.KernelOutStride == 1
}

func convDepthwise(p *Conv, in, kernel, out []float32, threads int, epi Epilogue) {
	convDepthwiseOps(p, in, kernel, out, threads, epi, nil)
}

// convDepthwiseOps is convDepthwise with ops (nil: none), epi as the AVX2
// kernel applies it while it stores (depthwiseOpsTake): the rows path then
// finishes the pixels it can so and hands epi only the others.
func convDepthwiseOps(p *Conv, in, kernel, out []float32, threads int, epi Epilogue, ops *TileOps) {
	if canDepthwiseRows(p) && depthwiseRowsOn {
		convDepthwiseRows(p, in, kernel, out, threads, epi, ops)
		return
	}
	pixels, taps := 1, 1
	for d := range p.OutSpatial {
		pixels *= p.OutSpatial[d]
		taps *= p.Kernel[d]
	}
	m := p.Batch * pixels
	if m == 0 {
		return
	}
	dw := &depthwise{
		im:     im2col{p: p, in: in, cin: 1, pixels: pixels, taps: taps},
		kernel: kernel, out: out, mult: p.OutChannels / p.Groups, epi: epi,
		koffs: kernelTapOffsets(p, taps), deltas: offsetsOfTaps(p, taps),
	}
	threads = max(1, min(threads, m))
	parallel(threads, func(t int) { dw.pixels(t*m/threads, (t+1)*m/threads) })
}

// depthwise is one depthwise convolution's operands and what its pixels
// share. Each tap's kernel offset (koffs), and its input offset from the
// window's origin (deltas; nil with input dilation): a pixel whose window
// lies inside the image then finds its taps by one add each, and only
// border pixels test bounds tap by tap.
type depthwise struct {
	im            im2col
	kernel, out   []float32
	mult          int // output channels per input channel
	epi           Epilogue
	koffs, deltas []int
}

// kernelTapOffsets returns each kernel tap's offset in the kernel.
func kernelTapOffsets(p *Conv, taps int) []int {
	koffs := make([]int, taps)
	for tap := range koffs {
		tp := tap
		for d := len(p.Kernel) - 1; d >= 0; d-- {
			koffs[tap] += tp % p.Kernel[d] * p.KernelSpatialStrides[d]
			tp /= p.Kernel[d]
		}
	}
	return koffs
}

// pixels computes output pixels [lo, hi) (batch and position flattened),
// handing each depthwiseEpilogueBlock of them to the epilogue.
func (dw *depthwise) pixels(lo, hi int) {
	p, taps := dw.im.p, dw.im.taps
	// In locals, as the loop reads them for every pixel.
	in, kernel, out, deltas, koffs, mult, epi := dw.im.in, dw.kernel, dw.out, dw.deltas, dw.koffs, dw.mult, dw.epi
	var org, pos [8]int
	offs, woffs := make([]int, 0, taps), make([]int, 0, taps) // a pixel's valid taps
	// Rows before done have been through the epilogue.
	done := lo
	// The pixel's batch and position, stepped along (no division per
	// pixel: it was a quarter of the time).
	b, rem := lo/dw.im.pixels, lo%dw.im.pixels
	for d := len(p.OutSpatial) - 1; d >= 0; d-- {
		pos[d], rem = rem%p.OutSpatial[d], rem/p.OutSpatial[d]
	}
	for i := lo; i < hi; i++ {
		if epi != nil && (i-done)*p.OutChannels >= depthwiseEpilogueBlock {
			epi(done, 0, i-done, p.OutChannels)
			done = i
		}
		acc := out[i*p.OutChannels : (i+1)*p.OutChannels]
		start, inside, pb := b*p.InBatchStride, deltas != nil, b
		for d := range p.OutSpatial {
			o := pos[d]*p.Stride[d] - p.PadLo[d]
			org[d] = o
			inside = inside && o >= 0 && o+(p.Kernel[d]-1)*p.RhsDil[d] < p.InSpatial[d]
			start += o * p.InSpatialStrides[d]
		}
		for d := len(p.OutSpatial) - 1; d >= 0; d-- { // the next pixel
			if pos[d]++; pos[d] < p.OutSpatial[d] {
				break
			}
			pos[d] = 0
			if d == 0 {
				b++
			}
		}
		if len(p.OutSpatial) == 0 {
			b++
		}
		if inside {
			offs = offs[:taps]
			for tap, delta := range deltas {
				offs[tap] = start + delta
			}
			depthwiseTaps(acc, in, kernel, offs, koffs, p.InChannels, mult)
			continue
		}
		if deltas != nil {
			offs, woffs = dw.borderTaps(offs[:0], woffs[:0], &org, start)
		} else {
			offs, woffs = dw.dilatedTaps(offs[:0], woffs[:0], &org, pb)
		}
		depthwiseTaps(acc, in, kernel, offs, woffs, p.InChannels, mult)
	}
	if epi != nil && hi > done {
		epi(done, 0, hi-done, p.OutChannels)
	}
}

// borderTaps appends a border pixel's valid taps, its window at org
// (start in the image): per dimension the kernel positions that land
// inside the image, walked in tap order (as dilatedTaps would find them).
func (dw *depthwise) borderTaps(offs, woffs []int, org *[8]int, start int) ([]int, []int) {
	p := dw.im.p
	var klo, khi, kpos [8]int
	for d := range p.Kernel {
		dil := p.RhsDil[d]
		lo, hi := 0, p.Kernel[d]
		if o := org[d]; o < 0 {
			lo = (-o + dil - 1) / dil
		}
		if last := p.InSpatial[d] - 1 - org[d]; last < 0 {
			hi = 0
		} else {
			hi = min(hi, last/dil+1)
		}
		if lo >= hi {
			return offs, woffs
		}
		klo[d], khi[d], kpos[d] = lo, hi, lo
	}
	nd := len(p.Kernel)
	for {
		tap := 0
		for d := range nd {
			tap = tap*p.Kernel[d] + kpos[d]
		}
		offs, woffs = append(offs, start+dw.deltas[tap]), append(woffs, dw.koffs[tap])
		d := nd - 1
		for ; d >= 0; d-- {
			if kpos[d]++; kpos[d] < khi[d] {
				break
			}
			kpos[d] = klo[d]
		}
		if d < 0 {
			return offs, woffs
		}
	}
}

// dilatedTaps appends the valid taps of a pixel of example b, its window
// at org, testing each tap's bounds (input dilation: taps skip
// positions).
func (dw *depthwise) dilatedTaps(offs, woffs []int, org *[8]int, b int) ([]int, []int) {
	p := dw.im.p
	var kpos [8]int
	for tap := range dw.im.taps {
		tapPosition(p, tap, &kpos)
		if off, ok := dw.im.tapOffset(true, b*p.InBatchStride, org, &kpos); ok {
			offs, woffs = append(offs, off), append(woffs, dw.koffs[tap])
		}
	}
	return offs, woffs
}

// depthwiseEpilogueBlock is the output elements (16 KiB) a depthwise
// convolution computes before finishing them, so they are still in L1.
const depthwiseEpilogueBlock = 4096

// depthwiseTaps sets one output pixel's channels acc to the sum, tap by
// tap in order, of the input's channels at offs[t] times the kernel's at
// woffs[t] (mult output channels per input channel).
func depthwiseTaps(acc, in, kernel []float32, offs, woffs []int, channels, mult int) {
	c0 := 0
	if mult == 1 {
		if c0 = depthwisePixelVec(acc, in, kernel, offs, woffs); c0 == channels {
			return
		}
	}
	clear(acc[c0*mult:])
	for t, off := range offs {
		x := in[off+c0 : off+channels]
		w := kernel[woffs[t]+c0*mult : woffs[t]+channels*mult]
		a := acc[c0*mult:]
		if mult == 1 {
			axpyVec(a, x, w)
			continue
		}
		for c, xc := range x {
			for j := range mult {
				a[c*mult+j] += xc * w[c*mult+j]
			}
		}
	}
}

// axpyVec is acc[i] += x[i]*w[i].
func axpyVec(acc, x, w []float32) {
	x, w = x[:len(acc)], w[:len(acc)]
	for i := range acc {
		acc[i] += x[i] * w[i]
	}
}

// depthwiseOpsOn lets tests and benchmarks keep the depthwise epilogue
// out of the AVX2 kernel's store.
var depthwiseOpsOn = true
