package opt

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// CSE merges instructions that compute the same value (XLA's HloCSE): same
// opcode, shape with layout, attributes, operands and, for called
// computations, equal bodies. Instructions with side effects (rng
// included) are never merged, nor are parameters or instructions with
// control edges; constants merge when their literals are equal.
var CSE = pass.Func("cse", runCSE)

func runCSE(m *hlo.Module) (bool, error) {
	fx := newEffects()
	keys := newCSEKeys()
	changed := false
	for _, c := range m.Computations {
		changed = cseComputation(c, fx, keys) || changed
	}
	if changed {
		// Merged-away instructions are now unused.
		for _, c := range m.Computations {
			removeDeadInstructions(c, fx)
		}
	}
	return changed, nil
}

func cseComputation(c *hlo.Computation, fx *effects, keys *cseKeys) bool {
	seen := map[string][]*hlo.Instruction{}
	uses := c.UseIndex()
	changed := false
	for _, in := range c.Instructions {
		if !cseCandidate(in, fx) {
			continue
		}
		key := keys.key(in)
		found := false
		for _, prev := range seen[key] {
			if in.Opcode != hlo.OpConstant || prev.Literal.Equal(in.Literal) {
				changed = uses.ReplaceAllUses(in, prev) || changed
				found = true
				break
			}
		}
		if !found {
			seen[key] = append(seen[key], in)
		}
	}
	return changed
}

func cseCandidate(in *hlo.Instruction, fx *effects) bool {
	switch {
	case in.Opcode == hlo.OpParameter, len(in.ControlPredecessors) > 0, fx.instruction(in):
		return false
	case in.Opcode == hlo.OpConstant:
		return in.Literal != nil && !in.Literal.IsElided()
	}
	return true
}
