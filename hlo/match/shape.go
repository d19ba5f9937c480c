package match

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// DType requires the element type t.
func (p *Pattern) DType(t hlo.DType) *Pattern {
	return p.Where("of element type "+t.String(), func(in *hlo.Instruction) bool {
		return in.Shape.DType == t
	})
}

// Rank requires an array of rank r.
func (p *Pattern) Rank(r int) *Pattern {
	return p.Where(fmt.Sprintf("of rank %d", r), func(in *hlo.Instruction) bool {
		return in.Shape.IsArray() && in.Shape.Rank() == r
	})
}

// Scalar requires a rank-0 array.
func (p *Pattern) Scalar() *Pattern { return p.Rank(0) }

// Shape requires the same dimensions and element type as s (layouts are
// not compared).
func (p *Pattern) Shape(s hlo.Shape) *Pattern {
	return p.Where("of shape "+s.HumanString(), func(in *hlo.Instruction) bool {
		return in.Shape.DType == s.DType && in.Shape.SameDims(s)
	})
}

// SameShapeAs requires the same dimensions and element type as the
// instruction *other holds at match time (typically an earlier capture).
func (p *Pattern) SameShapeAs(other **hlo.Instruction) *Pattern {
	return p.Where("of the same shape", func(in *hlo.Instruction) bool {
		o := *other
		return o != nil && in.Shape.DType == o.Shape.DType && in.Shape.SameDims(o.Shape)
	})
}

// Float requires a floating-point element type; Integral an integer one.
func (p *Pattern) Float() *Pattern {
	return p.Where("floating-point", func(in *hlo.Instruction) bool { return in.Shape.DType.IsFloat() })
}

// Integral requires a signed or unsigned integer element type.
func (p *Pattern) Integral() *Pattern {
	return p.Where("of integer type", func(in *hlo.Instruction) bool { return in.Shape.DType.IsInteger() })
}
