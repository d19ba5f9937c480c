package xb

import (
	"github.com/axle-ml/axle/hlo"
)

// Gradients of windowed reductions: a windowed sum's adjoint spreads each
// output adjoint over its window (the adjoint padded and summed over
// windows again, as a transposed convolution with a window of ones); a
// windowed max or min sends each output adjoint to the element the window
// selected, which is XLA's select-and-scatter.

func init() {
	registerGrad(gradReduceWindow, hlo.OpReduceWindow)
}

// SelectAndScatter scatters each element of source to the operand
// position that selectFn picks in its window (the first of a window for
// which selectFn(best, candidate) stays true against every later
// candidate), combining with scatterFn into a result that starts as init
// everywhere. With selectFn ≥ and scatterFn + it is the gradient of max
// pooling.
func SelectAndScatter(operand, source, init *Op, selectFn func(sb *Builder, a, b *Op) *Op, scatterFn Reducer, w Window) *Op {
	b := builderOf(operand, source, init)
	if b == nil || !b.check("select-and-scatter", operand, source, init) {
		return poison(b)
	}
	hw, ok := w.toHLO(operand.Rank())
	if !ok {
		b.errorf("select-and-scatter: the window has %d sizes, %d strides and %d paddings for an operand of rank %d",
			len(w.Sizes), len(w.Strides), len(w.Padding), operand.Rank())
		return b.poisoned()
	}
	if selectFn == nil || scatterFn == nil {
		b.errorf("select-and-scatter: nil select or scatter function")
		return b.poisoned()
	}
	t := operand.DType()
	sel := b.Computation("select", []hlo.Shape{hlo.ScalarShape(t), hlo.ScalarShape(t)},
		func(sb *Builder, p []*Op) *Op { return selectFn(sb, p[0], p[1]) })
	sc := b.scalarBinary("scatter", t, scatterFn)
	if sel == nil || sc == nil {
		return b.poisoned()
	}
	return b.add(instr{op: hlo.OpSelectAndScatter, operands: []*Op{operand, source, init},
		attrs: []hlo.Attr{{Name: "window", Value: hw}, {Name: "select", Value: sel}, {Name: "scatter", Value: sc}}})
}

func gradReduceWindow(z, g *Op) []*Op {
	if len(z.inputs) != 2 {
		z.b.errorf("grad: no gradient rule for a variadic reduce-window (instruction %s)", z.in.Name)
		return nil
	}
	x := z.inputs[0]
	hw := z.in.Window()
	if hw == nil {
		z.b.errorf("grad: reduce-window %s has no window", z.in.Name)
		return nil
	}
	w := Window{}
	for _, d := range hw.Dims {
		if unit(d.LhsDilation) != 1 || unit(d.RhsDilation) != 1 || d.Reversal {
			z.b.errorf("grad: no gradient rule for a dilated or reversed reduce-window (instruction %s)", z.in.Name)
			return nil
		}
		w.Sizes = append(w.Sizes, d.Size)
		w.Strides = append(w.Strides, unit(d.Stride))
		w.Padding = append(w.Padding, [2]int64{d.PadLo, d.PadHi})
	}
	op, ok := hlo.Combiner(z.in.Computation("to_apply"))
	switch {
	case ok && op == hlo.OpAdd:
		// The init value is added once into every result element.
		return []*Op{windowSumGrad(x, g, hw), ReduceSum(g, AllAxes(g)...)}
	case ok && op == hlo.OpMaximum:
		return []*Op{SelectAndScatter(x, g, like(g, 0), func(_ *Builder, a, c *Op) *Op { return Ge(a, c) }, addReducer, w), nil}
	case ok && op == hlo.OpMinimum:
		return []*Op{SelectAndScatter(x, g, like(g, 0), func(_ *Builder, a, c *Op) *Op { return Le(a, c) }, addReducer, w), nil}
	}
	z.b.errorf("grad: no gradient rule for reduce-window with body %s (instruction %s): only add, maximum and minimum",
		z.in.Computation("to_apply").Name, z.in.Name)
	return nil
}

// windowSumGrad: each input element receives the sum of the adjoints of
// the windows covering it, which is a unit-stride windowed sum over the
// adjoint spread out by the stride (interior padding) and padded so that
// every input position sees each window that covered it.
func windowSumGrad(x, g *Op, hw *hlo.Window) *Op {
	cfg := make(hlo.PaddingConfig, len(hw.Dims))
	w := Window{}
	for d, wd := range hw.Dims {
		in, out := x.Shape().Dims[d], g.Shape().Dims[d]
		before := wd.Size - wd.PadLo - 1
		after := in + wd.Size - 1 - dilated(out, unit(wd.Stride)) - before
		cfg[d] = hlo.PadDim{Lo: before, Hi: after, Interior: unit(wd.Stride) - 1}
		w.Sizes = append(w.Sizes, wd.Size)
	}
	spread := Pad(g, like(g, 0), cfg)
	return ReduceWindow(spread, like(g, 0), addReducer, w)
}

func addReducer(_ *Builder, a, b *Op) *Op { return Add(a, b) }
