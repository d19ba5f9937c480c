package cpu

import (
	"math"
	"sync"
	"unsafe"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// select-and-scatter with a compare select and an add scatter (the
// gradient of max or min pooling) runs in two phases. First, in
// parallel over source positions, each window's selected operand
// position: the first valid one, replaced by each later candidate the
// select rejects (select(best, candidate) false), in row-major window
// order as the evaluator walks it. Then, sequentially in source order,
// the source values are added at their positions into a result filled
// with init — the evaluator's order, so float sums are bit-identical.
// Disjoint f32 windows, the gradient of 2x2 stride-2 pooling, take the
// one-pass path of lower_select_scatter_fast.go instead.

// selectRule is select(best, candidate) = a ≥ b (or a > b with strict),
// where (a, b) is (best, candidate), or (candidate, best) with swap:
// GE and GT as written, LE and LT with the operands exchanged.
type selectRule struct{ strict, swap bool }

// selectComparator recognises a select root compare of the two
// parameters, directions GE, GT, LE, LT, on scalars of type t.
func selectComparator(c *hlo.Computation, t hlo.DType) (selectRule, bool) {
	var r selectRule
	if c == nil || c.Root == nil || c.Root.Opcode != hlo.OpCompare || len(c.Root.Operands) != 2 || len(c.Params) != 2 {
		return r, false
	}
	a, b := c.Root.Operands[0], c.Root.Operands[1]
	if a.Opcode != hlo.OpParameter || b.Opcode != hlo.OpParameter || a.ParamNumber == b.ParamNumber ||
		a.Shape.DType != t || b.Shape.DType != t {
		return r, false
	}
	if typ, _ := c.Root.EnumAttr("type"); typ == "TOTALORDER" {
		return r, false
	}
	dir, _ := c.Root.EnumAttr("direction")
	switch dir {
	case "GE":
	case "GT":
		r.strict = true
	case "LE":
		r.swap = true
	case "LT":
		r.strict, r.swap = true, true
	default:
		return r, false
	}
	if a.ParamNumber == 1 { // compare(candidate, best)
		r.swap = !r.swap
	}
	return r, true
}

// selectScatterAdd recognises a scatter root add of the two parameters on
// scalars of type t; swap says add(source, current).
func selectScatterAdd(c *hlo.Computation, t hlo.DType) (swap, ok bool) {
	if c == nil || c.Root == nil || c.Root.Opcode != hlo.OpAdd || len(c.Root.Operands) != 2 || len(c.Params) != 2 {
		return false, false
	}
	a, b := c.Root.Operands[0], c.Root.Operands[1]
	if a.Opcode != hlo.OpParameter || b.Opcode != hlo.OpParameter || a.ParamNumber == b.ParamNumber ||
		a.Shape.DType != t || b.Shape.DType != t || c.Root.Shape.DType != t {
		return false, false
	}
	return a.ParamNumber == 1, true
}

// selectPlan is the window walk (the reduce-window plan over the source's
// dimensions: trailing dimensions the window leaves alone, such as the
// channels of NHWC pooling, are a run walked by the innermost loop).
type selectPlan struct {
	wp      *windowPlan
	rule    selectRule
	swapAdd bool
	// disjoint: no two windows share an operand position (stride at least
	// the window in every dimension, as in 2x2 pooling), so each source
	// value lands in its own place and the scatter runs in parallel.
	disjoint bool
	empty    bool // no window position exists: the result is init
	threads  int
}

// lowerSelectAndScatter returns a kernel for a select-and-scatter of
// f32, f64 or integers with a compare select and an add scatter, or false.
func lowerSelectAndScatter(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	pl, ok := newSelectPlan(in, threads)
	if !ok {
		return nil, false
	}
	x := in.Operands[0].Shape
	if x.DType == hlo.F32 {
		if fp := newFastSelectPlan(pl, x.Dims); fp != nil {
			return fastSelectScatterF32(fp), true
		}
	}
	return numberMakers[*selectPlan, kernelFunc]{f32: selectScatterKernel[float32], f64: selectScatterKernel[float64],
		s8: selectScatterKernel[int8], s16: selectScatterKernel[int16], s32: selectScatterKernel[int32], s64: selectScatterKernel[int64],
		u8: selectScatterKernel[uint8], u16: selectScatterKernel[uint16], u32: selectScatterKernel[uint32],
		u64: selectScatterKernel[uint64]}.of(x.DType, pl)
}

// newSelectPlan returns the plan of a select-and-scatter with a compare
// select and an add scatter on arrays of one type, or false.
func newSelectPlan(in *hlo.Instruction, threads int) (*selectPlan, bool) {
	if in.Opcode != hlo.OpSelectAndScatter || len(in.Operands) != 3 || !plainArray(in.Shape) {
		return nil, false
	}
	x, src, init := in.Operands[0].Shape, in.Operands[1].Shape, in.Operands[2].Shape
	t := x.DType
	if !plainArray(x) || !plainArray(src) || !plainArray(init) || init.Rank() != 0 ||
		src.DType != t || init.DType != t || in.Shape.DType != t || len(in.Shape.Dims) != len(x.Dims) {
		return nil, false
	}
	rule, ok := selectComparator(in.Computation("select"), t)
	if !ok {
		return nil, false
	}
	swapAdd, ok := selectScatterAdd(in.Computation("scatter"), t)
	if !ok {
		return nil, false
	}
	w := in.Window()
	pl := &selectPlan{rule: rule, swapAdd: swapAdd, threads: threads, disjoint: true}
	if w == nil || src.NumElements() == 0 || x.NumElements() == 0 {
		pl.empty = true
	} else {
		if len(w.Dims) != x.Rank() || len(src.Dims) != x.Rank() {
			return nil, false
		}
		wp, ok := newWindowPlan(w, x.Dims, src.Dims, threads)
		if !ok {
			return nil, false
		}
		pl.wp, pl.empty = wp, wp.empty
		for _, wd := range w.Dims {
			pl.empty = pl.empty || wd.Size == 0
			eff := (wd.Size-1)*max(wd.RhsDilation, 1) + 1
			pl.disjoint = pl.disjoint && max(wd.LhsDilation, 1) == 1 && max(wd.Stride, 1) >= eff
		}
	}
	return pl, true
}

type addable interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

// bestPool holds the selected positions of overlapping windows between
// the two phases.
var bestPool sync.Pool // of *[]int

func selectScatterKernel[T addable](pl *selectPlan) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst := out.Data().([]T)
		init := ops[2].Data().([]T)[0]
		splitRange(len(dst), len(dst), pl.threads, func(lo, hi int) {
			for i := range dst[lo:hi] {
				dst[lo+i] = init
			}
		})
		if pl.empty {
			return nil
		}
		x, src := ops[0].Data().([]T), ops[1].Data().([]T)
		walk := func(best []int) {
			outer := 1
			if len(pl.wp.outDims) > 0 {
				outer = pl.wp.outDims[0]
			}
			splitWork(pl.threads, pl.wp.size, outer, func(lo, hi int) {
				w := selectWalk[T]{pl: pl, x: x, src: src, dst: dst, best: best, init: init, idx: make([]int, len(pl.wp.outDims))}
				forEachOuter(pl.wp.outDims, w.idx, lo, hi, w.output)
			})
		}
		if pl.disjoint {
			walk(nil)
			return nil
		}
		bp, _ := bestPool.Get().(*[]int)
		if bp == nil || cap(*bp) < len(src) {
			b := make([]int, len(src))
			bp = &b
		}
		defer bestPool.Put(bp)
		best := (*bp)[:len(src)]
		walk(best)
		// Overlapping windows may select one position several times: add
		// in source order, as the evaluator does, for the same bits.
		for o, b := range best {
			if b >= 0 {
				dst[b] = selectAdd(pl.swapAdd, dst[b], src[o])
			}
		}
		return nil
	}
}

// selectAdd is the scatter computation: add(current, source), or with
// swap add(source, current). Addition commutes unless both are NaN.
func selectAdd[T addable](swap bool, cur, v T) T {
	if s := cur + v; s == s {
		return s
	}
	return nanAdd(swap, cur, v)
}

// nanAdd is selectAdd for a NaN sum. The sum of two NaNs keeps the first
// operand's payload, quieted (as SSE and the evaluator give); Go takes
// float + as commutative and may swap its operands, which made the
// kernel keep the source's whatever the order, so that case is explicit.
// Not inlined: it is rare, and selectAdd must stay small enough to inline.
//
//go:noinline
func nanAdd[T addable](swap bool, cur, v T) T {
	a, b := cur, v
	if swap {
		a, b = v, cur
	}
	if a == a || b == b {
		return a + b
	}
	switch p := any(&a).(type) {
	case *float32:
		*p = math.Float32frombits(math.Float32bits(*p) | 1<<22)
	case *float64:
		*p = math.Float64frombits(math.Float64bits(*p) | 1<<51)
	}
	return a
}

// selectWalk is one thread's walk over source positions.
type selectWalk[T addable] struct {
	pl          *selectPlan
	x, src, dst []T
	best        []int // per source position, for overlapping windows
	init        T
	idx         []int   // the current outer source index
	cands       []int   // the current window's operand offsets, in window order
	win         []uint8 // per run element, the index in cands selected
}

// output selects, for each element of outer source position o's run, the
// first valid window position, replaced by each later candidate the
// select rejects (select(best, candidate) false), in row-major window
// order as the evaluator walks it.
func (w *selectWalk[T]) output(o int) {
	w.cands = w.cands[:0]
	w.collect(0, 0)
	if len(w.cands) == 0 {
		if w.best != nil {
			for c := range w.pl.wp.run {
				w.best[o*w.pl.wp.run+c] = -1
			}
		}
		return
	}
	run := w.pl.wp.run
	if w.win == nil || len(w.win) < run {
		w.win = make([]uint8, run)
	}
	win := w.win[:run]
	if x, ok := any(w.x).([]float32); ok && len(w.cands) <= 256 {
		selectRunF32(x, w.cands, w.pl.rule, win)
	} else {
		selectRun(w.x, w.cands, w.pl.rule, win)
	}
	for c, k := range win {
		b := w.cands[k] + c
		if w.best != nil {
			w.best[o*run+c] = b
		} else {
			w.dst[b] = selectAdd(w.pl.swapAdd, w.init, w.src[o*run+c])
		}
	}
}

// selectRun sets win[c] to the index in cands of the position selected
// for run element c.
func selectRun[T addable](x []T, cands []int, rule selectRule, win []uint8) {
	for c := range win {
		k := 0
		bv := x[cands[0]+c]
		for j := 1; j < len(cands); j++ {
			v := x[cands[j]+c]
			l, r := bv, v
			if rule.swap {
				l, r = v, bv
			}
			if !(l > r || !rule.strict && l == r) {
				k, bv = j, v
			}
		}
		win[c] = uint8(k)
	}
}

// selectRunF32 is selectRun without data-dependent branches: candidates
// in the outer loop, the run inner, each step a compare into a mask and
// a masked blend. Pooling random activations mispredicts half of all
// branches, which made the branchy loop several times slower.
func selectRunF32(x []float32, cands []int, rule selectRule, win []uint8) {
	var best, mask [64]uint32
	for lo := 0; lo < len(win); lo += len(best) {
		hi := min(lo+len(best), len(win))
		bv, m := best[:hi-lo], mask[:hi-lo]
		copy(bv, kernels.Words(x[cands[0]+lo:cands[0]+hi]))
		ws := win[lo:hi]
		clear(ws)
		for j := 1; j < len(cands); j++ {
			xs := x[cands[j]+lo : cands[j]+hi]
			replaceMask(m, bv, xs, rule)
			vs := kernels.Words(xs)
			for c, v := range vs {
				bv[c] = v&m[c] | bv[c]&^m[c]
				ws[c] = uint8(j)&uint8(m[c]) | ws[c]&^uint8(m[c])
			}
		}
	}
}

// replaceMask sets m[c] to all ones where the select rejects the best so
// far (bits in best) against candidate v[c]: !(best >= v) for GE, and so
// on. Each rule is its own loop so the loop body has no branch.
func replaceMask(m, best []uint32, v []float32, rule selectRule) {
	v = v[:len(m)]
	b := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(best))), len(m))
	switch {
	case !rule.swap && !rule.strict:
		for c := range m {
			m[c] = boolMask(!(b[c] >= v[c]))
		}
	case !rule.swap:
		for c := range m {
			m[c] = boolMask(!(b[c] > v[c]))
		}
	case !rule.strict:
		for c := range m {
			m[c] = boolMask(!(v[c] >= b[c]))
		}
	default:
		for c := range m {
			m[c] = boolMask(!(v[c] > b[c]))
		}
	}
}

// boolMask is all ones for true and zero for false, from the bool's byte
// (0 or 1), which a compiler turns into a flag read, not a branch.
func boolMask(t bool) uint32 { return -uint32(*(*uint8)(unsafe.Pointer(&t))) }

// collect lists the operand offsets of the current window's positions.
func (w *selectWalk[T]) collect(d, base int) {
	wp := w.pl.wp
	if d == len(wp.winDims) {
		w.cands = append(w.cands, base)
		return
	}
	n := wp.winDims[d]
	for _, at := range wp.tabs[d][w.idx[d]*n : (w.idx[d]+1)*n] {
		if at >= 0 {
			w.collect(d+1, base+at)
		}
	}
}

// nextWindow advances a row-major multi-index; false once it wraps.
func nextWindow(idx, dims []int) bool {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < dims[d] {
			return true
		}
		idx[d] = 0
	}
	return false
}
