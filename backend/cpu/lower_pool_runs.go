package cpu

import (
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Max and min pooling of channels-last images (NHWC): an f32
// reduce-window whose window moves along two dimensions followed by a
// run of dimensions it leaves alone (the channels). The general fold
// calls a vector kernel per output position and window tap on a run of
// channels: nine calls on 32 floats per output pixel for ResNet's stem
// pool, whose call overheads cost several times the arithmetic.
//
// Here the window is folded separably and at full resolution: each input
// row, padded with init, is folded tap by tap along its width as a whole
// (one vector call per tap over the row, at every column rather than
// every stride-th); the rows of a window are folded the same way; and the
// output's columns are copied out of the folded row. A folded input row
// is kept for the next output row, which reads it again when the window
// is taller than its stride.
//
// The bits are the row-major fold's: maximum and minimum keep the first
// of equal values (and the first NaN), so the fold of a window is its
// first extreme element whatever the grouping, as long as the order is
// kept; and folding init again at a padded position after init came
// first changes nothing. (Add and multiply would round differently, and
// are left to the general fold.)

type poolRuns struct {
	planes, h, w, oh, ow, run int
	kh, kw                    int
	sh, sw, ph, pw            int // strides, low padding
	dh, dw                    int // window dilation
	op                        hlo.Opcode
	vec                       func(dst, a, b []float32)
	threads                   int
}

// lowerPoolRuns returns a kernel for an f32 max or min reduce-window of
// the shape above, or false.
func lowerPoolRuns(in *hlo.Instruction, op hlo.Opcode, threads int) (kernelFunc, bool) {
	if op != hlo.OpMaximum && op != hlo.OpMinimum {
		return nil, false
	}
	x, w := in.Operands[0].Shape, in.Window()
	rank := x.Rank()
	if w == nil || len(w.Dims) != rank || in.Shape.Rank() != rank {
		return nil, false
	}
	dims, out := x.Dims, in.Shape.Dims
	inner := rank
	pr := &poolRuns{planes: 1, run: 1, op: op, vec: vectorCombineF32(op), threads: threads}
	for inner > 0 && identityWindow(w.Dims[inner-1], dims[inner-1], out[inner-1]) {
		inner--
		pr.run *= int(dims[inner])
	}
	if inner < 2 || pr.run < 8 {
		return nil, false // no run, or too short to pay for the rows' wider folds
	}
	for d := range inner - 2 {
		if !identityWindow(w.Dims[d], dims[d], out[d]) {
			return nil, false
		}
		pr.planes *= int(dims[d])
	}
	h, wi := w.Dims[inner-2], w.Dims[inner-1]
	for _, wd := range []hlo.WindowDim{h, wi} {
		if wd.Reversal || wd.Size < 1 || max(wd.LhsDilation, 1) != 1 {
			return nil, false
		}
	}
	pr.h, pr.w, pr.oh, pr.ow = int(dims[inner-2]), int(dims[inner-1]), int(out[inner-2]), int(out[inner-1])
	pr.kh, pr.kw = int(h.Size), int(wi.Size)
	pr.sh, pr.sw = int(max(h.Stride, 1)), int(max(wi.Stride, 1))
	pr.ph, pr.pw = int(h.PadLo), int(wi.PadLo)
	pr.dh, pr.dw = int(max(h.RhsDilation, 1)), int(max(wi.RhsDilation, 1))
	if pr.ph < 0 || pr.pw < 0 || pr.sw > (pr.kw-1)*pr.dw+1 {
		// Negative padding; or columns the window skips, which a fold at
		// every column would compute for nothing.
		return nil, false
	}
	return pr.kernel, true
}

func (pr *poolRuns) kernel(out *hlo.Literal, ops []*hlo.Literal) error {
	dst, src := out.Data().([]float32), ops[0].Data().([]float32)
	init := ops[1].Data().([]float32)[0]
	rows := pr.planes * pr.oh
	if rows == 0 || pr.ow == 0 || pr.run == 0 {
		return nil
	}
	if init == float32(identityValue(pr.op)) && kernels.WindowFoldFast(pr.run) {
		splitWork(pr.threads, rows*pr.ow*pr.run*pr.kh*pr.kw, rows, func(lo, hi int) {
			pr.rowsByWindow(dst, src, init, lo, hi)
		})
		return nil
	}
	splitWork(pr.threads, rows*pr.ow*pr.run*pr.kh*pr.kw, rows, func(lo, hi int) {
		pr.rows(dst, src, init, lo, hi)
	})
	return nil
}

// rowsByWindow computes output rows [lo, hi) window by window on the
// vector fold (kernels.WindowFoldF32): each output pixel's channels are
// the fold of its window's taps that lie in the image, in row-major
// order, which with init the op's identity are its window's fold (a
// padded tap would fold in nothing). The separable fold at full
// resolution (rows) folds every column of a strided pool's rows, twice
// the work along the width, in a vector call per tap and row chunk:
// ResNet's stem pool (112×112×32, 3×3, stride 2) on two threads took
// 0.083 ms in the model against ONNX Runtime's 0.048; alone, 0.071 →
// 0.035 ms on two threads, 0.142 → 0.069 on one.
func (pr *poolRuns) rowsByWindow(dst, src []float32, init float32, lo, hi int) {
	c, lowest := pr.run, pr.op == hlo.OpMinimum
	taps := make([]int, 0, pr.kh*pr.kw)
	// The output columns whose window lies inside the row: [o0, o1).
	o0 := (pr.pw + pr.sw - 1) / pr.sw
	o1 := 0
	if last := pr.w - 1 + pr.pw - (pr.kw-1)*pr.dw; last >= 0 {
		o1 = last/pr.sw + 1
	}
	o0 = max(0, min(o0, pr.ow))
	o1 = max(o0, min(o1, pr.ow))
	for r := lo; r < hi; r++ {
		plane, oh := r/pr.oh, r%pr.oh
		img := src[plane*pr.h*pr.w*c : (plane+1)*pr.h*pr.w*c]
		out := dst[r*pr.ow*c : (r+1)*pr.ow*c]
		taps = taps[:0]
		for kh := range pr.kh {
			if ih := oh*pr.sh - pr.ph + kh*pr.dh; ih >= 0 && ih < pr.h {
				for kw := range pr.kw {
					taps = append(taps, (ih*pr.w+o0*pr.sw-pr.pw+kw*pr.dw)*c)
				}
			}
		}
		if len(taps) == 0 {
			kernels.Fill(out, init) // the window is all padding
			continue
		}
		if o1 > o0 {
			mustFold(kernels.WindowFoldF32(out[o0*c:o1*c], img, taps, o1-o0, c, pr.sw*c, lowest))
		}
		for o := range pr.ow {
			if o < o0 || o >= o1 {
				pr.borderPixel(out[o*c:(o+1)*c], img, init, oh, o, lowest)
			}
		}
	}
}

// borderPixel computes output pixel (oh, o) of an image, whose window
// reaches into the padding along the width: the fold of its taps inside.
func (pr *poolRuns) borderPixel(out, img []float32, init float32, oh, o int, lowest bool) {
	c := pr.run
	var buf [16]int
	taps := buf[:0]
	for kh := range pr.kh {
		ih := oh*pr.sh - pr.ph + kh*pr.dh
		if ih < 0 || ih >= pr.h {
			continue
		}
		for kw := range pr.kw {
			if x := o*pr.sw - pr.pw + kw*pr.dw; x >= 0 && x < pr.w {
				taps = append(taps, (ih*pr.w+x)*c)
			}
		}
	}
	if len(taps) == 0 {
		kernels.Fill(out, init)
		return
	}
	mustFold(kernels.WindowFoldF32(out, img, taps, 1, c, 0, lowest))
}

// mustFold stops the kernel on a window fold the plan made out of
// bounds (a bug: the execution's recover reports it naming the
// instruction).
func mustFold(err error) {
	if err != nil {
		panic(err)
	}
}

// poolChunk is about the floats of one row chunk folded at full
// resolution: the chunk's buffers (its padded input row, its fold and the
// folded rows a window reads) then stay in L1. Whole rows of ResNet's
// stem pool (3.5K floats) went to L2 and back at every fold.
const poolChunk = 1024

// rows computes output rows [lo, hi) (of all planes, in order), a chunk
// of output columns at a time.
func (pr *poolRuns) rows(dst, src []float32, init float32, lo, hi int) {
	c := pr.run
	cols := max(1, poolChunk/(pr.sw*c)) // output columns a chunk
	span := (cols-1)*pr.sw + 1          // its columns folded at full resolution
	b := &poolBufs{padded: make([]float32, (span+(pr.kw-1)*pr.dw)*c), full: make([]float32, span*c),
		rows: newFoldedRows(pr.kh, cols*c)}
	if init != float32(identityValue(pr.op)) {
		b.init = make([]float32, cols*c)
		kernels.Fill(b.init, init)
	}
	for ow0 := 0; ow0 < pr.ow; ow0 += cols {
		b.rows.reset()
		for r := lo; r < hi; r++ {
			pr.outputRow(dst, src, init, r, ow0, min(ow0+cols, pr.ow), b)
		}
	}
}

// poolBufs is one thread's scratch.
type poolBufs struct {
	padded, full []float32
	init         []float32 // init spread, unless it is the op's identity
	rows         *foldedRows
}

// outputRow computes columns [ow0, ow1) of output row r: the fold of
// the window's input rows, each folded along its width, then init
// folded in front (the fold keeps the first extreme value, so init may
// come first last). Init is the op's identity (ONNX's pools, the pool
// windows) when b.init is nil: max(-inf, x) is x.
func (pr *poolRuns) outputRow(dst, src []float32, init float32, r, ow0, ow1 int, b *poolBufs) {
	c := pr.run
	plane, oh := r/pr.oh, r%pr.oh
	o := dst[(r*pr.ow+ow0)*c : (r*pr.ow+ow1)*c]
	first := true
	for kh := range pr.kh {
		ih := oh*pr.sh - pr.ph + kh*pr.dh
		if ih < 0 || ih >= pr.h {
			continue // padding: init again would change nothing
		}
		row := plane*pr.h + ih
		h, fresh := b.rows.slot(row)
		h = h[:len(o)]
		if fresh {
			pr.foldRow(h, b, src[row*pr.w*c:(row+1)*pr.w*c], ow0*pr.sw-pr.pw, init)
		}
		if first {
			copy(o, h)
			first = false
			continue
		}
		pr.vec(o, o, h)
	}
	switch {
	case first:
		kernels.Fill(o, init)
	case b.init != nil:
		pr.vec(o, b.init[:len(o)], o)
	}
}

// foldRow folds one input row along its width into h: h's column i is
// the fold over the window's taps of the row's columns x0 + i·sw + kw·dw,
// init where a tap is in the padding. With a stride the fold of all taps
// but the last runs at every column (whole runs for the vector kernel)
// into b.full, and the last tap is folded column by column into h,
// which also picks out the strided columns.
func (pr *poolRuns) foldRow(h []float32, b *poolBufs, row []float32, x0 int, init float32) {
	c := pr.run
	n := len(h)
	if pr.sw > 1 {
		n = ((len(h)/c-1)*pr.sw + 1) * c // columns at full resolution
	}
	cols := n/c + (pr.kw-1)*pr.dw
	in := row
	if x0 < 0 || x0+cols > pr.w {
		in = b.padded[:cols*c]
		left := min(max(-x0, 0), cols) * c
		kernels.Fill(in[:left], init)
		k := 0
		if x0+left/c < pr.w {
			k = copy(in[left:], row[(x0+left/c)*c:])
		}
		kernels.Fill(in[left+k:], init)
		x0 = 0
	}
	tap := func(kw int) []float32 { at := (x0 + kw*pr.dw) * c; return in[at : at+n] }
	if pr.sw == 1 {
		copy(h, tap(0))
		for kw := 1; kw < pr.kw; kw++ {
			pr.vec(h, h, tap(kw))
		}
		return
	}
	f := tap(0) // the stride leaves at least two taps
	if pr.kw > 2 {
		f = b.full[:n]
		pr.vec(f, tap(0), tap(1))
		for kw := 2; kw < pr.kw-1; kw++ {
			pr.vec(f, f, tap(kw))
		}
	}
	last := tap(pr.kw - 1)
	for i := range len(h) / c {
		at := i * pr.sw * c
		pr.vec(h[i*c:(i+1)*c], f[at:at+c], last[at:at+c])
	}
}

// foldedRows keeps the last few folded input rows: a thread's output
// rows read input rows in increasing order, so the slot of the lowest
// row is the one to reuse.
type foldedRows struct {
	rows []int
	bufs [][]float32
}

func newFoldedRows(n, size int) *foldedRows {
	fr := &foldedRows{rows: make([]int, n), bufs: make([][]float32, n)}
	for i := range fr.bufs {
		fr.bufs[i] = make([]float32, size)
	}
	fr.reset()
	return fr
}

// reset forgets the rows held (for the next chunk of columns).
func (fr *foldedRows) reset() {
	for i := range fr.rows {
		fr.rows[i] = -1
	}
}

// slot returns row's buffer, and whether it is fresh (to be filled).
func (fr *foldedRows) slot(row int) ([]float32, bool) {
	old := 0
	for i, r := range fr.rows {
		if r == row {
			return fr.bufs[i], false
		}
		if r < fr.rows[old] {
			old = i
		}
	}
	fr.rows[old] = row
	return fr.bufs[old], true
}
