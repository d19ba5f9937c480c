package onnx

import (
	"fmt"
	"slices"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// Tensor is a dense tensor: numeric data in an HLO literal, or, for ONNX's
// string type, UTF-8 strings in row-major order with their dims.
type Tensor struct {
	Lit  *hlo.Literal // nil for string tensors
	Strs []string     // string tensors only
	dims []int64      // string tensors only
}

// NewStringTensor returns a string tensor of the given dims.
func NewStringTensor(strs []string, dims ...int64) (*Tensor, error) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 {
			return nil, fmt.Errorf("onnx: negative dimension %d", d)
		}
		n *= d
	}
	if n != int64(len(strs)) {
		return nil, fmt.Errorf("onnx: %d strings for dims %v", len(strs), dims)
	}
	return &Tensor{Strs: strs, dims: slices.Clone(dims)}, nil
}

// TensorOf wraps a literal.
func TensorOf(l *hlo.Literal) *Tensor { return &Tensor{Lit: l} }

// IsString reports whether t holds strings.
func (t *Tensor) IsString() bool { return t.Lit == nil }

// Dims is the tensor's shape.
func (t *Tensor) Dims() []int64 {
	if t.Lit == nil {
		return t.dims
	}
	return t.Lit.Shape().Dims
}

// ElemType is the tensor's ONNX element type.
func (t *Tensor) ElemType() ElemType {
	if t.Lit == nil {
		return String
	}
	return ElemTypeOf(t.Lit.DType())
}

// String is a short description: "float[2,3]".
func (t *Tensor) String() string { return t.ElemType().String() + dimsString(t.Dims()) }

func dimsString(d []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range d {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, v)
	}
	b.WriteByte(']')
	return b.String()
}

// Kind says what a Value holds.
type Kind uint8

// The kinds of value an ONNX edge carries.
const (
	KindTensor Kind = iota
	KindSequence
	KindOptional
	KindMap
)

// Value is what flows along an ONNX graph edge: a tensor, a sequence of
// values, an optional (empty, or holding a tensor or a sequence), or a
// map (what ai.onnx.ml's ZipMap makes: a class label to its score).
type Value struct {
	Kind   Kind
	Tensor *Tensor  // KindTensor
	Elems  []*Value // KindSequence; KindMap: the values, one a key
	Elem   *Value   // KindOptional: nil when empty
	// Keys are a map's keys, a 1-D int64 or string tensor (KindMap).
	Keys *Tensor
	// ElemType is the element type of a sequence's or optional's tensors,
	// kept so that an empty one still knows it (Undefined if not known).
	ElemType ElemType
}

// TensorValue wraps a tensor.
func TensorValue(t *Tensor) *Value { return &Value{Kind: KindTensor, Tensor: t} }

// LiteralValue wraps a literal as a tensor value.
func LiteralValue(l *hlo.Literal) *Value { return TensorValue(TensorOf(l)) }

// MapValue is the map from keys (a 1-D int64 or string tensor) to vals,
// one a key.
func MapValue(keys *Tensor, vals []*Value) *Value {
	return &Value{Kind: KindMap, Keys: keys, Elems: vals}
}

// String describes v: "float[2,3]", "seq(float[2],float[3])", "opt(none)",
// "map(int64[3]→float[])".
func (v *Value) String() string {
	if v == nil {
		return "<none>"
	}
	switch v.Kind {
	case KindTensor:
		if v.Tensor == nil {
			return "<nil tensor>"
		}
		return v.Tensor.String()
	case KindSequence:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = e.String()
		}
		return "seq(" + strings.Join(parts, ",") + ")"
	case KindMap:
		val := "?"
		if len(v.Elems) > 0 {
			val = v.Elems[0].String()
		}
		if v.Keys == nil {
			return "map(?)"
		}
		return "map(" + v.Keys.String() + "→" + val + ")"
	}
	if v.Elem == nil {
		return "opt(none)"
	}
	return "opt(" + v.Elem.String() + ")"
}
