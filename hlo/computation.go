package hlo

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
