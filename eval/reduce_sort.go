package eval

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

func init() {
	register(evalSort, hlo.OpSort)
}

// evalSort sorts every 1-D slice along the sort dimension by the
// comparator, permuting all operands alike. It always sorts stably: a
// stable order is one of the orders an unstable sort may produce, and it
// makes is_stable=true hold.
func evalSort(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	comp := in.Computation("to_apply")
	leaves, err := resultLeaves(in.Shape, len(ops))
	if err != nil {
		return nil, err
	}
	s := ops[0].Shape()
	outs := make([]*hlo.Literal, len(ops))
	for i := range outs {
		outs[i] = hlo.NewLiteral(leaves[i])
	}
	if ops[0].Len() == 0 {
		return packResult(in.Shape, outs), nil
	}
	dim := int64(0)
	if d := in.Dimensions(); len(d) > 0 {
		dim = d[0]
	}
	st := hlo.RowMajorStrides(s.Dims)
	n := int(s.Dims[dim])
	args := make([]*hlo.Literal, 2*len(ops))
	perm := make([]int, n)
	for _, base := range offsetTable(complementDims(s.Rank(), []int64{dim}), s.Dims, st) {
		for i := range perm {
			perm[i] = base + i*st[dim]
		}
		var cmpErr error
		less := func(a, b int) bool {
			for k, o := range ops {
				args[2*k], args[2*k+1] = scalarAt(o, a), scalarAt(o, b)
			}
			r, err := e.Computation(comp, args...)
			if err != nil {
				cmpErr = err
				return false
			}
			return r.GetBool(0)
		}
		slices.SortStableFunc(perm, func(a, b int) int {
			switch {
			case less(a, b):
				return -1
			case less(b, a):
				return 1
			}
			return 0
		})
		if cmpErr != nil {
			return nil, cmpErr
		}
		for i, src := range perm {
			for k, o := range ops {
				setFrom(outs[k], base+i*st[dim], o, src)
			}
		}
	}
	return packResult(in.Shape, outs), nil
}
