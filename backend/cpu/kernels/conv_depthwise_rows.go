package kernels

import "sync/atomic"

// Depthwise convolution by output rows: the pixels of a row whose windows
// lie inside the image across (the row's interior) share one list of
// taps, the kernel rows that land inside the image times every kernel
// column, so the list is made once a row and the interior goes to a
// kernel that runs along it (depthwiseRun) with no test per pixel; only
// the few border pixels at each end get lists of their own. Making each
// pixel's list and testing its bounds had made a 160×160, 16-channel
// layer eight times slower than this on one thread.

// canDepthwiseRows reports whether convDepthwiseRows computes depthwise
// convolution p: one or two spatial dimensions, one output channel per
// input channel, no input dilation.
func canDepthwiseRows(p *Conv) bool {
	if len(p.InSpatial) < 1 || len(p.InSpatial) > 2 || p.OutChannels != p.InChannels {
		return false
	}
	for _, d := range p.LhsDil {
		if d != 1 {
			return false
		}
	}
	return true
}

// dwRows is a depthwise convolution seen as two-dimensional (a 1-D one
// has a single row): sizes, window, and the strides of input and kernel.
type dwRows struct {
	in, kernel, out []float32
	c               int // channels
	h, w, oh, ow    int
	kh, kw          int
	sy, sx, py, px  int // strides and low padding
	dy, dx          int // kernel dilation
	inB, inY, inX   int // input strides
	kY, kX          int // kernel strides
	oxLo, oxHi      int // the columns whose windows lie inside the image across
	// Where fewer than 16 channels divide 16, group adjacent pixels of
	// the interior (stride 1 across, pixels dense) into vectors of 16:
	// tiled holds each tap's weights repeated group times.
	group int
	tiled []float32
	epi   Epilogue
	// ops, where set, is epi as the AVX2 kernel applies it as it stores
	// (depthwiseOpsTake): interior runs are finished so, and epi gets
	// only the other pixels, one run at a time.
	ops *TileOps
}

// newDWRows plans p (canDepthwiseRows) on its operands.
func newDWRows(p *Conv, in, kernel, out []float32, epi Epilogue) *dwRows {
	r := &dwRows{in: in, kernel: kernel, out: out, c: p.InChannels, epi: epi,
		h: 1, oh: 1, kh: 1, sy: 1, dy: 1, inB: p.InBatchStride, group: 1}
	x := len(p.InSpatial) - 1
	if x == 1 {
		r.h, r.oh, r.kh, r.sy, r.py, r.dy = p.InSpatial[0], p.OutSpatial[0], p.Kernel[0], p.Stride[0], p.PadLo[0], p.RhsDil[0]
		r.inY, r.kY = p.InSpatialStrides[0], p.KernelSpatialStrides[0]
	}
	r.w, r.ow, r.kw, r.sx, r.px, r.dx = p.InSpatial[x], p.OutSpatial[x], p.Kernel[x], p.Stride[x], p.PadLo[x], p.RhsDil[x]
	r.inX, r.kX = p.InSpatialStrides[x], p.KernelSpatialStrides[x]
	r.oxLo = min(r.ow, (r.px+r.sx-1)/r.sx)
	r.oxHi = r.oxLo
	if last := r.w - 1 + r.px - (r.kw-1)*r.dx; last >= 0 {
		r.oxHi = max(r.oxLo, min(r.ow, last/r.sx+1))
	}
	if g := depthwiseGroup(r.c); g > 1 && r.sx == 1 && r.inX == r.c {
		r.group = g
		r.tiled = make([]float32, r.kh*r.kw*16)
		for ky := range r.kh {
			for kx := range r.kw {
				t := r.tiled[(ky*r.kw+kx)*16:][:16]
				w := kernel[ky*r.kY+kx*r.kX:][:r.c]
				for j := range t {
					t[j] = w[j%r.c]
				}
			}
		}
	}
	return r
}

// convDepthwiseRows computes p (canDepthwiseRows), threads splitting the
// output rows, each block of rows handed to epi (nil: none) once final.
func convDepthwiseRows(p *Conv, in, kernel, out []float32, threads int, epi Epilogue, ops *TileOps) {
	r := newDWRows(p, in, kernel, out, epi)
	// With the ops in the kernel's store, MobileNetV2's stride-1 layers
	// lost their epilogue pass (one thread, medians of three processes:
	// 112²×32 295–350 → 264–285 µs, 56²×144 278–312 → 251–265); its
	// stride-2 112²→56²×96 went 260–342 → 310–410 and keeps the pass.
	if epi != nil && r.group == 1 && r.sx == 1 && depthwiseOpsTake(r.c, ops) && ops.fits(out, r.c, r.c) {
		r.ops = ops
	}
	rows := p.Batch * r.oh
	if rows == 0 || r.ow == 0 {
		return
	}
	if depthwiseRunsAlone(p) {
		threads = 1
	}
	threads = max(1, min(threads, rows))
	if threads == 1 {
		r.rows(0, rows)
		return
	}
	// The threads claim chunks of rows as they go rather than a fixed
	// share each: on a shared machine a worker can start late or lose
	// its processor midway, and the caller then takes over the rows it
	// has not reached instead of waiting for them.
	var next atomic.Int64
	chunk := max(1, rows/(4*threads))
	parallel(threads, func(int) {
		for {
			lo := int(next.Add(int64(chunk))) - chunk
			if lo >= rows {
				return
			}
			r.rows(lo, min(lo+chunk, rows))
		}
	})
}

// A depthwise convolution below depthwiseParallelFlops and
// depthwiseParallelInput (input elements) runs on the calling goroutine:
// about 60 µs on one thread, where a worker's wake-up (20 µs or more on
// these VMs) and a processor shared with other work took back what the
// second thread saved (the classifier's 5×5 layers, 30 µs on one thread,
// took 55 µs on two). A big input (2 MB) makes even few flops slow: its
// reads are then what two threads share.
const (
	depthwiseParallelFlops = 1 << 22
	depthwiseParallelInput = 1 << 19
)

// depthwiseRunsInline reports whether convDepthwise runs p on the calling
// goroutine alone, with hot within an execution (ConvRunsInline).
func depthwiseRunsInline(p *Conv, hot bool) bool {
	if !canDepthwiseRows(p) || !depthwiseRowsOn {
		return false
	}
	flops, input := depthwiseWork(p)
	return below(flops, depthwiseParallelFlops, hot) && below(input, depthwiseParallelInput, hot)
}

// depthwiseRunsAlone is depthwiseRunsInline at run time: while the pool
// is hot, a hotShare of either bound (runsAlone).
func depthwiseRunsAlone(p *Conv) bool {
	flops, input := depthwiseWork(p)
	return runsAlone(flops, depthwiseParallelFlops) && runsAlone(input, depthwiseParallelInput)
}

// depthwiseWork is a depthwise convolution's flops and input elements.
func depthwiseWork(p *Conv) (flops, input int) {
	flops, input = 2*p.Batch*p.OutChannels, p.Batch*p.InChannels
	for d, o := range p.OutSpatial {
		flops *= o * p.Kernel[d]
		input *= p.InSpatial[d]
	}
	return flops, input
}

// dwLists is the tap lists of an output row, made for one range of
// kernel rows and kept for the rows after it with the same range (all
// but an image's top and bottom few): each border pixel's (the left
// ones, then the right ones), the interior's, and the interior's over
// tiled weights (group > 1), all in one buffer. Making them pixel by
// pixel, row by row, took a fifth of a 48×48, 8-channel layer's time.
// (Passed by value: lists stored through a pointer leave the stack.)
type dwLists struct {
	buf      []int // list l: input offsets from l·2n, kernel offsets from l·2n+n
	meta     []int // list l: its length at 2l, its first tap's input offset at 2l+1
	n        int   // the window's taps
	ky0, ky1 int   // the kernel rows they were made for (none yet: ky1 <= ky0)
}

// dwStackLists is the most ints of tap lists rows keeps on the stack:
// a 5×5 window padded by two on each side needs 312.
const dwStackLists = 512

// list returns list l's input and kernel offsets and its first tap's
// input offset, which the input offsets are relative to.
func (L dwLists) list(l int) (ioffs, woffs []int, io0 int) {
	at, cnt := l*2*L.n, L.meta[2*l]
	return L.buf[at : at+cnt], L.buf[at+L.n : at+L.n+cnt], L.meta[2*l+1]
}

// borders is how many pixels of a row lie outside its interior.
func (r *dwRows) borders() int { return r.oxLo + r.ow - r.oxHi }

// lists remakes L's lists for kernel rows [ky0, ky1).
func (r *dwRows) lists(L dwLists, ky0, ky1 int) dwLists {
	L.ky0, L.ky1 = ky0, ky1
	border := func(l, ox int) {
		kx0, kx1 := clipTaps(ox*r.sx-r.px, r.kw, r.dx, r.w)
		r.fill(L, l, ky0, ky1, kx0, max(kx0, kx1), r.kY, r.kX)
	}
	for ox := range r.oxLo {
		border(ox, ox)
	}
	for ox := r.oxHi; ox < r.ow; ox++ {
		border(r.oxLo+ox-r.oxHi, ox)
	}
	l := r.borders()
	r.fill(L, l, ky0, ky1, 0, r.kw, r.kY, r.kX)
	if r.group > 1 {
		r.fill(L, l+1, ky0, ky1, 0, r.kw, r.kw*16, 16)
	}
	return L
}

// fill makes list l of L: kernel rows [ky0, ky1) by columns [kx0, kx1),
// row by row as the Go loop sums them, the kernel read with strides kY,
// kX, the input offsets relative to the first tap's.
func (r *dwRows) fill(L dwLists, l, ky0, ky1, kx0, kx1, kY, kX int) {
	at := l * 2 * L.n
	io0 := ky0*r.dy*r.inY + kx0*r.dx*r.inX
	cnt := 0
	for ky := ky0; ky < ky1; ky++ {
		for kx := kx0; kx < kx1; kx++ {
			L.buf[at+cnt] = ky*r.dy*r.inY + kx*r.dx*r.inX - io0
			L.buf[at+L.n+cnt] = ky*kY + kx*kX
			cnt++
		}
	}
	L.meta[2*l], L.meta[2*l+1] = cnt, io0
}

// rows computes output rows [lo, hi) (batch and row flattened).
func (r *dwRows) rows(lo, hi int) {
	// The lists' storage: on the stack for the windows models use (a
	// list grown by append from nothing made ten allocations a call).
	var store [dwStackLists]int
	lists := r.borders() + 2
	L := dwLists{n: r.kh * r.kw}
	buf := store[:]
	if need := lists * (2*L.n + 2); need > len(buf) {
		buf = make([]int, need)
	}
	L.buf, L.meta = buf[:2*L.n*lists], buf[2*L.n*lists:][:2*lists]
	done := lo // rows before done have been through the epilogue
	for row := lo; row < hi; row++ {
		if r.ops == nil && r.epi != nil && (row-done)*r.ow*r.c >= depthwiseEpilogueBlock {
			r.epi(done*r.ow, 0, (row-done)*r.ow, r.c)
			done = row
		}
		L = r.row(L, row)
	}
	if r.epi != nil && r.ops == nil && hi > done {
		r.epi(done*r.ow, 0, (hi-done)*r.ow, r.c)
	}
}

// row computes output row row (batch and row flattened) and returns the
// tap lists as it left them. With r.ops it finishes every pixel: the
// kernel finishes those with taps inside the image, the epilogue the
// others (all padding: no taps).
func (r *dwRows) row(L dwLists, row int) dwLists {
	b, oy := row/r.oh, row%r.oh
	iy0 := oy*r.sy - r.py
	ky0, ky1 := clipTaps(iy0, r.kh, r.dy, r.h)
	out := r.out[row*r.ow*r.c : (row+1)*r.ow*r.c]
	if ky0 >= ky1 { // the whole row's windows lie in the padding
		clear(out)
		if r.ops != nil {
			r.epi(row*r.ow, 0, r.ow, r.c)
		}
		return L
	}
	if ky0 != L.ky0 || ky1 != L.ky1 {
		L = r.lists(L, ky0, ky1)
	}
	base := b*r.inB + iy0*r.inY
	for ox := range r.oxLo {
		r.pixel(out, L, ox, base, row, ox)
	}
	if n := r.oxHi - r.oxLo; n > 0 {
		in0 := base + (r.oxLo*r.sx-r.px)*r.inX
		o := out[r.oxLo*r.c:]
		if g := r.group; g > 1 && n >= g {
			ioffs, woffs, io0 := L.list(r.borders() + 1)
			whole := n / g * g
			depthwiseRun(o, r.in[in0+io0:], r.tiled, ioffs, woffs, n/g, g*r.c, 16)
			o, in0, n = o[whole*r.c:], in0+whole*r.inX, n-whole
		}
		if n > 0 {
			ioffs, woffs, io0 := L.list(r.borders())
			if r.ops != nil { // (r.group is 1 with ops)
				depthwiseRunOps(o, r.in[in0+io0:], r.kernel, ioffs, woffs, n, r.sx*r.inX, r.c, r.ops)
			} else {
				depthwiseRun(o, r.in[in0+io0:], r.kernel, ioffs, woffs, n, r.sx*r.inX, r.c)
			}
		}
	}
	for ox := r.oxHi; ox < r.ow; ox++ {
		r.pixel(out, L, r.oxLo+ox-r.oxHi, base, row, ox)
	}
	return L
}

// pixel computes border pixel ox of output row row (out) from list l of
// L, the taps that land inside the image, finishing it with r.ops where
// set (the kernel's, or the epilogue's where no tap lands inside).
func (r *dwRows) pixel(out []float32, L dwLists, l, base, row, ox int) {
	o := out[ox*r.c : (ox+1)*r.c]
	ioffs, woffs, io0 := L.list(l)
	if len(ioffs) == 0 {
		clear(o)
		if r.ops != nil {
			r.epi(row*r.ow+ox, 0, 1, r.c)
		}
		return
	}
	in := r.in[base+(ox*r.sx-r.px)*r.inX+io0:]
	if r.ops != nil {
		depthwiseRunOps(o, in, r.kernel, ioffs, woffs, 1, 0, r.c, r.ops)
		return
	}
	depthwiseRun(o, in, r.kernel, ioffs, woffs, 1, 0, r.c)
}

// clipTaps returns the kernel positions [k0, k1) of a window of k taps
// dil apart starting at o whose positions lie in [0, n).
func clipTaps(o, k, dil, n int) (k0, k1 int) {
	if o < 0 {
		k0 = (-o + dil - 1) / dil
	}
	k1 = k
	if last := n - 1 - o; last < 0 {
		k1 = 0
	} else {
		k1 = min(k1, last/dil+1)
	}
	return k0, k1
}

// depthwiseRunGo is depthwiseRun's Go loop: out[p·c + ch] = Σ_t
// in[p·ps + ioffs[t] + ch] · w[woffs[t] + ch], each product rounded,
// added in tap order from zero.
func depthwiseRunGo(out, in, w []float32, ioffs, woffs []int, npix, ps, c int) {
	for p := range npix {
		acc := out[p*c : (p+1)*c]
		clear(acc)
		for t, io := range ioffs {
			axpyVec(acc, in[p*ps+io:][:c], w[woffs[t]:][:c])
		}
	}
}

// depthwiseRowsOn sends one- and two-dimensional depthwise convolutions
// by rows; tests and benchmarks turn it off to compare with the pixel
// walk.
var depthwiseRowsOn = true
