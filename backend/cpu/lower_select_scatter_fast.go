package cpu

import (
	"math"
	"slices"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Disjoint windows (stride at least the window in every dimension, as in
// 2x2 stride-2 pooling) give each operand position at most one window, so
// the result is init everywhere but at each window's selected position,
// which gets add(init, source) — what the evaluator's fold produces, as
// nothing else is ever added there. The f32 path below writes that in one
// pass, a row of windows at a time: init over the operand lines the row's
// windows cover, then the sum at each window's pick, while the lines are
// still in L1. The general path fills the whole result, then selects,
// then scatters through a list of positions, each a pass over memory, and
// collects each window's positions through a recursive call.
//
// A row is one source position over all windowed dimensions but the last
// (image and output row in NHWC pooling); its lines are the operand slabs
// under that position's windows, spanning the whole last dimension, so
// they include the positions that dimension's windows leave out. Operand
// positions outside every row's lines (the last row of an odd-height
// image pooled with stride 2) are filled with init on their own.

// fastSelectPlan is a selectPlan's disjoint f32 walk.
type fastSelectPlan struct {
	*selectPlan
	// dims and strides are the operand's windowed (outer) dimensions and
	// their row-major strides in elements; line is the stride of the
	// dimension before the last, the length of one row's line.
	dims, strides []int
	line          int
	// covered[d][i]: operand index i of windowed dimension d (all but the
	// last) is under some window; coveredFrom[d]: every index of the
	// dimensions from d on (all but the last) is.
	covered     [][]bool
	coveredFrom []bool
	uncovered   int // operand elements outside every row's lines
	rows        int
}

// newFastSelectPlan returns the disjoint walk of pl over operand dims, or
// nil where it does not apply.
func newFastSelectPlan(pl *selectPlan, dims []int64) *fastSelectPlan {
	if !pl.disjoint || pl.empty || pl.wp == nil || len(pl.wp.outDims) == 0 {
		return nil
	}
	wp := pl.wp
	n := len(wp.outDims)
	fp := &fastSelectPlan{selectPlan: pl, rows: 1, strides: hlo.RowMajorStrides(dims)[:n]}
	for d := range n {
		fp.dims = append(fp.dims, int(dims[d]))
	}
	fp.line = fp.dims[n-1] * fp.strides[n-1]
	lines := 1
	for d := range n - 1 {
		fp.rows *= wp.outDims[d]
		cov := make([]bool, fp.dims[d])
		for _, at := range wp.tabs[d] {
			if at >= 0 {
				cov[at/fp.strides[d]] = true
			}
		}
		lines *= countTrue(cov)
		fp.covered = append(fp.covered, cov)
	}
	fp.coveredFrom = make([]bool, n)
	fp.coveredFrom[n-1] = true
	for d := n - 2; d >= 0; d-- {
		fp.coveredFrom[d] = fp.coveredFrom[d+1] && !slices.Contains(fp.covered[d], false)
	}
	fp.uncovered = fp.dims[0]*fp.strides[0] - lines*fp.line
	return fp
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// fastSelectScatterF32 is the kernel of a disjoint f32 plan.
func fastSelectScatterF32(fp *fastSelectPlan) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst := out.Data().([]float32)
		x, src := ops[0].Data().([]float32), ops[1].Data().([]float32)
		init := ops[2].Data().([]float32)[0]
		if fp.uncovered > 0 {
			splitRange(fp.dims[0], fp.uncovered, fp.threads, func(lo, hi int) {
				fp.fillUncovered(dst, init, 0, 0, lo, hi)
			})
		}
		// Rows write disjoint lines, so fixed row ranges give the same
		// result on any number of threads.
		splitWork(fp.threads, fp.wp.size, fp.rows, func(lo, hi int) {
			w := &fastSelectWalk{fp: fp, x: x, dst: dst, src: src, init: init}
			w.walk(lo, hi)
		})
		return nil
	}
}

// fillUncovered sets to init the positions of operand indices [lo, hi) of
// dimension d (at offset base) that lie outside every row's lines.
func (fp *fastSelectPlan) fillUncovered(dst []float32, init float32, d, base, lo, hi int) {
	if d == len(fp.covered) {
		return
	}
	st := fp.strides[d]
	for i := lo; i < hi; i++ {
		at := base + i*st
		switch {
		case !fp.covered[d][i]:
			kernels.Fill(dst[at:at+st], init)
		case !fp.coveredFrom[d+1]:
			fp.fillUncovered(dst, init, d+1, at, 0, fp.dims[d+1])
		}
	}
}

// fastSelectWalk is one thread's walk over rows.
type fastSelectWalk struct {
	fp          *fastSelectPlan
	x, dst, src []float32
	init        float32
	idx         []int  // the current row's source index, all but the last dimension
	pre         []int  // the operand offsets of the row's lines, in window order
	cands       []int  // the current window's operand offsets, in window order
	picks       []int  // per source position of the row, the operand offset selected
	hit         []bool // per window of the row, whether any of it is in the operand
}

// walk handles rows [lo, hi) in order.
func (w *fastSelectWalk) walk(lo, hi int) {
	wp := w.fp.wp
	outer := wp.outDims[:len(wp.outDims)-1]
	w.idx = make([]int, len(outer))
	for d, r := len(outer)-1, lo; d >= 0; d-- {
		w.idx[d] = r % outer[d]
		r /= outer[d]
	}
	last := len(wp.outDims) - 1
	w.picks = make([]int, wp.outDims[last]*wp.run)
	w.hit = make([]bool, wp.outDims[last])
	for r := lo; r < hi; r++ {
		w.pre = w.lines(w.pre[:0], 0, 0)
		w.row(r)
		nextWindow(w.idx, outer)
	}
}

// lines appends to pre the offsets of the current row's lines, in
// row-major window order over all but the last dimension.
func (w *fastSelectWalk) lines(pre []int, d, base int) []int {
	wp := w.fp.wp
	if d == len(w.idx) {
		return append(pre, base)
	}
	n := wp.winDims[d]
	for _, at := range wp.tabs[d][w.idx[d]*n : (w.idx[d]+1)*n] {
		if at >= 0 {
			pre = w.lines(pre, d+1, base+at)
		}
	}
	return pre
}

// row fills row r's lines with init, then writes each of its windows'
// sums at their picks. The picks go to a buffer first: stores to
// addresses that wait on the compares stalled the loads of the next run
// element, which made the fused loop half as fast.
func (w *fastSelectWalk) row(r int) {
	fp, wp := w.fp, w.fp.wp
	for _, p := range w.pre {
		kernels.Fill(w.dst[p:p+fp.line], w.init)
	}
	last := len(wp.outDims) - 1
	n, k, run := wp.outDims[last], wp.winDims[last], wp.run
	tab := wp.tabs[last]
	for i := range n {
		w.cands = w.cands[:0]
		for _, p := range w.pre {
			for _, at := range tab[i*k : (i+1)*k] {
				if at >= 0 {
					w.cands = append(w.cands, p+at)
				}
			}
		}
		w.hit[i] = len(w.cands) > 0
		if w.hit[i] {
			w.pick(w.picks[i*run : (i+1)*run])
		}
	}
	w.scatter(w.src[r*n*run : (r+1)*n*run])
}

// scatter writes add(init, source) at each hit window's picks.
func (w *fastSelectWalk) scatter(src []float32) {
	// Locals, not fields: a store through dst could change w's fields for
	// all the compiler knows, so it would reload them per element.
	run, swap, dst, init := w.fp.wp.run, w.fp.swapAdd, w.dst, w.init
	for i, ok := range w.hit {
		if !ok {
			continue
		}
		picks, vs := w.picks[i*run:(i+1)*run], src[i*run:(i+1)*run]
		for c, at := range picks {
			dst[at] = selectAdd(swap, init, vs[c])
		}
	}
}

// pick sets picks[c] to the offset of the position the select keeps in
// the current window for run element c. LE and LT compare the negated
// values with GE and GT: negation reverses the order and keeps every
// comparison with a NaN false, so each decision is the same.
func (w *fastSelectWalk) pick(picks []int) {
	var flip uint32
	if w.fp.rule.swap {
		flip = 1 << 31
	}
	switch {
	case len(w.cands) == 4 && flip == 0 && w.fp.rule.strict:
		pick4GT(w.x, w.cands, picks)
	case len(w.cands) == 4 && flip == 0:
		pick4GE(w.x, w.cands, picks)
	case w.fp.rule.strict:
		pickGT(w.x, w.cands, picks, flip)
	default:
		pickGE(w.x, w.cands, picks, flip)
	}
}

// pickGE keeps the first candidate, replaced by each later one it is not
// ≥ to (the evaluator's fold). The replacement is a conditional move of
// bits and offset: a branch on random activations mispredicts about half
// the time.
func pickGE(x []float32, cands, picks []int, flip uint32) {
	c0, rest := cands[0], cands[1:]
	for c := range picks {
		best, at := math.Float32bits(x[c0+c])^flip, c0
		for _, cj := range rest {
			b := math.Float32bits(x[cj+c]) ^ flip
			if !(math.Float32frombits(best) >= math.Float32frombits(b)) {
				best, at = b, cj
			}
		}
		picks[c] = at + c
	}
}

// pickGT is pickGE with a strict select: ties go to the later candidate.
func pickGT(x []float32, cands, picks []int, flip uint32) {
	c0, rest := cands[0], cands[1:]
	for c := range picks {
		best, at := math.Float32bits(x[c0+c])^flip, c0
		for _, cj := range rest {
			b := math.Float32bits(x[cj+c]) ^ flip
			if !(math.Float32frombits(best) > math.Float32frombits(b)) {
				best, at = b, cj
			}
		}
		picks[c] = at + c
	}
}

// pick4GE is pickGE for the four candidates of a 2x2 window, unrolled so
// that the run's loop keeps its state in registers.
func pick4GE(x []float32, cands, picks []int) {
	n := len(picks)
	c0, c1, c2, c3 := cands[0], cands[1], cands[2], cands[3]
	x0, x1, x2, x3 := kernels.Words(x[c0:c0+n]), kernels.Words(x[c1:c1+n]), kernels.Words(x[c2:c2+n]), kernels.Words(x[c3:c3+n])
	for c := range picks {
		best, at := x0[c], c0
		if b := x1[c]; !(math.Float32frombits(best) >= math.Float32frombits(b)) {
			best, at = b, c1
		}
		if b := x2[c]; !(math.Float32frombits(best) >= math.Float32frombits(b)) {
			best, at = b, c2
		}
		if b := x3[c]; !(math.Float32frombits(best) >= math.Float32frombits(b)) {
			at = c3
		}
		picks[c] = at + c
	}
}

// pick4GT is pick4GE with a strict select.
func pick4GT(x []float32, cands, picks []int) {
	n := len(picks)
	c0, c1, c2, c3 := cands[0], cands[1], cands[2], cands[3]
	x0, x1, x2, x3 := kernels.Words(x[c0:c0+n]), kernels.Words(x[c1:c1+n]), kernels.Words(x[c2:c2+n]), kernels.Words(x[c3:c3+n])
	for c := range picks {
		best, at := x0[c], c0
		if b := x1[c]; !(math.Float32frombits(best) > math.Float32frombits(b)) {
			best, at = b, c1
		}
		if b := x2[c]; !(math.Float32frombits(best) > math.Float32frombits(b)) {
			best, at = b, c2
		}
		if b := x3[c]; !(math.Float32frombits(best) > math.Float32frombits(b)) {
			at = c3
		}
		picks[c] = at + c
	}
}
