package cpu

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// An s32 constant operand of an integer dot: the standard passes fold a
// small constant's widening, and its zero points' subtraction, into one
// s32 constant (a layer's 8-bit weights minus their zero points), which
// int8-dot-fusion writes back as 8-bit values minus zero points, one per
// index of the operand's non-contracting dimensions (a column of B), or
// per tensor: x8 = v - off with off = min+128 over each column, whose
// values must then span at most 255. Any such constant splits, whatever
// the weights' original zero points were.

// constSplit is an s32 constant as x8 - z: its 8-bit values, and zero
// points z (nil: none) along the operand's dimensions dims.
type constSplit struct {
	x8   *hlo.Literal
	z    *hlo.Literal
	dims []int64
}

// splitConstant splits v, an s32 constant operand of a dot with these
// contracting dimensions, or returns nil. Without zps, only a constant
// whose values fit 8 bits splits (with no zero points).
func splitConstant(v *hlo.Instruction, contracting []int64, zps bool) *constSplit {
	if v.Opcode != hlo.OpConstant || v.Shape.DType != hlo.S32 || v.Literal == nil || v.Literal.IsElided() || !plainArray(v.Shape) {
		return nil
	}
	vals := v.Literal.Data().([]int32)
	lo, hi := int32(0), int32(0)
	for _, x := range vals {
		lo, hi = min(lo, x), max(hi, x)
	}
	switch {
	case lo >= -128 && hi <= 127:
		return narrowed(v, hlo.S8, nil, nil)
	case lo >= 0 && hi <= 255:
		return narrowed(v, hlo.U8, nil, nil)
	case !zps:
		return nil
	}
	var dims []int64 // the non-contracting ones, z's
	for d := range int64(v.Shape.Rank()) {
		if !slices.Contains(contracting, d) {
			dims = append(dims, d)
		}
	}
	col := columnIndex(v.Shape, dims)
	zs := hlo.ArrayShape(hlo.S32, dimsAt(v.Shape.Dims, dims)...)
	n := int(zs.NumElements())
	los, his := make([]int32, n), make([]int32, n)
	for j := range los {
		los[j], his[j] = 1<<31-1, -1<<31
	}
	for i, x := range vals {
		j := col(i)
		los[j], his[j] = min(los[j], x), max(his[j], x)
	}
	z := hlo.NewLiteral(zs)
	for j := range los {
		if int64(his[j])-int64(los[j]) > 255 {
			return nil
		}
		z.SetInt64(j, -int64(los[j])-128) // x8 = v - (lo+128) fits s8
	}
	return narrowed(v, hlo.S8, z, dims)
}

// narrowed is v's split with zero points z along dims (nil: none): its
// values v+z as t.
func narrowed(v *hlo.Instruction, t hlo.DType, z *hlo.Literal, dims []int64) *constSplit {
	x8 := hlo.NewLiteral(v.Shape.WithDType(t))
	col := columnIndex(v.Shape, dims)
	for i, x := range v.Literal.Data().([]int32) {
		if z != nil {
			x += int32(z.GetInt64(col(i)))
		}
		x8.SetInt64(i, int64(x))
	}
	if z != nil && uniform(z) { // one zero point: per tensor
		one := hlo.NewLiteral(hlo.ArrayShape(hlo.S32))
		one.SetInt64(0, z.GetInt64(0))
		z, dims = one, nil
	}
	return &constSplit{x8: x8, z: z, dims: dims}
}

// emit adds the split's instructions to c and returns what replaces v:
// convert(x8), minus broadcast(z) when it has zero points.
func (s *constSplit) emit(c *hlo.Computation, v *hlo.Instruction, names *hlo.NameSet) *hlo.Instruction {
	add := func(name string, op hlo.Opcode, shape hlo.Shape, ops ...*hlo.Instruction) *hlo.Instruction {
		return c.AddInstruction(&hlo.Instruction{Name: names.Unique(v.Name + name), Opcode: op, Shape: shape, Operands: ops})
	}
	x8 := add(".narrow", hlo.OpConstant, s.x8.Shape())
	x8.Literal = s.x8
	w := add(".widen", hlo.OpConvert, v.Shape.Clone(), x8)
	if s.z == nil {
		return w
	}
	z := add(".zero_point", hlo.OpConstant, s.z.Shape())
	z.Literal = s.z
	zb := add(".zero_points", hlo.OpBroadcast, v.Shape.Clone(), z)
	zb.SetAttr("dimensions", slices.Clone(s.dims))
	if s.dims == nil {
		zb.SetAttr("dimensions", []int64{})
	}
	return add(".split", hlo.OpSubtract, v.Shape.Clone(), w, zb)
}

// columnIndex maps a row-major index of shape s to the row-major index
// of its coordinates along dims (0 for no dims).
func columnIndex(s hlo.Shape, dims []int64) func(i int) int {
	ss := hlo.RowMajorStrides(s.Dims)
	zs := hlo.RowMajorStrides(dimsAt(s.Dims, dims))
	return func(i int) int {
		j := 0
		for t, d := range dims {
			j += i / ss[d] % int(s.Dims[d]) * zs[t]
		}
		return j
	}
}

func dimsAt(xs []int64, at []int64) []int64 {
	out := make([]int64, len(at))
	for i, d := range at {
		out[i] = xs[d]
	}
	return out
}

// uniform reports whether every element of l is the same.
func uniform(l *hlo.Literal) bool {
	for i := 1; i < l.Len(); i++ {
		if l.GetInt64(i) != l.GetInt64(0) {
			return false
		}
	}
	return true
}
