package hlo

import (
	"fmt"
	"slices"
)

// Instruction is one HLO instruction: a named value of some shape computed
// by an opcode from operands, with attributes.
type Instruction struct {
	Name     string
	Opcode   Opcode
	Shape    Shape
	Operands []*Instruction
	// Attrs holds the attributes in printing order (see Attr).
	Attrs []Attr
	// Literal is the value of a constant.
	Literal *Literal
	// ParamNumber is the parameter number of a parameter.
	ParamNumber int64
	// ControlPredecessors must run before this instruction.
	ControlPredecessors []*Instruction
	// Parent is the computation that holds the instruction.
	Parent *Computation
}

// Attr returns the value of a named attribute.
func (in *Instruction) Attr(name string) (any, bool) {
	for _, a := range in.Attrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return nil, false
}

// HasAttr reports whether the attribute is present.
func (in *Instruction) HasAttr(name string) bool {
	_, ok := in.Attr(name)
	return ok
}

// SetAttr sets or replaces an attribute, keeping XLA's printing order.
func (in *Instruction) SetAttr(name string, value any) {
	for i := range in.Attrs {
		if in.Attrs[i].Name == name {
			in.Attrs[i].Value = value
			return
		}
	}
	rank := attrRank(in.Opcode, name)
	at := len(in.Attrs)
	for i, a := range in.Attrs {
		if attrRank(in.Opcode, a.Name) > rank {
			at = i
			break
		}
	}
	in.Attrs = slices.Insert(in.Attrs, at, Attr{Name: name, Value: value})
}

// RemoveAttr deletes an attribute if present.
func (in *Instruction) RemoveAttr(name string) {
	in.Attrs = slices.DeleteFunc(in.Attrs, func(a Attr) bool { return a.Name == name })
}

// Int returns an integer attribute.
func (in *Instruction) Int(name string) (int64, bool) {
	v, ok := in.Attr(name)
	i, isInt := v.(int64)
	return i, ok && isInt
}

// Bool returns a boolean attribute (false when absent).
func (in *Instruction) Bool(name string) bool {
	v, _ := in.Attr(name)
	b, _ := v.(bool)
	return b
}

// Ints returns an integer-list attribute.
func (in *Instruction) Ints(name string) ([]int64, bool) {
	v, ok := in.Attr(name)
	l, isList := v.([]int64)
	return l, ok && isList
}

// Dimensions is the common `dimensions` attribute.
func (in *Instruction) Dimensions() []int64 {
	d, _ := in.Ints("dimensions")
	return d
}

// EnumAttr returns a bare-identifier attribute such as direction=LT.
func (in *Instruction) EnumAttr(name string) (Enum, bool) {
	v, ok := in.Attr(name)
	e, isEnum := v.(Enum)
	return e, ok && isEnum
}

// StringAttr returns a quoted-string attribute such as custom_call_target.
func (in *Instruction) StringAttr(name string) (string, bool) {
	v, ok := in.Attr(name)
	s, isString := v.(string)
	return s, ok && isString
}

// Window returns the window attribute.
func (in *Instruction) Window() *Window {
	v, _ := in.Attr("window")
	w, _ := v.(*Window)
	return w
}

// ConvDims returns the dim_labels attribute of a convolution.
func (in *Instruction) ConvDims() *ConvDimNumbers {
	v, _ := in.Attr("dim_labels")
	c, _ := v.(*ConvDimNumbers)
	return c
}

// Computation returns a single called computation attribute (to_apply,
// condition, body, calls, ...).
func (in *Instruction) Computation(name string) *Computation {
	v, _ := in.Attr(name)
	switch c := v.(type) {
	case *Computation:
		return c
	case []*Computation:
		if len(c) == 1 {
			return c[0]
		}
	}
	return nil
}

// CalledComputations lists every computation the instruction calls, in
// attribute order.
func (in *Instruction) CalledComputations() []*Computation {
	var out []*Computation
	for _, a := range in.Attrs {
		switch c := a.Value.(type) {
		case *Computation:
			out = append(out, c)
		case []*Computation:
			out = append(out, c...)
		}
	}
	return out
}

// Operand returns operand i.
func (in *Instruction) Operand(i int) *Instruction { return in.Operands[i] }

// IsRoot reports whether the instruction is its computation's root.
func (in *Instruction) IsRoot() bool { return in.Parent != nil && in.Parent.Root == in }

func (in *Instruction) String() string {
	return fmt.Sprintf("%s = %s %s", in.Name, in.Shape, in.Opcode)
}
