package hlo

// Combiner recognises the body shape that reductions and scatters nearly
// always have: one binary op applied to the computation's two scalar
// parameters, in either order. It returns that opcode; for a body whose
// root is parameter 1 itself (scatter's "overwrite" combiner) it returns
// OpParameter. Any other body (more arithmetic, constants, a parameter
// used twice, non-scalar values) gives ok = false.
//
// The evaluator's fast paths, the CPU backend's kernels and autodiff's
// rules all key on this one recognition; callers check which opcodes they
// handle and the element type they need.
func Combiner(c *Computation) (op Opcode, ok bool) {
	if c == nil || c.Root == nil || len(c.Params) != 2 {
		return OpInvalid, false
	}
	r := c.Root
	if !r.Shape.IsScalar() {
		return OpInvalid, false
	}
	if r.Opcode == OpParameter {
		return OpParameter, r.ParamNumber == 1
	}
	if len(r.Operands) != 2 {
		return OpInvalid, false
	}
	a, b := r.Operands[0], r.Operands[1]
	if a.Opcode != OpParameter || b.Opcode != OpParameter || a.ParamNumber == b.ParamNumber {
		return OpInvalid, false
	}
	return r.Opcode, true
}
