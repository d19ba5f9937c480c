package xb

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// The gradient of a call: the called computation is inlined on the call's
// operands (its value recomputed, as a rematerialization) and the inlined
// ops are differentiated like any others, so every rule serves inside
// calls too.

func init() {
	registerGrad(gradCall, hlo.OpCall)
}

func gradCall(z, g *Op) []*Op {
	c := z.in.Computation("to_apply")
	if c == nil {
		z.b.errorf("grad: call %s has no computation", z.in.Name)
		return nil
	}
	root := inline(z.b, c, z.inputs)
	if root == nil || root.Poisoned() {
		return nil
	}
	var wrt []int
	for i, in := range z.inputs {
		if differentiable(in) {
			wrt = append(wrt, i)
		}
	}
	ops := make([]*Op, len(wrt))
	for k, i := range wrt {
		ops[k] = z.inputs[i]
	}
	grads := VJP(root, g, ops...)
	out := make([]*Op, len(z.inputs))
	for k, i := range wrt {
		out[i] = grads[k]
	}
	return out
}

// inline adds c's instructions to b with its parameters replaced by args
// and returns the op of c's root (nil when an instruction cannot be
// re-added, with the error recorded). Computations c calls are shared,
// not copied: they belong to the same module.
func inline(b *Builder, c *hlo.Computation, args []*Op) *Op {
	ops := map[*hlo.Instruction]*Op{}
	for _, in := range c.Instructions {
		var o *Op
		switch in.Opcode {
		case hlo.OpParameter:
			if int(in.ParamNumber) >= len(args) {
				b.errorf("grad: computation %s reads parameter %d of %d arguments", c.Name, in.ParamNumber, len(args))
				return nil
			}
			o = args[in.ParamNumber]
		case hlo.OpConstant:
			o = b.Constant(in.Literal)
		default:
			operands := make([]*Op, len(in.Operands))
			for i, x := range in.Operands {
				operands[i] = ops[x]
				if operands[i] == nil {
					b.errorf("grad: computation %s uses %s before it is defined", c.Name, x.Name)
					return nil
				}
			}
			o = b.add(instr{op: in.Opcode, operands: operands, attrs: slices.Clone(in.Attrs), shape: in.Shape.Clone(), name: in.Name})
		}
		if o.Poisoned() {
			return nil
		}
		ops[in] = o
	}
	return ops[c.Root]
}
