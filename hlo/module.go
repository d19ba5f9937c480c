package hlo

import "slices"

// ProgramShape is a computation's signature: parameter shapes and result.
type ProgramShape struct {
	Params     []Shape
	ParamNames []string
	Result     Shape
}

// Module is an HLO module: computations (callees before callers, the entry
// last by convention) and the module-level configuration.
type Module struct {
	Name         string
	Computations []*Computation
	Entry        *Computation
	// EntryLayout is entry_computation_layout: the entry's parameter and
	// result shapes with layouts.
	EntryLayout *ProgramShape
	IsScheduled bool
	// ReplicaCount and NumPartitions default to 1.
	ReplicaCount  int64
	NumPartitions int64
	// Attrs are the other header attributes (input_output_alias,
	// buffer_donor, alias_passthrough_params, frontend_attributes, ...),
	// kept verbatim in their order.
	Attrs []Attr
	// StackFrameIndex is the FileNames / FunctionNames / FileLocations /
	// StackFrames block that metadata stack_frame_id values refer to, kept
	// verbatim.
	StackFrameIndex string
}

// NewModule returns an empty module with XLA's default configuration.
func NewModule(name string) *Module {
	return &Module{Name: name, ReplicaCount: 1, NumPartitions: 1}
}

// AddComputation appends a computation and adopts it.
func (m *Module) AddComputation(c *Computation) *Computation {
	c.Parent = m
	m.Computations = append(m.Computations, c)
	return c
}

// Computation finds a computation by name.
func (m *Module) Computation(name string) *Computation {
	for _, c := range m.Computations {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Attr returns a header attribute kept verbatim.
func (m *Module) Attr(name string) (any, bool) {
	for _, a := range m.Attrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return nil, false
}

// ComputeEntryLayout returns the entry computation's signature with layouts
// taken from its parameters and root.
func (m *Module) ComputeEntryLayout() *ProgramShape {
	if m.Entry == nil {
		return nil
	}
	ps := &ProgramShape{Result: m.Entry.ResultShape().Clone()}
	for _, p := range m.Entry.Params {
		if p != nil {
			ps.Params = append(ps.Params, p.Shape.Clone())
			ps.ParamNames = append(ps.ParamNames, p.Name)
		}
	}
	return ps
}

// CalleesFirst lists the computations roots reach through called
// computations, each once, every callee before its callers, in the
// order of a depth-first walk from the roots in turn.
func CalleesFirst(roots ...*Computation) []*Computation {
	reached := map[*Computation]bool{}
	var order []*Computation
	var walk func(c *Computation)
	walk = func(c *Computation) {
		if c == nil || reached[c] {
			return
		}
		reached[c] = true
		for _, in := range c.Instructions {
			for _, cc := range in.CalledComputations() {
				walk(cc)
			}
		}
		order = append(order, c)
	}
	for _, r := range roots {
		walk(r)
	}
	return order
}

// RemoveUnreachableComputations drops the computations the entry does
// not reach through called computations, and reports whether any went.
func (m *Module) RemoveUnreachableComputations() bool {
	if m.Entry == nil {
		return false
	}
	reached := map[*Computation]bool{}
	for _, c := range CalleesFirst(m.Entry) {
		reached[c] = true
	}
	n := len(m.Computations)
	m.Computations = slices.DeleteFunc(m.Computations, func(c *Computation) bool { return !reached[c] })
	return len(m.Computations) != n
}
