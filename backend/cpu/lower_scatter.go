package cpu

import (
	"github.com/axle-ml/axle/hlo"
)

// scatterOp is a combiner the compiled scatter runs without calls.
type scatterOp int

const (
	scatterOverwrite scatterOp = iota // root is the update parameter
	scatterAdd
	scatterMul
	scatterMax
	scatterMin
)

// scatterCombiner recognises the combiners eval/scatter.go runs on its
// fast path: the update itself, or add/multiply/maximum/minimum of the two
// parameters (commutative, so either order).
func scatterCombiner(c *hlo.Computation, t hlo.DType) (scatterOp, bool) {
	op, ok := hlo.Combiner(c)
	if !ok || c.Root.Shape.DType != t {
		return 0, false
	}
	switch op {
	case hlo.OpParameter:
		return scatterOverwrite, true
	case hlo.OpAdd:
		return scatterAdd, true
	case hlo.OpMultiply:
		return scatterMul, true
	case hlo.OpMaximum:
		return scatterMax, true
	case hlo.OpMinimum:
		return scatterMin, true
	}
	return 0, false
}

// scatterPlan is a lowered scatter: per index vector the updates' offset,
// and the update window as a box from updates to operand.
type scatterPlan struct {
	idx     *indexVectors
	srcBase []int
	win     box
	op      scatterOp
}

// scatterInPlace: the scatter kernel may run with out being operand 0's
// buffer (it then only applies the updates).
func scatterInPlace(*hlo.Instruction) []int { return []int{0} }

// lowerScatter compiles a single-operand scatter whose combiner
// scatterCombiner recognises. Overwrite copies bits, so it takes every
// element type; the arithmetic combiners take the types whose Go
// arithmetic is the HLO arithmetic (no bf16/f16, whose rounding the
// evaluator does through its general path).
func lowerScatter(in *hlo.Instruction, _ int) (kernelFunc, bool) {
	if in.Opcode != hlo.OpScatter || len(in.Operands) != 3 || !movable(in, 0, 2) ||
		!plainArray(in.Operands[1].Shape) || !indexType(in.Operands[1].Shape.DType) {
		return nil, false
	}
	t := in.Shape.DType
	op, ok := scatterCombiner(in.Computation("to_apply"), t)
	if !ok {
		return nil, false
	}
	p, ok := planScatter(in)
	if !ok {
		return nil, false
	}
	p.op = op
	if op == scatterOverwrite {
		return byWidth(storageWidth(t), p, runScatterCopy[uint8], runScatterCopy[uint16], runScatterCopy[uint32],
			runScatterCopy[uint64], runScatterCopy[[2]uint64])
	}
	return numberMakers[*scatterPlan, kernelFunc]{f32: runScatterArith[float32], f64: runScatterArith[float64],
		s8: runScatterArith[int8], s16: runScatterArith[int16], s32: runScatterArith[int32], s64: runScatterArith[int64],
		u8: runScatterArith[uint8], u16: runScatterArith[uint16], u32: runScatterArith[uint32], u64: runScatterArith[uint64]}.of(t, p)
}

// planScatter follows eval/scatter.go: update dimensions not in
// update_window_dims walk the index vectors; update_window_dims walk the
// operand dimensions that are neither inserted nor batching, whose window
// extent is the update's; the others have extent 1.
func planScatter(in *hlo.Instruction) (*scatterPlan, bool) {
	return planScatterOf(in, in.Operands[0].Shape, in.Operands[1].Shape, in.Operands[2].Shape, in.Shape)
}

// planScatterOf plans a scatter of operands shaped xs by indices shaped
// is and updates shaped us into a result shaped res (a variadic
// scatter's operands share these).
func planScatterOf(in *hlo.Instruction, xs, is, us, res hlo.Shape) (*scatterPlan, bool) {
	updWin := attrInts(in, "update_window_dims")
	inserted := attrInts(in, "inserted_window_dims")
	opBatch := attrInts(in, "input_batching_dims")
	ivd, _ := in.Int("index_vector_dim") // absent reads as 0, as in the evaluator
	if !distinctIn(xs.Rank(), inserted, opBatch) || !distinctIn(us.Rank(), updWin) ||
		!res.SameDims(xs) {
		return nil, false
	}
	opWin := otherDims(xs.Rank(), inserted, opBatch)
	if len(opWin) != len(updWin) {
		return nil, false
	}
	win := make([]int64, xs.Rank())
	for d := range win {
		win[d] = 1
	}
	for k, d := range opWin {
		win[d] = us.Dims[updWin[k]]
	}
	xStrides, uStrides := hlo.RowMajorStrides(xs.Dims), hlo.RowMajorStrides(us.Dims)
	idx, ok := newIndexVectors(is, ivd, attrInts(in, "scatter_dims_to_operand_dims"), opBatch,
		attrInts(in, "scatter_indices_batching_dims"), xs.Dims, win, xStrides)
	if !ok {
		return nil, false
	}
	p := &scatterPlan{idx: idx, srcBase: offsetTable(otherDims(us.Rank(), updWin), us.Dims, uStrides)}
	if len(p.srcBase) != len(idx.base) {
		return nil, false
	}
	var dims []int64
	var ds, ss []int
	for k, d := range opWin {
		dims = append(dims, win[d])
		ds, ss = append(ds, xStrides[d]), append(ss, uStrides[updWin[k]])
	}
	p.win = newBox(2, dims, ds, ss)
	if !p.win.finish() {
		p.srcBase = nil // empty windows update nothing
	}
	return p, true
}

// startFrom copies operand 0 into out unless out is its buffer already
// (the scatter was scheduled in place).
func startFrom(out *hlo.Literal, ops []*hlo.Literal) {
	if !sameStorage(out, ops[0]) {
		copy(bytesOf(out), bytesOf(ops[0]))
	}
}

// runScatterCopy overwrites window by window in index order, so with
// duplicate indices the last update wins, as in the evaluator.
func runScatterCopy[W word](p *scatterPlan) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		startFrom(out, ops)
		dst, src := wordsOf[W](out), wordsOf[W](ops[2])
		read := indexReader(ops[1])
		b := p.win // per call: the plan is shared by concurrent calls
		for i, sb := range p.srcBase {
			if db := p.idx.scatterStart(read, i); db >= 0 {
				b.dstOff, b.srcOff = db, sb
				copyBox(dst, src, &b)
			}
		}
		return nil
	}
}

// runScatterArith folds the updates in the evaluator's order (index
// vectors outer); a window's elements are distinct operand elements, so
// the order within one window does not matter.
func runScatterArith[T arith](p *scatterPlan) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		startFrom(out, ops)
		dst, src := out.Data().([]T), ops[2].Data().([]T)
		read := indexReader(ops[1])
		b := p.win
		for i, sb := range p.srcBase {
			if db := p.idx.scatterStart(read, i); db >= 0 {
				b.dstOff, b.srcOff = db, sb
				combineDims(dst, src, &b, 0, b.dstOff, b.srcOff, p.op)
			}
		}
		return nil
	}
}

// arith lists the element types whose Go arithmetic is the HLO one
// (wrapping integers, IEEE floats; Go's max/min propagate NaN and order
// -0 below +0 as XLA's do).
type arith interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

func combineDims[T arith](dst, src []T, b *box, k, d, s int, op scatterOp) {
	switch {
	case len(b.dims) == 0:
		combineRun(dst, src, d, s, 1, 1, 1, op)
	case k == len(b.dims)-1:
		combineRun(dst, src, d, s, b.dims[k], b.dstStrides[k], b.srcStrides[k], op)
	default:
		for range b.dims[k] {
			combineDims(dst, src, b, k+1, d, s, op)
			d += b.dstStrides[k]
			s += b.srcStrides[k]
		}
	}
}

// combineRun folds n updates with one loop per combiner, so the switch
// is paid per run, not per element.
func combineRun[T arith](dst, src []T, d, s, n, ds, ss int, op scatterOp) {
	switch op {
	case scatterAdd:
		for range n {
			dst[d] += src[s]
			d, s = d+ds, s+ss
		}
	case scatterMul:
		for range n {
			dst[d] *= src[s]
			d, s = d+ds, s+ss
		}
	case scatterMax:
		for range n {
			dst[d] = max(dst[d], src[s])
			d, s = d+ds, s+ss
		}
	case scatterMin:
		for range n {
			dst[d] = min(dst[d], src[s])
			d, s = d+ds, s+ss
		}
	}
}
