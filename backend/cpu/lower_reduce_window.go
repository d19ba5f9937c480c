package cpu

import (
	"slices"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// reduce-window with a one-op reducer folds, for each output position,
// the operand elements under its window in row-major window order from
// init, skipping padding and base-dilation holes: the evaluator's order,
// so results are exact for every type. Trailing dimensions the window
// leaves alone (size 1, stride 1, no padding or dilation — the channels
// of NHWC pooling) form a contiguous run folded as a vector, so the
// per-position index work is paid once per run, not once per element.

type windowPlan struct {
	outDims, winDims []int
	// tabs[d][o·win + w] is the operand offset of output index o and
	// window index w along outer dimension d, or -1 in padding or a hole.
	tabs    [][]int
	run     int // the length of the shared innermost run
	empty   bool
	threads int
	size    int // operand elements folded, to decide on threads
	// Where no window dimension dilates the operand, a window lying
	// inside it is its first element's offset plus rel, the same for
	// every output: inside[d][o] says output index o along d has its
	// whole window inside, first[d][o] its first element's offset.
	rel    []int
	inside [][]bool
	first  [][]int
}

// newWindowPlan returns false for windows the fold does not cover
// (reversal, or shapes that do not match).
func newWindowPlan(w *hlo.Window, dims, out []int64, threads int) (*windowPlan, bool) {
	rank := len(dims)
	if w == nil || len(w.Dims) != rank || len(out) != rank {
		return nil, false
	}
	pl := &windowPlan{run: 1, threads: threads}
	inner := rank
	for inner > 0 && identityWindow(w.Dims[inner-1], dims[inner-1], out[inner-1]) {
		inner--
		pl.run *= int(dims[inner])
	}
	strides := hlo.RowMajorStrides(dims)
	pl.size = pl.run
	for d := range inner {
		wd := w.Dims[d]
		if wd.Reversal || wd.Size < 0 {
			return nil, false
		}
		pl.outDims = append(pl.outDims, int(out[d]))
		pl.winDims = append(pl.winDims, int(wd.Size))
		pl.tabs = append(pl.tabs, windowTable(wd, dims[d], out[d], strides[d]))
		pl.size *= int(out[d] * wd.Size)
	}
	for d := range rank {
		pl.empty = pl.empty || out[d] == 0
	}
	pl.flatten(w.Dims[:inner])
	return pl, true
}

// flatten makes rel, inside and first where no window dimension dilates
// the operand: a 2×2×2 max pool over 4×20×20×2 spent 26 µs in the
// recursion over window dimensions, a call per element of a run of two.
func (pl *windowPlan) flatten(dims []hlo.WindowDim) {
	for _, wd := range dims {
		if max(wd.LhsDilation, 1) != 1 || wd.Size < 1 {
			return
		}
	}
	pl.rel = []int{0}
	for d, n := range pl.winDims {
		pl.inside = append(pl.inside, make([]bool, pl.outDims[d]))
		pl.first = append(pl.first, make([]int, pl.outDims[d]))
		var steps []int // the window's offsets along d from its first
		for o := range pl.outDims[d] {
			tab := pl.tabs[d][o*n : (o+1)*n]
			pl.inside[d][o] = !slices.Contains(tab, -1)
			pl.first[d][o] = tab[0]
			if pl.inside[d][o] && steps == nil {
				for _, at := range tab {
					steps = append(steps, at-tab[0])
				}
			}
		}
		if steps == nil { // no output index has its window inside along d
			pl.rel = nil
			return
		}
		next := make([]int, 0, len(pl.rel)*len(steps))
		for _, r := range pl.rel {
			for _, st := range steps {
				next = append(next, r+st)
			}
		}
		pl.rel = next
	}
}

func identityWindow(wd hlo.WindowDim, n, out int64) bool {
	return wd.Size == 1 && max(wd.Stride, 1) == 1 && wd.PadLo == 0 && wd.PadHi == 0 &&
		max(wd.LhsDilation, 1) == 1 && n == out && !wd.Reversal
}

// windowTable maps (output index, window index) along one dimension to an
// operand offset, as the evaluator's windowIndexer does.
func windowTable(wd hlo.WindowDim, n, out int64, stride int) []int {
	tab := make([]int, out*wd.Size)
	ld := max(wd.LhsDilation, 1)
	for o := range out {
		for k := range wd.Size {
			pos := o*max(wd.Stride, 1) + k*max(wd.RhsDilation, 1) - wd.PadLo
			at := -1
			if pos >= 0 && pos%ld == 0 && pos/ld < n {
				at = int(pos/ld) * stride
			}
			tab[o*wd.Size+k] = at
		}
	}
	return tab
}

// lowerReduceWindow returns a compiled kernel for a single-input
// reduce-window whose reducer is one binary op, or false.
func lowerReduceWindow(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if len(in.Operands) != 2 || !plainArray(in.Shape) {
		return nil, false
	}
	x, init := in.Operands[0].Shape, in.Operands[1].Shape
	t := x.DType
	if !plainArray(x) || !plainArray(init) || init.Rank() != 0 || init.DType != t || in.Shape.DType != t {
		return nil, false
	}
	op, ok := reducerOp(in.Computation("to_apply"), t)
	if !ok {
		return nil, false
	}
	pl, ok := newWindowPlan(in.Window(), x.Dims, in.Shape.Dims, threads)
	if !ok {
		return nil, false
	}
	switch t {
	case hlo.F32:
		if k, ok := lowerPoolPlanes(in, op, threads); ok {
			return k, true
		}
		if k, ok := lowerPoolRuns(in, op, threads); ok {
			return k, true
		}
		k := windowKernel(pl, floatCombine[float32](op))
		if v := vectorCombineF32(op); v != nil && pl.run >= 8 {
			k = windowKernelVec(pl, v)
		} else if v := shortCombineF32(op); v != nil {
			k = windowKernelVec(pl, v)
		}
		return k, true
	case hlo.F64:
		return windowKernel(pl, floatCombine[float64](op)), true
	case hlo.F16:
		return windowKernel(pl, narrowCombine(op, minifloat.F16)), true
	case hlo.BF16:
		return windowKernel(pl, narrowCombine(op, minifloat.BF16)), true
	case hlo.Pred:
		return windowKernel(pl, predCombine(op)), true
	case hlo.S8:
		return windowKernel(pl, intCombine[int8](op)), true
	case hlo.S16:
		return windowKernel(pl, intCombine[int16](op)), true
	case hlo.S32:
		return windowKernel(pl, intCombine[int32](op)), true
	case hlo.S64:
		return windowKernel(pl, intCombine[int64](op)), true
	case hlo.U8:
		return windowKernel(pl, intCombine[uint8](op)), true
	case hlo.U16:
		return windowKernel(pl, intCombine[uint16](op)), true
	case hlo.U32:
		return windowKernel(pl, intCombine[uint32](op)), true
	case hlo.U64:
		return windowKernel(pl, intCombine[uint64](op)), true
	}
	return nil, false
}

func windowKernel[T any](pl *windowPlan, f func(a, b T) T) kernelFunc {
	return windowKernelWith(pl, f, nil)
}

// windowKernelVec folds whole runs with a vector kernel: with the channels
// of NHWC pooling as the run, a call per element (through a func value)
// cost several times the arithmetic.
func windowKernelVec[T any](pl *windowPlan, vec func(dst, a, b []T)) kernelFunc {
	return windowKernelWith(pl, nil, vec)
}

// shortCombineF32 is vectorCombineF32 for runs shorter than a vector:
// the scalar fold in a loop, a call a run rather than one an element
// through a func value (a 2×2×2 max pool over 4×20×20×2, runs of two
// channels: 18 → 13 µs).
func shortCombineF32(op hlo.Opcode) func(dst, a, b []float32) {
	switch op {
	case hlo.OpAdd:
		return func(dst, a, b []float32) {
			for j := range dst {
				dst[j] = a[j] + b[j]
			}
		}
	case hlo.OpMaximum: // kernels.NaNMax, written out: a generic call is not inlined
		return func(dst, a, b []float32) {
			for j := range dst {
				x, y := a[j], b[j]
				if x == x && (y != y || y > x) {
					x = y
				}
				dst[j] = x
			}
		}
	case hlo.OpMinimum: // kernels.NaNMin
		return func(dst, a, b []float32) {
			for j := range dst {
				x, y := a[j], b[j]
				if x == x && (y != y || y < x) {
					x = y
				}
				dst[j] = x
			}
		}
	}
	return nil
}

// vectorCombineF32 is the vector kernel of a reducer op, bit for bit the
// scalar fold's result (nil for none).
func vectorCombineF32(op hlo.Opcode) func(dst, a, b []float32) {
	switch op {
	case hlo.OpAdd:
		return kernels.AddF32
	case hlo.OpMultiply:
		return kernels.MulF32
	case hlo.OpMaximum:
		return kernels.MaximumF32
	case hlo.OpMinimum:
		return kernels.MinimumF32
	}
	return nil
}

func windowKernelWith[T any](pl *windowPlan, f func(a, b T) T, vec func(dst, a, b []T)) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		if pl.empty {
			return nil
		}
		dst, src := out.Data().([]T), ops[0].Data().([]T)
		init := ops[1].Data().([]T)[0]
		outer := 1
		if len(pl.outDims) > 0 {
			outer = pl.outDims[0]
		}
		splitWork(pl.threads, pl.size, outer, func(lo, hi int) {
			w := windowWalk[T]{pl: pl, dst: dst, src: src, init: init, f: f, vec: vec, idx: make([]int, len(pl.outDims))}
			forEachOuter(pl.outDims, w.idx, lo, hi, w.output)
		})
		return nil
	}
}

// windowWalk is one thread's fold state (not shared between calls).
type windowWalk[T any] struct {
	pl       *windowPlan
	dst, src []T
	init     T
	f        func(a, b T) T
	vec      func(dst, a, b []T) // folds a whole run, when set
	idx      []int               // the current outer output index
}

// forEachOuter calls f(o) for every outer output position o whose first
// index is in [lo, hi), in row-major order, with idx holding o's
// multi-index: the walk of reduce-window and select-and-scatter.
func forEachOuter(dims, idx []int, lo, hi int, f func(o int)) {
	if len(dims) == 0 {
		f(0)
		return
	}
	var walk func(k, o int)
	walk = func(k, o int) {
		if k == len(dims) {
			f(o)
			return
		}
		for i := range dims[k] {
			idx[k] = i
			walk(k+1, o*dims[k]+i)
		}
	}
	for i := lo; i < hi; i++ {
		idx[0] = i
		walk(1, i)
	}
}

// output folds the window of outer output o into its run.
func (w *windowWalk[T]) output(o int) {
	run := w.dst[o*w.pl.run : (o+1)*w.pl.run]
	for j := range run {
		run[j] = w.init
	}
	if base, ok := w.inside(); ok {
		for _, r := range w.pl.rel {
			src := w.src[base+r : base+r+len(run)]
			if w.vec != nil {
				w.vec(run, run, src)
				continue
			}
			for j, v := range src {
				run[j] = w.f(run[j], v)
			}
		}
		return
	}
	w.window(run, 0, 0)
}

// inside returns the offset of the current output's window's first
// element where the whole window lies inside the operand (its elements
// are then that plus rel, folded in the same row-major order).
func (w *windowWalk[T]) inside() (int, bool) {
	pl := w.pl
	if pl.rel == nil {
		return 0, false
	}
	base := 0
	for d, i := range w.idx {
		if !pl.inside[d][i] {
			return 0, false
		}
		base += pl.first[d][i]
	}
	return base, true
}

func (w *windowWalk[T]) window(run []T, d, base int) {
	if d == len(w.pl.winDims) {
		if w.vec != nil {
			w.vec(run, run, w.src[base:base+len(run)])
			return
		}
		for j, v := range w.src[base : base+len(run)] {
			run[j] = w.f(run[j], v)
		}
		return
	}
	n := w.pl.winDims[d]
	tab := w.pl.tabs[d][w.idx[d]*n : (w.idx[d]+1)*n]
	for _, at := range tab {
		if at >= 0 {
			w.window(run, d+1, base+at)
		}
	}
}
