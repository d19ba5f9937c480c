package hlo

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Shape rules of ops that move, select or re-view data: broadcast, reshape,
// transpose, slices, concatenate, pad, reverse, iota, tuples, dimension
// sizes, and the ops that pass their operand through.

var shapeOpRules = map[Opcode]inferRule{
	OpBroadcast:           inferBroadcast,
	OpReshape:             inferReshape,
	OpDynamicReshape:      inferDynamicReshape,
	OpTranspose:           inferTranspose,
	OpSlice:               inferSlice,
	OpDynamicSlice:        inferDynamicSlice,
	OpDynamicUpdateSlice:  inferDynamicUpdateSlice,
	OpConcatenate:         inferConcatenate,
	OpPad:                 inferPad,
	OpReverse:             inferReverse,
	OpIota:                inferIota,
	OpTuple:               inferTuple,
	OpGetTupleElement:     inferGetTupleElement,
	OpGetDimensionSize:    inferGetDimensionSize,
	OpSetDimensionSize:    inferSetDimensionSize,
	OpBitcast:             inferBitcast,
	OpConstant:            inferConstant,
	OpParameter:           inferFromDeclared("a parameter's shape"),
	OpCopy:                inferPassThrough,
	OpDomain:              inferPassThrough,
	OpOptimizationBarrier: inferPassThrough,
}

// inferFromDeclared is the rule of ops whose shape is whatever is written.
func inferFromDeclared(what string) inferRule {
	return func(in *Instruction, _ []Shape) (Shape, error) {
		d, err := needDeclared(in, what)
		if err != nil {
			return Shape{}, err
		}
		return d.Clone(), nil
	}
}

// inferBitcast: a bitcast reinterprets the operand's storage, so the
// result has as many bits as the operand (XLA checks this only in
// layout-sensitive verification; Axle's evaluator and backends copy or
// alias exactly the operand's bytes, so it checks always).
func inferBitcast(in *Instruction, ops []Shape) (Shape, error) {
	d, err := needDeclared(in, "a bitcast's result shape")
	if err != nil {
		return Shape{}, err
	}
	x := ops[0]
	if x.IsArray() && d.IsArray() && elementsKnown(x) && elementsKnown(d) {
		xn, dn := x.NumElements(), d.NumElements() // exact for shapes that pass validShape
		xh, xl := bits.Mul64(uint64(xn), uint64(x.DType.Bits()))
		dh, dl := bits.Mul64(uint64(dn), uint64(d.DType.Bits()))
		if xh != dh || xl != dl {
			return Shape{}, fmt.Errorf("bitcast cannot change the size in bits: operand %s has %d elements of %d bits, result %s has %d elements of %d bits",
				x.HumanString(), xn, x.DType.Bits(), d.HumanString(), dn, d.DType.Bits())
		}
	}
	return d.Clone(), nil
}

// inferConstant: a constant has its literal's shape.
func inferConstant(in *Instruction, _ []Shape) (Shape, error) {
	if in.Literal == nil {
		return Shape{}, errors.New("constant is required to have a valid literal")
	}
	return in.Literal.Shape().Clone(), nil
}

// inferPassThrough: copy, domain and opt-barrier have their operand's shape.
func inferPassThrough(in *Instruction, ops []Shape) (Shape, error) {
	if in.Opcode == OpCopy {
		return withDefaultLayout(ops[0].Clone()), nil
	}
	return ops[0].Clone(), nil
}

// inferBroadcast checks the written shape: HLO's broadcast maps operand
// dimension i to result dimension dimensions[i], with equal sizes.
func inferBroadcast(in *Instruction, ops []Shape) (Shape, error) {
	x := ops[0]
	if err := expectArray(x, "operand of broadcast"); err != nil {
		return Shape{}, err
	}
	d, err := needDeclared(in, "the broadcast result shape")
	if err != nil {
		return Shape{}, err
	}
	if !d.IsArray() {
		return Shape{}, fmt.Errorf("result must be an array, got %s", d.HumanString())
	}
	if d.DType != x.DType {
		return Shape{}, fmt.Errorf("broadcast cannot change the element type: %s to %s", x.DType, d.DType)
	}
	dims := in.Dimensions()
	if len(dims) != x.Rank() {
		return Shape{}, fmt.Errorf("broadcast has invalid number of dimensions: %d != operand rank %d", len(dims), x.Rank())
	}
	for i, od := range dims {
		if od < 0 || od >= int64(d.Rank()) {
			return Shape{}, fmt.Errorf("broadcast dimension %d is out of bounds for result rank %d", od, d.Rank())
		}
		// Each operand dimension goes to its own result dimension. (An
		// order other than increasing is a transposing broadcast, which
		// XLA's verifier accepts and xb's gradients emit.)
		if slices.Contains(dims[:i], od) {
			return Shape{}, fmt.Errorf("broadcast dimension %d is repeated in dimensions={%s}", od, joinInts(dims))
		}
		if !dimsMatch(d.Dims[od:od+1], x.Dims[i:i+1]) {
			return Shape{}, fmt.Errorf("operand dimension %d (size %d) does not match result dimension %d (size %d)", i, x.Dims[i], od, d.Dims[od])
		}
	}
	return makeArray(d.DType, d.Dims, dynFlags(d)), nil
}

// elementsKnown reports whether a shape's element count is a number
// (no unbounded dimension).
func elementsKnown(s Shape) bool { return !s.IsUnbounded() }

func inferReshape(in *Instruction, ops []Shape) (Shape, error) {
	x := ops[0]
	if err := expectArray(x, "reshape"); err != nil {
		return Shape{}, err
	}
	d, err := needDeclared(in, "the reshape result shape")
	if err != nil {
		return Shape{}, err
	}
	if !d.IsArray() || d.DType != x.DType {
		return Shape{}, fmt.Errorf("reshape cannot change the element type: %s to %s", x.HumanString(), d.HumanString())
	}
	if elementsKnown(x) && elementsKnown(d) && x.NumElements() != d.NumElements() {
		return Shape{}, fmt.Errorf("reshape operation has mismatched element counts: from=%d (%s) to=%d (%s)",
			x.NumElements(), x.HumanString(), d.NumElements(), d.HumanString())
	}
	return makeArray(d.DType, d.Dims, dynFlags(d)), nil
}

func inferDynamicReshape(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) == 0 {
		return Shape{}, errors.New("needs an operand")
	}
	x := ops[0]
	d, err := needDeclared(in, "the dynamic-reshape result shape")
	if err != nil {
		return Shape{}, err
	}
	if !x.IsArray() || !d.IsArray() || d.DType != x.DType {
		return Shape{}, fmt.Errorf("dynamic-reshape cannot change the element type: %s to %s", x.HumanString(), d.HumanString())
	}
	if elementsKnown(x) && elementsKnown(d) && x.NumElements() != d.NumElements() {
		return Shape{}, fmt.Errorf("reshape operation has mismatched element counts: from=%d (%s) to=%d (%s)",
			x.NumElements(), x.HumanString(), d.NumElements(), d.HumanString())
	}
	if d.Rank()+1 != len(ops) {
		return Shape{}, fmt.Errorf("expects one dimension size operand per result dimension: %d, got %d", d.Rank(), len(ops)-1)
	}
	for i, s := range ops[1:] {
		if !isScalarOf(s, S32) {
			return Shape{}, fmt.Errorf("dimension size operand %d must be an s32 scalar, got %s", i+1, s.HumanString())
		}
	}
	return makeArray(d.DType, d.Dims, dynFlags(d)), nil
}

// inferTranspose: result dimension i is operand dimension dimensions[i].
func inferTranspose(in *Instruction, ops []Shape) (Shape, error) {
	x := ops[0]
	if err := expectArray(x, "transpose"); err != nil {
		return Shape{}, err
	}
	perm := in.Dimensions()
	if !isPermutation(perm, x.Rank()) {
		return Shape{}, fmt.Errorf("transpose dimensions [%s] are not a permutation of the operand dimensions (operand shape is %s)", joinInts(perm), x.HumanString())
	}
	dims := make([]int64, len(perm))
	dyn := make([]bool, len(perm))
	for i, p := range perm {
		dims[i] = x.Dims[p]
		dyn[i] = x.IsDynamicDim(int(p))
	}
	return makeArray(x.DType, dims, dyn), nil
}

func inferSlice(in *Instruction, ops []Shape) (Shape, error) {
	x := ops[0]
	if err := expectArray(x, "operand of slice"); err != nil {
		return Shape{}, err
	}
	v, _ := in.Attr("slice")
	sl, _ := v.([]SliceDim)
	if len(sl) != x.Rank() {
		return Shape{}, fmt.Errorf("slice index count does not match argument rank: %d vs %d", len(sl), x.Rank())
	}
	dims := make([]int64, len(sl))
	dyn := make([]bool, len(sl))
	for i, s := range sl {
		switch {
		case s.Start < 0:
			return Shape{}, fmt.Errorf("negative start index to slice: %d", s.Start)
		case x.Dims[i] != Unbounded && s.Limit > x.Dims[i]:
			return Shape{}, fmt.Errorf("limit index (%d) must be less than or equal to dimension size (%d) in slice of %s", s.Limit, x.Dims[i], x.HumanString())
		case s.Start > s.Limit:
			return Shape{}, fmt.Errorf("limit index (%d) must be greater or equal to start index (%d) in slice with positive stride", s.Limit, s.Start)
		case s.Stride <= 0:
			return Shape{}, fmt.Errorf("stride (%d) must be positive", s.Stride)
		}
		dims[i] = (s.Limit - s.Start + s.Stride - 1) / s.Stride
		// Slicing one element out of a dynamic dimension makes it static.
		dyn[i] = dims[i] != 1 && x.IsDynamicDim(i)
	}
	return makeArray(x.DType, dims, dyn), nil
}

// checkStartIndices validates dynamic-slice and dynamic-update-slice start
// indices: one rank-1 integer array (old form) or one integer scalar per
// operand dimension, all of one type.
func checkStartIndices(x Shape, idx []Shape) error {
	if len(idx) == 1 && idx[0].Rank() == 1 {
		s := idx[0]
		if !s.DType.IsInteger() {
			return errors.New("start indices must be of integral type")
		}
		if s.Dims[0] != int64(x.Rank()) {
			return fmt.Errorf("start number of dimensions %d (%s) must match rank %d of slice input (%s)", s.Dims[0], s.HumanString(), x.Rank(), x.HumanString())
		}
		return nil
	}
	if len(idx) != x.Rank() {
		return fmt.Errorf("start number of dimensions %d must match rank %d of slice input (%s)", len(idx), x.Rank(), x.HumanString())
	}
	for _, s := range idx {
		if !s.IsScalar() {
			return fmt.Errorf("indices must be scalar, not %s", s.HumanString())
		}
		if !s.DType.IsInteger() {
			return errors.New("start indices must be of integral type")
		}
		if s.DType != idx[0].DType {
			return fmt.Errorf("start indices must all have the same shape, got mismatching indices with shapes %s and %s", idx[0].HumanString(), s.HumanString())
		}
	}
	return nil
}

func inferDynamicSlice(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) == 0 {
		return Shape{}, errors.New("needs an operand")
	}
	x := ops[0]
	if err := expectArray(x, "operand of dynamic slice"); err != nil {
		return Shape{}, err
	}
	if err := checkStartIndices(x, ops[1:]); err != nil {
		return Shape{}, err
	}
	sizes := ints(in, "dynamic_slice_sizes")
	if len(sizes) != x.Rank() {
		return Shape{}, fmt.Errorf("dynamic slice index count does not match argument rank: %d vs %d", len(sizes), x.Rank())
	}
	for i, s := range sizes {
		if s < 0 {
			return Shape{}, fmt.Errorf("negative size index to dynamic slice: %d", s)
		}
		if x.Dims[i] != Unbounded && s > x.Dims[i] {
			return Shape{}, fmt.Errorf("slice dim size %d greater than dynamic slice dimension: %d", s, x.Dims[i])
		}
	}
	return makeArray(x.DType, sizes, nil), nil
}

func inferDynamicUpdateSlice(_ *Instruction, ops []Shape) (Shape, error) {
	if len(ops) < 2 {
		return Shape{}, fmt.Errorf("needs an operand and an update, has %d operands", len(ops))
	}
	x, upd := ops[0], ops[1]
	if err := expectArray(x, "operand of dynamic update slice"); err != nil {
		return Shape{}, err
	}
	if err := expectArray(upd, "update of dynamic update slice"); err != nil {
		return Shape{}, err
	}
	if err := checkStartIndices(x, ops[2:]); err != nil {
		return Shape{}, err
	}
	if upd.Rank() != x.Rank() {
		return Shape{}, fmt.Errorf("dynamic update slice update rank does not match argument rank: %d vs %d", upd.Rank(), x.Rank())
	}
	if !sameTypeIgnoringFP(x.DType, upd.DType) {
		return Shape{}, fmt.Errorf("dynamic update slice update element type does not match argument: %s vs %s", x.DType, upd.DType)
	}
	dyn := dynFlags(x)
	for i := range x.Dims {
		if x.Dims[i] != Unbounded && upd.Dims[i] > x.Dims[i] {
			return Shape{}, fmt.Errorf("update dim size %d greater than dynamic slice dimension: %d", upd.Dims[i], x.Dims[i])
		}
		// A full-size dynamic update makes the result dynamic there too.
		dyn[i] = dyn[i] || (upd.IsDynamicDim(i) && upd.Dims[i] == x.Dims[i])
	}
	return makeArray(x.DType, x.Dims, dyn), nil
}

func inferConcatenate(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) == 0 {
		return Shape{}, errors.New("concatenate expects at least one argument")
	}
	dim, err := oneDimension(in)
	if err != nil {
		return Shape{}, err
	}
	first := ops[0]
	if err := expectArray(first, "operand of concatenation"); err != nil {
		return Shape{}, err
	}
	if dim < 0 || dim >= int64(first.Rank()) {
		return Shape{}, fmt.Errorf("concatenate dimension out of bounds: %d", dim)
	}
	t := first.DType
	dims := append([]int64{}, first.Dims...)
	dyn := dynFlags(first)
	for _, s := range ops[1:] {
		if err := expectArray(s, "operand of concatenation"); err != nil {
			return Shape{}, err
		}
		if s.Rank() != first.Rank() {
			return Shape{}, fmt.Errorf("cannot concatenate arrays with different ranks: %d (%s) vs %d (%s)", first.Rank(), first.HumanString(), s.Rank(), s.HumanString())
		}
		if !sameTypeIgnoringFP(first.DType, s.DType) {
			return Shape{}, fmt.Errorf("cannot concatenate arrays with different element types: %s vs %s", first.DType, s.DType)
		}
		for i := range s.Dims {
			if int64(i) == dim {
				continue
			}
			if !dimsMatch(first.Dims[i:i+1], s.Dims[i:i+1]) {
				return Shape{}, fmt.Errorf("cannot concatenate arrays that differ in dimensions other than the one being concatenated; dimension %d in both shapes must be equal: %s vs %s", i, first.HumanString(), s.HumanString())
			}
		}
		t = higherPrecision(t, s.DType)
		if dims[dim] == Unbounded || s.Dims[dim] == Unbounded {
			dims[dim] = Unbounded
		} else {
			var a sizeArith
			dims[dim] = a.add(dims[dim], s.Dims[dim])
			if err := a.err("the concatenated size of dimension %d", dim); err != nil {
				return Shape{}, err
			}
		}
		for i := range dyn {
			dyn[i] = dyn[i] || s.IsDynamicDim(i)
		}
	}
	return makeArray(t, dims, dyn), nil
}

func inferPad(in *Instruction, ops []Shape) (Shape, error) {
	x, val := ops[0], ops[1]
	if !x.IsArray() {
		return Shape{}, errors.New("pad operation does not support tuple-shape operands")
	}
	if !val.IsScalar() {
		return Shape{}, errors.New("pad operation does not support non-scalar padding values")
	}
	v, _ := in.Attr("padding")
	cfg, _ := v.(PaddingConfig)
	if len(cfg) != x.Rank() {
		return Shape{}, fmt.Errorf("the rank of the operand and the padding configuration do not match: %s vs %s", x.HumanString(), cfg)
	}
	if !sameTypeIgnoringFP(x.DType, val.DType) {
		return Shape{}, errors.New("the element types of the operands to pad do not match")
	}
	dims := make([]int64, x.Rank())
	for i, p := range cfg {
		if p.Interior < 0 {
			return Shape{}, fmt.Errorf("interior padding cannot be negative: %s", cfg)
		}
		if x.Dims[i] == Unbounded {
			dims[i] = Unbounded
			continue
		}
		var a sizeArith
		dims[i] = a.add(a.add(a.add(x.Dims[i], p.Lo), p.Hi), a.mul(max(x.Dims[i]-1, 0), p.Interior))
		if err := a.err("the padded size of dimension %d", i); err != nil {
			return Shape{}, err
		}
		if dims[i] < 0 {
			return Shape{}, fmt.Errorf("padding result in negative size for dimension %d", i)
		}
	}
	return makeArray(higherPrecision(x.DType, val.DType), dims, dynFlags(x)), nil
}

func inferReverse(in *Instruction, ops []Shape) (Shape, error) {
	x := ops[0]
	if err := expectArray(x, "operand of reverse"); err != nil {
		return Shape{}, err
	}
	dims := in.Dimensions()
	if !allUnique(dims) {
		return Shape{}, errors.New("a dimension number is duplicated in reverse")
	}
	if !inRange(dims, x.Rank()) {
		return Shape{}, fmt.Errorf("one of the reverse dimensions {%s} is out-of-bounds in shape %s", joinInts(dims), x.HumanString())
	}
	return withDefaultLayout(x.Clone()), nil
}

func inferIota(in *Instruction, _ []Shape) (Shape, error) {
	d, err := needDeclared(in, "an iota's shape")
	if err != nil {
		return Shape{}, err
	}
	if !d.IsArray() {
		return Shape{}, errors.New("iota does not support non-array result")
	}
	if d.Rank() == 0 {
		return Shape{}, errors.New("iota does not support scalars")
	}
	dim, ok := in.Int("iota_dimension")
	if !ok {
		return Shape{}, errors.New("needs iota_dimension")
	}
	if dim < 0 || dim >= int64(d.Rank()) {
		return Shape{}, errors.New("the iota dimension cannot go beyond the operation rank or be negative")
	}
	if !d.DType.IsInteger() && !d.DType.IsFloat() && !d.DType.IsComplex() {
		return Shape{}, fmt.Errorf("only support iota of integral, floating point or complex primitive types, got %s", d.DType)
	}
	return makeArray(d.DType, d.Dims, dynFlags(d)), nil
}

func inferTuple(_ *Instruction, ops []Shape) (Shape, error) {
	return TupleShape(ops...), nil
}

func inferGetTupleElement(in *Instruction, ops []Shape) (Shape, error) {
	t := ops[0]
	idx, ok := in.Int("index")
	if !ok {
		return Shape{}, errors.New("needs index")
	}
	if !t.IsTuple() {
		return Shape{}, fmt.Errorf("cannot infer shape: attempting to index into non-tuple: %s", t.HumanString())
	}
	if idx < 0 || idx >= int64(len(t.Tuple)) {
		return Shape{}, fmt.Errorf("cannot infer shape: attempt to index out of tuple bounds: %d >= %d in shape %s", idx, len(t.Tuple), t.HumanString())
	}
	return t.Tuple[idx].Clone(), nil
}

func inferGetDimensionSize(in *Instruction, ops []Shape) (Shape, error) {
	x := ops[0]
	dim, err := oneDimension(in)
	if err != nil {
		return Shape{}, err
	}
	if !x.IsArray() || dim < 0 || dim >= int64(x.Rank()) {
		return Shape{}, fmt.Errorf("get-dimension-size dimension out of bounds: %d", dim)
	}
	if x.Dims[dim] > math.MaxInt32 {
		return Shape{}, fmt.Errorf("input shape is %s, the %dth dimension exceeds the INT_MAX limit", x.HumanString(), dim)
	}
	return ScalarShape(S32), nil
}

func inferSetDimensionSize(in *Instruction, ops []Shape) (Shape, error) {
	x, val := ops[0], ops[1]
	dim, err := oneDimension(in)
	if err != nil {
		return Shape{}, err
	}
	if !x.IsArray() || dim < 0 || dim >= int64(x.Rank()) {
		return Shape{}, fmt.Errorf("set-dimension-size dimension out of bounds: %d", dim)
	}
	if !isScalarOf(val, S32) {
		return Shape{}, fmt.Errorf("set-dimension-size's value has to be s32 scalar, got %s", val.HumanString())
	}
	if x.Dims[dim] > math.MaxInt32 {
		return Shape{}, fmt.Errorf("input shape is %s, the %dth dimension exceeds the INT_MAX limit", x.HumanString(), dim)
	}
	dyn := dynFlags(x)
	dyn[dim] = true
	return makeArray(x.DType, x.Dims, dyn), nil
}
