package xb

import (
	"github.com/axle-ml/axle/hlo"
)

// Body is a sub-computation of one parameter, such as a while loop's
// condition and body or a conditional's branch.
type Body func(sb *Builder, x *Op) *Op

// oneParam builds fn as a computation of one parameter of shape s.
func (b *Builder) oneParam(name string, s hlo.Shape, fn Body) *hlo.Computation {
	if fn == nil {
		b.errorf("%s: nil function", name)
		return nil
	}
	return b.Computation(name, []hlo.Shape{s}, func(sb *Builder, p []*Op) *Op { return fn(sb, p[0]) })
}

// While runs body on the state while cond (returning pred[]) holds,
// starting from init. The state is usually a tuple: pack it with
// Builder.Tuple and unpack it with GetTupleElement.
func While(init *Op, cond, body Body) *Op {
	b := builderOf(init)
	if b == nil || !b.check("while", init) {
		return poison(b)
	}
	s := init.Shape()
	c := b.oneParam("condition", s, cond)
	if c == nil {
		return b.poisoned()
	}
	bd := b.oneParam("body", s, body)
	if bd == nil {
		return b.poisoned()
	}
	return b.add(instr{op: hlo.OpWhile, operands: []*Op{init}, attrs: []hlo.Attr{{Name: "condition", Value: c}, {Name: "body", Value: bd}}})
}

// Cond computes onTrue(trueArg) when pred (a pred[] scalar) holds, else
// onFalse(falseArg). Both branches must return the same shape.
func Cond(pred, trueArg *Op, onTrue Body, falseArg *Op, onFalse Body) *Op {
	b := builderOf(pred, trueArg, falseArg)
	if b == nil || !b.check("conditional", pred, trueArg, falseArg) {
		return poison(b)
	}
	t := b.oneParam("on_true", trueArg.Shape(), onTrue)
	if t == nil {
		return b.poisoned()
	}
	f := b.oneParam("on_false", falseArg.Shape(), onFalse)
	if f == nil {
		return b.poisoned()
	}
	return b.add(instr{op: hlo.OpConditional, operands: []*Op{pred, trueArg, falseArg},
		attrs: []hlo.Attr{{Name: "true_computation", Value: t}, {Name: "false_computation", Value: f}}})
}

// Switch computes branches[index](args[index]) for an s32[] index; an
// index out of range runs the last branch (HLO's semantics).
func Switch(index *Op, args []*Op, branches ...Body) *Op {
	b := builderOf(append([]*Op{index}, args...)...)
	if b == nil || !b.check("conditional", append([]*Op{index}, args...)...) {
		return poison(b)
	}
	if len(args) != len(branches) || len(branches) == 0 {
		b.errorf("conditional: %d branches and %d arguments", len(branches), len(args))
		return b.poisoned()
	}
	cs := make([]*hlo.Computation, len(branches))
	for i, fn := range branches {
		cs[i] = b.oneParam("branch_"+itoa(i), args[i].Shape(), fn)
		if cs[i] == nil {
			return b.poisoned()
		}
	}
	return b.add(instr{op: hlo.OpConditional, operands: append([]*Op{index}, args...),
		attrs: []hlo.Attr{{Name: "branch_computations", Value: cs}}})
}

// RNG algorithms of RngBitGenerator.
const (
	RngDefault  = "rng_default"
	RngPhilox   = "rng_philox"
	RngThreeFry = "rng_three_fry"
)

// RngBitGenerator draws random bits of shape (type t, dimensions dims)
// from state, a u64 vector (the key first: u64[2] for philox and
// three-fry), and returns the bits and the next state. The function is
// pure: the same state gives the same bits, so randomness is explicit
// and reproducible.
func RngBitGenerator(state *Op, algorithm string, t hlo.DType, dims ...int64) (bits, next *Op) {
	b := builderOf(state)
	if b == nil || !b.check("rng-bit-generator", state) {
		p := poison(b)
		return p, p
	}
	switch algorithm {
	case RngDefault, RngPhilox, RngThreeFry:
	default:
		b.errorf("rng-bit-generator: unknown algorithm %q", algorithm)
		return b.poisoned(), b.poisoned()
	}
	if !t.IsUnsigned() && !t.IsSigned() {
		b.errorf("rng-bit-generator: bits must be an integer type, not %s", t)
		return b.poisoned(), b.poisoned()
	}
	out := hlo.TupleShape(state.Shape(), hlo.ArrayShape(t, dims...))
	r := b.add(instr{op: hlo.OpRngBitGenerator, operands: []*Op{state}, shape: out,
		attrs: []hlo.Attr{{Name: "algorithm", Value: hlo.Enum(algorithm)}}})
	return GetTupleElement(r, 1), GetTupleElement(r, 0)
}
