package cpu

import (
	"github.com/axle-ml/axle/hlo"
)

// Scheduling: the order the entry computation's instructions run in
// decides how many values are alive at once, and so the arena's size.
// As XLA's scheduler does, we build several candidate orders (the
// module's own, a memory-greedy list schedule and a depth-first one) and
// keep the one whose buffer assignment needs the smallest arena.

// deps are an instruction's scheduling predecessors: its operands, its
// control predecessors and, for side-effecting instructions, the previous
// side-effecting instruction (rng results depend on the order of calls).
func deps(c *hlo.Computation) map[*hlo.Instruction][]*hlo.Instruction {
	d := make(map[*hlo.Instruction][]*hlo.Instruction, len(c.Instructions))
	var lastEffect *hlo.Instruction
	for _, in := range c.Instructions {
		ds := make([]*hlo.Instruction, 0, len(in.Operands)+len(in.ControlPredecessors)+1)
		ds = append(ds, in.Operands...)
		ds = append(ds, in.ControlPredecessors...)
		if in.Opcode.Has(hlo.SideEffecting) || in.Opcode == hlo.OpRngGetAndUpdateState {
			if lastEffect != nil {
				ds = append(ds, lastEffect)
			}
			lastEffect = in
		}
		d[in] = ds
	}
	return d
}

// listSchedule is a greedy list scheduler: among the ready instructions
// it runs the one that frees the most bytes net of what it allocates,
// breaking ties by the module's order.
func listSchedule(c *hlo.Computation, size func(*hlo.Instruction) int64) []*hlo.Instruction {
	d := deps(c)
	pos := map[*hlo.Instruction]int{}
	for i, in := range c.Instructions {
		pos[in] = i
	}
	waiting := map[*hlo.Instruction]int{} // unscheduled predecessors
	succs := map[*hlo.Instruction][]*hlo.Instruction{}
	uses := map[*hlo.Instruction]int{} // unscheduled users
	for _, in := range c.Instructions {
		seen := map[*hlo.Instruction]bool{}
		for _, p := range d[in] {
			if !seen[p] {
				seen[p] = true
				waiting[in]++
				succs[p] = append(succs[p], in)
			}
		}
		for _, o := range uniq(in.Operands) {
			uses[o]++
		}
	}
	var ready []*hlo.Instruction
	for _, in := range c.Instructions {
		if waiting[in] == 0 {
			ready = append(ready, in)
		}
	}
	order := make([]*hlo.Instruction, 0, len(c.Instructions))
	for len(ready) > 0 {
		best, bestScore := 0, int64(0)
		for i, in := range ready {
			score := -size(in)
			for _, o := range uniq(in.Operands) {
				if uses[o] == 1 {
					score += size(o)
				}
			}
			if i == 0 || score > bestScore || score == bestScore && pos[in] < pos[ready[best]] {
				best, bestScore = i, score
			}
		}
		in := ready[best]
		ready = append(ready[:best], ready[best+1:]...)
		order = append(order, in)
		for _, o := range uniq(in.Operands) {
			uses[o]--
		}
		for _, s := range succs[in] {
			if waiting[s]--; waiting[s] == 0 {
				ready = append(ready, s)
			}
		}
	}
	return order
}

// dfsSchedule orders instructions depth-first from the root (operands
// first, in order), so each operand is computed just before its user;
// instructions the root does not reach follow in the module's order.
func dfsSchedule(c *hlo.Computation) []*hlo.Instruction {
	d := deps(c)
	done := map[*hlo.Instruction]bool{}
	order := make([]*hlo.Instruction, 0, len(c.Instructions))
	var visit func(*hlo.Instruction)
	visit = func(in *hlo.Instruction) {
		if done[in] {
			return
		}
		done[in] = true
		for _, p := range d[in] {
			visit(p)
		}
		order = append(order, in)
	}
	if c.Root != nil {
		visit(c.Root)
	}
	for _, in := range c.Instructions {
		visit(in)
	}
	return order
}

// uniq returns xs without repeats (operand lists are short).
func uniq(xs []*hlo.Instruction) []*hlo.Instruction {
	for i := 1; i < len(xs); i++ {
		for j := range i {
			if xs[j] == xs[i] {
				out := make([]*hlo.Instruction, 0, len(xs))
				for k, x := range xs {
					dup := false
					for _, y := range xs[:k] {
						dup = dup || x == y
					}
					if !dup {
						out = append(out, x)
					}
				}
				return out
			}
		}
	}
	return xs
}
