package opt

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// LoopInvariantCodeMotion hoists computations out of while bodies when
// they depend only on loop-invariant state (elements the body passes
// through unchanged) and constants (XLA's WhileLoopInvariantCodeMotion).
// A hoisted value is computed once before the loop from the initial state
// and carried in a new element of the loop state. Cheap or size-inflating
// ops (broadcast, iota, reshape, constants, tuple plumbing) stay inside, as
// XLA's default does, and bodies shared by several loops are left alone.
var LoopInvariantCodeMotion = pass.Func("while-licm", runLICM)

func runLICM(m *hlo.Module) (bool, error) {
	fx := newEffects()
	calls := callCounts(m)
	names := hlo.NewNameSet(m)
	changed := false
	for _, c := range m.Computations {
		for _, w := range slices.Clone(c.Instructions) {
			if w.Opcode != hlo.OpWhile || len(w.ControlPredecessors) > 0 {
				continue
			}
			body, cond := w.Computation("body"), w.Computation("condition")
			if body == nil || cond == nil || calls[body] != 1 || calls[cond] != 1 || body == cond {
				continue
			}
			if hoistInvariants(c, w, body, cond, fx, names) {
				changed = true
			}
		}
		if err := c.SortTopologically(); err != nil {
			return changed, err
		}
	}
	if changed {
		removeDead(m)
	}
	return changed, nil
}

// callCounts counts the instructions calling each computation.
func callCounts(m *hlo.Module) map[*hlo.Computation]int {
	n := map[*hlo.Computation]int{}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			for _, cc := range in.CalledComputations() {
				n[cc]++
			}
		}
	}
	return n
}

// stays lists the ops not worth hoisting on their own.
func stays(in *hlo.Instruction) bool {
	switch in.Opcode {
	case hlo.OpConstant, hlo.OpBroadcast, hlo.OpIota, hlo.OpReshape, hlo.OpBitcast, hlo.OpTuple,
		hlo.OpGetTupleElement, hlo.OpParameter, hlo.OpWhile:
		return true
	}
	return false
}

func hoistInvariants(c *hlo.Computation, w *hlo.Instruction, body, cond *hlo.Computation, fx *effects, names *hlo.NameSet) bool {
	root, param := body.Root, body.Param(0)
	if root == nil || root.Opcode != hlo.OpTuple || param == nil || !w.Shape.IsTuple() {
		return false
	}
	invariant := map[*hlo.Instruction]bool{}
	for _, in := range body.Instructions {
		switch {
		case in.Opcode == hlo.OpGetTupleElement && in.Operands[0] == param:
			idx, _ := in.Int("index")
			o := root.Operands[idx]
			oi, _ := o.Int("index")
			invariant[in] = o.Opcode == hlo.OpGetTupleElement && o.Operands[0] == param && oi == idx
		case in.Opcode == hlo.OpConstant:
			invariant[in] = true
		case in.Opcode != hlo.OpParameter && len(in.Operands) > 0 && !fx.instruction(in) && len(in.ControlPredecessors) == 0 && !in.Shape.IsTuple():
			ok := true
			for _, o := range in.Operands {
				ok = ok && invariant[o]
			}
			invariant[in] = ok
		}
	}
	// Hoist the invariant values that feed variant code or the root.
	var hoist []*hlo.Instruction
	seen := map[*hlo.Instruction]bool{}
	for _, in := range body.Instructions {
		if invariant[in] {
			continue
		}
		for _, o := range in.Operands {
			if invariant[o] && !stays(o) && !seen[o] {
				seen[o] = true
				hoist = append(hoist, o)
			}
		}
	}
	if len(hoist) == 0 {
		return false
	}
	return moveOut(c, w, body, cond, hoist, invariant, names)
}

// moveOut computes the hoisted values before w, widens the loop state by
// one element per value, and makes the body read them from there.
func moveOut(c *hlo.Computation, w *hlo.Instruction, body, cond *hlo.Computation, hoist []*hlo.Instruction, invariant map[*hlo.Instruction]bool, names *hlo.NameSet) bool {
	init := w.Operands[0]
	n := len(w.Shape.Tuple)
	outside := map[*hlo.Instruction]*hlo.Instruction{}
	elems := make([]*hlo.Instruction, 0, n+len(hoist))
	var clone func(in *hlo.Instruction) *hlo.Instruction
	clone = func(in *hlo.Instruction) *hlo.Instruction {
		if v, ok := outside[in]; ok {
			return v
		}
		cp := *in
		cp.Name = names.Unique(in.Name)
		cp.Parent = c
		cp.Attrs = slices.Clone(in.Attrs)
		cp.Operands = make([]*hlo.Instruction, len(in.Operands))
		if in.Opcode == hlo.OpGetTupleElement && in.Operands[0] == body.Param(0) {
			idx, _ := in.Int("index")
			outside[in] = elems[idx] // the initial value of an invariant element
			return elems[idx]
		} else {
			for i, o := range in.Operands {
				cp.Operands[i] = clone(o)
			}
		}
		outside[in] = c.AddInstruction(&cp)
		return outside[in]
	}
	shapes := slices.Clone(w.Shape.Tuple)
	for i := range n {
		g := &hlo.Instruction{Name: names.Unique("get-tuple-element"), Opcode: hlo.OpGetTupleElement, Shape: w.Shape.Tuple[i].Clone(),
			Operands: []*hlo.Instruction{init}, Attrs: []hlo.Attr{{Name: "index", Value: int64(i)}}}
		elems = append(elems, c.AddInstruction(g))
	}
	for _, h := range hoist {
		elems = append(elems, clone(h))
		shapes = append(shapes, h.Shape.Clone())
	}
	state := hlo.TupleShape(shapes...)
	newInit := c.AddInstruction(&hlo.Instruction{Name: names.Unique("tuple"), Opcode: hlo.OpTuple, Shape: state, Operands: elems})
	// Inside: read each hoisted value from its new element and pass it on.
	param := body.Param(0)
	param.Shape = state.Clone()
	cond.Param(0).Shape = state.Clone()
	root := body.Root
	for k, h := range hoist {
		g := body.AddInstruction(&hlo.Instruction{Name: names.Unique("get-tuple-element"), Opcode: hlo.OpGetTupleElement,
			Shape: h.Shape.Clone(), Operands: []*hlo.Instruction{param}, Attrs: []hlo.Attr{{Name: "index", Value: int64(n + k)}}})
		body.ReplaceAllUses(h, g)
		root.Operands = append(root.Operands, g)
	}
	root.Shape = state.Clone()
	_ = body.SortTopologically()
	// The new loop, and the old state's shape rebuilt for w's users.
	old := w.Shape.Clone()
	w.Operands[0] = newInit
	w.Shape = state.Clone()
	outs := make([]*hlo.Instruction, n)
	for i := range n {
		outs[i] = c.AddInstruction(&hlo.Instruction{Name: names.Unique("get-tuple-element"), Opcode: hlo.OpGetTupleElement,
			Shape: old.Tuple[i].Clone(), Operands: []*hlo.Instruction{w}, Attrs: []hlo.Attr{{Name: "index", Value: int64(i)}}})
	}
	rebuilt := c.AddInstruction(&hlo.Instruction{Name: names.Unique("tuple"), Opcode: hlo.OpTuple, Shape: old, Operands: outs})
	for _, u := range c.Instructions {
		if u == rebuilt || slices.Contains(outs, u) {
			continue
		}
		for i, o := range u.Operands {
			if o == w {
				u.Operands[i] = rebuilt
			}
		}
	}
	if c.Root == w {
		c.Root = rebuilt
	}
	return true
}
