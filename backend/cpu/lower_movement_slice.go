package cpu

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Sub-array movement: slice, concatenate, pad and dynamic-(update-)slice,
// each a box between the operand and a region of the result (see box).

// planSlice reads, per dimension, start, start+stride, ... below limit.
func planSlice(in *hlo.Instruction) *program {
	if !movable(in, 0) {
		return nil
	}
	v, _ := in.Attr("slice")
	sl, _ := v.([]hlo.SliceDim)
	dims := in.Operands[0].Shape.Dims
	if len(sl) != len(dims) || in.Shape.Rank() != len(dims) {
		return nil
	}
	srcStrides := hlo.RowMajorStrides(dims)
	b := newBox(0, in.Shape.Dims, hlo.RowMajorStrides(in.Shape.Dims), srcStrides)
	for d, s := range sl {
		n := int64(0)
		if s.Stride > 0 && s.Limit > s.Start {
			n = (s.Limit - s.Start + s.Stride - 1) / s.Stride
		}
		if s.Start < 0 || s.Limit > dims[d] || s.Stride <= 0 || n != in.Shape.Dims[d] {
			return nil
		}
		b.srcOff += int(s.Start) * srcStrides[d]
		srcStrides[d] *= int(s.Stride)
	}
	return &program{boxes: []box{b}}
}

// planConcat places the operands one after another along the dimension.
func planConcat(in *hlo.Instruction) *program {
	dims := in.Dimensions()
	rank := in.Shape.Rank()
	if len(dims) != 1 || dims[0] < 0 || int(dims[0]) >= rank || len(in.Operands) == 0 {
		return nil
	}
	d := int(dims[0])
	outStrides := hlo.RowMajorStrides(in.Shape.Dims)
	p := &program{}
	at := int64(0)
	for i, o := range in.Operands {
		if !movable(in, i) || o.Shape.Rank() != rank {
			return nil
		}
		for k := range rank {
			if k != d && o.Shape.Dims[k] != in.Shape.Dims[k] {
				return nil
			}
		}
		b := newBox(i, o.Shape.Dims, outStrides, hlo.RowMajorStrides(o.Shape.Dims))
		b.dstOff = int(at) * outStrides[d]
		p.boxes = append(p.boxes, b)
		at += o.Shape.Dims[d]
	}
	if at != in.Shape.Dims[d] {
		return nil
	}
	return p
}

// planPad fills the result with the padding value, then moves the part of
// the operand that survives negative (cropping) edge padding: operand
// element j of a dimension lands at lo + j·(interior+1).
func planPad(in *hlo.Instruction) *program {
	if !movable(in, 0, 1) || in.Operands[1].Shape.Rank() != 0 {
		return nil
	}
	v, _ := in.Attr("padding")
	cfg, _ := v.(hlo.PaddingConfig)
	dims := in.Operands[0].Shape.Dims
	if len(cfg) != len(dims) || in.Shape.Rank() != len(dims) {
		return nil
	}
	outStrides := hlo.RowMajorStrides(in.Shape.Dims)
	p := &program{boxes: []box{newBox(1, in.Shape.Dims, outStrides, make([]int, len(dims)))}}
	srcStrides := hlo.RowMajorStrides(dims)
	b := newBox(0, make([]int64, len(dims)), make([]int, len(dims)), srcStrides)
	for d, pd := range cfg {
		want := pd.Lo + pd.Hi + dims[d] + max(dims[d]-1, 0)*pd.Interior
		if pd.Interior < 0 || want != in.Shape.Dims[d] {
			return nil
		}
		first, count := padSpan(dims[d], in.Shape.Dims[d], pd)
		if count <= 0 {
			return p // everything cropped: only padding remains
		}
		step := pd.Interior + 1
		b.dims[d] = int(count)
		b.srcOff += int(first) * srcStrides[d]
		b.dstOff += int(pd.Lo+first*step) * outStrides[d]
		b.dstStrides[d] = int(step) * outStrides[d]
	}
	p.boxes = append(p.boxes, b)
	return p
}

// padSpan returns the first operand index along a dimension whose padded
// position lo + j·(interior+1) is inside [0, outSize), and how many
// consecutive ones are.
func padSpan(n, outSize int64, p hlo.PadDim) (first, count int64) {
	step := p.Interior + 1
	if p.Lo < 0 {
		first = (-p.Lo + step - 1) / step
	}
	last := min(n-1, floorDiv(outSize-1-p.Lo, step))
	return first, last - first + 1
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// dynStarts reads the start indices of dynamic-(update-)slice — one
// scalar operand per dimension, or the older single index vector — and
// clamps each so the window lies within the operand, as XLA does.
type dynStarts struct {
	first   int     // the operand holding the first start index
	vector  bool    // one rank-1 index operand rather than scalars
	limits  []int64 // the largest start of each dimension
	strides []int   // of the array the starts index
	dst     bool    // the starts place the destination, not the source
}

func newDynStarts(in *hlo.Instruction, first int, dims, sizes []int64) *dynStarts {
	rank := len(dims)
	s := &dynStarts{first: first, limits: make([]int64, rank), strides: hlo.RowMajorStrides(dims)}
	idx := in.Operands[first:]
	switch {
	case len(idx) == 1 && idx[0].Shape.Rank() == 1 && idx[0].Shape.Dims[0] == int64(rank):
		s.vector = true
	case len(idx) != rank:
		return nil
	}
	for _, o := range idx {
		if !plainArray(o.Shape) || !o.Shape.DType.IsInteger() || (!s.vector && o.Shape.Rank() != 0) {
			return nil
		}
	}
	for d := range rank {
		if sizes[d] < 0 || sizes[d] > dims[d] {
			return nil
		}
		s.limits[d] = dims[d] - sizes[d]
	}
	return s
}

// offset is the clamped starts' storage offset.
func (s *dynStarts) offset(ops []*hlo.Literal) int {
	off := 0
	for d, hi := range s.limits {
		var v int64
		if s.vector {
			v = indexAt(ops[s.first], d)
		} else {
			v = indexAt(ops[s.first+d], 0)
		}
		off += int(min(max(v, 0), hi)) * s.strides[d]
	}
	return off
}

// indexAt reads an index as int64; unsigned values beyond int64 saturate,
// which clamping then treats as too large.
func indexAt(l *hlo.Literal, i int) int64 {
	if l.DType().IsUnsigned() {
		return int64(min(l.GetUint64(i), 1<<63-1))
	}
	return l.GetInt64(i)
}

// planDynamicSlice is a unit-stride slice at run-time starts.
func planDynamicSlice(in *hlo.Instruction) *program {
	if !movable(in, 0) {
		return nil
	}
	sizes := in.Shape.Dims
	if s, ok := in.Ints("dynamic_slice_sizes"); ok && !slices.Equal(s, sizes) {
		return nil
	}
	dims := in.Operands[0].Shape.Dims
	dyn := newDynStarts(in, 1, dims, sizes)
	if dyn == nil || len(dims) != len(sizes) {
		return nil
	}
	b := newBox(0, sizes, hlo.RowMajorStrides(sizes), hlo.RowMajorStrides(dims))
	b.moved = true
	return &program{boxes: []box{b}, dyn: dyn}
}

// planDynamicUpdateSlice copies operand 0 (unless the result is computed
// in place over it), then writes the update at run-time starts.
func planDynamicUpdateSlice(in *hlo.Instruction) *program {
	if !movable(in, 0, 1) || !in.Shape.SameDims(in.Operands[0].Shape) {
		return nil
	}
	dims, ud := in.Shape.Dims, in.Operands[1].Shape.Dims
	dyn := newDynStarts(in, 2, dims, ud)
	if dyn == nil || len(ud) != len(dims) {
		return nil
	}
	dyn.dst = true
	whole := newBox(0, []int64{in.Shape.NumElements()}, []int{1}, []int{1})
	whole.inPlace = true
	upd := newBox(1, ud, hlo.RowMajorStrides(dims), hlo.RowMajorStrides(ud))
	upd.moved = true
	return &program{boxes: []box{whole, upd}, dyn: dyn}
}
