package tile

import (
	"github.com/axle-ml/axle/hlo"
)

// Index maps: inside a loop fusion, broadcast, transpose, slice, reverse
// and reshape do not compute anything; they say which operand element
// each output element reads. A chain of them over a fusion parameter
// composes into one affine map, operand index = off + Σ idx[d]·strides[d]
// over the output's dimensions, which a tile walks with an odometer: one
// add and one compare per element, never a materialized intermediate.

// affineMap maps a multi-index over dims to a linear operand index.
type affineMap struct {
	off           int
	dims, strides []int
}

// period is the number of elements after which the map's values repeat
// because every dimension outside the innermost non-broadcast ones has
// stride 0, or 0 if they do not repeat (or are one value throughout).
func (m affineMap) period() int {
	// (A dimension of size 1 is broadcast too, whatever its stride: the
	// mask [1, 128] of an attention's scores [1, 12, 128, 128] keeps
	// its leading 1, and without its period was gathered every tile.)
	k, repeats := 0, false
	for k < len(m.strides) && (m.strides[k] == 0 || m.dims[k] == 1) {
		repeats = repeats || m.dims[k] > 1
		k++
	}
	if !repeats || k == len(m.strides) {
		return 0
	}
	p := 1
	for _, d := range m.dims[k:] {
		p *= d
	}
	return p
}

// IndexOp reports whether a tile program reads in through an index map.
func IndexOp(in *hlo.Instruction) bool {
	switch in.Opcode {
	case hlo.OpBroadcast, hlo.OpTranspose, hlo.OpSlice, hlo.OpReverse, hlo.OpReshape:
	default:
		return false
	}
	o := in.Operands[0].Shape
	return Type(in.Shape.DType) && o.DType == in.Shape.DType && !in.Shape.IsDynamic() && !o.IsDynamic() &&
		len(in.ControlPredecessors) == 0
}

// mapOf composes the index maps from x down to the fusion parameter its
// chain reads, or reports that the chain is not affine (a reshape of a
// transposed or sliced view) or does not end at a parameter.
func mapOf(x *hlo.Instruction) (param int, m affineMap, ok bool) {
	return mapOfFrom(x, false)
}

// mapOfFrom is mapOf, where with anyLeaf any instruction other than an
// index op ends the chain as a parameter would (for the fuser, before
// the chain is in a fusion).
func mapOfFrom(x *hlo.Instruction, anyLeaf bool) (param int, m affineMap, ok bool) {
	if x.Opcode == hlo.OpParameter || anyLeaf && !IndexOp(x) {
		return int(x.ParamNumber), affineMap{dims: hlo.Ints(x.Shape.Dims), strides: hlo.RowMajorStrides(x.Shape.Dims)}, true
	}
	if !IndexOp(x) {
		return 0, m, false
	}
	param, o, ok := mapOfFrom(x.Operands[0], anyLeaf)
	if !ok {
		return 0, m, false
	}
	m = affineMap{off: o.off, dims: hlo.Ints(x.Shape.Dims), strides: make([]int, x.Shape.Rank())}
	switch x.Opcode {
	case hlo.OpBroadcast:
		for k, d := range x.Dimensions() {
			m.strides[d] = o.strides[k]
		}
	case hlo.OpTranspose:
		for d, p := range x.Dimensions() {
			m.strides[d] = o.strides[p]
		}
	case hlo.OpSlice:
		v, _ := x.Attr("slice")
		sl, _ := v.([]hlo.SliceDim)
		if len(sl) != len(o.dims) {
			return 0, m, false
		}
		for d, s := range sl {
			m.off += int(s.Start) * o.strides[d]
			m.strides[d] = int(max(s.Stride, 1)) * o.strides[d]
		}
	case hlo.OpReverse:
		copy(m.strides, o.strides)
		for _, d := range x.Dimensions() {
			m.off += (o.dims[d] - 1) * o.strides[d]
			m.strides[d] = -o.strides[d]
		}
	case hlo.OpReshape:
		if !contiguous(o) {
			return 0, m, false
		}
		m.strides = hlo.RowMajorStrides(x.Shape.Dims)
	}
	return param, m, true
}

// contiguous: the map reads its operand row-major without gaps, so a
// reshape of it is a reshape of the operand's storage.
func contiguous(m affineMap) bool {
	want := 1
	for d := len(m.dims) - 1; d >= 0; d-- {
		if m.dims[d] != 1 && m.strides[d] != want {
			return false
		}
		want *= m.dims[d]
	}
	return true
}

// ReshapeReadsAffine reports whether a reshape of view v (an index op
// over whatever unfused values its chain reads) is still an affine view
// of those values: v's map reads them row-major without gaps. A reshape
// that merges a transposed or broadcast dimension pair (a pixel shuffle,
// a nearest-neighbour upsampling) is not, and a fusion holding both
// would have no tile form.
func ReshapeReadsAffine(v *hlo.Instruction) bool {
	_, m, ok := mapOfFrom(v, true)
	return ok && contiguous(m)
}
