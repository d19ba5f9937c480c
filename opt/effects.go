package opt

import "github.com/axle-ml/axle/hlo"

// effects answers "may this instruction be removed or merged with an equal
// one?", as XLA's HasSideEffect does: side-effecting opcodes, custom calls
// that say so, and any instruction whose called computations contain one.
// Collectives count too: their value depends on the other devices, so
// folding one on constants (as if it ran alone) would be wrong.
type effects struct {
	comps map[*hlo.Computation]bool
}

func newEffects() *effects { return &effects{comps: map[*hlo.Computation]bool{}} }

func (e *effects) instruction(in *hlo.Instruction) bool {
	switch {
	case in.Opcode == hlo.OpCustomCall:
		if in.Bool("custom_call_has_side_effect") {
			return true
		}
	case in.Opcode.Has(hlo.SideEffecting), in.Opcode.Has(hlo.Collective):
		return true
	}
	for _, c := range in.CalledComputations() {
		if e.computation(c) {
			return true
		}
	}
	return false
}

func (e *effects) computation(c *hlo.Computation) bool {
	if v, ok := e.comps[c]; ok {
		return v
	}
	e.comps[c] = false // cycles cannot occur in valid HLO; this stops them anyway
	for _, in := range c.Instructions {
		if e.instruction(in) {
			e.comps[c] = true
			return true
		}
	}
	return false
}
