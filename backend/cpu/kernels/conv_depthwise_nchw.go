package kernels

// Depthwise convolution of a channels-first image (ONNX's NCHW with a
// depthwise Conv): the depthwise kernel wants channels innermost, and
// copying whole images to channels-last and back cost three times the
// convolution (a 16-channel 160×160 layer: 4.5 ms against 1.3 ms). Here
// the output is computed in strips of rows: each strip's input rows are
// turned channels-last into a buffer that stays in cache, convolved, and
// the result turned back into place, strips spread over the threads.

// CanConvDepthwiseNCHW reports whether ConvDepthwiseNCHWF32 computes p:
// a 2-D depthwise convolution of a dense channels-first image, its
// kernel's output channels innermost, no input dilation.
func CanConvDepthwiseNCHW(p *Conv) bool {
	if len(p.InSpatial) != 2 || p.Groups != p.InChannels || p.Groups <= 1 || p.KernelOutStride != 1 {
		return false
	}
	h, w := p.InSpatial[0], p.InSpatial[1]
	return p.InSpatialStrides[1] == 1 && p.InSpatialStrides[0] == w && p.InChannelStride == h*w &&
		p.InBatchStride == p.InChannels*h*w && p.LhsDil[0] == 1 && p.LhsDil[1] == 1
}

// depthwiseStrip is the input floats a strip's channels-last buffer
// holds, about: 64 KiB, in L2 with the strip's output.
const depthwiseStrip = 16 << 10

// ConvDepthwiseNCHWF32 computes depthwise convolution p
// (CanConvDepthwiseNCHW) into out, [Batch, OutChannels, OutSpatial...]
// row-major.
func ConvDepthwiseNCHWF32(p *Conv, in, kernel, out []float32, threads int) {
	ConvDepthwiseNCHWEpilogueF32(p, in, kernel, out, threads, nil)
}

// ConvDepthwiseNCHWRunsInline reports whether ConvDepthwiseNCHWF32 runs
// p on one goroutine.
func ConvDepthwiseNCHWRunsInline(p *Conv) bool {
	flops := 2 * p.OutChannels * p.Batch
	for d, o := range p.OutSpatial {
		flops *= o * p.Kernel[d]
	}
	return flops < gemmParallelFlops
}

// ConvDepthwiseNCHWEpilogueF32 computes p like ConvDepthwiseNCHWF32 and
// hands each strip of each channel to epi (nil: none) once it is in
// place, out seen as the matrix [Batch·OutChannels, OutH·OutW].
func ConvDepthwiseNCHWEpilogueF32(p *Conv, in, kernel, out []float32, threads int, epi Epilogue) {
	c, o := p.InChannels, p.OutChannels
	h, w := p.InSpatial[0], p.InSpatial[1]
	oh, ow := p.OutSpatial[0], p.OutSpatial[1]
	if oh == 0 || ow == 0 || p.Batch == 0 {
		return
	}
	// Output rows a strip: its input rows (stride apart, plus the
	// window's reach) within depthwiseStrip.
	reach := (p.Kernel[0]-1)*p.RhsDil[0] + 1
	rows := max(1, (depthwiseStrip/max(1, w*c)-reach)/p.Stride[0]+1)
	rows = min(rows, oh)
	perImage := (oh + rows - 1) / rows
	tasks := p.Batch * perImage
	threads = max(1, min(threads, tasks))
	if 2*o*oh*ow*p.Kernel[0]*p.Kernel[1] < gemmParallelFlops {
		threads = 1
	}
	parallel(threads, func(t int) {
		var buf, obuf []float32
		for task := t * tasks / threads; task < (t+1)*tasks/threads; task++ {
			b, o0 := task/perImage, task%perImage*rows
			o1 := min(oh, o0+rows)
			lo := max(0, o0*p.Stride[0]-p.PadLo[0])
			hi := min(h, (o1-1)*p.Stride[0]-p.PadLo[0]+reach)
			n := max(0, hi-lo)
			dst := out[b*o*oh*ow:]
			if n == 0 { // the strip's windows lie in the padding
				for ch := range o {
					clear(dst[ch*oh*ow+o0*ow : ch*oh*ow+o1*ow])
					if epi != nil {
						epi(b*o+ch, o0*ow, 1, (o1-o0)*ow)
					}
				}
				continue
			}
			q := *p
			q.Batch = 1
			q.InSpatial = []int{n, w}
			q.OutSpatial = []int{o1 - o0, ow}
			q.PadLo = []int{p.PadLo[0] - o0*p.Stride[0] + lo, p.PadLo[1]}
			q.InChannelStride, q.InSpatialStrides, q.InBatchStride = 1, []int{w * c, c}, n*w*c
			buf = grow(buf, n*w*c)
			src := in[b*p.InBatchStride:]
			toChannelsLast(buf, src[lo*w:], c, n*w, h*w)
			m := (o1 - o0) * ow
			obuf = grow(obuf, m*o)
			convDepthwise(&q, buf, kernel, obuf, 1, nil)
			toChannelsFirst(dst[o0*ow:], obuf, o, m, oh*ow)
			if epi != nil {
				for ch := range o {
					epi(b*o+ch, o0*ow, 1, m)
				}
			}
		}
	})
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// toChannelsLast sets dst[i·c + ch] = src[ch·plane + i] for i < n: n
// pixels of c planes, four planes a pass.
func toChannelsLast(dst, src []float32, c, n, plane int) {
	ch := 0
	for ; ch+4 <= c; ch += 4 {
		p0, p1 := src[ch*plane:ch*plane+n], src[(ch+1)*plane:(ch+1)*plane+n]
		p2, p3 := src[(ch+2)*plane:(ch+2)*plane+n], src[(ch+3)*plane:(ch+3)*plane+n]
		for i := range p0 {
			d := (*[4]float32)(dst[i*c+ch:])
			d[0], d[1], d[2], d[3] = p0[i], p1[i], p2[i], p3[i]
		}
	}
	for ; ch < c; ch++ {
		for i, v := range src[ch*plane : ch*plane+n] {
			dst[i*c+ch] = v
		}
	}
}

// toChannelsFirst sets dst[ch·plane + i] = src[i·c + ch] for i < n, four
// planes a pass.
func toChannelsFirst(dst, src []float32, c, n, plane int) {
	ch := 0
	for ; ch+4 <= c; ch += 4 {
		d0, d1 := dst[ch*plane:ch*plane+n], dst[(ch+1)*plane:(ch+1)*plane+n]
		d2, d3 := dst[(ch+2)*plane:(ch+2)*plane+n], dst[(ch+3)*plane:(ch+3)*plane+n]
		for i := range d0 {
			s := (*[4]float32)(src[i*c+ch:])
			d0[i], d1[i], d2[i], d3[i] = s[0], s[1], s[2], s[3]
		}
	}
	for ; ch < c; ch++ {
		d := dst[ch*plane : ch*plane+n]
		for i := range d {
			d[i] = src[i*c+ch]
		}
	}
}

// transposeBlock is the pixels a pass of ChannelsLastF32 and
// ChannelsFirstF32 moves at once: their channels-last side (up to 256
// channels: 256 KiB) stays in L2 while the planes stream.
const transposeBlock = 256

// ChannelsLastF32 copies batch images of c planes of n pixels (NCHW) into
// dst channels-last (NHWC), threads splitting the pixels.
func ChannelsLastF32(dst, src []float32, batch, c, n, threads int) {
	transposeImages(batch, c, n, threads, func(b, lo, hi int) {
		toChannelsLast(dst[(b*n+lo)*c:], src[b*c*n+lo:], c, hi-lo, n)
	})
}

// ChannelsFirstF32 copies batch channels-last images (NHWC) of c channels
// and n pixels into dst channels-first (NCHW).
func ChannelsFirstF32(dst, src []float32, batch, c, n, threads int) {
	transposeImages(batch, c, n, threads, func(b, lo, hi int) {
		toChannelsFirst(dst[b*c*n+lo:], src[(b*n+lo)*c:], c, hi-lo, n)
	})
}

func transposeImages(batch, c, n, threads int, f func(b, lo, hi int)) {
	blocks := (n + transposeBlock - 1) / transposeBlock
	tasks := batch * blocks
	if batch*c*n < MinParallelWork {
		threads = 1
	}
	threads = max(1, min(threads, tasks))
	parallel(threads, func(t int) {
		for task := t * tasks / threads; task < (t+1)*tasks/threads; task++ {
			b, lo := task/blocks, task%blocks*transposeBlock
			f(b, lo, min(n, lo+transposeBlock))
		}
	})
}
