package onnx

import (
	"fmt"

	"github.com/axle-ml/axle/onnx/onnxpb"
)

// Has reports whether the node sets attribute name.
func (n *Node) Has(name string) bool { _, ok := n.Attrs[name]; return ok }

// Int is an INT attribute, or def if absent.
func (n *Node) Int(name string, def int64) int64 {
	if a, ok := n.Attrs[name]; ok {
		return a.GetI()
	}
	return def
}

// Float is a FLOAT attribute, or def if absent.
func (n *Node) Float(name string, def float32) float32 {
	if a, ok := n.Attrs[name]; ok {
		return a.GetF()
	}
	return def
}

// Str is a STRING attribute, or def if absent.
func (n *Node) Str(name, def string) string {
	if a, ok := n.Attrs[name]; ok {
		return string(a.GetS())
	}
	return def
}

// Ints is an INTS attribute (nil if absent).
func (n *Node) Ints(name string) []int64 {
	if a, ok := n.Attrs[name]; ok {
		return a.GetInts()
	}
	return nil
}

// Floats is a FLOATS attribute (nil if absent).
func (n *Node) Floats(name string) []float32 {
	if a, ok := n.Attrs[name]; ok {
		return a.GetFloats()
	}
	return nil
}

// Strs is a STRINGS attribute (nil if absent).
func (n *Node) Strs(name string) []string {
	a, ok := n.Attrs[name]
	if !ok {
		return nil
	}
	out := make([]string, len(a.GetStrings()))
	for i, s := range a.GetStrings() {
		out[i] = string(s)
	}
	return out
}

// TensorAttr is a TENSOR attribute, decoded (nil, nil if absent).
func (n *Node) TensorAttr(name string) (*Tensor, error) {
	a, ok := n.Attrs[name]
	if !ok || a.T == nil {
		return nil, nil
	}
	t, err := DecodeTensor(a.T, "")
	if err != nil {
		return nil, fmt.Errorf("%s: attribute %s: %w", n.Describe(), name, err)
	}
	return t, nil
}

// AttrType is the declared type of attribute name (UNDEFINED if absent).
func (n *Node) AttrType(name string) onnxpb.AttributeProto_AttributeType {
	if a, ok := n.Attrs[name]; ok {
		return a.GetType()
	}
	return onnxpb.AttributeProto_UNDEFINED
}

// Input is the name of input i ("" if absent or omitted).
func (n *Node) Input(i int) string {
	if i < len(n.Inputs) {
		return n.Inputs[i]
	}
	return ""
}
