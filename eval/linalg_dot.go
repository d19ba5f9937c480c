package eval

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

func init() {
	register(evalDot, hlo.OpDot)
}

// dotPlan holds, per operand, the offset tables of its batch, free and
// contracting index spaces; the result is batch..., lhs free..., rhs free...
type dotPlan struct {
	lb, lf, lc []int
	rb, rf, rc []int
}

func newDotPlan(in *hlo.Instruction, l, r hlo.Shape) (*dotPlan, error) {
	lbd, _ := in.Ints("lhs_batch_dims")
	rbd, _ := in.Ints("rhs_batch_dims")
	lcd, _ := in.Ints("lhs_contracting_dims")
	rcd, _ := in.Ints("rhs_contracting_dims")
	if len(lbd) != len(rbd) || len(lcd) != len(rcd) {
		return nil, fmt.Errorf("dot: mismatched dimension numbers")
	}
	ls, rs := rowMajorStrides(l.Dims), rowMajorStrides(r.Dims)
	return &dotPlan{
		lb: offsetTable(lbd, l.Dims, ls), lc: offsetTable(lcd, l.Dims, ls),
		lf: offsetTable(complementDims(l.Rank(), lbd, lcd), l.Dims, ls),
		rb: offsetTable(rbd, r.Dims, rs), rc: offsetTable(rcd, r.Dims, rs),
		rf: offsetTable(complementDims(r.Rank(), rbd, rcd), r.Dims, rs),
	}, nil
}

// evalDot computes in the result's element type (the preferred element
// type): floats accumulate in float64 and round once, integers wrap in
// 64 bits and are truncated to the result width.
func evalDot(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	p, err := newDotPlan(in, ops[0].Shape(), ops[1].Shape())
	if err != nil {
		return nil, err
	}
	switch kindOf(in.Shape.DType) {
	case kindFloat:
		return storeFloat64(in.Shape, dotLoop(p, loadFloat64(ops[0]), loadFloat64(ops[1]))), nil
	case kindComplex:
		return storeComplex128(in.Shape, dotLoop(p, loadComplex128(ops[0]), loadComplex128(ops[1]))), nil
	}
	return storeInt64(in.Shape, dotLoop(p, loadInt64(ops[0]), loadInt64(ops[1]))), nil
}

func dotLoop[T float64 | int64 | complex128](p *dotPlan, l, r []T) []T {
	out := make([]T, 0, len(p.lb)*len(p.lf)*len(p.rf))
	for b := range p.lb {
		lb, rb := p.lb[b], p.rb[b]
		for _, lf := range p.lf {
			for _, rf := range p.rf {
				var acc T
				lo, ro := lb+lf, rb+rf
				for k, lc := range p.lc {
					acc += l[lo+lc] * r[ro+p.rc[k]]
				}
				out = append(out, acc)
			}
		}
	}
	return out
}
