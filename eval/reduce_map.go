package eval

import "github.com/axle-ml/axle/hlo"

// Map lives with the reductions because, like them, it calls a scalar
// computation per element.
func init() {
	register(evalMap, hlo.OpMap)
	register(evalSelectAndScatter, hlo.OpSelectAndScatter)
}

// evalMap applies to_apply to the operands' elements at each index; the
// dimensions attribute always lists every dimension (the spec requires
// it), so it does not change the iteration.
func evalMap(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	comp := in.Computation("to_apply")
	out := hlo.NewLiteral(in.Shape)
	args := make([]*hlo.Literal, len(ops))
	for i := 0; i < out.Len(); i++ {
		for k, o := range ops {
			args[k] = scalarAt(o, i)
		}
		r, err := e.Computation(comp, args...)
		if err != nil {
			return nil, err
		}
		setFrom(out, i, r, 0)
	}
	return out, nil
}

// evalSelectAndScatter picks, for each window (source position), the
// operand element the select computation prefers — the first valid
// element, replaced by a later one whenever select(current, candidate) is
// false, as XLA's evaluator does — and folds the source value into that
// position of a result initialised to init_value. Padded positions are
// never selected.
func evalSelectAndScatter(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	operand, source, init := ops[0], ops[1], ops[2]
	sel, scat := in.Computation("select"), in.Computation("scatter")
	out := hlo.NewLiteral(in.Shape)
	for i := 0; i < out.Len(); i++ {
		setFrom(out, i, init, 0)
	}
	w := in.Window()
	s := operand.Shape()
	if w == nil || out.Len() == 0 || source.Len() == 0 {
		return out, nil
	}
	x := &windowIndexer{dims: s.Dims, strides: hlo.RowMajorStrides(s.Dims), w: w.Dims}
	wDims := windowSizes(w)
	if hasZero(wDims) {
		return out, nil
	}
	sDims := source.Shape().Dims
	sIdx := make([]int64, len(sDims))
	wIdx := make([]int64, len(wDims))
	for o := 0; ; o++ {
		best := -1
		clear(wIdx)
		for {
			if at := x.at(sIdx, wIdx); at >= 0 {
				if best < 0 {
					best = at
				} else {
					r, err := e.Computation(sel, scalarAt(operand, best), scalarAt(operand, at))
					if err != nil {
						return nil, err
					}
					if !r.GetBool(0) {
						best = at
					}
				}
			}
			if !nextIndex(wIdx, wDims) {
				break
			}
		}
		if best >= 0 {
			r, err := e.Computation(scat, scalarAt(out, best), scalarAt(source, o))
			if err != nil {
				return nil, err
			}
			setFrom(out, best, r, 0)
		}
		if !nextIndex(sIdx, sDims) {
			return out, nil
		}
	}
}
