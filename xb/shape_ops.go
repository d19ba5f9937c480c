package xb

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Broadcast adds leading dimensions to x, as XLA's Broadcast: the result
// has dimensions prefix followed by x's.
func Broadcast(x *Op, prefix ...int64) *Op {
	b := builderOf(x)
	if b == nil || !b.check("broadcast", x) {
		return poison(b)
	}
	r := x.Rank()
	out := append(slices.Clone(prefix), x.Shape().Dims...)
	mapping := make([]int64, r)
	for i := range mapping {
		mapping[i] = int64(len(prefix) + i)
	}
	return BroadcastInDim(x, out, mapping...)
}

// BroadcastInDim broadcasts x to dimensions out, operand dimension i going
// to result dimension mapping[i] (HLO's broadcast).
func BroadcastInDim(x *Op, out []int64, mapping ...int64) *Op {
	b := builderOf(x)
	if b == nil || !b.check("broadcast", x) {
		return poison(b)
	}
	return b.add(instr{op: hlo.OpBroadcast, operands: []*Op{x}, shape: hlo.ArrayShape(x.DType(), out...),
		attrs: []hlo.Attr{{Name: "dimensions", Value: nonNil(mapping)}}})
}

// BroadcastTo broadcasts x numpy-style to dims: x's dimensions align with
// the trailing ones of dims, and size-1 dimensions of x stretch.
func BroadcastTo(x *Op, dims ...int64) *Op {
	b := builderOf(x)
	if b == nil || !b.check("broadcast", x) {
		return poison(b)
	}
	xs := x.Shape()
	if xs.Rank() > len(dims) {
		b.errorf("broadcast: cannot broadcast %s to rank %d", xs.HumanString(), len(dims))
		return b.poisoned()
	}
	if slices.Equal(xs.Dims, dims) {
		return x
	}
	off := len(dims) - xs.Rank()
	var keep, mapping []int64
	for i, d := range xs.Dims {
		switch d {
		case dims[off+i]:
			keep = append(keep, d)
			mapping = append(mapping, int64(off+i))
		case 1:
			// Dropped by the reshape below, then broadcast.
		default:
			b.errorf("broadcast: cannot broadcast %s to %v", xs.HumanString(), dims)
			return b.poisoned()
		}
	}
	if len(keep) != xs.Rank() {
		x = Reshape(x, keep...)
	}
	return BroadcastInDim(x, dims, mapping...)
}

func nonNil(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}

// Reshape gives x's elements (in row-major order) new dimensions.
func Reshape(x *Op, dims ...int64) *Op {
	b := builderOf(x)
	if b == nil || !b.check("reshape", x) {
		return poison(b)
	}
	return b.add(instr{op: hlo.OpReshape, operands: []*Op{x}, shape: hlo.ArrayShape(x.DType(), dims...)})
}

// Transpose permutes x's dimensions: result dimension i is x's perm[i].
func Transpose(x *Op, perm ...int64) *Op {
	b := builderOf(x)
	if b == nil {
		return orphan()
	}
	return b.add(instr{op: hlo.OpTranspose, operands: []*Op{x}, attrs: []hlo.Attr{{Name: "dimensions", Value: nonNil(perm)}}})
}

// Slice takes x[starts:limits:strides] per dimension; nil strides are 1.
func Slice(x *Op, starts, limits, strides []int64) *Op {
	b := builderOf(x)
	if b == nil {
		return orphan()
	}
	if len(starts) != len(limits) || (strides != nil && len(strides) != len(starts)) {
		b.errorf("slice: %d starts, %d limits and %d strides", len(starts), len(limits), len(strides))
		return b.poisoned()
	}
	dims := make([]hlo.SliceDim, len(starts))
	for i := range dims {
		dims[i] = hlo.SliceDim{Start: starts[i], Limit: limits[i], Stride: 1}
		if strides != nil {
			dims[i].Stride = strides[i]
		}
	}
	return b.add(instr{op: hlo.OpSlice, operands: []*Op{x}, attrs: []hlo.Attr{{Name: "slice", Value: dims}}})
}

// SliceAxis takes x[start:limit] along one axis, all of the others.
func SliceAxis(x *Op, axis, start, limit int64) *Op {
	b := builderOf(x)
	if b == nil || !b.check("slice", x) {
		return poison(b)
	}
	if axis < 0 || axis >= int64(x.Rank()) {
		b.errorf("slice: axis %d is out of range for %s", axis, x.Shape().HumanString())
		return b.poisoned()
	}
	starts := make([]int64, x.Rank())
	limits := x.Dims()
	starts[axis], limits[axis] = start, limit
	return Slice(x, starts, limits, nil)
}

// Concatenate joins xs along axis.
func Concatenate(axis int64, xs ...*Op) *Op {
	b := builderOf(xs...)
	if b == nil {
		return orphan()
	}
	if len(xs) == 0 {
		b.errorf("concatenate: no operands")
		return b.poisoned()
	}
	return b.add(instr{op: hlo.OpConcatenate, operands: xs, attrs: []hlo.Attr{{Name: "dimensions", Value: []int64{axis}}}})
}

// Pad pads x with the scalar value: lo/hi edge padding (negative cuts) and
// interior padding per dimension.
func Pad(x, value *Op, config hlo.PaddingConfig) *Op {
	b := builderOf(x, value)
	if b == nil {
		return orphan()
	}
	return b.add(instr{op: hlo.OpPad, operands: []*Op{x, value}, attrs: []hlo.Attr{{Name: "padding", Value: slices.Clone(config)}}})
}

// Reverse reverses x along the given dimensions.
func Reverse(x *Op, dims ...int64) *Op {
	b := builderOf(x)
	if b == nil {
		return orphan()
	}
	return b.add(instr{op: hlo.OpReverse, operands: []*Op{x}, attrs: []hlo.Attr{{Name: "dimensions", Value: nonNil(dims)}}})
}

// DynamicSlice takes a slice of the given sizes at run-time start indices
// (one integer scalar per dimension, clamped into range).
func DynamicSlice(x *Op, starts []*Op, sizes ...int64) *Op {
	b := builderOf(append([]*Op{x}, starts...)...)
	if b == nil {
		return orphan()
	}
	return b.add(instr{op: hlo.OpDynamicSlice, operands: append([]*Op{x}, starts...),
		attrs: []hlo.Attr{{Name: "dynamic_slice_sizes", Value: nonNil(sizes)}}})
}

// DynamicUpdateSlice writes update into x at run-time start indices.
func DynamicUpdateSlice(x, update *Op, starts ...*Op) *Op {
	b := builderOf(append([]*Op{x, update}, starts...)...)
	if b == nil {
		return orphan()
	}
	return b.add(instr{op: hlo.OpDynamicUpdateSlice, operands: append([]*Op{x, update}, starts...)})
}

// Tuple groups values into a tuple (the way to return several results).
func (b *Builder) Tuple(xs ...*Op) *Op {
	if b == nil {
		return orphan()
	}
	return b.add(instr{op: hlo.OpTuple, operands: xs})
}

// GetTupleElement extracts element i of a tuple.
func GetTupleElement(t *Op, i int) *Op {
	b := builderOf(t)
	if b == nil {
		return orphan()
	}
	return b.add(instr{op: hlo.OpGetTupleElement, operands: []*Op{t}, attrs: []hlo.Attr{{Name: "index", Value: int64(i)}}})
}

// Split returns every element of a tuple.
func Split(t *Op) []*Op {
	out := make([]*Op, len(t.Shape().Tuple))
	for i := range out {
		out[i] = GetTupleElement(t, i)
	}
	return out
}
