package opt

import (
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	m "github.com/axle-ml/axle/hlo/match"
	"github.com/axle-ml/axle/pass"
)

// ConditionalSimplifier turns a conditional whose branch is known (a
// constant predicate or index, or a single branch) into a call of that
// branch, which the call inliner then flattens (XLA's
// ConditionalSimplifier). Out-of-range indices pick the last branch, as
// the conditional itself does.
var ConditionalSimplifier = pass.Func("conditional-simplifier", runConditionalSimplifier)

func runConditionalSimplifier(mod *hlo.Module) (bool, error) {
	changed := false
	names := hlo.NewNameSet(mod)
	for _, c := range mod.Computations {
		for i, in := range c.Instructions {
			if in.Opcode != hlo.OpConditional || len(in.ControlPredecessors) > 0 {
				continue
			}
			branch, ok := knownBranch(in)
			if !ok {
				continue
			}
			replaceByCall(c, i, in.Operands[branch+1], conditionalBranches(in)[branch], names)
			changed = true
		}
	}
	if changed {
		removeDead(mod)
		removeDeadComputations(mod)
	}
	return changed, nil
}

func conditionalBranches(in *hlo.Instruction) []*hlo.Computation {
	if t := in.Computation("true_computation"); t != nil {
		return []*hlo.Computation{t, in.Computation("false_computation")}
	}
	v, _ := in.Attr("branch_computations")
	bs, _ := v.([]*hlo.Computation)
	return bs
}

// knownBranch returns the index of the branch that will run, if known.
func knownBranch(in *hlo.Instruction) (int, bool) {
	branches := conditionalBranches(in)
	n := len(branches)
	if n == 0 || len(in.Operands) != n+1 {
		return 0, false
	}
	sel, ok := m.EffectiveScalar(in.Operands[0])
	switch {
	case in.Operands[0].Shape.DType == hlo.Pred && ok:
		if sel.GetBool(0) {
			return 0, true
		}
		return 1, true
	case ok:
		b := sel.GetInt64(0)
		if b < 0 || b >= int64(n) {
			b = int64(n - 1)
		}
		return int(b), true
	case n == 1:
		return 0, true
	}
	return 0, false
}

// WhileSimplifier removes loops whose trip count is known to be zero or
// one (XLA's WhileLoopSimplifier, those two cases): the condition is
// evaluated on the parts of the initial state that are constants, and,
// for one trip, on the body's result computed from them. A zero-trip loop
// is its initial value; a one-trip loop is a call of its body.
var WhileSimplifier = pass.Func("while-simplifier", runWhileSimplifier)

func runWhileSimplifier(mod *hlo.Module) (bool, error) {
	changed := false
	fx := newEffects()
	names := hlo.NewNameSet(mod)
	for _, c := range mod.Computations {
		for i, in := range c.Instructions {
			cond, body := in.Computation("condition"), in.Computation("body")
			if in.Opcode != hlo.OpWhile || cond == nil || body == nil || fx.computation(cond) || len(in.ControlPredecessors) > 0 {
				continue
			}
			trips, ok := tripCountAtMostOne(in.Operands[0], cond, body)
			if !ok {
				continue
			}
			if trips == 0 {
				c.ReplaceAllUses(in, in.Operands[0])
			} else {
				replaceByCall(c, i, in.Operands[0], body, names)
			}
			changed = true
		}
	}
	if changed {
		removeDead(mod)
		removeDeadComputations(mod)
	}
	return changed, nil
}

// tripCountAtMostOne returns 0 or 1 when the loop provably runs that many
// times.
func tripCountAtMostOne(init *hlo.Instruction, cond, body *hlo.Computation) (int, bool) {
	state := initialKnown(init)
	p0 := &partial{known: state}
	run, ok := p0.value(cond.Root)
	if !ok {
		return 0, false
	}
	if !run.GetBool(0) {
		return 0, true
	}
	if body.Root.Opcode != hlo.OpTuple {
		return 0, false
	}
	p1 := &partial{known: state}
	next := map[int64]*hlo.Literal{}
	for i, o := range body.Root.Operands {
		if v, ok := p1.value(o); ok {
			next[int64(i)] = v
		}
	}
	again, ok := (&partial{known: next}).value(cond.Root)
	if ok && !again.GetBool(0) {
		return 1, true
	}
	return 0, false
}

// initialKnown lists the loop-state elements that are constants.
func initialKnown(init *hlo.Instruction) map[int64]*hlo.Literal {
	known := map[int64]*hlo.Literal{}
	switch {
	case init.Opcode == hlo.OpTuple:
		for i, o := range init.Operands {
			if o.Opcode == hlo.OpConstant && o.Literal != nil && !o.Literal.IsElided() {
				known[int64(i)] = o.Literal
			}
		}
	case init.Opcode == hlo.OpConstant && init.Literal != nil && init.Shape.IsTuple():
		for i, e := range init.Literal.Elements() {
			known[int64(i)] = e
		}
	}
	return known
}

// partial evaluates instructions of a loop computation whose value depends
// only on known elements of the loop state parameter.
type partial struct {
	known map[int64]*hlo.Literal
	memo  map[*hlo.Instruction]*hlo.Literal
	ev    eval.Evaluator
}

func (p *partial) value(in *hlo.Instruction) (*hlo.Literal, bool) {
	if v, ok := p.memo[in]; ok {
		return v, v != nil
	}
	v := p.compute(in)
	if p.memo == nil {
		p.memo = map[*hlo.Instruction]*hlo.Literal{}
	}
	p.memo[in] = v
	return v, v != nil
}

func (p *partial) compute(in *hlo.Instruction) *hlo.Literal {
	switch {
	case in.Opcode == hlo.OpParameter:
		return nil
	case in.Opcode == hlo.OpGetTupleElement && in.Operands[0].Opcode == hlo.OpParameter:
		idx, _ := in.Int("index")
		return p.known[idx]
	case in.Opcode == hlo.OpConstant:
		return in.Literal
	case in.Opcode.Has(hlo.SideEffecting) || in.Opcode == hlo.OpWhile:
		return nil
	}
	ops := make([]*hlo.Literal, len(in.Operands))
	for i, o := range in.Operands {
		v, ok := p.value(o)
		if !ok {
			return nil
		}
		ops[i] = v
	}
	v, err := p.ev.Instruction(in, ops)
	if err != nil {
		return nil
	}
	return v
}

// replaceByCall puts call(operand), to_apply=comp in place of instruction
// i of c (same shape) and makes its users use the call.
func replaceByCall(c *hlo.Computation, i int, operand *hlo.Instruction, comp *hlo.Computation, names *hlo.NameSet) {
	old := c.Instructions[i]
	call := &hlo.Instruction{Name: names.Unique("call"), Opcode: hlo.OpCall, Shape: old.Shape.Clone(),
		Operands: []*hlo.Instruction{operand}, Attrs: []hlo.Attr{{Name: "to_apply", Value: comp}}, Parent: c}
	c.Instructions[i] = call
	c.ReplaceAllUses(old, call)
}
