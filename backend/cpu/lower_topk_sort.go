package cpu

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// topk with a to_apply comparator: the evaluator stable-sorts each row
// with the three-way function "-1 if before(a, b), 1 if before(b, a),
// else 0" of the comparator and keeps the first k. The kernels here make
// the same calls of slices.SortStableFunc with the same outcomes, so they
// give the same order even where the comparator is no strict weak order.

// topkComparator returns the sorting runner of a topk's comparator: a
// single compare of the two parameters on widened keys, else the
// comparator compiled to a lane program; nil if neither compiles.
func topkComparator(c *hlo.Computation, t hlo.DType, p *topkPlan) func(x *hlo.Literal, emit func(row int, perm []int)) error {
	if ord, total, ok := sortComparator(c, t); ok {
		if keys := sortKeys(t, total); keys != nil {
			return func(x *hlo.Literal, emit func(row int, perm []int)) error {
				switch k := keys(x).(type) {
				case []int64:
					topkSortRows(p, orderFunc(k, ord), emit)
				case []uint64:
					topkSortRows(p, orderFunc(k, ord), emit)
				case []float64:
					topkSortRows(p, orderFunc(k, ord), emit)
				}
				return nil
			}
		}
	}
	lp, ok := compileLanes(c, 1)
	if !ok || len(lp.params) != 2 || len(lp.roots) != 1 || lp.shapeOf(lp.roots[0]).DType != hlo.Pred ||
		lp.params[0].DType != t || lp.params[1].DType != t {
		return nil
	}
	return func(x *hlo.Literal, emit func(row int, perm []int)) error {
		return topkLaneRows(p, lp, x, emit)
	}
}

// topkSortRows sorts every row's positions with cmp and emits them.
func topkSortRows(p *topkPlan, cmp func(a, b int) int, emit func(row int, perm []int)) {
	splitRange(p.rows, p.rows*p.n*8, p.threads, func(lo, hi int) {
		perm := make([]int, p.n)
		for row := lo; row < hi; row++ {
			for i := range perm {
				perm[i] = row*p.n + i
			}
			slices.SortStableFunc(perm, cmp)
			emit(row, perm)
		}
	})
}

// topkLaneRows is topkSortRows with the comparator run as a one-lane
// program per comparison (a frame per worker); the first error wins.
func topkLaneRows(p *topkPlan, lp *laneProg, x *hlo.Literal, emit func(row int, perm []int)) error {
	var first firstError
	splitRange(p.rows, p.rows*p.n*8*len(lp.steps), p.threads, func(lo, hi int) {
		cmp, err := laneComparator(lp, []*hlo.Literal{x})
		perm := make([]int, p.n)
		for row := lo; row < hi && *err == nil; row++ {
			for i := range perm {
				perm[i] = row*p.n + i
			}
			slices.SortStableFunc(perm, cmp)
			emit(row, perm)
		}
		first.set(*err)
	})
	return first.err
}
