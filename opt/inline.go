package opt

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// CallInliner replaces every call instruction by a copy of the called
// computation's body (XLA's CallInliner), so the other passes see one flat
// computation. Calls nested in the body are inlined too, since the copies
// land in the caller's instruction list ahead of the scan.
var CallInliner = pass.Func("call-inliner", runCallInliner)

func runCallInliner(m *hlo.Module) (bool, error) {
	names := hlo.NewNameSet(m)
	changed := false
	for _, c := range m.Computations {
		for i := 0; i < len(c.Instructions); i++ {
			in := c.Instructions[i]
			callee := in.Computation("to_apply")
			if in.Opcode != hlo.OpCall || callee == nil || len(in.ControlPredecessors) > 0 {
				continue
			}
			root := inlineBody(c, i, in, callee, names)
			c.ReplaceAllUses(in, root)
			c.RemoveInstructions(map[*hlo.Instruction]bool{in: true})
			i-- // the copies now start at position i
			changed = true
		}
	}
	if changed {
		removeDeadComputations(m)
	}
	return changed, nil
}

// inlineBody copies callee's instructions into c at position at, with the
// parameters bound to call's operands, and returns the copy of the root.
func inlineBody(c *hlo.Computation, at int, call *hlo.Instruction, callee *hlo.Computation, names *hlo.NameSet) *hlo.Instruction {
	copies := map[*hlo.Instruction]*hlo.Instruction{}
	var body []*hlo.Instruction
	for _, in := range callee.Instructions {
		if in.Opcode == hlo.OpParameter {
			copies[in] = call.Operands[in.ParamNumber]
			continue
		}
		cp := *in
		cp.Name = names.Unique(in.Name)
		cp.Parent = c
		cp.Shape = in.Shape.Clone()
		cp.Attrs = slices.Clone(in.Attrs)
		cp.Operands = make([]*hlo.Instruction, len(in.Operands))
		for k, o := range in.Operands {
			cp.Operands[k] = copies[o]
		}
		cp.ControlPredecessors = nil
		for _, p := range in.ControlPredecessors {
			cp.ControlPredecessors = append(cp.ControlPredecessors, copies[p])
		}
		copies[in] = &cp
		body = append(body, &cp)
	}
	c.Instructions = slices.Insert(c.Instructions, at, body...)
	return copies[callee.Root]
}
