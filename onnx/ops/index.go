package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

func init() {
	Register(Op{Name: "Gather", Lower: lowerGather, Host: hostMove})
	Register(Op{Name: "GatherElements", Lower: lowerGatherElements, Host: hostMove})
	Register(Op{Name: "GatherND", Lower: lowerGatherND, Host: hostMove})
	Register(Op{Name: "ScatterND", Lower: lowerScatterND, Host: hostMove})
	Register(Op{Name: "ScatterElements", Lower: lowerScatterElements, Host: hostMove})
	Register(Op{Name: "Scatter", Lower: lowerScatterElements, Host: hostMove})
	Register(Op{Name: "OneHot", ConstInputs: []int{1}, Lower: lowerOneHot})
	Register(Op{Name: "ReverseSequence", Lower: lowerReverseSequence, Host: hostMove})
	Register(Op{Name: "TopK", Lower: lowerTopK})
	Register(Op{Name: "TopK", Since: 10, ConstInputs: []int{1}, Lower: lowerTopK})
	Register(Op{Name: "TensorScatter", Lower: lowerTensorScatter, Host: hostMove})
}

// idxWrap converts integer indices to S64 and adds size to the negative
// ones (size: a scalar, or an op broadcastable to idx).
func idxWrap(idx *xb.Op, size *xb.Op) *xb.Op {
	if idx.DType() != hlo.S64 {
		idx = xb.Convert(idx, hlo.S64)
	}
	d := idx.Dims()
	s := xb.BroadcastTo(size, d...)
	neg := xb.Lt(idx, FullLike(idx, 0))
	return xb.Select(neg, xb.Add(idx, s), idx)
}

func idxWrapN(idx *xb.Op, n int64) *xb.Op {
	return idxWrap(idx, idx.Builder().ScalarOf(hlo.S64, float64(n)))
}

// idxCoords builds full coordinates [idx dims..., r] for element-wise
// gathers/scatters: coordinate axis is idx, the others are iotas.
func idxCoords(idx *xb.Op, axis int64) *xb.Op {
	b := idx.Builder()
	d := idx.Dims()
	r := len(d)
	parts := make([]*xb.Op, r)
	col := append(append([]int64(nil), d...), 1)
	for k := range r {
		var v *xb.Op
		if int64(k) == axis {
			v = idx
		} else {
			v = b.Iota(hlo.S64, int64(k), d...)
		}
		parts[k] = xb.Reshape(v, col...)
	}
	if r == 1 {
		return parts[0]
	}
	return xb.Concatenate(int64(r), parts...)
}

func iotaTo(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// gatherElems: out[p] = x[p with p[axis] = idx[p]] (idx S64, same rank).
func gatherElems(x, idx *xb.Op, axis int64) *xb.Op {
	r := x.Rank()
	coords := idxCoords(idx, axis)
	ones := make([]int64, r)
	for i := range ones {
		ones[i] = 1
	}
	all := iotaTo(r)
	return xb.Gather(x, coords, xb.GatherDims{CollapsedSliceDims: all, StartIndexMap: all, IndexVectorDim: int64(r)}, ones...)
}

func scatterReducer(c *Ctx) (xb.Reducer, error) {
	switch red := c.Node.Str("reduction", "none"); red {
	case "none":
		return nil, nil
	case "add":
		return func(_ *xb.Builder, a, b *xb.Op) *xb.Op {
			if a.DType().IsPred() {
				return xb.Or(a, b)
			}
			return xb.Add(a, b)
		}, nil
	case "mul":
		return func(_ *xb.Builder, a, b *xb.Op) *xb.Op {
			if a.DType().IsPred() {
				return xb.And(a, b)
			}
			return xb.Mul(a, b)
		}, nil
	case "max":
		return func(_ *xb.Builder, a, b *xb.Op) *xb.Op { return xb.Max(a, b) }, nil
	case "min":
		return func(_ *xb.Builder, a, b *xb.Op) *xb.Op { return xb.Min(a, b) }, nil
	default:
		return nil, c.Unsupported("reduction %q", red)
	}
}

func lowerGather(c *Ctx) error {
	x, idx := c.Input(0), c.Input(1)
	axis, ok := NormAxis(c.Node.Int("axis", 0), x.Rank())
	if !ok {
		return c.Errorf("axis out of range")
	}
	idx = idxWrapN(idx, x.Dims()[axis])
	c.Set(0, xb.Take(x, idx, axis))
	return nil
}

func lowerGatherElements(c *Ctx) error {
	x, idx := c.Input(0), c.Input(1)
	if x.Rank() != idx.Rank() {
		return c.Errorf("data and indices ranks differ")
	}
	axis, ok := NormAxis(c.Node.Int("axis", 0), x.Rank())
	if !ok {
		return c.Errorf("axis out of range")
	}
	idx = idxWrapN(idx, x.Dims()[axis])
	c.Set(0, gatherElems(x, idx, axis))
	return nil
}

// ndIndices prepares GatherND/ScatterND indices: S64, negative entries
// wrapped per component, batch coordinates prepended.
func ndIndices(c *Ctx, data, idx *xb.Op, bd int) (*xb.Op, int, error) {
	dd, id := data.Dims(), idx.Dims()
	q := len(id)
	if q < 1 {
		return nil, 0, c.Errorf("indices must have rank >= 1")
	}
	m := int(id[q-1])
	if bd+m > len(dd) || bd > q-1 {
		return nil, 0, c.Errorf("indices %v do not fit data %v with batch_dims %d", id, dd, bd)
	}
	sizes := make([]int64, m)
	copy(sizes, dd[bd:bd+m])
	sz := xb.Const(c.B, sizes, int64(m))
	if idx.DType() != hlo.S64 {
		idx = xb.Convert(idx, hlo.S64)
	}
	idx = idxWrap(idx, xb.BroadcastInDim(sz, id, int64(q-1)))
	if bd > 0 {
		col := append(append([]int64(nil), id[:q-1]...), 1)
		parts := make([]*xb.Op, 0, bd+1)
		for k := range bd {
			parts = append(parts, c.B.Iota(hlo.S64, int64(k), col...))
		}
		parts = append(parts, idx)
		idx = xb.Concatenate(int64(q-1), parts...)
	}
	return idx, bd + m, nil
}

func lowerGatherND(c *Ctx) error {
	x, idx := c.Input(0), c.Input(1)
	bd := int(c.Node.Int("batch_dims", 0))
	full, k, err := ndIndices(c, x, idx, bd)
	if err != nil {
		return err
	}
	dd := x.Dims()
	q := idx.Rank()
	sizes := make([]int64, len(dd))
	for i := range sizes {
		if i < k {
			sizes[i] = 1
		} else {
			sizes[i] = dd[i]
		}
	}
	var offset []int64
	for i := range len(dd) - k {
		offset = append(offset, int64(q-1+i))
	}
	c.Set(0, xb.Gather(x, full, xb.GatherDims{OffsetDims: offset, CollapsedSliceDims: iotaTo(k), StartIndexMap: iotaTo(k), IndexVectorDim: int64(q - 1)}, sizes...))
	return nil
}

func lowerScatterND(c *Ctx) error {
	x, idx, upd := c.Input(0), c.Input(1), c.Input(2)
	fn, err := scatterReducer(c)
	if err != nil {
		return err
	}
	full, k, err := ndIndices(c, x, idx, 0)
	if err != nil {
		return err
	}
	q := idx.Rank()
	var win []int64
	for i := range x.Rank() - k {
		win = append(win, int64(q-1+i))
	}
	c.Set(0, xb.Scatter(x, full, upd, xb.ScatterDims{UpdateWindowDims: win, InsertedWindowDims: iotaTo(k), ScatterDimsToOperandDims: iotaTo(k), IndexVectorDim: int64(q - 1)}, fn))
	return nil
}

func lowerScatterElements(c *Ctx) error {
	x, idx, upd := c.Input(0), c.Input(1), c.Input(2)
	fn, err := scatterReducer(c)
	if err != nil {
		return err
	}
	r := x.Rank()
	if idx.Rank() != r || upd.Rank() != r {
		return c.Errorf("data, indices and updates ranks differ")
	}
	axis, ok := NormAxis(c.Node.Int("axis", 0), r)
	if !ok {
		return c.Errorf("axis out of range")
	}
	idx = idxWrapN(idx, x.Dims()[axis])
	coords := idxCoords(idx, axis)
	all := iotaTo(r)
	c.Set(0, xb.Scatter(x, coords, upd, xb.ScatterDims{InsertedWindowDims: all, ScatterDimsToOperandDims: all, IndexVectorDim: int64(r)}, fn))
	return nil
}

func lowerOneHot(c *Ctx) error {
	idx, vals := c.Input(0), c.Input(2)
	dv, err := c.ConstFloats(1)
	if err != nil {
		return err
	}
	if len(dv) != 1 || dv[0] < 1 {
		return c.Errorf("depth must be a positive scalar")
	}
	depth := int64(dv[0])
	if vals.Rank() != 1 || vals.Dims()[0] != 2 {
		return c.Errorf("values must have 2 elements")
	}
	id := idx.Dims()
	r := len(id) + 1
	axis, ok := NormAxis(c.Node.Int("axis", -1), r)
	if !ok {
		return c.Errorf("axis out of range")
	}
	if !idx.DType().IsInteger() {
		idx = xb.Convert(idx, hlo.S64)
	}
	idx = idxWrapN(idx, depth)
	out := make([]int64, 0, r)
	mapping := make([]int64, 0, len(id))
	out = append(out, id[:axis]...)
	out = append(out, depth)
	out = append(out, id[axis:]...)
	for i := range id {
		if int64(i) < axis {
			mapping = append(mapping, int64(i))
		} else {
			mapping = append(mapping, int64(i+1))
		}
	}
	bi := xb.BroadcastInDim(idx, out, mapping...)
	hot := xb.Eq(bi, c.B.Iota(hlo.S64, axis, out...))
	off := xb.BroadcastTo(xb.Reshape(xb.SliceAxis(vals, 0, 0, 1)), out...)
	on := xb.BroadcastTo(xb.Reshape(xb.SliceAxis(vals, 0, 1, 2)), out...)
	c.Set(0, xb.Select(hot, on, off))
	return nil
}

func lowerReverseSequence(c *Ctx) error {
	x, lens := c.Input(0), c.Input(1)
	d := x.Dims()
	r := len(d)
	ta, ok1 := NormAxis(c.Node.Int("time_axis", 0), r)
	ba, ok2 := NormAxis(c.Node.Int("batch_axis", 1), r)
	if !ok1 || !ok2 || ta == ba {
		return c.Errorf("bad time_axis/batch_axis")
	}
	if lens.DType() != hlo.S64 {
		lens = xb.Convert(lens, hlo.S64)
	}
	l := xb.BroadcastInDim(lens, d, ba)
	t := c.B.Iota(hlo.S64, ta, d...)
	src := xb.Select(xb.Lt(t, l), xb.Sub(xb.Sub(l, FullLike(l, 1)), t), t)
	c.Set(0, gatherElems(x, src, ta))
	return nil
}

func lowerTopK(c *Ctx) error {
	x := c.Input(0)
	d := x.Dims()
	r := len(d)
	var k int64
	if c.Opset < 10 {
		k = c.Node.Int("k", 0)
	} else {
		ks, err := c.ConstInts(1)
		if err != nil {
			return err
		}
		if len(ks) != 1 {
			return c.Errorf("k must have one element")
		}
		k = ks[0]
	}
	axis, ok := NormAxis(c.Node.Int("axis", -1), r)
	if !ok {
		return c.Errorf("axis out of range")
	}
	if k < 0 || k > d[axis] {
		return c.Errorf("k %d out of range for dimension %d", k, d[axis])
	}
	largest := c.Node.Int("largest", 1) != 0
	isFloat := x.DType().IsFloat()
	// HLO's topk along the last dimension (the axis moved there and
	// back), its ties to the lower index as ONNX's: the backend selects
	// the k first without sorting the row, where a sort and a slice
	// sorted all of it (25,200 detector scores: 3 ms).
	perm := make([]int64, r)
	for i := range perm {
		perm[i] = int64(i)
	}
	last := int64(r - 1)
	perm[axis], perm[last] = perm[last], perm[axis]
	if axis != last {
		x = xb.Transpose(x, perm...)
	}
	s := xb.TopK(x, k, largest, func(sb *xb.Builder, p []*xb.Op) *xb.Op {
		a, b := p[0], p[1]
		var before *xb.Op
		if largest {
			before = xb.Gt(a, b)
		} else {
			before = xb.Lt(a, b)
		}
		if isFloat {
			// NaN sorts as the largest value.
			an, bn := xb.Ne(a, a), xb.Ne(b, b)
			if largest {
				before = xb.Or(xb.And(an, xb.Not(bn)), before)
			} else {
				before = xb.Or(xb.And(bn, xb.Not(an)), before)
			}
		}
		return before
	})
	vals, inds := xb.GetTupleElement(s, 0), xb.Convert(xb.GetTupleElement(s, 1), hlo.S64)
	if axis != last {
		vals, inds = xb.Transpose(vals, perm...), xb.Transpose(inds, perm...)
	}
	c.Set(0, vals)
	c.Set(1, inds)
	return nil
}

func lowerTensorScatter(c *Ctx) error {
	past, upd := c.Input(0), c.Input(1)
	d := past.Dims()
	r := len(d)
	if upd.Rank() != r || r < 2 {
		return c.Errorf("past_cache and update ranks differ")
	}
	axis, ok := NormAxis(c.Node.Int("axis", -2), r)
	if !ok || axis == 0 {
		return c.Errorf("axis out of range")
	}
	maxLen, seq := d[axis], upd.Dims()[axis]
	var w *xb.Op
	if c.Has(2) {
		w = c.Input(2)
		if w.DType() != hlo.S64 {
			w = xb.Convert(w, hlo.S64)
		}
		w = xb.BroadcastInDim(w, d, 0)
	} else {
		w = c.B.Zeros(hlo.S64, d...)
	}
	p := c.B.Iota(hlo.S64, axis, d...)
	j := xb.Sub(p, w)
	switch mode := c.Node.Str("mode", "linear"); mode {
	case "linear":
	case "circular":
		m := c.B.Full(hlo.S64, float64(maxLen), d...)
		j = xb.Rem(xb.Add(xb.Rem(j, m), m), m)
	default:
		return c.Unsupported("mode %q", mode)
	}
	valid := xb.And(xb.Ge(j, FullLike(j, 0)), xb.Lt(j, FullLike(j, float64(seq))))
	if seq == 0 {
		c.Set(0, past)
		return nil
	}
	jc := xb.Clamp(c.B.ScalarOf(hlo.S64, 0), j, c.B.ScalarOf(hlo.S64, float64(seq-1)))
	c.Set(0, xb.Select(valid, gatherElems(upd, jc, axis), past))
	return nil
}
