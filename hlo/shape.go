package hlo

import (
	"slices"
	"strconv"
	"strings"
)

// Unbounded is the size recorded for a dimension written `?`: dynamic with
// no static bound.
const Unbounded int64 = -1

// Shape is an HLO shape: an array (element type, dimensions, optional
// layout), a tuple of shapes, a token or opaque. Shapes are values; the
// slices are never shared between shapes produced by this package.
type Shape struct {
	DType   DType
	Dims    []int64 // for arrays; a dynamic dimension holds its bound, or Unbounded
	Dynamic []bool  // nil when every dimension is static
	Layout  *Layout // nil when the shape carries no layout
	Tuple   []Shape // the elements when DType == Tuple
}

// ArrayShape returns a static array shape with the default layout.
func ArrayShape(t DType, dims ...int64) Shape {
	s := Shape{DType: t, Dims: slices.Clone(dims)}
	s.SetDefaultLayout()
	return s
}

// ScalarShape returns the rank-0 shape of t.
func ScalarShape(t DType) Shape { return ArrayShape(t) }

// TupleShape returns the tuple of the given shapes.
func TupleShape(elems ...Shape) Shape {
	return Shape{DType: Tuple, Tuple: CloneShapes(elems)}
}

// TokenShape returns the token shape.
func TokenShape() Shape { return Shape{DType: Token} }

// CloneShapes deep-copies a slice of shapes.
func CloneShapes(in []Shape) []Shape {
	if in == nil {
		return nil
	}
	out := make([]Shape, len(in))
	for i, s := range in {
		out[i] = s.Clone()
	}
	return out
}

// Clone returns a deep copy of s.
func (s Shape) Clone() Shape {
	c := Shape{DType: s.DType, Dims: slices.Clone(s.Dims), Dynamic: slices.Clone(s.Dynamic)}
	if s.Layout != nil {
		c.Layout = s.Layout.Clone()
	}
	if s.Tuple != nil {
		c.Tuple = CloneShapes(s.Tuple)
	}
	return c
}

// IsTuple, IsToken, IsArray classify the shape.
func (s Shape) IsTuple() bool  { return s.DType == Tuple }
func (s Shape) IsToken() bool  { return s.DType == Token }
func (s Shape) IsArray() bool  { return s.DType.IsArrayType() }
func (s Shape) IsScalar() bool { return s.IsArray() && len(s.Dims) == 0 }

// Rank is the number of dimensions of an array shape.
func (s Shape) Rank() int { return len(s.Dims) }

// IsDynamicDim reports whether dimension i is dynamic.
func (s Shape) IsDynamicDim(i int) bool { return i < len(s.Dynamic) && s.Dynamic[i] }

// IsDynamic reports whether any dimension (of any tuple element) is dynamic.
func (s Shape) IsDynamic() bool {
	if s.IsTuple() {
		for _, e := range s.Tuple {
			if e.IsDynamic() {
				return true
			}
		}
		return false
	}
	return slices.Contains(s.Dynamic, true)
}

// IsUnbounded reports whether some dimension has no bound (`?`).
func (s Shape) IsUnbounded() bool { return slices.Contains(s.Dims, Unbounded) }

// SetDynamic marks dimension i dynamic or static.
func (s *Shape) SetDynamic(i int, dynamic bool) {
	if s.Dynamic == nil {
		if !dynamic {
			return
		}
		s.Dynamic = make([]bool, len(s.Dims))
	}
	s.Dynamic[i] = dynamic
	if !slices.Contains(s.Dynamic, true) {
		s.Dynamic = nil
	}
}

// NumElements is the product of the dimension sizes (bounds for dynamic ones).
func (s Shape) NumElements() int64 {
	n := int64(1)
	for _, d := range s.Dims {
		n *= max(d, 0)
	}
	return n
}

// SetDefaultLayout gives an array shape the major-to-minor default layout
// ({rank-1,...,0}), and does the same for every tuple element.
func (s *Shape) SetDefaultLayout() {
	switch {
	case s.IsTuple():
		for i := range s.Tuple {
			s.Tuple[i].SetDefaultLayout()
		}
	case s.IsArray():
		s.Layout = DefaultLayout(len(s.Dims))
	}
}

// SetDefaultLayoutIfMissing is SetDefaultLayout for the arrays that have none.
func (s *Shape) SetDefaultLayoutIfMissing() {
	switch {
	case s.IsTuple():
		for i := range s.Tuple {
			s.Tuple[i].SetDefaultLayoutIfMissing()
		}
	case s.IsArray() && s.Layout == nil:
		s.Layout = DefaultLayout(len(s.Dims))
	}
}

// Equal compares shapes including layouts.
func (s Shape) Equal(o Shape) bool { return s.equal(&o) }

// Compatible compares shapes ignoring layouts (XLA's ShapeUtil::Compatible,
// which does compare dynamic-ness).
func (s Shape) Compatible(o Shape) bool { return s.compatible(&o) }

// equal and compatible are Equal and Compatible through pointers: a Shape
// is eleven words, and copying two per comparison was a tenth of a
// scalar execution's checks.
func (s *Shape) equal(o *Shape) bool {
	if !s.compatible(o) {
		return false
	}
	if s.IsTuple() || s.DType == Buffer {
		for i := range s.Tuple {
			if !s.Tuple[i].equal(&o.Tuple[i]) {
				return false
			}
		}
		return true
	}
	return s.Layout.Equal(o.Layout)
}

func (s *Shape) compatible(o *Shape) bool {
	if s.DType != o.DType {
		return false
	}
	if s.IsTuple() || s.DType == Buffer {
		if len(s.Tuple) != len(o.Tuple) {
			return false
		}
		for i := range s.Tuple {
			if !s.Tuple[i].compatible(&o.Tuple[i]) {
				return false
			}
		}
		return true
	}
	if !slices.Equal(s.Dims, o.Dims) {
		return false
	}
	if s.Dynamic == nil && o.Dynamic == nil {
		return true
	}
	for i := range s.Dims {
		if s.IsDynamicDim(i) != o.IsDynamicDim(i) {
			return false
		}
	}
	return true
}

// SameDims compares dimension sizes only (element types may differ).
func (s Shape) SameDims(o Shape) bool {
	return s.IsArray() && o.IsArray() && slices.Equal(s.Dims, o.Dims)
}

// WithDType returns a copy of the array shape s with element type t.
func (s Shape) WithDType(t DType) Shape {
	c := s.Clone()
	c.DType = t
	return c
}

// String prints s with layouts, as XLA's ShapeUtil::HumanStringWithLayout.
func (s Shape) String() string {
	var b strings.Builder
	s.Append(&b, true)
	return b.String()
}

// HumanString prints s without layouts, as XLA's ShapeUtil::HumanString.
func (s Shape) HumanString() string {
	var b strings.Builder
	s.Append(&b, false)
	return b.String()
}

// Append writes s to b, with layouts or without.
func (s Shape) Append(b *strings.Builder, withLayout bool) {
	switch s.DType {
	case Tuple:
		b.WriteByte('(')
		for i, e := range s.Tuple {
			if i > 0 {
				b.WriteString(", ")
				if i%5 == 0 {
					b.WriteString("/*index=")
					b.WriteString(strconv.Itoa(i))
					b.WriteString("*/")
				}
			}
			e.Append(b, withLayout)
		}
		b.WriteByte(')')
		return
	case Buffer:
		b.WriteString("b(")
		if len(s.Tuple) == 1 {
			s.Tuple[0].Append(b, withLayout)
		}
		b.WriteByte(')')
		return
	case Token, Opaque:
		b.WriteString(s.DType.String())
		b.WriteString("[]")
		return
	}
	b.WriteString(s.DType.String())
	b.WriteByte('[')
	for i, d := range s.Dims {
		if i > 0 {
			b.WriteByte(',')
		}
		switch {
		case d == Unbounded:
			b.WriteByte('?')
		case s.IsDynamicDim(i):
			b.WriteString("<=")
			b.WriteString(strconv.FormatInt(d, 10))
		default:
			b.WriteString(strconv.FormatInt(d, 10))
		}
	}
	b.WriteByte(']')
	if withLayout && s.Layout != nil {
		// XLA leaves out the empty layout of a scalar.
		if len(s.Dims) > 0 || len(s.Layout.Items) > 0 {
			s.Layout.Append(b)
		}
	}
}

// Leaves calls f for every non-tuple subshape with its tuple index.
func (s Shape) Leaves(f func(index []int, leaf Shape)) {
	var walk func(idx []int, sh Shape)
	walk = func(idx []int, sh Shape) {
		if !sh.IsTuple() {
			f(idx, sh)
			return
		}
		for i, e := range sh.Tuple {
			walk(append(idx[:len(idx):len(idx)], i), e)
		}
	}
	walk(nil, s)
}

// Subshape returns the shape at a tuple index, or false if the index is invalid.
func (s Shape) Subshape(index []int64) (Shape, bool) {
	for _, i := range index {
		if !s.IsTuple() || i < 0 || int(i) >= len(s.Tuple) {
			return Shape{}, false
		}
		s = s.Tuple[i]
	}
	return s, true
}
