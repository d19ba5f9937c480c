package eval

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

func init() {
	register(evalReduce, hlo.OpReduce)
	register(evalReduceWindow, hlo.OpReduceWindow)
}

// resultLeaves returns the N array shapes of a variadic reduction's
// result: the tuple's elements, or the one array shape.
func resultLeaves(s hlo.Shape, n int) ([]hlo.Shape, error) {
	if !s.IsTuple() {
		if n != 1 {
			return nil, fmt.Errorf("%d inputs but result shape %s is not a tuple", n, s)
		}
		return []hlo.Shape{s}, nil
	}
	if len(s.Tuple) != n {
		return nil, fmt.Errorf("%d inputs but result tuple has %d elements", n, len(s.Tuple))
	}
	return s.Tuple, nil
}

// packResult is the inverse of resultLeaves.
func packResult(s hlo.Shape, outs []*hlo.Literal) *hlo.Literal {
	if s.IsTuple() {
		return hlo.MakeTupleLiteral(outs...)
	}
	return outs[0]
}

// accumulator folds elements into N running values with a reducer
// computation, taking (acc..., elem...) and returning the new acc (a tuple
// when N > 1).
type accumulator struct {
	e    *Evaluator
	comp *hlo.Computation
	acc  []*hlo.Literal
	args []*hlo.Literal
	fast *floatFold // non-nil: fold in float64 without computation calls
}

func newAccumulator(e *Evaluator, comp *hlo.Computation, inputs, inits []*hlo.Literal) *accumulator {
	n := len(inputs)
	return &accumulator{e: e, comp: comp, acc: make([]*hlo.Literal, n), args: make([]*hlo.Literal, 2*n),
		fast: newFloatFold(comp, inputs, inits)}
}

func (a *accumulator) reset(inits []*hlo.Literal) {
	if a.fast != nil {
		a.fast.acc = a.fast.init
		return
	}
	for i, l := range inits {
		a.acc[i] = scalarAt(l, 0)
	}
}

// store writes the accumulated values to element o of outs.
func (a *accumulator) store(outs []*hlo.Literal, o int) {
	if a.fast != nil {
		outs[0].SetFloat64(o, a.fast.acc)
		return
	}
	for i := range outs {
		setFrom(outs[i], o, a.acc[i], 0)
	}
}

func (a *accumulator) add(inputs []*hlo.Literal, at int) error {
	if a.fast != nil {
		a.fast.add(at)
		return nil
	}
	n := len(a.acc)
	copy(a.args, a.acc)
	for i, l := range inputs {
		a.args[n+i] = scalarAt(l, at)
	}
	r, err := a.e.Computation(a.comp, a.args...)
	if err != nil {
		return err
	}
	if n == 1 && !r.Shape().IsTuple() {
		a.acc[0] = r
		return nil
	}
	copy(a.acc, r.Elements())
	return nil
}

// evalReduce folds the reduced dimensions of each output position in
// row-major order, starting from the init values, as XLA's evaluator does
// (the spec leaves the order unspecified).
func evalReduce(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	n := len(ops) / 2
	inputs, inits := ops[:n], ops[n:]
	leaves, err := resultLeaves(in.Shape, n)
	if err != nil {
		return nil, err
	}
	s := inputs[0].Shape()
	dims := in.Dimensions()
	st := hlo.RowMajorStrides(s.Dims)
	kept := offsetTable(complementDims(s.Rank(), dims), s.Dims, st)
	red := offsetTable(dims, s.Dims, st)
	outs := make([]*hlo.Literal, n)
	for i := range outs {
		outs[i] = hlo.NewLiteral(leaves[i])
	}
	acc := newAccumulator(e, in.Computation("to_apply"), inputs, inits)
	for o, base := range kept {
		acc.reset(inits)
		for _, r := range red {
			if err := acc.add(inputs, base+r); err != nil {
				return nil, err
			}
		}
		acc.store(outs, o)
	}
	return packResult(in.Shape, outs), nil
}
