package kernels

import "slices"

// Few-channel convolutions on the direct kernel (a first layer's RGB
// image): the image is staged channels-last with its padding as zeros,
// so that a window's row of taps is one contiguous run (mergedRun), long
// enough for the 12-row kernel.

// fewChannelsDirect reports whether convolution p, with fewer than
// DirectMinChannels channels, runs on the direct kernel: the image staged
// (any layout, non-negative padding) or read in place (channels-last,
// pixels their channels apart: negative padding leaves border runs).
func fewChannelsDirect(p *Conv) bool {
	last := len(p.OutSpatial) - 1
	if !useAsm || !directTaps || last < 0 || p.Groups != 1 ||
		p.Kernel[last]*p.InChannels < 3 || p.OutSpatial[last] < 2*sgemmMR {
		return false
	}
	for _, l := range p.LhsDil {
		if l != 1 {
			return false
		}
	}
	if p.InChannelStride == 1 && p.InSpatialStrides[last] == p.InChannels {
		return true
	}
	for _, pad := range p.PadLo {
		if pad < 0 {
			return false
		}
	}
	return true
}

// directBandPixels is about the output pixels of a band of a
// few-channel convolution (convDirectBands): its staged image rows and
// its output then stay in L2 (ResNet's first layer: 2016 pixels, 113 KiB
// of image, 252 KiB of output).
const directBandPixels = 2048

// convDirectBands runs a few-channel convolution whose image needs
// staging in bands of output rows along the first spatial dimension,
// each staged and computed by one thread while its image rows are in
// cache, reporting false where p is not cut so (one band, or an image
// read in place). Staging the whole image first wrote it to memory and
// read it back: a 320×320 RGB first layer ran three times slower in a
// model, its buffers cold, than in a loop over one image.
func convDirectBands(p *Conv, in, kernel, out []float32, threads int, epi Epilogue, ops *TileOps, cache *ConvKernelCache) bool {
	ns := len(p.OutSpatial)
	if ns < 2 || !needsStaging(p) {
		return false
	}
	row, k := 1, p.InChannels // output pixels of a row of the first dimension; K
	for d := range ns {
		k *= p.Kernel[d]
		if d > 0 {
			row *= p.OutSpatial[d]
		}
	}
	// Bands of at most rows rows: each band is then a single one when
	// convDirect runs it.
	rows := max(1, directBandPixels/max(1, row))
	perExample := (p.OutSpatial[0] + rows - 1) / rows
	tasks := p.Batch * perExample
	if tasks < 2 {
		return false
	}
	if runsAlone(2*p.Batch*p.OutSpatial[0]*row*p.OutChannels*k, directParallelFlops) {
		threads = 1
	}
	threads = max(1, min(threads, tasks))
	if r := tasks % threads; r != 0 && p.Batch == 1 && perExample+threads-r <= p.OutSpatial[0] {
		// Bands a whole number a thread: ResNet's first layer, 112 rows
		// in 7 bands, left one of two threads a band more than the other.
		perExample += threads - r
		tasks = perExample
	}
	parallel(threads, func(t int) {
		for task := t * tasks / threads; task < (t+1)*tasks/threads; task++ {
			b, band := task/perExample, task%perExample
			y0, y1 := band*p.OutSpatial[0]/perExample, (band+1)*p.OutSpatial[0]/perExample
			q, off := bandConv(p, y0, y1)
			r0 := (b*p.OutSpatial[0] + y0) * row
			var bepi Epilogue
			if epi != nil {
				bepi = func(i, j, rows, cols int) { epi(r0+i, j, rows, cols) }
			}
			convDirect(q, in[b*p.InBatchStride+off:], kernel, out[r0*p.OutChannels:], 1, 0, bepi, ops.FromRow(r0), cache)
		}
	})
	return true
}

// bandConv returns the convolution computing output rows [y0, y1) of
// the first spatial dimension of one example of p, and the offset in the
// example's image of the first image row it reads.
func bandConv(p *Conv, y0, y1 int) (*Conv, int) {
	q := *p
	q.Batch = 1
	q.InSpatial, q.OutSpatial, q.PadLo = slices.Clone(p.InSpatial), slices.Clone(p.OutSpatial), slices.Clone(p.PadLo)
	org := y0*p.Stride[0] - p.PadLo[0] // the band's first window's first row
	start := max(0, org)
	end := min(p.InSpatial[0], org+(y1-y0-1)*p.Stride[0]+(p.Kernel[0]-1)*p.RhsDil[0]+1)
	q.OutSpatial[0], q.PadLo[0], q.InSpatial[0] = y1-y0, start-org, max(0, end-start)
	return &q, start * p.InSpatialStrides[0]
}

// needsStaging reports whether few-channel convolution p reads a staged
// copy of its image (stageImage).
func needsStaging(p *Conv) bool {
	st, dense := p.InChannels, p.InChannelStride == 1
	for d := len(p.InSpatial) - 1; d >= 0; d-- {
		if p.PadLo[d] < 0 {
			return false
		}
		need := (p.OutSpatial[d]-1)*p.Stride[d] + (p.Kernel[d]-1)*p.RhsDil[d] + 1
		dense = dense && p.PadLo[d] == 0 && need <= p.InSpatial[d] && p.InSpatialStrides[d] == st
		st *= p.InSpatial[d]
	}
	return len(p.InSpatial) > 0 && !(dense && (p.Batch == 1 || p.InBatchStride == st))
}

// stageImage copies a few-channel image (fewChannelsDirect's) into a
// dense channels-last buffer with its padding as zeros, in one pass from
// whatever layout it has, returning the convolution reading the copy; or
// p and nil where p reads its image in place (dense, channels-last, no
// padding; or negative padding). Every window then lies inside the
// image, so every run is an interior one spanning a kernel row: at a
// border, runs of one tap and per-row bounds tests cost more than the
// product (a one-channel first layer: 71% of its time in building border
// runs). Gathering a channels-first image here, rather than copying it
// channels-last first and padding the copy, halves the passes over it:
// the two copies and the clearing were two thirds of a 3-channel
// 320×320 first layer.
func stageImage(p *Conv, in []float32, threads int) (*Conv, []float32) {
	ns := len(p.InSpatial)
	q := *p
	q.InSpatial, q.PadLo, q.InSpatialStrides = make([]int, ns), make([]int, ns), make([]int, ns)
	st, same := p.InChannels, p.InChannelStride == 1
	for d := ns - 1; d >= 0; d-- {
		if p.PadLo[d] < 0 {
			return p, nil
		}
		need := (p.OutSpatial[d]-1)*p.Stride[d] + (p.Kernel[d]-1)*p.RhsDil[d] + 1
		q.InSpatial[d] = max(p.InSpatial[d]+p.PadLo[d], need)
		q.InSpatialStrides[d] = st
		same = same && p.PadLo[d] == 0 && q.InSpatial[d] == p.InSpatial[d] && p.InSpatialStrides[d] == st
		st *= q.InSpatial[d]
	}
	q.InBatchStride, q.InChannelStride = st, 1
	if ns == 0 || same && (p.Batch == 1 || p.InBatchStride == st) {
		return p, nil
	}
	buf := getBuf[float32](st * p.Batch)
	rows := p.Batch * st / (q.InSpatial[ns-1] * p.InChannels)
	if len(buf) < MinParallelWork {
		threads = 1
	}
	threads = max(1, min(threads, rows))
	parallel(threads, func(t int) {
		for r := t * rows / threads; r < (t+1)*rows/threads; r++ {
			stageRow(p, &q, in, buf, r)
		}
	})
	return &q, buf
}

// stageRow writes row r of staged image q (a run along its last spatial
// dimension, rows counted over the batch and the other dimensions) from
// p's image: zeros where the row or its ends are padding.
func stageRow(p, q *Conv, in, buf []float32, r int) {
	ns, c := len(p.InSpatial), p.InChannels
	w := q.InSpatial[ns-1]
	dst := buf[r*w*c : (r+1)*w*c]
	off := 0
	for d := ns - 2; d >= 0; d-- {
		i := r%q.InSpatial[d] - p.PadLo[d]
		r /= q.InSpatial[d]
		if i < 0 || i >= p.InSpatial[d] {
			clear(dst)
			return
		}
		off += i * p.InSpatialStrides[d]
	}
	off += r * p.InBatchStride
	lo := p.PadLo[ns-1]
	clear(dst[:lo*c])
	clear(dst[(lo+p.InSpatial[ns-1])*c:])
	gatherPixels(dst[lo*c:(lo+p.InSpatial[ns-1])*c], in[off:], c, p.InSpatialStrides[ns-1], p.InChannelStride)
}

// gatherPixels sets dst[x·c + ch] = src[x·sx + ch·sc]: pixels of c
// channels made channels-last.
func gatherPixels(dst, src []float32, c, sx, sc int) {
	n := len(dst) / c
	switch {
	case sc == 1 && sx == c:
		copy(dst, src[:n*c])
	case c == 3 && sx == 1: // an RGB image, channels-first
		gatherRGB(dst, src[:n], src[sc:sc+n], src[2*sc:2*sc+n])
	default:
		for ch := range c {
			s := src[ch*sc:]
			for x := range n {
				dst[x*c+ch] = s[x*sx]
			}
		}
	}
}

// gatherRGB interleaves three planes' runs into dst: 16 pixels a step
// on AVX-512, 8 on AVX2 (interleave3Vec: six two-source permutes for 48
// values, or nine permutes and six blends for 24, where the Go loop
// below took 0.56 ns a value, a tenth of ResNet's first layer),
// then four a step (one bounds check per plane and step: a pixel a step
// ran at 0.43 ns a value).
func gatherRGB(dst, s0, s1, s2 []float32) {
	x := interleave3Vec(dst, s0, s1[:len(s0)], s2[:len(s0)])
	for ; x+4 <= len(s0); x += 4 {
		r, g, b := (*[4]float32)(s0[x:]), (*[4]float32)(s1[x:]), (*[4]float32)(s2[x:])
		d := (*[12]float32)(dst[3*x:])
		d[0], d[1], d[2] = r[0], g[0], b[0]
		d[3], d[4], d[5] = r[1], g[1], b[1]
		d[6], d[7], d[8] = r[2], g[2], b[2]
		d[9], d[10], d[11] = r[3], g[3], b[3]
	}
	for ; x < len(s0); x++ {
		d := (*[3]float32)(dst[3*x:])
		d[0], d[1], d[2] = s0[x], s1[x], s2[x]
	}
}
