package kernels

import "fmt"

// Conv describes a convolution in XLA's terms, with every operand read
// through strides so any dimension numbers work without transposing:
//
//	out[b, o..., g*OutPerGroup + j] = Σ over kernel positions k... and
//	  channels c < InChannels/Groups of
//	  in[b, pos..., g*InPerGroup + c] · kernel[k..., c, g*OutPerGroup + j]
//	pos_d = (o_d*Stride_d - PadLo_d + k_d*RhsDil_d) / LhsDil_d
//
// where a position that is negative, past the input or between dilated
// input elements reads zero. The output is row-major [Batch, OutSpatial...,
// OutChannels]. (XLA's window reversal and batch_group_count are not
// covered: the backend maps them onto this or falls back.)
type Conv struct {
	Batch, InChannels, OutChannels, Groups int
	InSpatial, OutSpatial, Kernel          []int
	Stride, PadLo, LhsDil, RhsDil          []int
	// Element strides of the input (batch, each spatial dimension,
	// channel) and of the kernel (each spatial dimension, input channel,
	// output channel).
	InBatchStride, InChannelStride  int
	InSpatialStrides                []int
	KernelInStride, KernelOutStride int
	KernelSpatialStrides            []int
}

func (p *Conv) check() error {
	n := len(p.InSpatial)
	for _, s := range [][]int{p.OutSpatial, p.Kernel, p.Stride, p.PadLo, p.LhsDil, p.RhsDil, p.InSpatialStrides, p.KernelSpatialStrides} {
		if len(s) != n {
			return fmt.Errorf("conv: %d spatial dimensions but a list of %d", n, len(s))
		}
	}
	if p.Groups < 1 || p.InChannels%p.Groups != 0 || p.OutChannels%p.Groups != 0 {
		return fmt.Errorf("conv: %d groups do not divide %d input and %d output channels", p.Groups, p.InChannels, p.OutChannels)
	}
	for d := range n {
		if p.Stride[d] < 1 || p.LhsDil[d] < 1 || p.RhsDil[d] < 1 {
			return fmt.Errorf("conv: stride and dilations must be >= 1")
		}
	}
	return nil
}

// ConvF32 computes the convolution into out (row-major [Batch,
// OutSpatial..., OutChannels]) as one GEMM per feature group: M = output
// pixels, N = output channels of the group, K = kernel positions × input
// channels of the group. The image is never expanded: the GEMM's A packer
// gathers im2col rows straight from the input (implicit im2col), the B
// packer reads the kernel through its strides.
func ConvF32(p *Conv, in, kernel, out []float32, threads int) error {
	return ConvEpilogueF32(p, in, kernel, out, threads, nil)
}

// ConvEpilogueF32 is ConvF32 handing every block of the output, seen as
// the matrix [Batch·pixels, OutChannels], to epi (nil: none) as soon as
// its values are final (see Epilogue).
func ConvEpilogueF32(p *Conv, in, kernel, out []float32, threads int, epi Epilogue) error {
	return ConvPackedF32(p, in, kernel, out, threads, epi, nil)
}

// ConvPackedF32 is ConvEpilogueF32 with a cache of the kernel's packed
// panels (nil: none), for a kernel that is the same on every call, such
// as a model's constant weights: each panel is packed on first use and
// reused after. The cache holds the panels of one kernel array; handed
// another (a new address or length), it starts afresh.
func ConvPackedF32(p *Conv, in, kernel, out []float32, threads int, epi Epilogue, cache *ConvKernelCache) error {
	return ConvFinishedF32(p, in, kernel, out, threads, epi, nil, cache)
}

// ConvFinishedF32 is ConvPackedF32 with ops (nil: none): what epi
// computes, in the form the direct kernels apply as they store a tile
// (TileOps). Blocks whose every tile runs on such a kernel are finished
// so, and epi never sees them; epi finishes the others.
func ConvFinishedF32(p *Conv, in, kernel, out []float32, threads int, epi Epilogue, ops *TileOps, cache *ConvKernelCache) error {
	if err := p.check(); err != nil {
		return err
	}
	cin, cout := p.InChannels/p.Groups, p.OutChannels/p.Groups
	pixels := 1
	for _, o := range p.OutSpatial {
		pixels *= o
	}
	taps := 1
	for _, k := range p.Kernel {
		taps *= k
	}
	m, k := p.Batch*pixels, taps*cin
	if canConvDepthwise(p) {
		convDepthwiseOps(p, in, kernel, out, threads, epi, ops)
		return nil
	}
	if canConvTransposed(p) {
		convTransposed(p, in, kernel, out, threads, epi, cache)
		return nil
	}
	if canConvGrouped(p) {
		convGrouped(p, in, kernel, out, threads, epi)
		return nil
	}
	if winogradTakes(p) && winoInputSafe(p, in) { // (the image first: a kernel may be transformed on every call)
		wk, err := cache.forKernel(kernel).winogradFor(p, kernel, winoThreads(p, threads))
		if err != nil {
			return err
		}
		if wk.safe {
			convWinograd(p, in, wk, out, threads, epi)
			return nil
		}
	}
	// (an infinity, a NaN or a huge value in the image or kernel: the
	// direct sum's semantics)
	if denseMatrix(p) && rowsNarrowTakes(cout, p.InChannels) && k > 0 && pointwiseRows {
		convPointwiseRows(p, in, kernel, out, m, k, threads, epi, ops, cache)
		return nil
	}
	if pointwiseAsGemm(p) {
		// The image is the [pixels, channels] matrix A itself.
		a := Strided[float32]{Data: in, Row: cin, Col: 1}
		pa := func(dst []float32, ic, pc, mb, kb int) { packA(dst, a, ic, pc, mb, kb, sgemmMR) }
		pack := func(dst []float32, pc, jc, kb, nb, from, to int) {
			packConvKernel(dst, p, kernel, jc, cin, pc, kb, nb, from, to)
		}
		kc := cache.forKernel(kernel)
		src := bSource[float32]{pack: pack, panel: kc.reader(0, pack), peek: kc.peeker(0)}
		// A read in place by the direct kernels where they run (B's
		// strides only guide them: its panels come from src).
		blk := directBlock(a, Strided[float32]{Data: kernel, Row: 1, Col: cin}, sgemmMR, sgemmNR, false, wideFor(m, cout, k))
		if blk.run == nil {
			blk = packedBlock(pa, sgemmMR, sgemmNR, kernelF32, wideFor(m, cout, k))
		}
		blk.packsB = false // (src packs B, or keeps it packed)
		if epi != nil && ops.fits(out, p.OutChannels, cout) {
			blk.ops = ops
		}
		gemmCoreFrom(m, cout, k, blk, src, out, p.OutChannels, false, threads, sgemmMR, sgemmNR, epi)
		return nil
	}
	var q *Conv // im2col's convolution and image, made at its first group
	var img []float32
	for g := range p.Groups {
		gepi := shiftColumns(epi, g*cout)
		if canConvDirect(p) {
			var gops *TileOps // (per group, its columns would shift)
			if p.Groups == 1 && ops.fits(out, p.OutChannels, cout) {
				gops = ops
			}
			convDirect(p, in, kernel, out, threads, g, gepi, gops, cache.forKernel(kernel))
			continue
		}
		if q == nil { // the image im2col reads: staged with its padding, or in place
			q, img = p, in
			if im2colStages(p) {
				var buf []float32
				if q, buf = stageImage(p, in, threads); buf != nil {
					defer putBuf(buf)
					img = buf
				}
			}
		}
		im := &im2col{p: q, in: img, cin: cin, c0: g * cin, pixels: pixels, taps: taps, tapOffsets: offsetsOfTaps(q, taps)}
		pa := func(dst []float32, ic, pc, mb, kb int) { im.pack(dst, ic, pc, mb, kb) }
		pack := func(dst []float32, pc, jc, kb, nb, from, to int) {
			packConvKernel(dst, p, kernel, g*cout+jc, cin, pc, kb, nb, from, to)
		}
		kc := cache.forKernel(kernel)
		src := bSource[float32]{pack: pack, panel: kc.reader(g*cout, pack), peek: kc.peeker(g * cout)}
		gemmCoreFrom(m, cout, k, packedBlock(pa, sgemmMR, sgemmNR, kernelF32, wideFor(m, cout, k)), src, out[g*cout:], p.OutChannels, false, threads, sgemmMR, sgemmNR, gepi)
	}
	return nil
}

// im2colStages reports whether the im2col path packs A from a staged
// copy of p's image (stageImage: channels-last, its padding as zeros)
// rather than from the image: where an eighth or more of the output
// pixels have windows reaching into the padding. A border sliver's
// values are each tested against the window's bounds (a 1-channel 3-D
// convolution over 4×10×10, 70% of its windows at a border, packed at
// 4 ns a value, 44 µs for 10,800 values), where the staged copy costs
// one pass over the image and the packing then makes taps reads of each
// value with no test. With input dilation the staging does not apply;
// nor over im2colStageMax elements, where the copy's memory would count.
func im2colStages(p *Conv) bool {
	pixels, interior, padded := 1, 1, false
	staged := p.Batch * p.InChannels
	for d, o := range p.OutSpatial {
		staged *= p.InSpatial[d] + 2*max(p.PadLo[d], 0)
		if p.LhsDil[d] != 1 || p.PadLo[d] < 0 {
			return false
		}
		span := (p.Kernel[d]-1)*p.RhsDil[d] + 1
		lo := min(o, (p.PadLo[d]+p.Stride[d]-1)/p.Stride[d])
		hi := lo
		if last := p.InSpatial[d] - span + p.PadLo[d]; last >= 0 {
			hi = max(lo, min(o, last/p.Stride[d]+1))
		}
		padded = padded || lo > 0 || hi < o
		pixels, interior = pixels*o, interior*(hi-lo)
	}
	return padded && 8*(pixels-interior) >= pixels && staged <= im2colStageMax
}

// im2colStageMax is the most elements (16 MiB) a staged im2col image
// may take.
const im2colStageMax = 1 << 22

// pointwiseGemmMaxK is the input channels up to which a pointwise
// convolution with fewer pixels than output channels runs as a plain
// GEMM rather than on the direct path. 1×1 over 2 threads, medians of
// three, GFLOP/s direct/GEMM: K 32 57/85, 64 84/90, 128 98/106, 256
// 111/119, 512 126/107, 1024 (100 pixels) 102/78.
const pointwiseGemmMaxK = 256

// pointwiseAsGemm reports whether convolution p runs as a plain GEMM of
// its image matrix: where its pixels are fewer than its output channels.
// With more pixels, the direct path's 12-row kernel reads the image in
// place and the GEMM packs all of it for a few column slivers; ResNet's
// pointwise layers with the bias and ReLU, ms over 300 calls, GEMM →
// direct, 2 threads: 3136 pixels 128→64 0.203 → 0.177, 64→64 0.113 →
// 0.103, 32→64 0.076 → 0.064, 256→128 0.741 → 0.657; 784 pixels
// 256→128 0.238 → 0.230, 128→256 0.178 → 0.174; one thread alike (56²
// 64→64 0.217 → 0.191). The GEMM stays ahead with fewer pixels than
// channels: 49 pixels 256→1024 0.104 against 0.137, 196 pixels 128→512
// 0.093 against 0.106.
func pointwiseAsGemm(p *Conv) bool {
	if !denseMatrix(p) || p.InChannels > pointwiseGemmMaxK || pointwiseNarrow(p) {
		return false
	}
	m, _ := convRowsDepth(p)
	return m < p.OutChannels || !useAsm || !useAVX512 || !directTaps
}

// pointwiseNarrow reports whether pointwise convolution p has fewer
// than two pairs of B slivers of output channels, which the direct
// path's kernels (masked where the channels are not whole pairs) write
// in place, twelve pixels of A read where they lie per tile; the packed
// GEMM packs all of A for one or two slivers, and narrower than a pair
// runs partial tiles through scratch. 2 threads, CPU µs, GEMM → direct:
// 4608 pixels 8→8 52 → 17, 6400 pixels 48→12 211 → 101, 25600 pixels
// 16→32 380 → 302, 6400 pixels 32→48 315 → 205, 1600 pixels 96→48
// 216 → 154, 400 pixels 192→42 77 → 69; 64 channels and more stay on
// the GEMM (3136 pixels 64→64 214 → 254).
//
// On AVX2 (6-row slivers, no masks) the direct path pays for its runs
// per sliver, and wins from 16 input channels: Zen 3, 2 threads, µs,
// GEMM → direct: 25600 pixels 16→32 315–357 → 279–305, 16→16 172–200
// → 148–172; 6400 pixels 48→12 203–209 → 137–139, 48→48 278–298 →
// 251–280, 32→48 195–232 → 199–220; 4608 pixels 8→8 31–35 → 38–41.
func pointwiseNarrow(p *Conv) bool {
	return useAsm && directTaps && p.OutChannels < 4*sgemmNR && (useAVX512 || p.InChannels >= narrowMinK)
}

// narrowMinK is the input channels from which pointwiseNarrow takes the
// direct path on AVX2.
var narrowMinK = 16

// denseMatrix reports whether convolution p is a product of its input,
// read as the row-major matrix [pixels, channels], with its kernel: a
// 1×1 window, unit strides, no padding or dilation, one group, and an
// input laid out densely channels-last.
func denseMatrix(p *Conv) bool {
	if p.Groups != 1 || p.InChannelStride != 1 {
		return false
	}
	stride := p.InChannels
	for d := len(p.InSpatial) - 1; d >= 0; d-- {
		if p.Kernel[d] != 1 || p.Stride[d] != 1 || p.PadLo[d] != 0 || p.LhsDil[d] != 1 ||
			p.OutSpatial[d] != p.InSpatial[d] || p.InSpatialStrides[d] != stride {
			return false
		}
		stride *= p.InSpatial[d]
	}
	return p.InBatchStride == stride
}

// ConvWholeRows reports whether ConvEpilogueF32 hands its epilogue only
// whole rows (every output channel of a pixel) for convolution p.
func ConvWholeRows(p *Conv) bool {
	if canConvDepthwise(p) {
		return true
	}
	if p.Groups != 1 || !GemmWholeRows(p.OutChannels) {
		return false
	}
	m, k := convRowsDepth(p)
	if winogradTakes(p) {
		// Split over threads, it may split the output channels too.
		return directRunsInline(m, p.OutChannels, k)
	}
	direct := canConvDirect(p) && !pointwiseAsGemm(p)
	return !direct || directRunsInline(m, p.OutChannels, k) || !directSplitsColumns(m, p.OutChannels)
}

// convRowsDepth is convolution p's product shape: its output pixels
// over the batch (the rows) and one group's taps times input channels
// (the depth).
func convRowsDepth(p *Conv) (m, k int) {
	m, k = p.Batch, p.InChannels/p.Groups
	for d := range p.OutSpatial {
		m *= p.OutSpatial[d]
		k *= p.Kernel[d]
	}
	return m, k
}

// ConvRunsInline reports whether convolution p runs on the calling
// goroutine alone, whatever the thread count: a small one on the packed
// GEMM, the direct path or the depthwise row walk does; with hot, as
// within an execution that keeps the workers polling (GemmRunsInline).
func ConvRunsInline(p *Conv, hot bool) bool {
	if canConvDepthwise(p) {
		return depthwiseRunsInline(p, hot)
	}
	if canConvGrouped(p) {
		return depthwiseRunsInline(depthwiseOf(p), hot)
	}
	m, k := convRowsDepth(p)
	if winogradTakes(p) || canConvDirect(p) && !pointwiseAsGemm(p) {
		return below(2*m*(p.OutChannels/p.Groups)*k, directParallelFlops, hot)
	}
	return GemmRunsInline(m, p.OutChannels/p.Groups, k, hot)
}

// shiftColumns makes a group's epilogue: its GEMM's C starts at the
// group's first output channel.
func shiftColumns(epi Epilogue, j0 int) Epilogue {
	if epi == nil || j0 == 0 {
		return epi
	}
	return func(i, j, rows, cols int) { epi(i, j0+j, rows, cols) }
}

// im2col packs rows of the implicit im2col matrix: row i is output pixel
// (batch, o...), column q is (kernel position, channel), channel fastest.
type im2col struct {
	p                     *Conv
	in                    []float32
	cin, c0, pixels, taps int
	// tapOffsets, when set, are the taps' offsets from a window's
	// origin in the image (offsetsOfTaps).
	tapOffsets []int
	// rowRun, when above cin, is the length of a run through a whole
	// row of the kernel's taps (mergedRun): the direct convolution's
	// interior runs then span a kernel row, not one tap.
	rowRun int
	// flat says the image is the dense matrix [pixels, channels]
	// (denseMatrix): any twelve consecutive output rows make a group
	// for the 12-row kernel, across output rows and examples, where an
	// 80-pixel row left 8 pixels to slivers.
	flat bool
}

// zeros stands in for the image where a kernel tap falls in padding (a
// run is at most one KC block long).
var zeros [directKCMax]float32

// pack fills MR-row slivers. Within a sliver every row reads the same
// (kernel tap, channel run) columns, so the tap is decoded once per run
// for all six rows and each packed step is six loads from six contiguous
// channel runs, one per output pixel.
func (im *im2col) pack(dst []float32, ic, pc, mb, kb int) {
	p := im.p
	ns := len(p.InSpatial)
	var org [sgemmMR][8]int // per row, per spatial dimension: o*stride - padlo
	var base [sgemmMR]int
	var kpos [8]int
	var src [sgemmMR][]float32
	var gather [sgemmMR][gemmKC]float32 // channel runs of a strided-channel image
	// The rows' pixels, decoded once for the block's first row and then
	// stepped odometer-style: with one input channel (a first layer,
	// K = 9) the divisions of decoding every row cost more than the
	// packing and the product together.
	var at [8]int
	b, rem := ic/im.pixels, ic%im.pixels
	for d := ns - 1; d >= 0; d-- {
		at[d] = rem % p.OutSpatial[d]
		rem /= p.OutSpatial[d]
	}
	o := 0
	for s := 0; s < mb; s += sgemmMR {
		sliver := dst[o : o+sgemmMR*kb]
		rows := min(sgemmMR, mb-s)
		for r := range rows {
			for d := range ns {
				org[r][d] = at[d]*p.Stride[d] - p.PadLo[d]
			}
			base[r] = b*p.InBatchStride + im.c0*p.InChannelStride
			b += nextPixel(at[:ns], p.OutSpatial)
		}
		if im.tapOffsets != nil {
			im.packRows(sliver, rows, &base, &org, pc, kb)
			o += sgemmMR * kb
			continue
		}
		for q := 0; q < kb; {
			col := pc + q
			tap, c := col/im.cin, col%im.cin
			run := min(im.cin-c, kb-q)
			tapPosition(p, tap, &kpos)
			for r := range sgemmMR {
				src[r] = zeros[:run]
				off, ok := im.tapOffset(r < rows, base[r], &org[r], &kpos)
				switch {
				case !ok:
				case p.InChannelStride == 1:
					src[r] = im.in[off+c : off+c+run]
				default:
					g := gather[r][:run]
					for t := range g {
						g[t] = im.in[off+(c+t)*p.InChannelStride]
					}
					src[r] = g
				}
			}
			interleave6(sliver[q*sgemmMR:(q+run)*sgemmMR], &src)
			q += run
		}
		o += sgemmMR * kb
	}
}

// nextPixel steps the output position at to the next pixel in row-major
// order over dims, returning 1 when it wraps to the next example.
func nextPixel(at, dims []int) int {
	for d := len(at) - 1; d >= 0; d-- {
		if at[d]++; at[d] < dims[d] {
			return 0
		}
		at[d] = 0
	}
	return 1
}

// packRows packs a sliver value by value, each row's way: a row whose
// window lies inside the image reads its origin plus the tap's
// precomputed offset plus the channel's, with no bounds to test and no
// division; a row at the border reads the same offset where the tap's
// position lies in the row's window's range in every dimension (taps
// hold only where no dimension is lhs-dilated, so the offset is linear).
// With few channels (a first layer's one) the run-by-run path's
// per-column decoding cost ten times the copy; and a small 3-D image,
// two thirds of its windows at a border, spent 84% of its convolution
// in decoding each border tap's offset (tapOffset) before the ranges.
func (im *im2col) packRows(sliver []float32, rows int, base *[sgemmMR]int, org *[sgemmMR][8]int, pc, kb int) {
	p := im.p
	ns := len(p.InSpatial)
	var start [sgemmMR]int
	var inside [sgemmMR]bool
	all := rows == sgemmMR
	for r := range rows {
		start[r], inside[r] = base[r], true
		for d := range ns {
			o := org[r][d]
			start[r] += o * p.InSpatialStrides[d]
			inside[r] = inside[r] && o >= 0 && o+(p.Kernel[d]-1)*p.RhsDil[d] < p.InSpatial[d]
		}
		all = all && inside[r]
	}
	if all {
		im.packInside(sliver, &start, pc, kb)
		return
	}
	var lo, hi [sgemmMR][8]int // a border row's kernel positions reading the image, per dimension
	for r := range rows {
		for d := range ns {
			lo[r][d], hi[r][d] = tapRange(org[r][d], p.RhsDil[d], p.Kernel[d], p.InSpatial[d])
		}
	}
	cs := p.InChannelStride
	tap, c := pc/im.cin, pc%im.cin
	var kpos [8]int
	tapPosition(p, tap, &kpos)
	for q := range kb {
		toff := im.tapOffsets[tap] + c*cs
		d := sliver[q*sgemmMR : q*sgemmMR+sgemmMR]
		for r := range rows {
			switch {
			case inside[r]:
				d[r] = im.in[start[r]+toff]
			case inWindow(&kpos, &lo[r], &hi[r], ns):
				d[r] = im.in[start[r]+toff]
			default:
				d[r] = 0
			}
		}
		clear(d[rows:])
		if c++; c == im.cin {
			c, tap = 0, tap+1
			for k := ns - 1; k >= 0; k-- { // the tap's position, odometer-style
				if kpos[k]++; kpos[k] < p.Kernel[k] {
					break
				}
				kpos[k] = 0
			}
		}
	}
}

// packInside is packRows for a whole sliver of windows inside the image:
// six loads and a store of six a step, no tests (HiFi-GAN's 1-D layers
// spent a third of the model in packRows, deciding every value's row).
func (im *im2col) packInside(sliver []float32, start *[sgemmMR]int, pc, kb int) {
	in, cs := im.in, im.p.InChannelStride
	s0, s1, s2, s3, s4, s5 := start[0], start[1], start[2], start[3], start[4], start[5]
	tap, c := pc/im.cin, pc%im.cin
	for q := 0; q < kb; {
		run := min(im.cin-c, kb-q)
		off := im.tapOffsets[tap] + c*cs
		for i := range run {
			d := (*[sgemmMR]float32)(sliver[(q+i)*sgemmMR:])
			o := off + i*cs
			d[0], d[1], d[2], d[3], d[4], d[5] = in[s0+o], in[s1+o], in[s2+o], in[s3+o], in[s4+o], in[s5+o]
		}
		q, c, tap = q+run, 0, tap+1
	}
}

// tapRange returns the kernel positions [lo, hi) along one dimension at
// which a window with origin o (its first tap's position, padding
// negative) reads the image: o + k·dil in [0, size).
func tapRange(o, dil, taps, size int) (lo, hi int) {
	if o < 0 {
		lo = (-o + dil - 1) / dil
	}
	if last := size - 1 - o; last >= 0 {
		hi = min(taps, last/dil+1)
	}
	return lo, max(lo, hi)
}

// inWindow reports whether kernel position kpos lies in [lo, hi) in each
// of the first ns dimensions.
func inWindow(kpos, lo, hi *[8]int, ns int) bool {
	for d := range ns {
		if kpos[d] < lo[d] || kpos[d] >= hi[d] {
			return false
		}
	}
	return true
}

// interleave6 writes step t of six equally long runs as dst[6t:6t+6].
func interleave6(dst []float32, src *[sgemmMR][]float32) {
	s0 := src[0]
	s1, s2, s3, s4, s5 := src[1][:len(s0)], src[2][:len(s0)], src[3][:len(s0)], src[4][:len(s0)], src[5][:len(s0)]
	dst = dst[:6*len(s0)]
	for t := range s0 {
		d := (*[6]float32)(dst[6*t:])
		d[0], d[1], d[2], d[3], d[4], d[5] = s0[t], s1[t], s2[t], s3[t], s4[t], s5[t]
	}
}

// tapOffset is the image offset of a row's pixel under kernel tap kpos,
// or false when the row is padding of the sliver or the tap reads zero.
func (im *im2col) tapOffset(row bool, base int, org, kpos *[8]int) (int, bool) {
	if !row {
		return 0, false
	}
	p := im.p
	off := base
	for d := range p.InSpatial {
		pos := org[d] + kpos[d]*p.RhsDil[d]
		if pos < 0 {
			return 0, false
		}
		if p.LhsDil[d] != 1 {
			if pos%p.LhsDil[d] != 0 {
				return 0, false
			}
			pos /= p.LhsDil[d]
		}
		if pos >= p.InSpatial[d] {
			return 0, false
		}
		off += pos * p.InSpatialStrides[d]
	}
	return off, true
}

// packConvKernel packs rows [pc, pc+kb) (kernel position, channel) and
// output-channel slivers [from, to) of one group's kernel matrix. The
// kernel's input-channel dimension holds one group's channels (XLA's
// kernel shape has InChannels/Groups there), so only the output channel
// moves with the group.
func packConvKernel(dst []float32, p *Conv, kernel []float32, co0, cin, pc, kb, nb, from, to int) {
	o := from * sgemmNR * kb
	for s := from * sgemmNR; s < min(nb, to*sgemmNR); s += sgemmNR {
		cols := min(sgemmNR, nb-s)
		// Walk the rows (tap, channel) incrementally: decoding each row
		// with divisions cost more than the copy when a K block holds
		// many channels of one tap (a kernel-gradient convolution).
		tap, c := pc/cin, pc%cin
		tapOff := kernelTapOffset(p, tap)
		col0 := (co0 + s) * p.KernelOutStride
		for r := 0; r < kb; {
			off := tapOff + c*p.KernelInStride + col0
			if run := min(kb-r, cin-c); cols == sgemmNR && p.KernelOutStride == 1 && run > 1 &&
				packRows16F32(run, kernel[off:], p.KernelInStride, dst[o:o+run*sgemmNR]) {
				// The rest of this tap's channels: rows KernelInStride
				// apart, moved by the vector copy (a call to copy per
				// 16 values cost 27 ns a row in a kernel gradient,
				// whose rows are an example apart).
				o += run * sgemmNR
				r += run
				if c += run; c == cin {
					c, tap = 0, tap+1
					tapOff = kernelTapOffset(p, tap)
				}
				continue
			}
			r++
			d := dst[o : o+sgemmNR]
			if p.KernelOutStride == 1 {
				copy(d[:cols], kernel[off:off+cols])
			} else {
				for j := range cols {
					d[j] = kernel[off+j*p.KernelOutStride]
				}
			}
			clear(d[cols:])
			o += sgemmNR
			if c++; c == cin {
				c, tap = 0, tap+1
				tapOff = kernelTapOffset(p, tap)
			}
		}
	}
}

// tapPosition sets kpos to kernel tap t's position along each spatial
// dimension (taps row-major over the kernel's spatial dimensions).
func tapPosition(p *Conv, t int, kpos *[8]int) {
	for d := len(p.Kernel) - 1; d >= 0; d-- {
		kpos[d] = t % p.Kernel[d]
		t /= p.Kernel[d]
	}
}

// kernelTapOffset is the offset of kernel tap t (row-major over the
// kernel's spatial dimensions) in the kernel array.
func kernelTapOffset(p *Conv, t int) int {
	off := 0
	for d := len(p.Kernel) - 1; d >= 0; d-- {
		off += t % p.Kernel[d] * p.KernelSpatialStrides[d]
		t /= p.Kernel[d]
	}
	return off
}

// pointwiseRows lets tests and benchmarks keep narrow pointwise
// convolutions off the rows kernels.
var pointwiseRows = true

// convPointwiseRows computes pointwise convolution p (denseMatrix) of at
// most rowsMaxCols output channels with the rows kernels
// (gemmRowsNarrow): the image is A, read in place; the kernel's slivers
// come from the cache (packed on first use) or are packed for the call;
// ops (nil: none) is epi as the kernels apply it (ConvFinishedF32).
func convPointwiseRows(p *Conv, in, kernel, out []float32, m, k, threads int, epi Epilogue, ops *TileOps, cache *ConvKernelCache) {
	cin, cout := p.InChannels, p.OutChannels
	a := Strided[float32]{Data: in, Row: cin, Col: 1}
	pack := func(dst []float32, pc, jc, kb, nb, from, to int) {
		packConvKernel(dst, p, kernel, jc, cin, pc, kb, nb, from, to)
	}
	slivers := (cout + sgemmNR - 1) / sgemmNR
	var panel func(pc, kb int) []float32
	if rd := cache.forKernel(kernel).reader(0, pack); rd != nil {
		panel = func(pc, kb int) []float32 { return rd(pc, 0, kb, cout) }
	} else {
		var bp []float32
		bp, panel = packedSlices(k, slivers, func(dst []float32, pc, kb int) { pack(dst, pc, 0, kb, cout, 0, slivers) })
		defer putBuf(bp)
	}
	gemmRowsNarrow(m, cout, k, a, panel, out, cout, false, threads, epi, ops)
}
