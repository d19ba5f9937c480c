package xb

import (
	"github.com/axle-ml/axle/hlo"
)

// Reverse-mode automatic differentiation over builder graphs.
//
// Grad walks the ops between the wrt ops and y in reverse creation order
// (creation order is a topological order), asking each op's rule for the
// vector-Jacobian products of its operands given the adjoint of its result,
// and sums the contributions that reach each op. The rules build ordinary
// ops on the same builder, so the gradient is part of the same module: the
// optimizer, fusion and the backend see forward and backward pass as one
// computation, as in JAX's jit(grad(f)).

// gradRule returns, for op's result adjoint g, one contribution per
// operand of op (nil where the operand gets none: integer operands, index
// operands, or a zero gradient). Rules may assume g has op's shape.
type gradRule func(op, g *Op) []*Op

// gradRules maps each differentiable opcode to its rule; the grad_*.go
// files fill it in their init functions, one file per op family.
var gradRules = map[hlo.Opcode]gradRule{}

func registerGrad(rule gradRule, ops ...hlo.Opcode) {
	for _, op := range ops {
		gradRules[op] = rule
	}
}

// Grad returns the gradient of the scalar y with respect to each of wrt:
// one op per wrt op, of its shape. y must be a rank-0 floating-point op and
// wrt ops of y's builder with floating-point results; a wrt op y does not
// depend on gets zeros. An op without a gradient rule on the path from a
// wrt op to y records an error naming it, which surfaces at Build.
func Grad(y *Op, wrt ...*Op) []*Op {
	b := builderOf(y)
	if b == nil {
		return poisonAll(nil, len(wrt))
	}
	if !b.check("grad", append([]*Op{y}, wrt...)...) {
		return poisonAll(b, len(wrt))
	}
	if s := y.Shape(); !s.IsArray() || s.Rank() != 0 || !s.DType.IsFloat() {
		b.errorf("grad: y must be a floating-point scalar, got %s", s.HumanString())
		return poisonAll(b, len(wrt))
	}
	return VJP(y, b.ScalarOf(y.DType(), 1), wrt...)
}

// VJP returns the vector-Jacobian products of y with the cotangent seed
// (an op of y's shape) for each of wrt: Grad for a non-scalar y.
func VJP(y, seed *Op, wrt ...*Op) []*Op {
	b := builderOf(y, seed)
	if b == nil {
		return poisonAll(nil, len(wrt))
	}
	if !b.check("vjp", append([]*Op{y, seed}, wrt...)...) {
		return poisonAll(b, len(wrt))
	}
	if !y.Shape().Compatible(seed.Shape()) {
		b.errorf("vjp: seed %s does not have y's shape %s", seed.Shape().HumanString(), y.Shape().HumanString())
		return poisonAll(b, len(wrt))
	}
	for i, w := range wrt {
		if !differentiable(w) {
			b.errorf("grad: wrt %d (%s) is not a floating-point array", i, w)
			return poisonAll(b, len(wrt))
		}
	}
	adj, ok := backward(b, y, seed, wrt)
	if !ok {
		return poisonAll(b, len(wrt))
	}
	out := make([]*Op, len(wrt))
	for i, w := range wrt {
		if g := adj[w]; g != nil {
			out[i] = g
		} else {
			out[i] = b.Zeros(w.DType(), w.Dims()...)
		}
	}
	return out
}

// backward runs the reverse sweep and returns the adjoint of every op on
// a path from a wrt op to y.
func backward(b *Builder, y, seed *Op, wrt []*Op) (map[*Op]*Op, bool) {
	// The forward set: ops that depend on a wrt op through differentiable
	// values. Creation order visits operands before users.
	ops := b.Ops()
	depends := map[*Op]bool{}
	for _, w := range wrt {
		depends[w] = true
	}
	for _, o := range ops {
		if depends[o] || o.stop || !(differentiable(o) || o.Shape().IsTuple()) {
			continue
		}
		for _, in := range o.inputs {
			if depends[in] {
				depends[o] = true
				break
			}
		}
	}
	adj := map[*Op]*Op{y: seed}
	// Tuples carry one adjoint per element: get-tuple-element adds to
	// its slot and the tuple op hands the slots to its operands.
	parts := map[*Op][]*Op{}
	isWrt := map[*Op]bool{}
	for _, w := range wrt {
		isWrt[w] = true
	}
	for i := len(ops) - 1; i >= 0; i-- {
		o := ops[i]
		if !depends[o] {
			continue
		}
		if o.Opcode() == hlo.OpGetTupleElement && o.inputs[0].Shape().IsTuple() {
			if g := adj[o]; g != nil {
				addPart(parts, o.inputs[0], tupleIndex(o), g)
			}
			continue
		}
		if o.Opcode() == hlo.OpTuple {
			for j, g := range parts[o] {
				if g != nil && depends[o.inputs[j]] {
					accumulate(adj, o.inputs[j], g)
				}
			}
			continue
		}
		g := adj[o]
		if o.Shape().IsTuple() && parts[o] != nil {
			b.errorf("grad: no gradient rule for %s (instruction %s) with a tuple result", o.Opcode(), o.in.Name)
			return nil, false
		}
		if g == nil || len(o.inputs) == 0 {
			continue
		}
		if isWrt[o] && !anyDepends(o.inputs, depends) {
			continue
		}
		rule := gradRules[o.Opcode()]
		if rule == nil {
			b.errorf("grad: no gradient rule for %s (instruction %s)", o.Opcode(), o.in.Name)
			return nil, false
		}
		contrib := rule(o, g)
		if b.shared.err != nil {
			return nil, false
		}
		for j, in := range o.inputs {
			if j >= len(contrib) || contrib[j] == nil || !depends[in] {
				continue
			}
			c := contrib[j]
			if !c.Shape().Compatible(in.Shape()) {
				b.errorf("grad: the rule for %s gave operand %d a gradient of shape %s, want %s",
					o.in.Name, j, c.Shape().HumanString(), in.Shape().HumanString())
				return nil, false
			}
			accumulate(adj, in, c)
		}
	}
	return adj, true
}

// accumulate adds c to the adjoint of o: an op used several times gets
// the sum of its users' contributions.
func accumulate(adj map[*Op]*Op, o, c *Op) {
	if prev := adj[o]; prev != nil {
		c = Add(prev, c)
	}
	adj[o] = c
}

// addPart adds g to element i of the tuple t's adjoint.
func addPart(parts map[*Op][]*Op, t *Op, i int, g *Op) {
	p := parts[t]
	if p == nil {
		p = make([]*Op, len(t.Shape().Tuple))
		parts[t] = p
	}
	if p[i] != nil {
		g = Add(p[i], g)
	}
	p[i] = g
}

func anyDepends(ops []*Op, depends map[*Op]bool) bool {
	for _, o := range ops {
		if depends[o] {
			return true
		}
	}
	return false
}

// differentiable reports whether gradients flow through o's value: a
// floating-point array (integers, predicates and tuples carry none).
func differentiable(o *Op) bool {
	s := o.Shape()
	return s.IsArray() && s.DType.IsFloat()
}

func poisonAll(b *Builder, n int) []*Op {
	out := make([]*Op, n)
	for i := range out {
		out[i] = poison(b)
	}
	return out
}

// tupleIndex is the index attribute of a get-tuple-element.
func tupleIndex(o *Op) int {
	i, _ := o.in.Int("index")
	return int(i)
}
