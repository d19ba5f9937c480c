package eval

import (
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

func init() {
	register(evalTopK, hlo.OpTopK)
}

// evalTopK returns the k first elements of each last-dimension row in
// order, with their s32 indices. Without a to_apply comparator the order
// is descending (ascending when largest=false; largest defaults to true as
// in XLA) by IEEE total order, so NaN counts as the largest value; ties
// keep the lower index first.
func evalTopK(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	s := x.Shape()
	vals, idxs := hlo.NewLiteral(in.Shape.Tuple[0]), hlo.NewLiteral(in.Shape.Tuple[1])
	if s.Rank() == 0 || x.Len() == 0 {
		return hlo.MakeTupleLiteral(vals, idxs), nil
	}
	largest := !in.HasAttr("largest") || in.Bool("largest")
	n := int(s.Dims[s.Rank()-1])
	k := int(in.Shape.Tuple[0].Dims[s.Rank()-1])
	before, err := topKOrder(e, in.Computation("to_apply"), x, largest)
	if err != nil {
		return nil, err
	}
	perm := make([]int, n)
	var cmpErr error
	for row := 0; row*n < x.Len(); row++ {
		for i := range perm {
			perm[i] = row*n + i
		}
		slices.SortStableFunc(perm, func(a, b int) int {
			ab, err := before(a, b)
			if err != nil {
				cmpErr = err
			}
			if ab {
				return -1
			}
			if ba, _ := before(b, a); ba {
				return 1
			}
			return 0
		})
		if cmpErr != nil {
			return nil, cmpErr
		}
		for j := 0; j < k; j++ {
			setFrom(vals, row*k+j, x, perm[j])
			idxs.SetInt64(row*k+j, int64(perm[j]-row*n))
		}
	}
	return hlo.MakeTupleLiteral(vals, idxs), nil
}

// topKOrder returns "element a goes before element b".
func topKOrder(e *Evaluator, comp *hlo.Computation, x *hlo.Literal, largest bool) (func(a, b int) (bool, error), error) {
	if comp != nil {
		return func(a, b int) (bool, error) {
			r, err := e.Computation(comp, scalarAt(x, a), scalarAt(x, b))
			if err != nil {
				return false, err
			}
			return r.GetBool(0), nil
		}, nil
	}
	t := x.DType()
	key := func(i int) (int64, uint64) {
		switch {
		case t.IsFloat():
			b := math.Float64bits(x.GetFloat64(i))
			if b>>63 != 0 {
				return 0, ^b
			}
			return 0, b | 1<<63
		case t.IsUnsigned() || t.IsPred():
			return 0, x.GetUint64(i)
		}
		return x.GetInt64(i), 0
	}
	return func(a, b int) (bool, error) {
		sa, ua := key(a)
		sb, ub := key(b)
		if largest {
			return sa > sb || sa == sb && ua > ub, nil
		}
		return sa < sb || sa == sb && ua < ub, nil
	}, nil
}
