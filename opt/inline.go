package opt

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// CallInliner replaces call instructions by copies of the called
// computation's body (XLA's CallInliner), so the other passes see one flat
// computation. It visits the computations callees first, as XLA does, so
// that a body it copies has had its own calls inlined already.
//
// Inlining works within a size budget (inlineBudget): a computation called
// from k sites is copied k times, and a chain of computations each calling
// the next twice doubles at every level, so that 31 levels of four
// instructions would become 2^30 copies. A call the budget does not admit
// stays a call, which the evaluator and the cpu backend both run, and is
// marked frontend_attributes={inlineable="false"}: XLA's CallInliner leaves
// such calls alone, and so does this pass when it runs again
// (fix-call-inliner), rather than spend a fresh budget on the same calls
// each round.
var CallInliner = pass.Func("call-inliner", runCallInliner)

func runCallInliner(m *hlo.Module) (bool, error) {
	return inlineCalls(m, minInlineBudget), nil
}

// inlineCalls is the pass with the budget's floor as a parameter, so that
// tests reach the budget with small modules.
func inlineCalls(m *hlo.Module, floor int) bool {
	names := hlo.NewNameSet(m)
	live := liveComputations(m)
	b := newInlineBudget(m, live, floor)
	changed := false
	for _, c := range live {
		changed = inlineInto(c, b, names) || changed
	}
	if changed {
		removeDeadComputations(m)
	}
	return changed
}

// inlineInto inlines the calls of c the budget admits and marks the
// others, rebuilding c's instruction list once (splicing each body in
// place of its call would move the rest of the list for every call).
func inlineInto(c *hlo.Computation, b *inlineBudget, names *hlo.NameSet) bool {
	changed := false
	replaced := map[*hlo.Instruction]*hlo.Instruction{}
	out := make([]*hlo.Instruction, 0, len(c.Instructions))
	for _, in := range c.Instructions {
		callee := in.Computation("to_apply")
		if in.Opcode != hlo.OpCall || callee == nil || len(in.ControlPredecessors) > 0 || !inlineable(in) {
			out = append(out, in)
			continue
		}
		changed = true
		if !b.admits(callee) {
			markNotInlineable(in)
			out = append(out, in)
			continue
		}
		var root *hlo.Instruction
		out, root = appendBody(out, c, in, callee, names)
		replaced[in] = root
		b.inlined(callee)
	}
	c.Instructions = out
	if len(replaced) > 0 {
		redirect(c, replaced)
	}
	return changed
}

// appendBody appends copies of callee's instructions to out, with the
// parameters bound to call's operands, and returns the copy of the root.
// (Operands that are themselves inlined calls are redirected afterwards.)
func appendBody(out []*hlo.Instruction, c *hlo.Computation, call *hlo.Instruction, callee *hlo.Computation, names *hlo.NameSet) ([]*hlo.Instruction, *hlo.Instruction) {
	copies := map[*hlo.Instruction]*hlo.Instruction{}
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
		out = append(out, &cp)
	}
	return out, copies[callee.Root]
}

// redirect makes every use of an inlined call (operand, control
// predecessor, root) use its body's root instead. A root may itself be an
// inlined call (a callee returning its parameter), hence the chase.
func redirect(c *hlo.Computation, replaced map[*hlo.Instruction]*hlo.Instruction) {
	resolve := func(in *hlo.Instruction) *hlo.Instruction {
		for {
			r, ok := replaced[in]
			if !ok {
				return in
			}
			in = r
		}
	}
	for _, in := range c.Instructions {
		for k, o := range in.Operands {
			in.Operands[k] = resolve(o)
		}
		for k, p := range in.ControlPredecessors {
			in.ControlPredecessors[k] = resolve(p)
		}
	}
	c.Root = resolve(c.Root)
}

// liveComputations lists the computations the entry reaches (all of
// them in a module without one), callees before callers.
func liveComputations(m *hlo.Module) []*hlo.Computation {
	seen := map[*hlo.Computation]bool{}
	var order []*hlo.Computation
	var visit func(c *hlo.Computation)
	visit = func(c *hlo.Computation) {
		if c == nil || seen[c] {
			return
		}
		seen[c] = true
		for _, in := range c.Instructions {
			for _, cc := range in.CalledComputations() {
				visit(cc)
			}
		}
		order = append(order, c)
	}
	if m.Entry != nil {
		visit(m.Entry)
		return order
	}
	for _, c := range m.Computations {
		visit(c)
	}
	return order
}
