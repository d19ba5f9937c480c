package cpu

import (
	"slices"
	"sync"

	"github.com/axle-ml/axle/hlo"
)

// A sort whose comparator is more than one compare (by absolute value,
// lexicographic over two keys) runs the comparator as a one-lane program
// (lanes.go) per comparison, inside the same stable merge sort and the
// same three-way function as the evaluator, so every row lands in the
// evaluator's order.

// sortLanes compiles the comparator of sort in: parameters 2k and 2k+1
// are operand k's two elements, the result one pred.
func sortLanes(in *hlo.Instruction) (*laneProg, bool) {
	p, ok := compileLanes(in.Computation("to_apply"), 1)
	if !ok || len(p.params) != 2*len(in.Operands) || len(p.roots) != 1 || p.shapeOf(p.roots[0]).DType != hlo.Pred {
		return nil, false
	}
	for k, o := range in.Operands {
		if p.params[2*k].DType != o.Shape.DType || p.params[2*k+1].DType != o.Shape.DType {
			return nil, false
		}
	}
	return p, true
}

func sortRowsLanes(pl *sortPlan, outs, ops []*hlo.Literal, rows int) error {
	var mu sync.Mutex
	var first error
	splitRange(rows, rows*pl.n*len(ops)*len(pl.lanes.steps), pl.threads, func(lo, hi int) {
		f := pl.lanes.frame()
		res := pl.lanes.result(f, 0).Data().([]bool)
		var err error
		at := make([]int, 1)
		less := func(a, b int) bool {
			for k, o := range ops {
				at[0] = a
				gatherLanes(f.vals[2*k], o, at)
				at[0] = b
				gatherLanes(f.vals[2*k+1], o, at)
			}
			if e := pl.lanes.run(f); e != nil {
				err = e
				return false
			}
			return res[0]
		}
		cmp := threeWay(less)
		perm := make([]int, pl.n)
		for r := lo; r < hi && err == nil; r++ {
			base := r/pl.inner*pl.n*pl.inner + r%pl.inner
			for i := range perm {
				perm[i] = base + i*pl.inner
			}
			slices.SortStableFunc(perm, cmp)
			for k, m := range pl.moves {
				m(outs[k], ops[k], perm, base)
			}
		}
		if err != nil {
			mu.Lock()
			if first == nil {
				first = err
			}
			mu.Unlock()
		}
	})
	return first
}

// threeWay turns a comparator's "a before b" into the -1/0/1 order that
// slices.SortStableFunc takes: neither before the other is a tie, kept
// in input order, as the evaluator's stable sort keeps it.
func threeWay(less func(a, b int) bool) func(a, b int) int {
	return func(a, b int) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	}
}
