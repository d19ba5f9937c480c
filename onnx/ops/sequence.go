package ops

import (
	"github.com/axle-ml/axle/onnx"
)

// Sequence ops run on the host: a sequence is a list of concrete values.

func init() {
	Register(Op{Name: "SequenceConstruct", Since: 11, Host: hostSequenceConstruct})
	Register(Op{Name: "SequenceEmpty", Since: 11, Host: hostSequenceEmpty})
	Register(Op{Name: "SequenceAt", Since: 11, Host: hostSequenceAt})
	Register(Op{Name: "SequenceInsert", Since: 11, Host: hostSequenceInsert})
	Register(Op{Name: "SequenceErase", Since: 11, Host: hostSequenceErase})
	Register(Op{Name: "SequenceLength", Since: 11, Host: hostSequenceLength})
	Register(Op{Name: "SplitToSequence", Since: 11, Host: hostSplitToSequence})
	Register(Op{Name: "ConcatFromSequence", Since: 11, Host: hostConcatFromSequence})
}

// seqValue is a new sequence of elems with element type et (taken from the
// first element if et is Undefined).
func seqValue(elems []*onnx.Value, et onnx.ElemType) *onnx.Value {
	if et == onnx.Undefined {
		for _, e := range elems {
			if e != nil && e.Kind == onnx.KindTensor && e.Tensor != nil {
				et = e.Tensor.ElemType()
				break
			}
		}
	}
	return &onnx.Value{Kind: onnx.KindSequence, Elems: elems, ElemType: et}
}

// seqInput is input i as a sequence.
func seqInput(h *HostCtx, i int) (*onnx.Value, error) {
	if i >= len(h.In) || h.In[i] == nil || h.In[i].Kind != onnx.KindSequence {
		return nil, h.Errorf("input %d must be a sequence", i)
	}
	return h.In[i], nil
}

// seqPos normalizes a position in [-n, n) (or [-n, n] when end is allowed).
func seqPos(h *HostCtx, i int, n int, allowEnd bool, def int) (int, error) {
	t := h.Tensor(i)
	if t == nil {
		return def, nil
	}
	p, err := seqScalarInt(t)
	if err != nil {
		return 0, h.Errorf("position: %v", err)
	}
	if p < 0 {
		p += int64(n)
	}
	hi := int64(n)
	if allowEnd {
		hi++
	}
	if p < 0 || p >= hi {
		return 0, h.Errorf("position %d out of range for a sequence of %d", p, n)
	}
	return int(p), nil
}

func hostSequenceConstruct(h *HostCtx) error {
	var elems []*onnx.Value
	for i, v := range h.In {
		if v == nil || v.Kind != onnx.KindTensor {
			return h.Errorf("input %d must be a tensor", i)
		}
		elems = append(elems, v)
	}
	h.Set(0, seqValue(elems, onnx.Undefined))
	return nil
}

func hostSequenceEmpty(h *HostCtx) error {
	et := onnx.ElemType(h.Node.Int("dtype", int64(onnx.Float)))
	h.Set(0, seqValue(nil, et))
	return nil
}

func hostSequenceAt(h *HostCtx) error {
	s, err := seqInput(h, 0)
	if err != nil {
		return err
	}
	if h.Tensor(1) == nil {
		return h.Errorf("position is required")
	}
	p, err := seqPos(h, 1, len(s.Elems), false, 0)
	if err != nil {
		return err
	}
	h.Set(0, s.Elems[p])
	return nil
}

func hostSequenceInsert(h *HostCtx) error {
	s, err := seqInput(h, 0)
	if err != nil {
		return err
	}
	t := h.Tensor(1)
	if t == nil {
		return h.Errorf("input 1 must be a tensor")
	}
	p, err := seqPos(h, 2, len(s.Elems), true, len(s.Elems))
	if err != nil {
		return err
	}
	elems := make([]*onnx.Value, 0, len(s.Elems)+1)
	elems = append(elems, s.Elems[:p]...)
	elems = append(elems, h.In[1])
	elems = append(elems, s.Elems[p:]...)
	h.Set(0, seqValue(elems, s.ElemType))
	return nil
}

func hostSequenceErase(h *HostCtx) error {
	s, err := seqInput(h, 0)
	if err != nil {
		return err
	}
	if len(s.Elems) == 0 {
		return h.Errorf("erasing from an empty sequence")
	}
	p, err := seqPos(h, 1, len(s.Elems), false, len(s.Elems)-1)
	if err != nil {
		return err
	}
	elems := make([]*onnx.Value, 0, len(s.Elems)-1)
	elems = append(elems, s.Elems[:p]...)
	elems = append(elems, s.Elems[p+1:]...)
	h.Set(0, seqValue(elems, s.ElemType))
	return nil
}

func hostSequenceLength(h *HostCtx) error {
	s, err := seqInput(h, 0)
	if err != nil {
		return err
	}
	h.Set(0, onnx.TensorValue(IntTensor([]int64{int64(len(s.Elems))})))
	return nil
}

func hostSplitToSequence(h *HostCtx) error {
	x := h.Tensor(0)
	if x == nil {
		return h.Errorf("input 0 must be a tensor")
	}
	dims := x.Dims()
	ax, ok := NormAxis(h.Node.Int("axis", 0), len(dims))
	if !ok {
		return h.Errorf("axis out of range for rank %d", len(dims))
	}
	axis := int(ax)
	n := dims[axis]
	var sizes []int64
	keep := true
	if st := h.Tensor(1); st != nil {
		vals, err := Int64s(st)
		if err != nil {
			return h.Errorf("split: %v", err)
		}
		if len(st.Dims()) == 0 {
			c := vals[0]
			if c <= 0 {
				return h.Errorf("split size %d must be positive", c)
			}
			for done := int64(0); done < n; done += c {
				sizes = append(sizes, min(c, n-done))
			}
		} else {
			sum := int64(0)
			for _, v := range vals {
				if v < 0 {
					return h.Errorf("negative split size %d", v)
				}
				sum += v
			}
			if sum != n {
				return h.Errorf("split sizes %v do not add up to %d", vals, n)
			}
			sizes = vals
		}
	} else {
		keep = h.Node.Int("keepdims", 1) != 0
		for i := int64(0); i < n; i++ {
			sizes = append(sizes, 1)
		}
	}
	var elems []*onnx.Value
	off := int64(0)
	for _, s := range sizes {
		var t *onnx.Tensor
		var err error
		if keep {
			t, err = seqSliceAxis(x, axis, off, off+s)
		} else {
			t, err = seqTake(x, axis, off)
		}
		if err != nil {
			return h.Errorf("%v", err)
		}
		elems = append(elems, onnx.TensorValue(t))
		off += s
	}
	h.Set(0, seqValue(elems, x.ElemType()))
	return nil
}

func hostConcatFromSequence(h *HostCtx) error {
	s, err := seqInput(h, 0)
	if err != nil {
		return err
	}
	if len(s.Elems) == 0 {
		return h.Errorf("concatenating an empty sequence")
	}
	ts := make([]*onnx.Tensor, len(s.Elems))
	for i, e := range s.Elems {
		if e == nil || e.Kind != onnx.KindTensor {
			return h.Errorf("element %d is not a tensor", i)
		}
		ts[i] = e.Tensor
	}
	rank := len(ts[0].Dims())
	newAxis := h.Node.Int("new_axis", 0) != 0
	r := rank
	if newAxis {
		r++
	}
	ax, ok := NormAxis(h.Node.Int("axis", 0), r)
	if !ok {
		return h.Errorf("axis out of range")
	}
	var out *onnx.Tensor
	if newAxis {
		out, err = seqStack(ts, int(ax))
	} else {
		out, err = seqConcatAxis(ts, int(ax))
	}
	if err != nil {
		return h.Errorf("%v", err)
	}
	h.Set(0, onnx.TensorValue(out))
	return nil
}
