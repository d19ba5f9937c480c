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

// dwTaps is one run's tap list: each tap's input offset from the first
// tap's, and its kernel offset.
type dwTaps struct{ ioffs, woffs []int }

// dwStackTaps is the most taps whose lists rows keeps on the stack.
const dwStackTaps = 49

// rows computes output rows [lo, hi) (batch and row flattened).
func (r *dwRows) rows(lo, hi int) {
	var taps, tapsG dwTaps
	// The lists' storage: on the stack for windows of up to 7×7 (a
	// list grown by append from nothing made ten allocations a call).
	var store [4 * dwStackTaps]int
	n := r.kh * r.kw
	buf := store[:]
	if n > dwStackTaps {
		buf = make([]int, 4*n)
	}
	taps.ioffs, taps.woffs = buf[:0:n], buf[n:n:2*n]
	tapsG.ioffs, tapsG.woffs = buf[2*n:2*n:3*n], buf[3*n:3*n:4*n]
	done := lo // rows before done have been through the epilogue
	for row := lo; row < hi; row++ {
		if r.ops == nil && r.epi != nil && (row-done)*r.ow*r.c >= depthwiseEpilogueBlock {
			r.epi(done*r.ow, 0, (row-done)*r.ow, r.c)
			done = row
		}
		var f0, f1 int
		taps, tapsG, f0, f1 = r.row(taps, tapsG, row)
		if r.ops != nil { // the pixels the kernel did not finish
			if first := row * r.ow; f0 > 0 {
				r.epi(first, 0, f0, r.c)
			}
			if f1 < r.ow {
				r.epi(row*r.ow+f1, 0, r.ow-f1, r.c)
			}
		}
	}
	if r.epi != nil && r.ops == nil && hi > done {
		r.epi(done*r.ow, 0, (hi-done)*r.ow, r.c)
	}
}

// row computes output row row (batch and row flattened) and returns the
// tap lists as it left them (by value: lists stored through a pointer
// leave the stack) and the pixels [f0, f1) it finished with r.ops: with
// ops, the interior when it has four pixels or more, by the kernel that
// finishes as it stores.
func (r *dwRows) row(taps, tapsG dwTaps, row int) (_, _ dwTaps, f0, f1 int) {
	b, oy := row/r.oh, row%r.oh
	iy0 := oy*r.sy - r.py
	ky0, ky1 := clipTaps(iy0, r.kh, r.dy, r.h)
	out := r.out[row*r.ow*r.c : (row+1)*r.ow*r.c]
	if ky0 >= ky1 { // the whole row's windows lie in the padding
		clear(out)
		return taps, tapsG, 0, 0
	}
	base := b*r.inB + iy0*r.inY
	for ox := range r.oxLo {
		taps = r.pixel(out, taps, base, ox, ky0, ky1)
	}
	if n := r.oxHi - r.oxLo; n > 0 {
		in0 := base + (r.oxLo*r.sx-r.px)*r.inX
		o := out[r.oxLo*r.c:]
		if g := r.group; g > 1 && n >= g {
			var io0 int
			tapsG, io0 = r.tapList(tapsG, ky0, ky1, 0, r.kw, r.kw*16, 16)
			whole := n / g * g
			depthwiseRun(o, r.in[in0+io0:], r.tiled, tapsG.ioffs, tapsG.woffs, n/g, g*r.c, 16)
			o, in0, n = o[whole*r.c:], in0+whole*r.inX, n-whole
		}
		if n > 0 {
			var io0 int
			taps, io0 = r.tapList(taps, ky0, ky1, 0, r.kw, r.kY, r.kX)
			if r.ops != nil && n >= 4 { // (r.group is 1 with ops)
				depthwiseRunOps(o, r.in[in0+io0:], r.kernel, taps.ioffs, taps.woffs, n, r.sx*r.inX, r.c, r.ops)
				f0, f1 = r.oxLo, r.oxHi
			} else {
				depthwiseRun(o, r.in[in0+io0:], r.kernel, taps.ioffs, taps.woffs, n, r.sx*r.inX, r.c)
			}
		}
	}
	for ox := r.oxHi; ox < r.ow; ox++ {
		taps = r.pixel(out, taps, base, ox, ky0, ky1)
	}
	return taps, tapsG, f0, f1
}

// pixel computes border pixel ox of a row (out) from the taps that land
// inside the image: kernel rows [ky0, ky1), and the columns that do; it
// returns taps, its lists as it left them (their storage to reuse).
func (r *dwRows) pixel(out []float32, taps dwTaps, base, ox, ky0, ky1 int) dwTaps {
	ix0 := ox*r.sx - r.px
	kx0, kx1 := clipTaps(ix0, r.kw, r.dx, r.w)
	o := out[ox*r.c : (ox+1)*r.c]
	if kx0 >= kx1 {
		clear(o)
		return taps
	}
	in0 := base + ix0*r.inX
	taps, io0 := r.tapList(taps, ky0, ky1, kx0, kx1, r.kY, r.kX)
	depthwiseRun(o, r.in[in0+io0:], r.kernel, taps.ioffs, taps.woffs, 1, 0, r.c)
	return taps
}

// tapList fills taps' lists (their storage reused) with kernel rows
// [ky0, ky1) by columns [kx0, kx1), row by row as the Go loop sums them,
// the kernel read with strides kY, kX; it returns them and the first
// tap's input offset, which the list's input offsets are relative to.
// (By value, not through a pointer: a list stored through a pointer
// leaves the stack.)
func (r *dwRows) tapList(taps dwTaps, ky0, ky1, kx0, kx1, kY, kX int) (dwTaps, int) {
	taps.ioffs, taps.woffs = taps.ioffs[:0], taps.woffs[:0]
	io0 := ky0*r.dy*r.inY + kx0*r.dx*r.inX
	for ky := ky0; ky < ky1; ky++ {
		for kx := kx0; kx < kx1; kx++ {
			taps.ioffs = append(taps.ioffs, ky*r.dy*r.inY+kx*r.dx*r.inX-io0)
			taps.woffs = append(taps.woffs, ky*kY+kx*kX)
		}
	}
	return taps, io0
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
