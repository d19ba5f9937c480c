package hlo

import "fmt"

// Computation is a list of instructions in definition order with one root.
type Computation struct {
	Name         string
	Instructions []*Instruction
	Root         *Instruction
	// Params are the parameter instructions by parameter number.
	Params []*Instruction
	// IsEntry marks the module's entry computation.
	IsEntry bool
	// ExecutionThread is the thread an async-wrapped computation runs on
	// ("main" by default).
	ExecutionThread string
	// Parent is the module that holds the computation.
	Parent *Module
}

// AddInstruction appends an instruction and adopts it.
func (c *Computation) AddInstruction(in *Instruction) *Instruction {
	in.Parent = c
	c.Instructions = append(c.Instructions, in)
	return in
}

// Param returns parameter i, or nil.
func (c *Computation) Param(i int) *Instruction {
	if i < 0 || i >= len(c.Params) {
		return nil
	}
	return c.Params[i]
}

// Instruction finds an instruction by name.
func (c *Computation) Instruction(name string) *Instruction {
	for _, in := range c.Instructions {
		if in.Name == name {
			return in
		}
	}
	return nil
}

// ParamShapes lists the shapes of the parameters in order.
func (c *Computation) ParamShapes() []Shape {
	out := make([]Shape, len(c.Params))
	for i, p := range c.Params {
		if p != nil {
			out[i] = p.Shape
		}
	}
	return out
}

// ResultShape is the root's shape.
func (c *Computation) ResultShape() Shape {
	if c.Root == nil {
		return Shape{}
	}
	return c.Root.Shape
}

// CheckArguments reports whether args fit c's parameters: one per
// parameter, each of a compatible shape. The error names the parameter.
func (c *Computation) CheckArguments(args []*Literal) error {
	if len(args) != len(c.Params) {
		return fmt.Errorf("computation %s takes %d arguments, got %d", c.Name, len(c.Params), len(args))
	}
	for i, a := range args {
		p := c.Params[i]
		if a == nil || !a.Shape().Compatible(p.Shape) {
			got := "nil"
			if a != nil {
				got = a.Shape().HumanString()
			}
			return fmt.Errorf("argument %d (parameter %s) has shape %s, want %s", i, p.Name, got, p.Shape.HumanString())
		}
	}
	return nil
}
