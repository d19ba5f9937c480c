package hlo

import "slices"

// Clone returns a deep copy of m: new computations and instructions with
// the same names, shapes and attributes, references between them remapped.
// Attribute values other than called computations, and constants'
// literals, are shared: passes replace them rather than mutate them.
func (m *Module) Clone() *Module {
	c := *m
	c.Attrs = slices.Clone(m.Attrs)
	c.Computations = make([]*Computation, len(m.Computations))
	comps := make(map[*Computation]*Computation, len(m.Computations))
	for i, old := range m.Computations {
		nc := *old
		nc.Parent = &c
		c.Computations[i] = &nc
		comps[old] = &nc
	}
	if m.Entry != nil {
		c.Entry = comps[m.Entry]
	}
	if m.EntryLayout != nil {
		el := *m.EntryLayout
		el.Params = CloneShapes(m.EntryLayout.Params)
		el.Result = m.EntryLayout.Result.Clone()
		c.EntryLayout = &el
	}
	for _, nc := range c.Computations {
		nc.cloneBody(comps)
	}
	return &c
}

// cloneBody replaces c's instructions (still the original's) by copies.
func (c *Computation) cloneBody(comps map[*Computation]*Computation) {
	insts := make(map[*Instruction]*Instruction, len(c.Instructions))
	olds := c.Instructions
	c.Instructions = make([]*Instruction, len(olds))
	for i, old := range olds {
		in := *old
		in.Parent = c
		in.Shape = old.Shape.Clone()
		in.Attrs = slices.Clone(old.Attrs)
		for k, a := range in.Attrs {
			switch v := a.Value.(type) {
			case *Computation:
				in.Attrs[k].Value = comps[v]
			case []*Computation:
				cs := make([]*Computation, len(v))
				for j, x := range v {
					cs[j] = comps[x]
				}
				in.Attrs[k].Value = cs
			}
		}
		c.Instructions[i] = &in
		insts[old] = &in
	}
	for _, in := range c.Instructions {
		in.Operands = remap(in.Operands, insts)
		in.ControlPredecessors = remap(in.ControlPredecessors, insts)
	}
	c.Root = insts[c.Root]
	c.Params = remap(c.Params, insts)
}

func remap(s []*Instruction, m map[*Instruction]*Instruction) []*Instruction {
	if s == nil {
		return nil
	}
	out := make([]*Instruction, len(s))
	for i, x := range s {
		out[i] = m[x]
	}
	return out
}
