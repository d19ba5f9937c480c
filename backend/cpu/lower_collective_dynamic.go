package cpu

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
)

// Dynamic sizes and the custom calls the evaluator knows. A literal of a
// dynamic shape stores its bounds' worth of elements, live ones at their
// row-major positions within the bounds, and carries the live sizes: such
// values have no buffer (buffers.go), so these kernels return literals
// of their own, made with the evaluator's shapes and live sizes.

// identityTargets are the custom-call targets that annotate a value
// without changing it on one device (eval/custom_call.go).
var identityTargets = map[string]bool{
	"Sharding": true, "SPMDFullToShardShape": true, "SPMDShardToFullShape": true,
	"MoveToHost": true, "MoveToDevice": true, "annotate_device_placement": true,
	"LayoutConstraint": true, "SetBound": true,
}

// lowerCustomCall compiles the targets the evaluator runs, but TopK,
// which is the top-k instruction's (lowerTopK runs first).
func lowerCustomCall(in *hlo.Instruction, threads int) (kernel, string, bool) {
	target, _ := in.StringAttr("custom_call_target")
	how := "custom-call:" + target
	switch {
	case identityTargets[target]:
		ok := len(in.Operands) == 1 && in.Shape.IsArray() && in.Shape.SameDims(in.Operands[0].Shape) && copyable(in, 0)
		return deliver(in, threads, operandValue(0)), how, ok
	case target == "AllocateBuffer":
		// Unspecified contents: zeros, as the evaluator gives.
		return func(_ *runState, out *hlo.Literal, _ []*hlo.Literal) (*hlo.Literal, error) {
			if arrayBytes(in.Shape) < 0 {
				return hlo.NewLiteral(in.Shape), nil
			}
			out = arrayOut(in.Shape, out)
			clearArray(out, threads)
			return out, nil
		}, how, true
	case target == "PadToStatic":
		k, ok := lowerPadToStatic(in, threads)
		return k, how, ok
	case target == "SliceToDynamic":
		k, ok := lowerSliceToDynamic(in, threads)
		return k, how, ok
	}
	return nil, "", false
}

// sameStorageShape says whether values of shapes a and b store the same number
// of elements of one type (bounds for dynamic dimensions).
func sameStorageShape(a, b hlo.Shape) bool {
	return a.IsArray() && b.IsArray() && !a.IsUnbounded() && !b.IsUnbounded() && a.DType == b.DType &&
		a.NumElements() == b.NumElements()
}

// lowerPadToStatic: (the data as stored, with every dimension static,
// then each dimension's live size as a scalar).
func lowerPadToStatic(in *hlo.Instruction, threads int) (kernel, bool) {
	if len(in.Operands) != 1 || !in.Shape.IsTuple() {
		return nil, false
	}
	x := in.Operands[0].Shape
	if len(in.Shape.Tuple) != x.Rank()+1 || !sameStorageShape(in.Shape.Tuple[0], x) {
		return nil, false
	}
	for _, s := range in.Shape.Tuple[1:] {
		if !s.IsArray() || s.NumElements() < 1 {
			return nil, false
		}
	}
	return func(_ *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		data := hlo.NewLiteral(in.Shape.Tuple[0])
		if err := copyArray(data, ops[0], threads); err != nil {
			return nil, err
		}
		elems := []*hlo.Literal{data}
		for d, s := range in.Shape.Tuple[1:] {
			size := hlo.NewLiteral(s)
			size.SetInt64(0, ops[0].DynamicSize(d))
			elems = append(elems, size)
		}
		return hlo.MakeTupleLiteral(elems...), nil
	}, true
}

// lowerSliceToDynamic: the data with the result's dynamic dimensions set
// to the sizes its scalar operands give.
func lowerSliceToDynamic(in *hlo.Instruction, threads int) (kernel, bool) {
	if len(in.Operands) != in.Shape.Rank()+1 || !sameStorageShape(in.Shape, in.Operands[0].Shape) || !sizeOperands(in, 1) {
		return nil, false
	}
	return func(_ *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		if in.Shape.IsDynamic() {
			out = hlo.NewLiteral(in.Shape)
		} else {
			out = arrayOut(in.Shape, out)
		}
		if err := copyArray(out, ops[0], threads); err != nil {
			return nil, err
		}
		for d := range in.Shape.Rank() {
			if in.Shape.IsDynamicDim(d) {
				if err := out.SetDynamicSize(d, ops[d+1].GetInt64(0)); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}, true
}

// sizeOperands says whether operands from on are non-empty arrays (the
// sizes read from their element 0).
func sizeOperands(in *hlo.Instruction, from int) bool {
	for _, o := range in.Operands[from:] {
		if !o.Shape.IsArray() || o.Shape.NumElements() < 1 {
			return false
		}
	}
	return true
}

// oneDim is the dimension a get/set-dimension-size names, or false.
func oneDim(in *hlo.Instruction) (int, bool) {
	dims := in.Dimensions()
	if len(in.Operands) == 0 || !in.Operands[0].Shape.IsArray() || len(dims) != 1 || dims[0] < 0 ||
		int(dims[0]) >= in.Operands[0].Shape.Rank() {
		return 0, false
	}
	return int(dims[0]), true
}

// lowerGetDimensionSize writes the operand's live size of the dimension
// (its size, when static).
func lowerGetDimensionSize(in *hlo.Instruction, _ int) (kernel, bool) {
	d, ok := oneDim(in)
	if !ok || !in.Shape.IsScalar() || arrayBytes(in.Shape) <= 0 {
		return nil, false
	}
	return func(_ *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		out = arrayOut(in.Shape, out)
		out.SetInt64(0, ops[0].DynamicSize(d))
		return out, nil
	}, true
}

// lowerSetDimensionSize copies the operand and records operand 1 as the
// dimension's live size; the other dimensions keep the operand's.
func lowerSetDimensionSize(in *hlo.Instruction, threads int) (kernel, bool) {
	d, ok := oneDim(in)
	if !ok || len(in.Operands) != 2 || !in.Shape.IsDynamic() || !sameStorageShape(in.Shape, in.Operands[0].Shape) ||
		!sizeOperands(in, 1) {
		return nil, false
	}
	unsigned := in.Operands[1].Shape.DType.IsUnsigned()
	return func(_ *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		src, out := ops[0], hlo.NewLiteral(in.Shape)
		if err := copyArray(out, src, threads); err != nil {
			return nil, err
		}
		for k := range src.Shape().Rank() {
			if k != d && src.DynamicSize(k) != out.DynamicSize(k) {
				if err := out.SetDynamicSize(k, src.DynamicSize(k)); err != nil {
					return nil, err
				}
			}
		}
		size := ops[1].GetInt64(0)
		if unsigned {
			size = int64(min(ops[1].GetUint64(0), math.MaxInt64))
		}
		return out, out.SetDynamicSize(d, size)
	}, true
}

// lowerDynamicReshape reshapes the operand's live elements (row-major
// over its live sizes) to the sizes its scalar operands give, copying
// runs: a run ends where either side's innermost live row does.
func lowerDynamicReshape(in *hlo.Instruction, threads int) (kernel, bool) {
	s := in.Shape
	if !s.IsArray() || s.IsUnbounded() || len(in.Operands) != s.Rank()+1 || !sizeOperands(in, 1) {
		return nil, false
	}
	x := in.Operands[0].Shape
	w := storageWidth(s.DType)
	if !x.IsArray() || x.IsUnbounded() || x.DType != s.DType || w == 0 {
		return nil, false
	}
	return func(_ *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		if s.IsDynamic() {
			out = hlo.NewLiteral(s) // dead elements are zeros, as the evaluator leaves them
		} else {
			out = arrayOut(s, out)
		}
		sizes, n := make([]int64, s.Rank()), int64(1)
		for d := range sizes {
			sizes[d] = ops[d+1].GetInt64(0)
			if sizes[d] < 0 || sizes[d] > s.Dims[d] {
				return nil, fmt.Errorf("dynamic-reshape size %d of dimension %d is outside [0, %d]", sizes[d], d, s.Dims[d])
			}
			n *= sizes[d]
			if s.IsDynamicDim(d) {
				if err := out.SetDynamicSize(d, sizes[d]); err != nil {
					return nil, err
				}
			} else if sizes[d] != s.Dims[d] {
				return nil, fmt.Errorf("dynamic-reshape gives static dimension %d size %d, not %d", d, sizes[d], s.Dims[d])
			}
		}
		src := ops[0]
		live, m := make([]int64, src.Shape().Rank()), int64(1)
		for d := range live {
			live[d] = src.DynamicSize(d)
			m *= live[d]
		}
		if m != n {
			return nil, fmt.Errorf("dynamic-reshape of %d live elements to sizes %v (%d elements)", m, sizes, n)
		}
		if n > 0 {
			copyLive(bytesOf(out), bytesOf(src), newCursor(sizes, s.Dims), newCursor(live, src.Shape().Dims), n, w)
		}
		return out, nil
	}, true
}

// copyLive copies n elements of w bytes in row-major order from the
// positions src walks to those dst walks.
func copyLive(dstMem, srcMem []byte, dst, src cursor, n int64, w int) {
	for n > 0 {
		run := min(dst.run(), src.run(), n)
		copy(dstMem[dst.pos*int64(w):(dst.pos+run)*int64(w)], srcMem[src.pos*int64(w):(src.pos+run)*int64(w)])
		dst.advance(run)
		src.advance(run)
		n -= run
	}
}

// cursor walks the live elements of a row-major array stored with the
// given bounds: idx is the live index, pos its storage position.
type cursor struct {
	idx, live, bounds []int64
	pos               int64
}

// newCursor starts at element 0 (a scalar is one row of one element).
func newCursor(live, bounds []int64) cursor {
	if len(live) == 0 {
		live, bounds = []int64{1}, []int64{1}
	}
	return cursor{idx: make([]int64, len(live)), live: live, bounds: bounds}
}

// run is how many elements follow contiguously in the innermost row.
func (c *cursor) run() int64 {
	last := len(c.idx) - 1
	return c.live[last] - c.idx[last]
}

// advance moves n elements on, n at most run().
func (c *cursor) advance(n int64) {
	last := len(c.idx) - 1
	if c.idx[last] += n; c.idx[last] < c.live[last] {
		c.pos += n
		return
	}
	c.idx[last] = 0
	for d := last - 1; d >= 0; d-- {
		if c.idx[d]++; c.idx[d] < c.live[d] {
			break
		}
		c.idx[d] = 0
	}
	c.pos = 0
	for d, i := range c.idx {
		c.pos = c.pos*c.bounds[d] + i
	}
}
