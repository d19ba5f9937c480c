package ops

import (
	"fmt"
	"reflect"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// Tensor helpers on concrete values for the sequence and control-flow host
// kernels: slicing along an axis, concatenating, stacking, reshaping. They
// copy the literals' typed storage (numeric tensors only).

func seqProd(d []int64) int64 {
	n := int64(1)
	for _, v := range d {
		n *= v
	}
	return n
}

// seqReshape is t with new dims and the same elements.
func seqReshape(t *onnx.Tensor, dims ...int64) (*onnx.Tensor, error) {
	if t.IsString() {
		return onnx.NewStringTensor(t.Strs, dims...)
	}
	if seqProd(dims) != seqProd(t.Dims()) {
		return nil, fmt.Errorf("cannot reshape %v to %v", t, dims)
	}
	l, err := hlo.NewLiteralFromData(hlo.ArrayShape(t.Lit.DType(), dims...), t.Lit.Data())
	if err != nil {
		return nil, err
	}
	return onnx.TensorOf(l), nil
}

// seqStorage is t's elements as a reflect slice (strings for string tensors).
func seqStorage(t *onnx.Tensor) reflect.Value {
	if t.IsString() {
		return reflect.ValueOf(t.Strs)
	}
	return reflect.ValueOf(t.Lit.Data())
}

func seqMake(like *onnx.Tensor, data reflect.Value, dims []int64) (*onnx.Tensor, error) {
	if like.IsString() {
		return onnx.NewStringTensor(data.Interface().([]string), dims...)
	}
	l, err := hlo.NewLiteralFromData(hlo.ArrayShape(like.Lit.DType(), dims...), data.Interface())
	if err != nil {
		return nil, err
	}
	return onnx.TensorOf(l), nil
}

// seqSliceAxis is t[..., start:stop, ...] along axis.
func seqSliceAxis(t *onnx.Tensor, axis int, start, stop int64) (*onnx.Tensor, error) {
	dims := t.Dims()
	if axis < 0 || axis >= len(dims) || start < 0 || stop > dims[axis] || start > stop {
		return nil, fmt.Errorf("slice [%d:%d] of axis %d of %v out of range", start, stop, axis, t)
	}
	outer, inner, a := seqProd(dims[:axis]), seqProd(dims[axis+1:]), dims[axis]
	src := seqStorage(t)
	n := stop - start
	out := reflect.MakeSlice(src.Type(), int(outer*n*inner), int(outer*n*inner))
	for o := int64(0); o < outer; o++ {
		reflect.Copy(out.Slice(int(o*n*inner), int((o+1)*n*inner)), src.Slice(int((o*a+start)*inner), int((o*a+stop)*inner)))
	}
	od := append([]int64(nil), dims...)
	od[axis] = n
	return seqMake(t, out, od)
}

// seqConcatAxis concatenates tensors of equal rank along axis.
func seqConcatAxis(ts []*onnx.Tensor, axis int) (*onnx.Tensor, error) {
	if len(ts) == 0 {
		return nil, fmt.Errorf("concatenation of no tensors")
	}
	d0 := ts[0].Dims()
	if axis < 0 || axis >= len(d0) {
		return nil, fmt.Errorf("axis %d out of range for rank %d", axis, len(d0))
	}
	total := int64(0)
	for _, t := range ts {
		d := t.Dims()
		if len(d) != len(d0) || t.ElemType() != ts[0].ElemType() {
			return nil, fmt.Errorf("cannot concatenate %v and %v", ts[0], t)
		}
		for i := range d {
			if i != axis && d[i] != d0[i] {
				return nil, fmt.Errorf("cannot concatenate %v and %v along axis %d", ts[0], t, axis)
			}
		}
		total += d[axis]
	}
	outer, inner := seqProd(d0[:axis]), seqProd(d0[axis+1:])
	typ := seqStorage(ts[0]).Type()
	size := int(outer * total * inner)
	out := reflect.MakeSlice(typ, size, size)
	off := int64(0)
	for _, t := range ts {
		a := t.Dims()[axis]
		src := seqStorage(t)
		for o := int64(0); o < outer; o++ {
			dst := (o*total + off) * inner
			reflect.Copy(out.Slice(int(dst), int(dst+a*inner)), src.Slice(int(o*a*inner), int((o+1)*a*inner)))
		}
		off += a
	}
	od := append([]int64(nil), d0...)
	od[axis] = total
	return seqMake(ts[0], out, od)
}

// seqStack stacks tensors of equal shape along a new axis.
func seqStack(ts []*onnx.Tensor, axis int) (*onnx.Tensor, error) {
	if len(ts) == 0 {
		return nil, fmt.Errorf("stacking no tensors")
	}
	ex := make([]*onnx.Tensor, len(ts))
	for i, t := range ts {
		d := t.Dims()
		if axis < 0 || axis > len(d) {
			return nil, fmt.Errorf("axis %d out of range for rank %d", axis, len(d))
		}
		nd := append(append(append([]int64(nil), d[:axis]...), 1), d[axis:]...)
		var err error
		if ex[i], err = seqReshape(t, nd...); err != nil {
			return nil, err
		}
	}
	return seqConcatAxis(ex, axis)
}

// seqTake is t[..., i, ...] along axis, the axis removed.
func seqTake(t *onnx.Tensor, axis int, i int64) (*onnx.Tensor, error) {
	s, err := seqSliceAxis(t, axis, i, i+1)
	if err != nil {
		return nil, err
	}
	d := t.Dims()
	nd := append(append([]int64(nil), d[:axis]...), d[axis+1:]...)
	return seqReshape(s, nd...)
}

// seqZeros is a zero tensor of type et and dims.
func seqZeros(et onnx.ElemType, dims []int64) (*onnx.Tensor, error) {
	if et == onnx.String {
		return onnx.NewStringTensor(make([]string, seqProd(dims)), dims...)
	}
	t := et.HLO()
	if t == hlo.Invalid {
		return nil, fmt.Errorf("element type %v has no tensor form", et)
	}
	return onnx.TensorOf(hlo.NewLiteral(hlo.ArrayShape(t, dims...))), nil
}

// seqScalarInt reads an integer scalar (or one-element) tensor.
func seqScalarInt(t *onnx.Tensor) (int64, error) {
	if t == nil || t.IsString() || t.Lit.Len() != 1 {
		return 0, fmt.Errorf("expected an integer scalar, got %v", t)
	}
	if !t.Lit.DType().IsInteger() {
		return 0, fmt.Errorf("expected an integer scalar, got %v", t)
	}
	return t.Lit.GetInt64(0), nil
}
