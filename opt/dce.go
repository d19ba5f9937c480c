package opt

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// DCE removes dead code (XLA's HloDCE): instructions whose values nothing
// uses and that have no side effect, computations nothing calls, and
// unused parameters of computations only ever called by call or fusion
// instructions (whose callers then drop the matching operand).
var DCE = pass.Func("dce", runDCE)

func runDCE(m *hlo.Module) (bool, error) {
	fx := newEffects()
	changed := false
	for _, c := range m.Computations {
		changed = removeDeadInstructions(c, fx) || changed
	}
	changed = removeDeadParameters(m) || changed
	if changed {
		// Dropping operands can leave more instructions dead.
		for _, c := range m.Computations {
			removeDeadInstructions(c, fx)
		}
	}
	return removeDeadComputations(m) || changed, nil
}

// removeDeadInstructions keeps what the root, control edges and
// side-effecting instructions need, and every parameter (the signature).
func removeDeadInstructions(c *hlo.Computation, fx *effects) bool {
	live := make(map[*hlo.Instruction]bool, len(c.Instructions))
	var mark func(in *hlo.Instruction)
	mark = func(in *hlo.Instruction) {
		if in == nil || live[in] {
			return
		}
		live[in] = true
		for _, o := range in.Operands {
			mark(o)
		}
		for _, o := range in.ControlPredecessors {
			mark(o)
		}
	}
	mark(c.Root)
	for _, in := range c.Instructions {
		if in.Opcode == hlo.OpParameter || fx.instruction(in) {
			mark(in)
		}
	}
	dead := map[*hlo.Instruction]bool{}
	for _, in := range c.Instructions {
		if !live[in] {
			dead[in] = true
		}
	}
	// A dead instruction may still be a control predecessor of another
	// dead one only; nothing live refers to it.
	c.RemoveInstructions(dead)
	return len(dead) > 0
}

// removeDeadComputations drops computations not reachable from the entry.
func removeDeadComputations(m *hlo.Module) bool { return m.RemoveUnreachableComputations() }

// removeDeadParameters drops unused parameters of computations whose
// every caller is a call or fusion instruction, renumbering the rest.
func removeDeadParameters(m *hlo.Module) bool {
	callers := map[*hlo.Computation][]*hlo.Instruction{}
	pinned := map[*hlo.Computation]bool{m.Entry: true}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			for _, cc := range in.CalledComputations() {
				if (in.Opcode == hlo.OpCall || in.Opcode == hlo.OpFusion) && len(in.CalledComputations()) == 1 {
					callers[cc] = append(callers[cc], in)
				} else {
					pinned[cc] = true
				}
			}
		}
	}
	changed := false
	for c, calls := range callers {
		if !pinned[c] {
			changed = dropUnusedParams(c, calls) || changed
		}
	}
	return changed
}

func dropUnusedParams(c *hlo.Computation, calls []*hlo.Instruction) bool {
	used := map[*hlo.Instruction]bool{c.Root: true}
	for _, in := range c.Instructions {
		for _, o := range in.Operands {
			used[o] = true
		}
		for _, o := range in.ControlPredecessors {
			used[o] = true
		}
	}
	var keep []int
	dead := map[*hlo.Instruction]bool{}
	for i, p := range c.Params {
		if p == nil || used[p] {
			keep = append(keep, i)
		} else {
			dead[p] = true
		}
	}
	if len(dead) == 0 {
		return false
	}
	params := make([]*hlo.Instruction, len(keep))
	for j, i := range keep {
		params[j] = c.Params[i]
		if p := params[j]; p != nil {
			p.ParamNumber = int64(j)
		}
	}
	c.Params = params
	c.RemoveInstructions(dead)
	for _, call := range calls {
		ops := make([]*hlo.Instruction, len(keep))
		for j, i := range keep {
			ops[j] = call.Operands[i]
		}
		call.Operands = ops
	}
	return true
}

// removeDead drops the instructions a rewrite left unused, in every
// computation: the common last step of the passes.
func removeDead(m *hlo.Module) {
	fx := newEffects()
	for _, c := range m.Computations {
		removeDeadInstructions(c, fx)
	}
}
