package eval

import (
	"fmt"
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Sub-array ops: slice, dynamic-slice, dynamic-update-slice, concatenate
// and pad. Each moves one box between the operand and a region of the
// result.

// evalSlice reads, per dimension, start, start+stride, ... below limit.
func evalSlice(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	src, out, err := mvUnary(in, ops)
	if err != nil {
		return nil, err
	}
	v, _ := in.Attr("slice")
	sl, _ := v.([]hlo.SliceDim)
	dims := src.Shape().Dims
	if len(sl) != len(dims) || in.Shape.Rank() != len(dims) {
		return nil, fmt.Errorf("slice %s does not match operand %s", hlo.SliceString(sl), src.Shape())
	}
	srcStrides := hlo.RowMajorStrides(dims)
	m := newMove(in.Shape.Dims, hlo.RowMajorStrides(in.Shape.Dims), srcStrides)
	for d, s := range sl {
		n := int64(0)
		if s.Stride > 0 && s.Limit > s.Start {
			n = (s.Limit - s.Start + s.Stride - 1) / s.Stride
		}
		if s.Start < 0 || s.Limit > dims[d] || s.Stride <= 0 || n != in.Shape.Dims[d] {
			return nil, fmt.Errorf("slice %s does not fit operand %s and result %s", hlo.SliceString(sl), src.Shape(), in.Shape)
		}
		m.srcOff += int(s.Start) * srcStrides[d]
		srcStrides[d] *= int(s.Stride)
	}
	return out, moveElems(out, src, m)
}

// mvIndex reads element i of an integer index array as int64; unsigned
// values beyond int64 saturate, which clamping then treats as too large.
func mvIndex(l *hlo.Literal, i int) int64 {
	if l.DType().IsUnsigned() {
		return int64(min(l.GetUint64(i), math.MaxInt64))
	}
	return l.GetInt64(i)
}

// mvClampedStarts reads the start indices of dynamic-(update-)slice — one
// scalar per dimension, or the older single index vector — and clamps each
// so the window [start, start+size) lies within the operand.
func mvClampedStarts(idx []*hlo.Literal, opDims, sizes []int64) ([]int64, error) {
	rank := len(opDims)
	var read func(d int) int64
	switch {
	case len(idx) == rank && mvAllScalars(idx):
		read = func(d int) int64 { return mvIndex(idx[d], 0) }
	case len(idx) == 1 && idx[0].Shape().Rank() == 1 && idx[0].Len() == rank:
		read = func(d int) int64 { return mvIndex(idx[0], d) }
	default:
		return nil, fmt.Errorf("%d start index operands for rank %d", len(idx), rank)
	}
	starts := make([]int64, rank)
	for d := range rank {
		if sizes[d] < 0 || sizes[d] > opDims[d] {
			return nil, fmt.Errorf("size %d of dimension %d exceeds the operand's %d", sizes[d], d, opDims[d])
		}
		starts[d] = min(max(read(d), 0), opDims[d]-sizes[d])
	}
	return starts, nil
}

func mvAllScalars(ls []*hlo.Literal) bool {
	for _, l := range ls {
		if l.Data() == nil || l.Len() != 1 || l.Shape().Rank() != 0 {
			return false
		}
	}
	return true
}

// evalDynamicSlice is a unit-stride slice at run-time (clamped) starts.
func evalDynamicSlice(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	src, out, err := mvUnary(in, ops)
	if err != nil {
		return nil, err
	}
	sizes := in.Shape.Dims
	if s, ok := in.Ints("dynamic_slice_sizes"); ok {
		sizes = s
	}
	if !slices.Equal(sizes, in.Shape.Dims) {
		return nil, fmt.Errorf("dynamic_slice_sizes %v do not match result %s", sizes, in.Shape)
	}
	starts, err := mvClampedStarts(ops[1:], src.Shape().Dims, sizes)
	if err != nil {
		return nil, err
	}
	srcStrides := hlo.RowMajorStrides(src.Shape().Dims)
	m := newMove(sizes, hlo.RowMajorStrides(sizes), srcStrides)
	m.srcOff = mvOffset(starts, srcStrides)
	return out, moveElems(out, src, m)
}

// evalDynamicUpdateSlice copies the operand, then writes the update at
// run-time (clamped) starts.
func evalDynamicUpdateSlice(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	src, out, err := mvUnary(in, ops)
	if err != nil {
		return nil, err
	}
	upd, err := mvOperand(ops, 1)
	if err != nil {
		return nil, err
	}
	if err := mvCopyAll(out, src); err != nil {
		return nil, err
	}
	ud := upd.Shape().Dims
	if len(ud) != len(in.Shape.Dims) {
		return nil, fmt.Errorf("update %s does not match operand %s", upd.Shape(), src.Shape())
	}
	starts, err := mvClampedStarts(ops[2:], in.Shape.Dims, ud)
	if err != nil {
		return nil, err
	}
	outStrides := hlo.RowMajorStrides(in.Shape.Dims)
	m := newMove(ud, outStrides, hlo.RowMajorStrides(ud))
	m.dstOff = mvOffset(starts, outStrides)
	return out, moveElems(out, upd, m)
}

func mvOffset(index []int64, strides []int) int {
	off := 0
	for d, i := range index {
		off += int(i) * strides[d]
	}
	return off
}

// evalConcatenate places the operands one after another along dimension
// d of the result.
func evalConcatenate(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if len(ops) == 0 {
		return nil, fmt.Errorf("concatenate has no operands")
	}
	_, out, err := mvUnary(in, ops)
	if err != nil {
		return nil, err
	}
	dims := in.Dimensions()
	rank := in.Shape.Rank()
	if len(dims) != 1 || dims[0] < 0 || int(dims[0]) >= rank {
		return nil, fmt.Errorf("concatenate dimensions %v do not name one dimension of %s", dims, in.Shape)
	}
	d := int(dims[0])
	outStrides := hlo.RowMajorStrides(in.Shape.Dims)
	at := int64(0)
	for i := range ops {
		src, err := mvOperand(ops, i)
		if err != nil {
			return nil, err
		}
		sd := src.Shape().Dims
		if err := mvFitsConcat(sd, in.Shape.Dims, d, at); err != nil {
			return nil, err
		}
		m := newMove(sd, outStrides, hlo.RowMajorStrides(sd))
		m.dstOff = int(at) * outStrides[d]
		if err := moveElems(out, src, m); err != nil {
			return nil, err
		}
		at += sd[d]
	}
	if at != in.Shape.Dims[d] {
		return nil, fmt.Errorf("concatenated sizes add up to %d, result dimension %d is %d", at, d, in.Shape.Dims[d])
	}
	return out, nil
}

// mvFitsConcat checks an operand against the result: equal sizes except
// along d, where it must fit from position at.
func mvFitsConcat(sd, od []int64, d int, at int64) error {
	if len(sd) != len(od) {
		return fmt.Errorf("concatenate operand rank %d differs from result rank %d", len(sd), len(od))
	}
	for k := range sd {
		if (k == d && at+sd[k] > od[k]) || (k != d && sd[k] != od[k]) {
			return fmt.Errorf("concatenate operand dimensions %v do not fit result %v", sd, od)
		}
	}
	return nil
}

// evalPad fills the result with the padding value, then moves the part of
// the operand that survives negative (cropping) edge padding. Operand
// element j of a dimension lands at lo + j·(interior+1).
func evalPad(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	src, out, err := mvUnary(in, ops)
	if err != nil {
		return nil, err
	}
	pv, err := mvOperand(ops, 1)
	if err != nil {
		return nil, err
	}
	v, _ := in.Attr("padding")
	cfg, _ := v.(hlo.PaddingConfig)
	dims := src.Shape().Dims
	if len(cfg) != len(dims) || in.Shape.Rank() != len(dims) {
		return nil, fmt.Errorf("padding %s does not match operand %s", cfg, src.Shape())
	}
	if err := mvFill(out, pv); err != nil {
		return nil, err
	}
	outStrides := hlo.RowMajorStrides(in.Shape.Dims)
	srcStrides := hlo.RowMajorStrides(dims)
	box := make([]int64, len(dims))
	dstStrides := make([]int, len(dims))
	m := newMove(box, dstStrides, srcStrides)
	for d, p := range cfg {
		want := p.Lo + p.Hi + dims[d] + max(dims[d]-1, 0)*p.Interior
		if p.Interior < 0 || want != in.Shape.Dims[d] {
			return nil, fmt.Errorf("padding %s does not turn %s into %s", cfg, src.Shape(), in.Shape)
		}
		first, count := mvPadSpan(dims[d], in.Shape.Dims[d], p)
		if count <= 0 {
			return out, nil // everything cropped: only padding remains
		}
		step := p.Interior + 1
		m.dims[d] = int(count)
		m.srcOff += int(first) * srcStrides[d]
		m.dstOff += int(p.Lo+first*step) * outStrides[d]
		dstStrides[d] = int(step) * outStrides[d]
	}
	return out, moveElems(out, src, m)
}

// mvPadSpan returns the first operand index along a dimension whose padded
// position lo + j·(interior+1) is inside [0, outSize), and how many
// consecutive ones are.
func mvPadSpan(n, outSize int64, p hlo.PadDim) (first, count int64) {
	step := p.Interior + 1
	first = 0
	if p.Lo < 0 {
		first = mvCeilDiv(-p.Lo, step)
	}
	last := min(n-1, mvFloorDiv(outSize-1-p.Lo, step))
	return first, last - first + 1
}

func mvFloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func mvCeilDiv(a, b int64) int64 { return -mvFloorDiv(-a, b) }
