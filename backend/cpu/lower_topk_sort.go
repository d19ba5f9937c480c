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

// topkLexKeys returns the keys of a topk whose comparator is one level
// of a lexicographic order with an order-preserving key (lower_sort_lex.go:
// ONNX TopK's value with NaN greatest, or an integer compare), larger
// first as selectTopK wants them, or nil. With ties to the lower index
// (the stable sort's) that order is total, so the heap selection finds
// the evaluator's k first elements without sorting the row: ONNX TopK
// keeping 100 of 25,200 scores.
func topkLexKeys(c *hlo.Computation, t hlo.DType) func(dst []uint64, x *hlo.Literal, at int) {
	if c == nil || c.Root == nil {
		return nil
	}
	x := &sortExpr{types: []hlo.DType{t}, need: make([]exprKind, 1), total: make([]bool, 1)}
	l, ok := x.strictLevel(c.Root)
	if !ok || !lexKeyed([]lexLevel{l}) {
		return nil
	}
	return func(dst []uint64, lit *hlo.Literal, at int) {
		switch d := lit.Data().(type) {
		case []float32:
			for j, v := range d[at : at+len(dst)] {
				dst[j] = ^l.floatKey(float64(v))
			}
		case []float64:
			for j, v := range d[at : at+len(dst)] {
				dst[j] = ^l.floatKey(v)
			}
		case []int32:
			for j, v := range d[at : at+len(dst)] {
				dst[j] = ^l.intKey(int64(v))
			}
		case []int64:
			for j, v := range d[at : at+len(dst)] {
				dst[j] = ^l.intKey(v)
			}
		default: // every value widens exactly (sortKeys' widening)
			for j := range dst {
				switch l.kind {
				case kindFloat:
					dst[j] = ^l.floatKey(lit.GetFloat64(at + j))
				case kindInt:
					dst[j] = ^l.intKey(lit.GetInt64(at + j))
				default:
					dst[j] = ^l.uintKey(lit.GetUint64(at + j))
				}
			}
		}
	}
}
