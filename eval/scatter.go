package eval

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

func init() {
	register(evalScatter, hlo.OpScatter)
}

// evalScatter follows XLA's operation semantics: N operands are copied,
// then every update element, in row-major order of the updates (index
// vectors outer, window inner), is combined into the operand element it
// addresses with to_apply(current values..., update values...). An update
// window that does not fit entirely inside the operand is skipped, as XLA
// does ("if the index is out of bounds for operand, ... the update is
// skipped").
func evalScatter(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if len(ops) < 3 || len(ops)%2 == 0 {
		return nil, fmt.Errorf("scatter takes N operands, indices and N updates; got %d operands", len(ops))
	}
	n := len(ops) / 2
	operands, updates := ops[:n], ops[n+1:]
	leaves, err := resultLeaves(in.Shape, n)
	if err != nil {
		return nil, err
	}
	ivd, _ := in.Int("index_vector_dim")
	idx, err := newStartIndices(ops[n], ivd)
	if err != nil {
		return nil, err
	}
	p, err := scatterPlan(in, operands[0].Shape(), updates[0].Shape(), idx)
	if err != nil {
		return nil, err
	}
	outs := make([]*hlo.Literal, n)
	for i, o := range operands {
		outs[i] = o.Clone()
		if !outs[i].Shape().Compatible(leaves[i]) {
			return nil, fmt.Errorf("scatter operand %d has shape %s, result %s", i, o.Shape(), leaves[i])
		}
	}
	comp := in.Computation("to_apply")
	if comp == nil {
		return nil, fmt.Errorf("scatter has no to_apply computation")
	}
	if done, err := scatterFast(comp, outs, updates, p); done || err != nil {
		return packResult(in.Shape, outs), err
	}
	if err := scatterCall(e, comp, outs, updates, p); err != nil {
		return nil, err
	}
	return packResult(in.Shape, outs), nil
}

// scatterPlan maps each index vector to its operand window (or marks it
// skipped) and each update window element to its operand offset.
func scatterPlan(in *hlo.Instruction, xs, us hlo.Shape, idx *startIndices) (*windowPlan, error) {
	updWin := gsInts(in, "update_window_dims")
	opBatch := gsInts(in, "input_batching_dims")
	idxBatch := gsInts(in, "scatter_indices_batching_dims")
	toOperand := gsInts(in, "scatter_dims_to_operand_dims")
	opWin := complementDims(xs.Rank(), gsInts(in, "inserted_window_dims"), opBatch)
	if len(opWin) != len(updWin) {
		return nil, fmt.Errorf("scatter: %d update window dimensions for %d operand window dimensions", len(updWin), len(opWin))
	}
	// The operand window's extent: the update window's size along window
	// dimensions, 1 along inserted and batching dimensions.
	win := make([]int64, xs.Rank())
	for d := range win {
		win[d] = 1
	}
	for k, d := range opWin {
		win[d] = us.Dims[updWin[k]]
	}
	xStrides := hlo.RowMajorStrides(xs.Dims)
	p := &windowPlan{dstWin: offsetTable(opWin, win, xStrides)}
	p.srcBase, p.srcWin = batchAndWindowOffsets(us, updWin)
	if len(p.srcBase) != len(idx.base) {
		return nil, fmt.Errorf("scatter: %d update index positions for %d index vectors", len(p.srcBase), len(idx.base))
	}
	p.dstBase = idx.operandOffsets(xs.Rank(), toOperand, opBatch, idxBatch, func(start []int64) int {
		return scatterBase(start, xs.Dims, win, xStrides)
	})
	return p, nil
}

// scatterBase is the operand offset of a window starting at start, or -1
// when any part of the window falls outside the operand.
func scatterBase(start, dims, win []int64, strides []int) int {
	off := 0
	for d, s := range start {
		if s < 0 || s > dims[d]-win[d] {
			return -1
		}
		off += int(s) * strides[d]
	}
	return off
}

// scatterCall is the general path: one to_apply call per update element.
func scatterCall(e *Evaluator, comp *hlo.Computation, outs, updates []*hlo.Literal, p *windowPlan) error {
	n := len(outs)
	args := make([]*hlo.Literal, 2*n)
	for b, db := range p.dstBase {
		if db < 0 {
			continue
		}
		for w, dw := range p.dstWin {
			at, from := db+dw, p.srcBase[b]+p.srcWin[w]
			for i := range n {
				args[i] = scalarAt(outs[i], at)
				args[n+i] = scalarAt(updates[i], from)
			}
			r, err := e.Computation(comp, args...)
			if err != nil {
				return err
			}
			vals := []*hlo.Literal{r}
			if r.Shape().IsTuple() {
				vals = r.Elements()
			}
			if len(vals) != n {
				return fmt.Errorf("scatter: to_apply returned %d values for %d operands", len(vals), n)
			}
			for i := range n {
				setFrom(outs[i], at, vals[i], 0)
			}
		}
	}
	return nil
}

// scatterCombine is a to_apply the fast path runs without calls.
type scatterCombine int

const (
	combineOverwrite scatterCombine = iota // root is the update parameter
	combineAdd
	combineMul
	combineMax
	combineMin
)

// recogniseCombiner matches single-operand combiners (hlo.Combiner): the
// update itself (overwrite), or add/multiply/maximum/minimum of the two
// parameters (all commutative, so the order does not matter).
func recogniseCombiner(c *hlo.Computation) (scatterCombine, bool) {
	op, ok := hlo.Combiner(c)
	if !ok {
		return 0, false
	}
	switch op {
	case hlo.OpParameter:
		return combineOverwrite, true
	case hlo.OpAdd:
		return combineAdd, true
	case hlo.OpMultiply:
		return combineMul, true
	case hlo.OpMaximum:
		return combineMax, true
	case hlo.OpMinimum:
		return combineMin, true
	}
	return 0, false
}

// nativeArith lists the element types whose Go storage arithmetic is the
// HLO arithmetic (wrapping integers, IEEE f32/f64; Go's max/min propagate
// NaN and order -0 below +0 as XLA's do).
func nativeArith(t hlo.DType) bool {
	switch t {
	case hlo.S8, hlo.S16, hlo.S32, hlo.S64, hlo.U8, hlo.U16, hlo.U32, hlo.U64, hlo.F32, hlo.F64:
		return true
	}
	return false
}

// scatterFast applies a recognised single-operand combiner with typed
// loops; done is false when the general path must run.
func scatterFast(c *hlo.Computation, outs, updates []*hlo.Literal, p *windowPlan) (done bool, err error) {
	if len(outs) != 1 {
		return false, nil
	}
	op, ok := recogniseCombiner(c)
	if !ok || c.Root.Shape.DType != outs[0].DType() || updates[0].DType() != outs[0].DType() {
		return false, nil
	}
	if op == combineOverwrite {
		return true, copyWindows(outs[0], updates[0], p)
	}
	if !nativeArith(outs[0].DType()) {
		return false, nil
	}
	switch d := outs[0].Data().(type) {
	case []int8:
		combineWindows(d, updates[0].Data().([]int8), p, op)
	case []int16:
		combineWindows(d, updates[0].Data().([]int16), p, op)
	case []int32:
		combineWindows(d, updates[0].Data().([]int32), p, op)
	case []int64:
		combineWindows(d, updates[0].Data().([]int64), p, op)
	case []uint8:
		combineWindows(d, updates[0].Data().([]uint8), p, op)
	case []uint16:
		combineWindows(d, updates[0].Data().([]uint16), p, op)
	case []uint32:
		combineWindows(d, updates[0].Data().([]uint32), p, op)
	case []uint64:
		combineWindows(d, updates[0].Data().([]uint64), p, op)
	case []float32:
		combineWindows(d, updates[0].Data().([]float32), p, op)
	case []float64:
		combineWindows(d, updates[0].Data().([]float64), p, op)
	default:
		return false, nil
	}
	return true, nil
}

type arith interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// combineWindows folds updates into dst in index order with one typed
// loop per combiner.
func combineWindows[T arith](dst, upd []T, p *windowPlan, op scatterCombine) {
	var f func(a, b T) T
	switch op {
	case combineAdd:
		f = func(a, b T) T { return a + b }
	case combineMul:
		f = func(a, b T) T { return a * b }
	case combineMax:
		f = func(a, b T) T { return max(a, b) }
	default:
		f = func(a, b T) T { return min(a, b) }
	}
	for b, db := range p.dstBase {
		if db < 0 {
			continue
		}
		sb := p.srcBase[b]
		for w, dw := range p.dstWin {
			dst[db+dw] = f(dst[db+dw], upd[sb+p.srcWin[w]])
		}
	}
}
