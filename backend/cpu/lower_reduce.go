package cpu

import (
	"slices"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// A reduce whose reducer is one binary op of its two parameters compiles
// to a fold over a plan: the operand's kept and reduced dimensions, unit
// ones dropped and neighbours merged. Two shapes of plan get loops of
// their own — rows (reduce the contiguous innermost run) and columns
// (reduce a dimension above a contiguous kept run: whole rows are combined
// into the output) — and the rest folds element by element. Each output
// is folded in the evaluator's order (its reduced elements in row-major
// order, starting from init), except f32 row sums, which use the blocked
// kernels.SumF32: results are then equal to the evaluator's up to
// rounding, and do not depend on the thread count since every output is
// computed by one thread.

// axis is one merged dimension of the operand.
type axis struct{ n, stride int }

type reducePlan struct {
	kept, red  []axis
	outStrides []int // of the kept axes in the result
	empty      bool  // some operand dimension is 0: the result is all init
	threads    int
}

// parallelReduce is the operand size from which a reduce is split across
// threads: below it the work is over before the workers wake.
const parallelReduce = kernels.MinParallelWork

// newReducePlan lists the kept dimensions in increasing order and the
// reduced ones in the order of the dimensions attribute, which is the
// evaluator's fold order (the first listed varies slowest).
func newReducePlan(dims []int64, reduced []int64, threads int) *reducePlan {
	pl := &reducePlan{threads: threads}
	isRed := make([]bool, len(dims))
	for _, d := range reduced {
		isRed[d] = true
	}
	strides := hlo.RowMajorStrides(dims)
	for d, n := range dims {
		pl.empty = pl.empty || n == 0
		if !isRed[d] {
			pl.kept = appendAxis(pl.kept, n, strides[d])
		}
	}
	for _, d := range reduced {
		pl.red = appendAxis(pl.red, dims[d], strides[d])
	}
	pl.outStrides = make([]int, len(pl.kept))
	s := 1
	for k := len(pl.kept) - 1; k >= 0; k-- {
		pl.outStrides[k] = s
		s *= pl.kept[k].n
	}
	return pl
}

// appendAxis adds a dimension, dropping it if unit and merging it into
// the previous axis when the two are contiguous.
func appendAxis(l []axis, n int64, stride int) []axis {
	switch k := len(l) - 1; {
	case n <= 1:
		return l
	case k >= 0 && l[k].stride == stride*int(n):
		l[k] = axis{l[k].n * int(n), stride}
		return l
	}
	return append(l, axis{int(n), stride})
}

// rows reports a [K, R] operand reduced over R; K may be absent.
func (pl *reducePlan) rows() (k, r int, ok bool) {
	if len(pl.red) != 1 || pl.red[0].stride != 1 {
		return 0, 0, false
	}
	switch {
	case len(pl.kept) == 0:
		return 1, pl.red[0].n, true
	case len(pl.kept) == 1 && pl.kept[0].stride == pl.red[0].n:
		return pl.kept[0].n, pl.red[0].n, true
	}
	return 0, 0, false
}

// cols reports an [A, R, C] operand reduced over R; A may be absent.
func (pl *reducePlan) cols() (a, r, c int, ok bool) {
	nk := len(pl.kept)
	if len(pl.red) != 1 || nk == 0 || nk > 2 || pl.kept[nk-1].stride != 1 {
		return 0, 0, 0, false
	}
	r, c = pl.red[0].n, pl.kept[nk-1].n
	if pl.red[0].stride != c {
		return 0, 0, 0, false
	}
	if nk == 1 {
		return 1, r, c, true
	}
	if pl.kept[0].stride != r*c {
		return 0, 0, 0, false
	}
	return pl.kept[0].n, r, c, true
}

func (pl *reducePlan) size() int {
	n := 1
	for _, a := range pl.kept {
		n *= a.n
	}
	for _, a := range pl.red {
		n *= a.n
	}
	return n
}

// split runs f over [0, n) in fixed per-thread ranges when the reduce is
// big, inline otherwise.
func (pl *reducePlan) split(n int, f func(lo, hi int)) { splitWork(pl.threads, pl.size(), n, f) }

// splitWork runs f over [0, n) in fixed per-thread ranges when size
// elements are worth the threads, inline otherwise. Fixed ranges keep
// results independent of scheduling.
func splitWork(threads, size, n int, f func(lo, hi int)) {
	t := min(threads, n)
	if t <= 1 || size < parallelReduce {
		f(0, n)
		return
	}
	kernels.Parallel(t, func(i int) { f(n*i/t, n*(i+1)/t) })
}

// reducerOp recognises a reducer op(parameter(0), parameter(1)), either
// order, on scalars of type t.
func reducerOp(c *hlo.Computation, t hlo.DType) (hlo.Opcode, bool) {
	op, ok := hlo.Combiner(c)
	if !ok || c.Root.Shape.DType != t {
		return 0, false
	}
	switch op {
	case hlo.OpAdd, hlo.OpMultiply, hlo.OpMaximum, hlo.OpMinimum:
		return op, true
	case hlo.OpAnd, hlo.OpOr:
		return op, t.IsInteger() || t.IsPred()
	}
	return 0, false
}

// lowerReduce returns a compiled kernel for reduce (and reduce-window),
// or false.
func lowerReduce(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if in.Opcode == hlo.OpReduceWindow {
		return lowerReduceWindow(in, threads)
	}
	if in.Opcode != hlo.OpReduce || len(in.Operands) != 2 || !plainArray(in.Shape) {
		return nil, false
	}
	x, init := in.Operands[0].Shape, in.Operands[1].Shape
	t := x.DType
	if !plainArray(x) || !plainArray(init) || init.Rank() != 0 || init.DType != t || in.Shape.DType != t {
		return nil, false
	}
	dims := in.Dimensions()
	seen := make([]bool, x.Rank())
	for _, d := range dims {
		if d < 0 || int(d) >= x.Rank() || seen[d] {
			return nil, false
		}
		seen[d] = true
	}
	var kept []int64
	for d, n := range x.Dims {
		if !seen[d] {
			kept = append(kept, n)
		}
	}
	if !slices.Equal(kept, in.Shape.Dims) {
		return nil, false
	}
	op, ok := reducerOp(in.Computation("to_apply"), t)
	if !ok {
		return nil, false
	}
	pl := newReducePlan(x.Dims, dims, threads)
	switch t {
	case hlo.F32:
		if k, ok := f32Reduce(op, pl); ok {
			return k, true
		}
		return reduceKernel(pl, floatCombine[float32](op)), true
	case hlo.F64:
		return reduceKernel(pl, floatCombine[float64](op)), true
	case hlo.F16:
		return reduceKernel(pl, narrowCombine(op, minifloat.F16)), true
	case hlo.BF16:
		return reduceKernel(pl, narrowCombine(op, minifloat.BF16)), true
	case hlo.Pred:
		return reduceKernel(pl, predCombine(op)), true
	case hlo.S8:
		return reduceKernel(pl, intCombine[int8](op)), true
	case hlo.S16:
		return reduceKernel(pl, intCombine[int16](op)), true
	case hlo.S32:
		return reduceKernel(pl, intCombine[int32](op)), true
	case hlo.S64:
		return reduceKernel(pl, intCombine[int64](op)), true
	case hlo.U8:
		return reduceKernel(pl, intCombine[uint8](op)), true
	case hlo.U16:
		return reduceKernel(pl, intCombine[uint16](op)), true
	case hlo.U32:
		return reduceKernel(pl, intCombine[uint32](op)), true
	case hlo.U64:
		return reduceKernel(pl, intCombine[uint64](op)), true
	}
	return nil, false
}

// floatCombine is T's fold for op; maximum and minimum propagate NaN,
// as XLA's (and the evaluator's) do.
func floatCombine[T float32 | float64](op hlo.Opcode) func(a, b T) T {
	if f := arithCombine[T](op); f != nil {
		return f
	}
	if op == hlo.OpMaximum {
		return kernels.NaNMax[T]
	}
	return kernels.NaNMin[T]
}

// arithCombine is the fold of add or multiply, one for every number
// type (integers wrap), or nil for another op.
func arithCombine[T ewNum](op hlo.Opcode) func(a, b T) T {
	switch op {
	case hlo.OpAdd:
		return func(a, b T) T { return a + b }
	case hlo.OpMultiply:
		return func(a, b T) T { return a * b }
	}
	return nil
}

// narrowCombine works as the evaluator's f16/bf16 arithmetic does: decode
// to float64, combine, round back to the element type after every step.
func narrowCombine(op hlo.Opcode, f minifloat.Format) func(a, b uint16) uint16 {
	tab, g := f.Values(), floatCombine[float64](op)
	return func(a, b uint16) uint16 { return f.FromFloat64(g(tab[a], tab[b])) }
}

func predCombine(op hlo.Opcode) func(a, b bool) bool {
	switch op {
	case hlo.OpAnd, hlo.OpMinimum, hlo.OpMultiply:
		return func(a, b bool) bool { return a && b }
	}
	return func(a, b bool) bool { return a || b }
}

type integer = kernels.Integer

// intCombine wraps around on overflow, as XLA's integer arithmetic does.
func intCombine[T integer](op hlo.Opcode) func(a, b T) T {
	if f := arithCombine[T](op); f != nil {
		return f
	}
	switch op {
	case hlo.OpMaximum:
		return func(a, b T) T { return max(a, b) }
	case hlo.OpMinimum:
		return func(a, b T) T { return min(a, b) }
	case hlo.OpAnd:
		return func(a, b T) T { return a & b }
	}
	return func(a, b T) T { return a | b }
}

// reduceKernel folds with f in the evaluator's order.
func reduceKernel[T any](pl *reducePlan, f func(a, b T) T) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst, src := out.Data().([]T), ops[0].Data().([]T)
		init := ops[1].Data().([]T)[0]
		switch k, r, rowsOK := pl.rows(); {
		case pl.empty:
			for i := range dst {
				dst[i] = init
			}
		case rowsOK:
			pl.split(k, func(lo, hi int) { foldRows(dst, src, init, f, lo, hi, r) })
		default:
			if a, r, c, ok := pl.cols(); ok {
				pl.split(a, func(lo, hi int) { foldCols(dst, src, init, f, lo, hi, r, c) })
				return nil
			}
			pl.split(pl.outer(), func(lo, hi int) { foldGeneral(dst, src, init, f, pl, lo, hi) })
		}
		return nil
	}
}

// outer is the size of the outermost kept axis, which the general fold
// splits across threads.
func (pl *reducePlan) outer() int {
	if len(pl.kept) == 0 {
		return 1
	}
	return pl.kept[0].n
}

func foldRows[T any](dst, src []T, init T, f func(a, b T) T, lo, hi, r int) {
	for i := lo; i < hi; i++ {
		acc := init
		for _, v := range src[i*r : (i+1)*r] {
			acc = f(acc, v)
		}
		dst[i] = acc
	}
}

// foldCols combines whole rows into the output rows [lo, hi) of an
// [A, R, C] reduce; per output that is still the evaluator's order.
func foldCols[T any](dst, src []T, init T, f func(a, b T) T, lo, hi, r, c int) {
	for a := lo; a < hi; a++ {
		d := dst[a*c : (a+1)*c]
		for j := range d {
			d[j] = init
		}
		for i := range r {
			row := src[(a*r+i)*c : (a*r+i+1)*c]
			for j, v := range row {
				d[j] = f(d[j], v)
			}
		}
	}
}

// foldGeneral folds the outputs whose outermost kept index is in [lo, hi).
func foldGeneral[T any](dst, src []T, init T, f func(a, b T) T, pl *reducePlan, lo, hi int) {
	if len(pl.kept) == 0 {
		dst[0] = foldRed(src, init, f, pl.red, 0)
		return
	}
	for i := lo; i < hi; i++ {
		foldKept(dst, src, init, f, pl, 1, i*pl.outStrides[0], i*pl.kept[0].stride)
	}
}

func foldKept[T any](dst, src []T, init T, f func(a, b T) T, pl *reducePlan, k, o, base int) {
	if k == len(pl.kept) {
		dst[o] = foldRed(src, init, f, pl.red, base)
		return
	}
	ax := pl.kept[k]
	for i := range ax.n {
		foldKept(dst, src, init, f, pl, k+1, o+i*pl.outStrides[k], base+i*ax.stride)
	}
}

func foldRed[T any](src []T, acc T, f func(a, b T) T, red []axis, base int) T {
	switch len(red) {
	case 0:
		return f(acc, src[base])
	case 1:
		ax := red[0]
		for i := range ax.n {
			acc = f(acc, src[base+i*ax.stride])
		}
		return acc
	}
	for i := range red[0].n {
		acc = foldRed(src, acc, f, red[1:], base+i*red[0].stride)
	}
	return acc
}

// f32Reduce has the f32 row and column loops for add, maximum and minimum.
func f32Reduce(op hlo.Opcode, pl *reducePlan) (kernelFunc, bool) {
	if pl.empty || (op != hlo.OpAdd && op != hlo.OpMaximum && op != hlo.OpMinimum) {
		return nil, false
	}
	if k, r, ok := pl.rows(); ok {
		return func(out *hlo.Literal, ops []*hlo.Literal) error {
			dst, src := out.Data().([]float32), ops[0].Data().([]float32)
			init := ops[1].Data().([]float32)[0]
			pl.split(k, func(lo, hi int) { rowsF32(op, dst, src, init, lo, hi, r) })
			return nil
		}, true
	}
	if a, r, c, ok := pl.cols(); ok {
		return func(out *hlo.Literal, ops []*hlo.Literal) error {
			dst, src := out.Data().([]float32), ops[0].Data().([]float32)
			init := ops[1].Data().([]float32)[0]
			if a == 1 {
				// One output row: split its columns instead, when each
				// thread gets whole runs of cache lines; two threads
				// reading alternate lines of narrow rows (a bias gradient's
				// 32 channels) fetch every line twice and ran at half the
				// speed of one.
				if c < 128*pl.threads {
					colsF32(op, dst, src, init, r, c)
					return nil
				}
				pl.split(c, func(lo, hi int) { colsF32(op, dst[lo:hi], src[lo:], init, r, c) })
				return nil
			}
			pl.split(a, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					colsF32(op, dst[i*c:(i+1)*c], src[i*r*c:], init, r, c)
				}
			})
			return nil
		}, true
	}
	return nil, false
}

// rowsF32 reduces rows [lo, hi): sums blocked (reordered), extrema exact.
func rowsF32(op hlo.Opcode, dst, src []float32, init float32, lo, hi, r int) {
	for i := lo; i < hi; i++ {
		row := src[i*r : (i+1)*r]
		switch op {
		case hlo.OpAdd:
			dst[i] = init + kernels.SumF32(row)
		case hlo.OpMaximum:
			dst[i] = kernels.NaNMax(init, kernels.MaxF32(row))
		default:
			dst[i] = kernels.NaNMin(init, kernels.MinF32(row))
		}
	}
}

// colsF32 sets d (len(d) ≤ c) to the fold over r rows of stride c of src,
// row by row: the evaluator's order, so exact. Four rows are folded per
// pass over d, in order, so d is loaded and stored a quarter as often.
func colsF32(op hlo.Opcode, d, src []float32, init float32, r, c int) {
	for j := range d {
		d[j] = init
	}
	if op == hlo.OpAdd {
		// Sums keep their accumulators in registers over all the rows.
		kernels.AccumulateColsF32(d, src, r, c)
		return
	}
	n := len(d)
	row := func(i int) []float32 { return src[i*c : i*c+n : i*c+n] }
	if vec := vectorCombineF32(op); vec != nil && n >= 8 {
		// The same fold on the vector kernels, a row at a time: with the
		// channels of a bias gradient as the columns, the scalar loop
		// ran at a tenth of the memory bandwidth.
		for i := range r {
			vec(d, d, row(i))
		}
		return
	}
	i := 0
	for ; i+4 <= r; i += 4 {
		r0, r1, r2, r3 := row(i), row(i+1), row(i+2), row(i+3)
		switch op {
		case hlo.OpMaximum:
			for j := range d {
				d[j] = kernels.NaNMax(kernels.NaNMax(kernels.NaNMax(kernels.NaNMax(d[j], r0[j]), r1[j]), r2[j]), r3[j])
			}
		default:
			for j := range d {
				d[j] = kernels.NaNMin(kernels.NaNMin(kernels.NaNMin(kernels.NaNMin(d[j], r0[j]), r1[j]), r2[j]), r3[j])
			}
		}
	}
	for ; i < r; i++ {
		for j, v := range row(i) {
			switch op {
			case hlo.OpMaximum:
				d[j] = kernels.NaNMax(d[j], v)
			default:
				d[j] = kernels.NaNMin(d[j], v)
			}
		}
	}
}
