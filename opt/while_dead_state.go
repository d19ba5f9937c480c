package opt

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// WhileDeadState removes loop-state elements nobody needs (the dead-state
// part of XLA's WhileLoopSimplifier): element i goes when the loop's
// users never read it, the condition never reads it, and in the body it
// only feeds its own next value (nothing else, and nothing with a side
// effect, depends on it). Loops whose body or condition is shared, or
// whose state escapes as a whole tuple, are left alone.
var WhileDeadState = pass.Func("while-dead-state", runWhileDeadState)

func runWhileDeadState(m *hlo.Module) (bool, error) {
	fx := newEffects()
	calls := callCounts(m)
	names := hlo.NewNameSet(m)
	changed := false
	for _, c := range m.Computations {
		users := c.Users()
		for _, w := range slices.Clone(c.Instructions) {
			body, cond := w.Computation("body"), w.Computation("condition")
			if w.Opcode != hlo.OpWhile || body == nil || cond == nil || calls[body] != 1 || calls[cond] != 1 || w == c.Root {
				continue
			}
			dead := deadElements(w, users[w], body, cond, fx)
			if len(dead) == 0 {
				continue
			}
			dropState(c, w, users[w], body, cond, dead, names)
			changed = true
		}
		if changed {
			if err := c.SortTopologically(); err != nil {
				return changed, err
			}
		}
	}
	if changed {
		removeDead(m)
	}
	return changed, nil
}

// stateReads returns, for a computation whose parameter is the loop
// state, the get-tuple-elements of each index, or ok=false if the state is
// used some other way.
func stateReads(c *hlo.Computation) (map[int64][]*hlo.Instruction, bool) {
	p := c.Param(0)
	reads := map[int64][]*hlo.Instruction{}
	for _, in := range c.Instructions {
		for _, o := range in.Operands {
			if o != p {
				continue
			}
			if in.Opcode != hlo.OpGetTupleElement {
				return nil, false
			}
			idx, _ := in.Int("index")
			reads[idx] = append(reads[idx], in)
		}
	}
	return reads, p != c.Root
}

func deadElements(w *hlo.Instruction, wUsers []*hlo.Instruction, body, cond *hlo.Computation, fx *effects) map[int64]bool {
	n := int64(len(w.Shape.Tuple))
	root := body.Root
	if root == nil || root.Opcode != hlo.OpTuple || int64(len(root.Operands)) != n {
		return nil
	}
	outside := map[int64]bool{}
	for _, u := range wUsers {
		if u.Opcode != hlo.OpGetTupleElement {
			return nil
		}
		idx, _ := u.Int("index")
		outside[idx] = true
	}
	condReads, ok1 := stateReads(cond)
	bodyReads, ok2 := stateReads(body)
	if !ok1 || !ok2 {
		return nil
	}
	dead := map[int64]bool{}
	for i := range n {
		if outside[i] || len(condReads[i]) > 0 || !onlyFeedsOwnSlot(body, bodyReads[i], i, fx) {
			continue
		}
		dead[i] = true
	}
	if int64(len(dead)) == n {
		return nil // an empty loop state: leave the loop to DCE
	}
	return dead
}

// onlyFeedsOwnSlot reports whether everything depending on the reads
// reaches the body's root only through operand i, without side effects.
func onlyFeedsOwnSlot(body *hlo.Computation, reads []*hlo.Instruction, i int64, fx *effects) bool {
	tainted := map[*hlo.Instruction]bool{}
	for _, r := range reads {
		tainted[r] = true
	}
	for _, in := range body.Instructions {
		if !tainted[in] {
			for _, o := range in.Operands {
				if tainted[o] {
					tainted[in] = true
					break
				}
			}
		}
		if tainted[in] && fx.instruction(in) {
			return false
		}
	}
	for j, o := range body.Root.Operands {
		if int64(j) != i && tainted[o] {
			return false
		}
	}
	return true
}

// dropState rewrites the loop without the dead elements.
func dropState(c *hlo.Computation, w *hlo.Instruction, wUsers []*hlo.Instruction, body, cond *hlo.Computation, dead map[int64]bool, names *hlo.NameSet) {
	remap := map[int64]int64{}
	var shapes []hlo.Shape
	for i, s := range w.Shape.Tuple {
		if !dead[int64(i)] {
			remap[int64(i)] = int64(len(shapes))
			shapes = append(shapes, s.Clone())
		}
	}
	state := hlo.TupleShape(shapes...)
	for _, comp := range []*hlo.Computation{body, cond} {
		reads, _ := stateReads(comp)
		for idx, gs := range reads {
			for _, g := range gs {
				if !dead[idx] {
					g.SetAttr("index", remap[idx])
					continue
				}
				// A dead read's whole cone only fed the dropped slot, so
				// DCE removes it; until then it must not read a missing
				// element, so it becomes a zero constant.
				g.Opcode, g.Operands, g.Attrs, g.Literal = hlo.OpConstant, nil, nil, hlo.NewLiteral(g.Shape)
			}
		}
		comp.Param(0).Shape = state.Clone()
	}
	root := body.Root
	var ops []*hlo.Instruction
	for i, o := range root.Operands {
		if !dead[int64(i)] {
			ops = append(ops, o)
		}
	}
	root.Operands, root.Shape = ops, state.Clone()
	init := w.Operands[0]
	elems := make([]*hlo.Instruction, 0, len(shapes))
	for i := range w.Shape.Tuple {
		if dead[int64(i)] {
			continue
		}
		if init.Opcode == hlo.OpTuple {
			elems = append(elems, init.Operands[i])
			continue
		}
		elems = append(elems, c.AddInstruction(&hlo.Instruction{Name: names.Unique("get-tuple-element"), Opcode: hlo.OpGetTupleElement,
			Shape: w.Shape.Tuple[i].Clone(), Operands: []*hlo.Instruction{init}, Attrs: []hlo.Attr{{Name: "index", Value: int64(i)}}}))
	}
	w.Operands[0] = c.AddInstruction(&hlo.Instruction{Name: names.Unique("tuple"), Opcode: hlo.OpTuple, Shape: state.Clone(), Operands: elems})
	w.Shape = state
	for _, u := range wUsers {
		idx, _ := u.Int("index")
		u.SetAttr("index", remap[idx])
	}
}
