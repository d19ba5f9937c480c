package hlo

import (
	"fmt"
	"reflect"
)

// Diff compares two modules structurally and describes the first
// difference, or returns "" when they are equal: same configuration,
// computations in the same order with the same instructions (names,
// opcodes, shapes with layouts, operands, attributes, literals, control
// predecessors). Computations and instructions referenced from attributes
// or operands are compared by name. Passes use it to check that a pass
// that reports "unchanged" changed nothing; tests use it for
// parse(print(m)) == m.
func (m *Module) Diff(o *Module) string {
	switch {
	case m.Name != o.Name:
		return fmt.Sprintf("module name %q vs %q", m.Name, o.Name)
	case m.IsScheduled != o.IsScheduled, m.ReplicaCount != o.ReplicaCount, m.NumPartitions != o.NumPartitions:
		return "module configuration differs"
	case !reflect.DeepEqual(m.Attrs, o.Attrs):
		return "module attributes differ"
	case m.StackFrameIndex != o.StackFrameIndex:
		return "stack frame index differs"
	case (m.EntryLayout == nil) != (o.EntryLayout == nil):
		return "entry_computation_layout present in one module only"
	case len(m.Computations) != len(o.Computations):
		return fmt.Sprintf("%d computations vs %d", len(m.Computations), len(o.Computations))
	}
	if m.EntryLayout != nil && !programShapesEqual(m.EntryLayout, o.EntryLayout) {
		return "entry_computation_layout differs"
	}
	if (m.Entry == nil) != (o.Entry == nil) || (m.Entry != nil && m.Entry.Name != o.Entry.Name) {
		return "entry computation differs"
	}
	for i, c := range m.Computations {
		if d := c.Diff(o.Computations[i]); d != "" {
			return fmt.Sprintf("computation %s: %s", c.Name, d)
		}
	}
	return ""
}

func programShapesEqual(a, b *ProgramShape) bool {
	if len(a.Params) != len(b.Params) || !a.Result.Equal(b.Result) {
		return false
	}
	for i := range a.Params {
		if !a.Params[i].Equal(b.Params[i]) {
			return false
		}
	}
	return true
}

// Diff compares two computations as Module.Diff does.
func (c *Computation) Diff(o *Computation) string {
	switch {
	case c.Name != o.Name:
		return fmt.Sprintf("name %q vs %q", c.Name, o.Name)
	case c.IsEntry != o.IsEntry, c.ExecutionThread != o.ExecutionThread:
		return "entry flag or execution thread differs"
	case len(c.Instructions) != len(o.Instructions):
		return fmt.Sprintf("%d instructions vs %d", len(c.Instructions), len(o.Instructions))
	case (c.Root == nil) != (o.Root == nil) || (c.Root != nil && c.Root.Name != o.Root.Name):
		return "root differs"
	}
	for i, in := range c.Instructions {
		if d := in.diff(o.Instructions[i]); d != "" {
			return fmt.Sprintf("instruction %s: %s", in.Name, d)
		}
	}
	return ""
}

func (in *Instruction) diff(o *Instruction) string {
	switch {
	case in.Name != o.Name:
		return fmt.Sprintf("name vs %q", o.Name)
	case in.Opcode != o.Opcode:
		return fmt.Sprintf("opcode %s vs %s", in.Opcode, o.Opcode)
	case !in.Shape.Equal(o.Shape):
		return fmt.Sprintf("shape %s vs %s", in.Shape, o.Shape)
	case in.ParamNumber != o.ParamNumber:
		return "parameter number differs"
	case !sameNames(in.Operands, o.Operands):
		return "operands differ"
	case !sameNames(in.ControlPredecessors, o.ControlPredecessors):
		return "control predecessors differ"
	case (in.Literal == nil) != (o.Literal == nil) || (in.Literal != nil && !in.Literal.Equal(o.Literal)):
		return "literal differs"
	case len(in.Attrs) != len(o.Attrs):
		return fmt.Sprintf("%d attributes vs %d", len(in.Attrs), len(o.Attrs))
	}
	for i, a := range in.Attrs {
		b := o.Attrs[i]
		if a.Name != b.Name || !attrValuesEqual(a.Value, b.Value) {
			return fmt.Sprintf("attribute %s differs", a.Name)
		}
	}
	return ""
}

func sameNames(a, b []*Instruction) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

func attrValuesEqual(a, b any) bool {
	switch x := a.(type) {
	case *Computation:
		y, ok := b.(*Computation)
		return ok && x.Name == y.Name
	case []*Computation:
		y, ok := b.([]*Computation)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i].Name != y[i].Name {
				return false
			}
		}
		return true
	case Shape:
		y, ok := b.(Shape)
		return ok && x.Equal(y)
	case []Shape:
		y, ok := b.([]Shape)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !x[i].Equal(y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
