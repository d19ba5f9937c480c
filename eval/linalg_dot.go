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
	ls, rs := hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(r.Dims)
	return &dotPlan{
		lb: offsetTable(lbd, l.Dims, ls), lc: offsetTable(lcd, l.Dims, ls),
		lf: offsetTable(complementDims(l.Rank(), lbd, lcd), l.Dims, ls),
		rb: offsetTable(rbd, r.Dims, rs), rc: offsetTable(rcd, r.Dims, rs),
		rf: offsetTable(complementDims(r.Rank(), rbd, rcd), r.Dims, rs),
	}, nil
}

// evalDot computes in the result's element type (the preferred element
// type) and accumulates as XLA's CPU backend does (see linalg_accum.go):
// in contracting-index order, each product fused into the running sum.
func evalDot(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	p, err := newDotPlan(in, ops[0].Shape(), ops[1].Shape())
	if err != nil {
		return nil, err
	}
	s := in.Shape
	l, r := AccumOperand(ops[0], s.DType), AccumOperand(ops[1], s.DType)
	return accumulationFor(s.DType).dot(p, s, l, r), nil
}

func (m *macOps[T]) dot(p *dotPlan, s hlo.Shape, l, r *hlo.Literal) *hlo.Literal {
	return m.store(s, dotLoop(p, m.load(l), m.load(r), m.dotSum))
}

func dotLoop[T any](p *dotPlan, l, r []T, run dotRun[T]) []T {
	out := make([]T, 0, len(p.lb)*len(p.lf)*len(p.rf))
	var zero T
	for b := range p.lb {
		lb, rb := p.lb[b], p.rb[b]
		for _, lf := range p.lf {
			for _, rf := range p.rf {
				out = append(out, run(zero, l, r, lb+lf, rb+rf, p.lc, p.rc))
			}
		}
	}
	return out
}
