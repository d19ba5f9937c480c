package eval

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// Whole-array rearrangements: broadcast, reshape, bitcast, transpose,
// reverse, iota, and the dynamic-size and copy-start/done bookkeeping.

// evalBroadcast maps operand dimension k to result dimension dimensions[k];
// the other result dimensions repeat it (source stride 0).
func evalBroadcast(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	src, out, err := mvUnary(in, ops)
	if err != nil {
		return nil, err
	}
	dims := in.Dimensions()
	if len(dims) != src.Shape().Rank() {
		return nil, fmt.Errorf("broadcast dimensions %v do not match operand rank %d", dims, src.Shape().Rank())
	}
	srcStrides := make([]int, in.Shape.Rank())
	opStrides := hlo.RowMajorStrides(src.Shape().Dims)
	for k, d := range dims {
		if d < 0 || int(d) >= in.Shape.Rank() || in.Shape.Dims[d] != src.Shape().Dims[k] {
			return nil, fmt.Errorf("broadcast dimension %d of %s does not fit result %s", d, src.Shape(), in.Shape)
		}
		srcStrides[d] = opStrides[k]
	}
	m := newMove(in.Shape.Dims, hlo.RowMajorStrides(in.Shape.Dims), srcStrides)
	return out, moveElems(out, src, m)
}

// evalReshape keeps the row-major element order, so it is a plain copy.
func evalReshape(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	src, out, err := mvUnary(in, ops)
	if err != nil {
		return nil, err
	}
	return out, mvCopyAll(out, src)
}

// evalBitcast reinterprets the operand's buffer in the result's shape. The
// buffer order is each shape's layout (literals store logical row-major),
// so the elements go through physical order: operand logical → operand
// physical, which is also result physical → result logical. With default
// layouts both steps are the identity and it is a reshape.
func evalBitcast(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	src, err := mvOperand(ops, 0)
	if err != nil {
		return nil, err
	}
	if in.Shape.IsArray() && in.Shape.DType != src.DType() {
		return nil, fmt.Errorf("bitcast from %s to %s changes the element type: %w", src.DType(), in.Shape.DType, ErrUnimplemented)
	}
	out, err := mvResult(in, src)
	if err != nil {
		return nil, err
	}
	if out.Len() != src.Len() {
		return nil, fmt.Errorf("bitcast from %s to %s changes the element count", src.Shape(), in.Shape)
	}
	srcPhys, srcDefault := mvPhysStrides(src.Shape())
	outPhys, outDefault := mvPhysStrides(in.Shape)
	if srcDefault && outDefault {
		return out, mvCopyAll(out, src)
	}
	buf := hlo.NewLiteral(hlo.ArrayShape(src.DType(), int64(src.Len())))
	toPhys := newMove(src.Shape().Dims, srcPhys, hlo.RowMajorStrides(src.Shape().Dims))
	if err := moveElems(buf, src, toPhys); err != nil {
		return nil, err
	}
	fromPhys := newMove(in.Shape.Dims, hlo.RowMajorStrides(in.Shape.Dims), outPhys)
	return out, moveElems(out, buf, fromPhys)
}

// mvPhysStrides gives each logical dimension's stride in the shape's
// layout order (minor_to_major), and whether that is plain row-major.
// Shapes without a (complete) layout are row-major.
func mvPhysStrides(s hlo.Shape) ([]int, bool) {
	st, rm := s.LayoutStrides(), hlo.RowMajorStrides(s.Dims)
	for i := range st {
		if st[i] != rm[i] && s.Dims[i] != 1 {
			return st, false
		}
	}
	return st, true
}

// evalTranspose: result dimension i is operand dimension dimensions[i], so
// stepping along result dimension i steps the operand by that dimension's
// stride.
func evalTranspose(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	src, out, err := mvUnary(in, ops)
	if err != nil {
		return nil, err
	}
	perm := in.Dimensions()
	rank := src.Shape().Rank()
	if len(perm) != rank || in.Shape.Rank() != rank {
		return nil, fmt.Errorf("transpose permutation %v does not match rank %d", perm, rank)
	}
	opStrides := hlo.RowMajorStrides(src.Shape().Dims)
	srcStrides := make([]int, rank)
	for i, p := range perm {
		if p < 0 || int(p) >= rank || src.Shape().Dims[p] != in.Shape.Dims[i] {
			return nil, fmt.Errorf("transpose permutation %v does not map %s to %s", perm, src.Shape(), in.Shape)
		}
		srcStrides[i] = opStrides[p]
	}
	m := newMove(in.Shape.Dims, hlo.RowMajorStrides(in.Shape.Dims), srcStrides)
	return out, moveElems(out, src, m)
}

// evalReverse reads the reversed dimensions from their last element
// backwards (a negative source stride).
func evalReverse(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	src, out, err := mvUnary(in, ops)
	if err != nil {
		return nil, err
	}
	dims := src.Shape().Dims
	if !in.Shape.SameDims(src.Shape()) {
		return nil, fmt.Errorf("reverse result %s differs from operand %s", in.Shape, src.Shape())
	}
	srcStrides := hlo.RowMajorStrides(dims)
	m := newMove(dims, hlo.RowMajorStrides(dims), srcStrides)
	flipped := make([]bool, len(dims))
	for _, d := range in.Dimensions() {
		if d < 0 || int(d) >= len(dims) || flipped[d] {
			return nil, fmt.Errorf("bad reverse dimension %d for %s", d, src.Shape())
		}
		flipped[d] = true
		m.srcOff += int(max(dims[d]-1, 0)) * srcStrides[d]
		srcStrides[d] = -srcStrides[d]
	}
	return out, moveElems(out, src, m)
}

// evalIota writes 0..n-1 once, converted to the element type, along the
// iota dimension, then broadcasts that vector over the other dimensions.
func evalIota(_ *Evaluator, in *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
	if !in.Shape.IsArray() {
		return nil, fmt.Errorf("iota result %s is not an array", in.Shape)
	}
	d, ok := in.Int("iota_dimension")
	if !ok || d < 0 || int(d) >= in.Shape.Rank() {
		return nil, fmt.Errorf("iota_dimension %d is not a dimension of %s", d, in.Shape)
	}
	n := in.Shape.Dims[d]
	vec := hlo.NewLiteral(hlo.ArrayShape(in.Shape.DType, n))
	for i := range int(n) {
		vec.SetInt64(i, int64(i))
	}
	out := hlo.NewLiteral(in.Shape)
	srcStrides := make([]int, in.Shape.Rank())
	srcStrides[d] = 1
	m := newMove(in.Shape.Dims, hlo.RowMajorStrides(in.Shape.Dims), srcStrides)
	return out, moveElems(out, vec, m)
}

// evalGetDimensionSize returns the operand's live size of one dimension
// (its bound when the dimension is static).
func evalGetDimensionSize(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	src, err := mvOperand(ops, 0)
	if err != nil {
		return nil, err
	}
	d, err := mvOneDim(in, src)
	if err != nil {
		return nil, err
	}
	if !in.Shape.IsArray() || in.Shape.Rank() != 0 {
		return nil, fmt.Errorf("get-dimension-size result %s is not a scalar", in.Shape)
	}
	out := hlo.NewLiteral(in.Shape)
	out.SetInt64(0, src.DynamicSize(d))
	return out, nil
}

// evalSetDimensionSize copies the operand and records operand 1 as the
// live size of the dimension; the storage keeps the bound's worth.
func evalSetDimensionSize(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	src, out, err := mvUnary(in, ops)
	if err != nil {
		return nil, err
	}
	size, err := mvOperand(ops, 1)
	if err != nil {
		return nil, err
	}
	d, err := mvOneDim(in, src)
	if err != nil {
		return nil, err
	}
	if err := mvCopyAll(out, src); err != nil {
		return nil, err
	}
	// Other dimensions keep the operand's live sizes.
	for k := range src.Shape().Rank() {
		if k != d && src.DynamicSize(k) != out.DynamicSize(k) {
			if err := out.SetDynamicSize(k, src.DynamicSize(k)); err != nil {
				return nil, err
			}
		}
	}
	return out, out.SetDynamicSize(d, mvIndex(size, 0))
}

// mvOneDim reads a `dimensions={d}` attribute naming one dimension of src.
func mvOneDim(in *hlo.Instruction, src *hlo.Literal) (int, error) {
	dims := in.Dimensions()
	if len(dims) != 1 || dims[0] < 0 || int(dims[0]) >= src.Shape().Rank() {
		return 0, fmt.Errorf("dimensions %v do not name one dimension of %s", dims, src.Shape())
	}
	return int(dims[0]), nil
}

// evalCopyStart completes the copy at once: the result is XLA's
// (destination, source, context) tuple, both buffers holding the operand.
func evalCopyStart(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if !in.Shape.IsTuple() || len(in.Shape.Tuple) < 2 {
		return nil, fmt.Errorf("copy-start result %s is not a (destination, source, ...) tuple", in.Shape)
	}
	elems := []*hlo.Literal{ops[0], ops[0]}
	for _, s := range in.Shape.Tuple[2:] {
		elems = append(elems, hlo.NewLiteral(s))
	}
	return hlo.MakeTupleLiteral(elems...), nil
}

// evalCopyDone returns the destination buffer of copy-start's tuple.
func evalCopyDone(_ *Evaluator, _ *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if len(ops[0].Elements()) == 0 {
		return nil, fmt.Errorf("copy-done operand %s is not a copy-start tuple", ops[0].Shape())
	}
	return ops[0].Elements()[0], nil
}
