package spmd

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// Control flow partitions natively, as in XLA's partitioner: the called
// computations are partitioned themselves (computations.go), so a loop
// runs on shards instead of on all-gathered whole values.
//   - while: the loop state has one placement (loopState) for the
//     body's parameter and root, the condition's parameter and the
//     while's result; the condition's root is replicated, so that every
//     device takes the same branch (a reduce over sharded data all-reduces;
//     anything else is gathered).
//   - call: the callee's parameters take the operands' placements, the
//     result its root's.
//   - conditional: the branch index is replicated; each branch takes its
//     operand's placement; every branch's root is resharded to one
//     placement, the annotation's or else branch 0's.

// while partitions the condition and body for the loop state's placement.
func (p *partitioner) while(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	cond, body := in.Computation("condition"), in.Computation("body")
	if len(in.Operands) != 1 || cond == nil || body == nil {
		return p.fallback(in, want, annotated)
	}
	state, err := p.loopState(in, body, want, annotated)
	if err != nil {
		return nil, Sharding{}, err
	}
	init, err := p.operand(in, 0, state)
	if err != nil {
		return nil, Sharding{}, err
	}
	rep := Replicate()
	pcond, _, err := p.called(cond, []Sharding{state}, &rep)
	if err != nil {
		return nil, Sharding{}, fmt.Errorf("condition: %w", err)
	}
	pbody, _, err := p.called(body, []Sharding{state}, &state)
	if err != nil {
		return nil, Sharding{}, fmt.Errorf("body: %w", err)
	}
	x := p.rewrite(in, init.Shape.Clone(), []*hlo.Instruction{init})
	x.SetAttr("condition", pcond)
	x.SetAttr("body", pbody)
	return x, state, nil
}

// loopState is the placement of a loop's state: the while's annotation;
// else its operand's, where each replicated part the body turns into a
// tiled one takes that tiling. Cutting the initial value once before the
// loop costs no communication; keeping it replicated would gather the
// body's result every iteration. Parts only go from replicated to tiled,
// so the search ends (the cap is a guard).
func (p *partitioner) loopState(in *hlo.Instruction, body *hlo.Computation, want Sharding, annotated bool) (Sharding, error) {
	if annotated {
		return want, nil
	}
	s, err := p.shard[in.Operands[0]].forShape(in.Shape)
	if err != nil {
		return Sharding{}, err
	}
	for range 8 {
		r, err := p.probe(body, []Sharding{s})
		if err != nil {
			return Sharding{}, fmt.Errorf("body: %w", err)
		}
		next, changed := adoptTiled(s, r)
		if !changed {
			break
		}
		s = next
	}
	return s, nil
}

// adoptTiled replaces the replicated parts of s that are tiled in r by
// r's tiling, and reports whether any was.
func adoptTiled(s, r Sharding) (Sharding, bool) {
	if s.Kind == TupleKind && r.Kind == TupleKind && len(s.Elements) == len(r.Elements) {
		out := Sharding{Kind: TupleKind, Elements: make([]Sharding, len(s.Elements))}
		changed := false
		for i := range s.Elements {
			var c bool
			out.Elements[i], c = adoptTiled(s.Elements[i], r.Elements[i])
			changed = changed || c
		}
		return out, changed
	}
	if s.IsReplicated() && s.Kind != TupleKind && r.Kind == Tiled && !r.IsReplicated() {
		return r, true
	}
	return s, false
}

// call partitions the callee for its operands' placements.
func (p *partitioner) call(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	callee := in.Computation("to_apply")
	if callee == nil {
		return p.fallback(in, want, annotated)
	}
	params, ops, err := p.asPlaced(in.Operands)
	if err != nil {
		return nil, Sharding{}, err
	}
	c, have, err := p.called(callee, params, nil)
	if err != nil {
		return nil, Sharding{}, fmt.Errorf("callee: %w", err)
	}
	x := p.rewrite(in, c.Root.Shape.Clone(), ops)
	x.SetAttr("to_apply", c)
	return x, have, nil
}

// asPlaced lists operands' placements (tuple shardings expanded) and
// local values, for a computation taking them as they are.
func (p *partitioner) asPlaced(operands []*hlo.Instruction) ([]Sharding, []*hlo.Instruction, error) {
	params := make([]Sharding, len(operands))
	ops := make([]*hlo.Instruction, len(operands))
	for i, o := range operands {
		var err error
		if params[i], err = p.shard[o].forShape(o.Shape); err != nil {
			return nil, nil, err
		}
		ops[i] = p.local[o]
	}
	return params, ops, nil
}

// conditional partitions each branch for its operand's placement, the
// roots resharded to one placement.
func (p *partitioner) conditional(in *hlo.Instruction, want Sharding, annotated bool) (*hlo.Instruction, Sharding, error) {
	branches, attr := conditionalBranches(in)
	if len(branches) == 0 || len(in.Operands) != len(branches)+1 {
		return p.fallback(in, want, annotated)
	}
	index, err := p.operand(in, 0, Replicate())
	if err != nil {
		return nil, Sharding{}, err
	}
	params, ops, err := p.asPlaced(in.Operands[1:])
	if err != nil {
		return nil, Sharding{}, err
	}
	var root *Sharding
	if annotated {
		root = &want
	}
	comps := make([]*hlo.Computation, len(branches))
	for j, b := range branches {
		c, have, err := p.called(b, params[j:j+1], root)
		if err != nil {
			return nil, Sharding{}, fmt.Errorf("branch %d: %w", j, err)
		}
		if root == nil {
			root = &have
		}
		comps[j] = c
	}
	x := p.rewrite(in, comps[0].Root.Shape.Clone(), append([]*hlo.Instruction{index}, ops...))
	if attr == "" {
		x.SetAttr("true_computation", comps[0])
		x.SetAttr("false_computation", comps[1])
	} else {
		x.SetAttr(attr, comps)
	}
	return x, *root, nil
}

// conditionalBranches lists a conditional's branches and the attribute
// holding them ("" for true_computation and false_computation).
func conditionalBranches(in *hlo.Instruction) ([]*hlo.Computation, string) {
	if v, ok := in.Attr("branch_computations"); ok {
		cs, _ := v.([]*hlo.Computation)
		return cs, "branch_computations"
	}
	t, f := in.Computation("true_computation"), in.Computation("false_computation")
	if t == nil || f == nil {
		return nil, ""
	}
	return []*hlo.Computation{t, f}, ""
}
