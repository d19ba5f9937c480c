package opt

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// SortSimplifier drops operands of a variadic sort that nothing reads
// (XLA's SortSimplifier): no get-tuple-element takes their sorted result
// and the comparator ignores both of their parameters. The sort gets a
// comparator without those parameters; a sort left with one operand
// returns an array rather than a 1-tuple.
var SortSimplifier = pass.Func("sort-simplifier", runSortSimplifier)

func runSortSimplifier(mod *hlo.Module) (bool, error) {
	names := hlo.NewNameSet(mod)
	changed := false
	for _, c := range mod.Computations {
		users := c.Users()
		for _, in := range slices.Clone(c.Instructions) {
			if in.Opcode != hlo.OpSort || len(in.Operands) < 2 || in == c.Root {
				continue
			}
			if repl := simplifySort(mod, c, in, users[in], names); repl != nil {
				c.Instructions[slices.Index(c.Instructions, in)] = repl
				changed = true
			}
		}
	}
	if changed {
		removeDead(mod)
		removeDeadComputations(mod)
	}
	return changed, nil
}

// simplifySort rebuilds in without its unused operands and retargets its
// users, returning the new sort (nil if nothing is unused).
func simplifySort(mod *hlo.Module, c *hlo.Computation, in *hlo.Instruction, users []*hlo.Instruction, names *hlo.NameSet) *hlo.Instruction {
	cmp := in.Computation("to_apply")
	if cmp == nil || len(cmp.Params) != 2*len(in.Operands) {
		return nil
	}
	read := make([]bool, len(in.Operands))
	for _, u := range users {
		if u.Opcode != hlo.OpGetTupleElement {
			return nil // the whole tuple escapes
		}
		idx, _ := u.Int("index")
		read[idx] = true
	}
	paramUsed := map[*hlo.Instruction]bool{}
	for _, x := range cmp.Instructions {
		for _, o := range x.Operands {
			paramUsed[o] = true
		}
	}
	var keep []int
	for i := range in.Operands {
		if read[i] || paramUsed[cmp.Params[2*i]] || paramUsed[cmp.Params[2*i+1]] || cmp.Root == cmp.Params[2*i] || cmp.Root == cmp.Params[2*i+1] {
			keep = append(keep, i)
		}
	}
	if len(keep) == len(in.Operands) || len(keep) == 0 {
		return nil
	}
	var keepParams []int
	ops := make([]*hlo.Instruction, len(keep))
	shapes := make([]hlo.Shape, len(keep))
	newIndex := map[int64]int64{}
	for j, i := range keep {
		ops[j] = in.Operands[i]
		shapes[j] = in.Shape.Tuple[i].Clone()
		keepParams = append(keepParams, 2*i, 2*i+1)
		newIndex[int64(i)] = int64(j)
	}
	newCmp := cloneWithParams(cmp, keepParams, names)
	mod.Computations = slices.Insert(mod.Computations, slices.Index(mod.Computations, cmp)+1, newCmp)
	newCmp.Parent = mod
	sorted := &hlo.Instruction{Name: in.Name, Opcode: hlo.OpSort, Operands: ops, Parent: c,
		Attrs: slices.Clone(in.Attrs)}
	for k, a := range sorted.Attrs {
		if a.Name == "to_apply" {
			sorted.Attrs[k].Value = newCmp
		}
	}
	if len(keep) == 1 {
		sorted.Shape = shapes[0]
		for _, u := range users {
			c.ReplaceAllUses(u, sorted)
		}
		return sorted
	}
	sorted.Shape = hlo.TupleShape(shapes...)
	for _, u := range users {
		idx, _ := u.Int("index")
		u.SetAttr("index", newIndex[idx])
		u.Operands[0] = sorted
	}
	return sorted
}

// cloneWithParams copies c keeping only the listed parameters, renumbered
// in that order; the dropped ones must be unused.
func cloneWithParams(c *hlo.Computation, keep []int, names *hlo.NameSet) *hlo.Computation {
	nc := &hlo.Computation{Name: names.Unique(c.Name), ExecutionThread: c.ExecutionThread}
	copies := map[*hlo.Instruction]*hlo.Instruction{}
	kept := map[*hlo.Instruction]int{}
	for j, i := range keep {
		kept[c.Params[i]] = j
	}
	nc.Params = make([]*hlo.Instruction, len(keep))
	for _, in := range c.Instructions {
		j, isKept := kept[in]
		if in.Opcode == hlo.OpParameter && !isKept {
			continue
		}
		cp := *in
		cp.Name = names.Unique(in.Name)
		cp.Attrs = slices.Clone(in.Attrs)
		cp.Operands = make([]*hlo.Instruction, len(in.Operands))
		for k, o := range in.Operands {
			cp.Operands[k] = copies[o]
		}
		cp.ControlPredecessors = nil
		for _, p := range in.ControlPredecessors {
			cp.ControlPredecessors = append(cp.ControlPredecessors, copies[p])
		}
		if in.Opcode == hlo.OpParameter {
			cp.ParamNumber = int64(j)
			nc.Params[j] = &cp
		}
		copies[in] = nc.AddInstruction(&cp)
	}
	nc.Root = copies[c.Root]
	return nc
}
