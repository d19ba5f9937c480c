package xb

import (
	"strconv"

	"github.com/axle-ml/axle/hlo"
)

// Computation builds a sub-computation with parameters of the given
// shapes: fn receives a fresh builder and its parameters and returns the
// root. The computation is registered in the module; pass it to Emit in a
// to_apply, body, ... attribute, or to Call. Values of the calling
// computation cannot be used inside fn (HLO has no captures): pass them as
// operands. It returns nil after an error.
func (b *Builder) Computation(name string, params []hlo.Shape, fn func(sb *Builder, params []*Op) *Op) *hlo.Computation {
	if b == nil || !b.check("computation") {
		return nil
	}
	if fn == nil {
		b.errorf("computation %s: nil function", name)
		return nil
	}
	sb := b.shared.newBuilder(name)
	sb.sub = true
	ps := make([]*Op, len(params))
	for i, s := range params {
		ps[i] = sb.Parameter("p"+itoa(i), s)
	}
	root := fn(sb, ps)
	if b.shared.err != nil {
		return nil
	}
	if err := sb.finish(root, "computation "+sb.comp.Name); err != nil {
		return nil
	}
	b.shared.subs = append(b.shared.subs, sb.comp)
	return sb.comp
}

func itoa(i int) string { return strconv.Itoa(i) }

// scalarBinary builds the usual reducer shape: (T[], T[]) -> T[].
func (b *Builder) scalarBinary(name string, t hlo.DType, fn func(sb *Builder, x, y *Op) *Op) *hlo.Computation {
	s := hlo.ScalarShape(t)
	return b.Computation(name, []hlo.Shape{s, s}, func(sb *Builder, p []*Op) *Op { return fn(sb, p[0], p[1]) })
}

// Call calls computation c on args.
func Call(c *hlo.Computation, args ...*Op) *Op {
	b := builderOf(args...)
	if b == nil {
		return orphan()
	}
	if c == nil {
		b.errorf("call: nil computation")
		return b.poisoned()
	}
	return b.add(instr{op: hlo.OpCall, operands: args, attrs: []hlo.Attr{{Name: "to_apply", Value: c}}})
}

// CallFunc builds fn as a computation taking args' shapes and calls it.
func CallFunc(name string, fn func(sb *Builder, params []*Op) *Op, args ...*Op) *Op {
	b := builderOf(args...)
	if b == nil || !b.check("call", args...) {
		return poison(b)
	}
	c := b.Computation(name, shapesOf(args), fn)
	if c == nil {
		return b.poisoned()
	}
	return Call(c, args...)
}

func shapesOf(ops []*Op) []hlo.Shape {
	out := make([]hlo.Shape, len(ops))
	for i, o := range ops {
		out[i] = o.Shape()
	}
	return out
}

// poison returns a poisoned op of b, or an orphan when b is nil.
func poison(b *Builder) *Op {
	if b == nil {
		return orphan()
	}
	return b.poisoned()
}
