package ops

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

func init() {
	Register(Op{Name: "Identity", Lower: func(c *Ctx) error {
		if !c.Has(0) {
			return c.Errorf("input is required")
		}
		c.Out = []*Val{c.In[0]}
		return nil
	}, Host: func(h *HostCtx) error {
		if len(h.In) == 0 || h.In[0] == nil {
			return h.Errorf("input is required")
		}
		h.Set(0, h.In[0])
		return nil
	}})
	Register(Op{Name: "Constant", Lower: lowerConstant})
	Register(Op{Name: "Shape", ShapeInputs: []int{0}, Lower: lowerShape})
	Register(Op{Name: "Size", ShapeInputs: []int{0}, Lower: lowerSize})
	Register(Op{Name: "Reshape", Lower: lowerReshape1, Host: hostMove})
	Register(Op{Name: "Reshape", Since: 5, ConstInputs: []int{1}, Lower: lowerReshape, Host: hostMove})
	Register(Op{Name: "Flatten", Lower: lowerFlatten, Host: hostMove})
	Register(Op{Name: "Squeeze", Lower: lowerSqueeze, Host: hostMove})
	Register(Op{Name: "Squeeze", Since: 13, ConstInputs: []int{1}, Lower: lowerSqueeze, Host: hostMove})
	Register(Op{Name: "Unsqueeze", Lower: lowerUnsqueeze, Host: hostMove})
	Register(Op{Name: "Unsqueeze", Since: 13, ConstInputs: []int{1}, Lower: lowerUnsqueeze, Host: hostMove})
	Register(Op{Name: "Transpose", Lower: lowerTranspose, Host: hostMove})
	Register(Op{Name: "Concat", Lower: lowerConcat, Host: hostMove})
	Register(Op{Name: "Split", ConstInputs: []int{1}, Lower: lowerSplit, Host: hostMove})
	Register(Op{Name: "Split", Since: 13, ConstInputs: []int{1}, Lower: lowerSplit, Host: hostMove})
	Register(Op{Name: "Expand", ConstInputs: []int{1}, Lower: lowerExpand, Host: hostMove})
	Register(Op{Name: "Tile", ConstInputs: []int{1, 2}, Lower: lowerTile, Host: hostMove})
	Register(Op{Name: "ConstantOfShape", ConstInputs: []int{0}, Lower: lowerConstantOfShape})
	Register(Op{Name: "Range", ConstInputs: []int{0, 1, 2}, Lower: lowerRange})
}

func lowerConstant(c *Ctx) error {
	n := c.Node
	switch {
	case n.Has("value"):
		t, err := n.TensorAttr("value")
		if err != nil {
			return err
		}
		if t == nil {
			return c.Errorf("value attribute holds no tensor")
		}
		c.SetConst(0, t)
	case n.Has("value_float"):
		c.SetConst(0, onnx.TensorOf(literal(hlo.F32, []float64{float64(n.Float("value_float", 0))})))
	case n.Has("value_floats"):
		fs := n.Floats("value_floats")
		vals := make([]float64, len(fs))
		for i, f := range fs {
			vals[i] = float64(f)
		}
		c.SetConst(0, onnx.TensorOf(literal(hlo.F32, vals, int64(len(vals)))))
	case n.Has("value_int"):
		c.SetConst(0, IntTensor([]int64{n.Int("value_int", 0)}))
	case n.Has("value_ints"):
		is := n.Ints("value_ints")
		c.SetConst(0, IntTensor(is, int64(len(is))))
	case n.Has("value_string"):
		t, err := onnx.NewStringTensor([]string{n.Str("value_string", "")})
		if err != nil {
			return err
		}
		c.SetConst(0, t)
	case n.Has("value_strings"):
		ss := n.Strs("value_strings")
		t, err := onnx.NewStringTensor(ss, int64(len(ss)))
		if err != nil {
			return err
		}
		c.SetConst(0, t)
	case n.Has("sparse_value"):
		t, err := shapeSparse(c)
		if err != nil {
			return err
		}
		c.SetConst(0, t)
	default:
		return c.Errorf("no value attribute")
	}
	return nil
}

// shapeSparse densifies a Constant's sparse_value: indices are either
// [NNZ] linear positions or [NNZ, rank] coordinates.
func shapeSparse(c *Ctx) (*onnx.Tensor, error) {
	sp := c.Node.Attrs["sparse_value"].GetSparseTensor()
	if sp == nil || sp.GetValues() == nil {
		return nil, c.Errorf("sparse_value holds no tensor")
	}
	vals, err := onnx.DecodeTensor(sp.GetValues(), "")
	if err != nil {
		return nil, err
	}
	if vals.IsString() {
		return nil, c.Unsupported("sparse string constants")
	}
	dims := sp.GetDims()
	nnz := vals.Lit.Len()
	var lin []int64
	if sp.GetIndices() != nil {
		it, err := onnx.DecodeTensor(sp.GetIndices(), "")
		if err != nil {
			return nil, err
		}
		idx, err := Int64s(it)
		if err != nil {
			return nil, err
		}
		switch id := it.Dims(); {
		case len(id) == 1 && len(idx) == nnz:
			lin = idx
		case len(id) == 2 && int(id[0]) == nnz && int(id[1]) == len(dims):
			lin = make([]int64, nnz)
			for k := range nnz {
				var p int64
				for a, d := range dims {
					p = p*d + idx[k*len(dims)+a]
				}
				lin[k] = p
			}
		default:
			return nil, c.Errorf("sparse indices of shape %v for %d values", id, nnz)
		}
	} else {
		for k := range nnz {
			lin = append(lin, int64(k))
		}
	}
	total := numElems(dims)
	out := hlo.NewLiteral(hlo.ArrayShape(vals.Lit.DType(), dims...))
	for k, p := range lin {
		if p < 0 || p >= total {
			return nil, c.Errorf("sparse index %d out of range", p)
		}
		out.SetBits(int(p), vals.Lit.Bits(k))
	}
	return onnx.TensorOf(out), nil
}

// lowerShape: the shape is static at compile time, so the output is a
// constant (opset 15's start and end slice it).
func lowerShape(c *Ctx) error {
	dims := c.In[0].Dims()
	r := int64(len(dims))
	start, end := c.Node.Int("start", 0), c.Node.Int("end", r)
	clamp := func(v int64) int64 {
		if v < 0 {
			v += r
		}
		return min(max(v, 0), r)
	}
	start, end = clamp(start), clamp(end)
	if end < start {
		end = start
	}
	vals := append([]int64(nil), dims[start:end]...)
	c.SetConst(0, IntTensor(vals, int64(len(vals))))
	return nil
}

func lowerSize(c *Ctx) error {
	c.SetConst(0, IntTensor([]int64{numElems(c.In[0].Dims())}))
	return nil
}

func lowerReshape1(c *Ctx) error {
	shape := c.Node.Ints("shape")
	return reshapeTo(c, shape)
}

func lowerReshape(c *Ctx) error {
	shape, err := c.ConstInts(1)
	if err != nil {
		return err
	}
	return reshapeTo(c, shape)
}

func reshapeTo(c *Ctx, shape []int64) error {
	x := c.Input(0)
	in := x.Dims()
	allowZero := c.Node.Int("allowzero", 0) != 0
	out := make([]int64, len(shape))
	infer, known := -1, int64(1)
	for i, d := range shape {
		switch {
		case d == 0 && !allowZero:
			if i >= len(in) {
				return c.Errorf("shape %v copies dimension %d of a rank-%d input", shape, i, len(in))
			}
			out[i] = in[i]
		case d == -1:
			if infer >= 0 {
				return c.Errorf("shape %v has two -1 dimensions", shape)
			}
			infer = i
			continue
		case d < 0:
			return c.Errorf("shape %v has a negative dimension", shape)
		default:
			out[i] = d
		}
		known *= out[i]
	}
	if infer >= 0 {
		if known == 0 {
			return c.Errorf("shape %v: cannot infer the -1 dimension next to a 0", shape)
		}
		out[infer] = numElems(in) / known
	}
	if numElems(out) != numElems(in) {
		return c.Errorf("cannot reshape %v to %v", in, shape)
	}
	c.Set(0, xb.Reshape(x, out...))
	return nil
}

func lowerFlatten(c *Ctx) error {
	x := c.Input(0)
	d := x.Dims()
	r := int64(len(d))
	axis := c.Node.Int("axis", 1)
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis > r {
		return c.Errorf("axis %d out of range for rank %d", c.Node.Int("axis", 1), r)
	}
	c.Set(0, xb.Reshape(x, numElems(d[:axis]), numElems(d[axis:])))
	return nil
}

// shapeAxes reads the axes of Squeeze/Unsqueeze/Reduce-like ops: the
// attribute before opset 13 (or whenever set), input 1 after.
func shapeAxes(c *Ctx, input int) ([]int64, bool, error) {
	if c.Node.Has("axes") {
		return c.Node.Ints("axes"), true, nil
	}
	if c.Has(input) {
		a, err := c.ConstInts(input)
		return a, true, err
	}
	return nil, false, nil
}

func lowerSqueeze(c *Ctx) error {
	x := c.Input(0)
	d := x.Dims()
	axes, given, err := shapeAxes(c, 1)
	if err != nil {
		return err
	}
	drop := make([]bool, len(d))
	if given {
		for _, a := range axes {
			na, ok := NormAxis(a, len(d))
			if !ok {
				return c.Errorf("axis %d out of range for rank %d", a, len(d))
			}
			if d[na] != 1 {
				return c.Errorf("cannot squeeze dimension %d of size %d", a, d[na])
			}
			drop[na] = true
		}
	} else {
		for i, v := range d {
			drop[i] = v == 1
		}
	}
	out := []int64{}
	for i, v := range d {
		if !drop[i] {
			out = append(out, v)
		}
	}
	c.Set(0, xb.Reshape(x, out...))
	return nil
}

func lowerUnsqueeze(c *Ctx) error {
	x := c.Input(0)
	d := x.Dims()
	axes, given, err := shapeAxes(c, 1)
	if err != nil {
		return err
	}
	if !given {
		return c.Errorf("axes are required")
	}
	r := len(d) + len(axes)
	ins := make([]bool, r)
	for _, a := range axes {
		na, ok := NormAxis(a, r)
		if !ok || ins[na] {
			return c.Errorf("bad axes %v for output rank %d", axes, r)
		}
		ins[na] = true
	}
	out := make([]int64, r)
	k := 0
	for i := range out {
		if ins[i] {
			out[i] = 1
		} else {
			out[i] = d[k]
			k++
		}
	}
	c.Set(0, xb.Reshape(x, out...))
	return nil
}

func lowerTranspose(c *Ctx) error {
	x := c.Input(0)
	r := x.Rank()
	perm := c.Node.Ints("perm")
	if perm == nil {
		perm = make([]int64, r)
		for i := range perm {
			perm[i] = int64(r - 1 - i)
		}
	}
	if len(perm) != r {
		return c.Errorf("perm %v for rank %d", perm, r)
	}
	p := make([]int64, r)
	for i, v := range perm {
		nv, ok := NormAxis(v, r)
		if !ok {
			return c.Errorf("perm %v out of range", perm)
		}
		p[i] = nv
	}
	c.Set(0, xb.Transpose(x, p...))
	return nil
}

func lowerConcat(c *Ctx) error {
	var xs []*xb.Op
	for i := range c.In {
		if c.Has(i) {
			xs = append(xs, c.Input(i))
		}
	}
	if len(xs) == 0 {
		return c.Errorf("no inputs")
	}
	r := xs[0].Rank()
	axis, ok := NormAxis(c.Node.Int("axis", 0), r)
	if !ok {
		return c.Errorf("axis out of range")
	}
	if len(xs) == 1 {
		c.Set(0, xs[0])
		return nil
	}
	c.Set(0, xb.Concatenate(axis, xs...))
	return nil
}

func lowerSplit(c *Ctx) error {
	x := c.Input(0)
	d := x.Dims()
	axis, ok := NormAxis(c.Node.Int("axis", 0), len(d))
	if !ok {
		return c.Errorf("axis out of range")
	}
	n := len(c.Node.Outputs)
	var split []int64
	switch {
	case c.Node.Has("split"):
		split = c.Node.Ints("split")
	case c.Has(1) && numElems(c.In[1].Dims()) > 0:
		s, err := c.ConstInts(1)
		if err != nil {
			return err
		}
		split = s
	case c.Node.Has("num_outputs"):
		no := c.Node.Int("num_outputs", int64(n))
		if no <= 0 {
			return c.Errorf("num_outputs %d", no)
		}
		chunk := (d[axis] + no - 1) / no
		left := d[axis]
		for i := int64(0); i < no; i++ {
			s := min(chunk, left)
			split = append(split, s)
			left -= s
		}
	default:
		if d[axis]%int64(n) != 0 {
			return c.Errorf("cannot split dimension %d into %d equal parts", d[axis], n)
		}
		for range n {
			split = append(split, d[axis]/int64(n))
		}
	}
	var sum int64
	for _, s := range split {
		sum += s
	}
	if sum != d[axis] || len(split) < n {
		return c.Errorf("split %v does not match dimension %d / %d outputs", split, d[axis], n)
	}
	var off int64
	for i := range n {
		c.Set(i, xb.SliceAxis(x, axis, off, off+split[i]))
		off += split[i]
	}
	return nil
}

func lowerExpand(c *Ctx) error {
	shape, err := c.ConstInts(1)
	if err != nil {
		return err
	}
	x := c.Input(0)
	out, ok := BroadcastDims(x.Dims(), shape)
	if !ok {
		return c.Errorf("cannot expand %v to %v", x.Dims(), shape)
	}
	c.Set(0, xb.BroadcastTo(x, out...))
	return nil
}

func lowerTile(c *Ctx) error {
	reps, err := c.ConstInts(1)
	if err != nil {
		return err
	}
	x := c.Input(0)
	d := x.Dims()
	if c.Has(2) { // opset 1: tiles and axis inputs
		tiles, err := c.ConstInts(1)
		if err != nil {
			return err
		}
		ax, err := c.ConstInts(2)
		if err != nil || len(ax) != 1 || len(tiles) != 1 {
			return c.Errorf("bad tiles/axis")
		}
		a, ok := NormAxis(ax[0], len(d))
		if !ok {
			return c.Errorf("axis out of range")
		}
		reps = make([]int64, len(d))
		for i := range reps {
			reps[i] = 1
		}
		reps[a] = tiles[0]
	}
	if len(reps) != len(d) {
		return c.Errorf("repeats %v for rank %d", reps, len(d))
	}
	bd := make([]int64, 0, 2*len(d))
	mapping := make([]int64, len(d))
	out := make([]int64, len(d))
	for i, v := range d {
		if reps[i] < 0 {
			return c.Errorf("negative repeat")
		}
		bd = append(bd, reps[i], v)
		mapping[i] = int64(2*i + 1)
		out[i] = reps[i] * v
	}
	y := xb.BroadcastInDim(x, bd, mapping...)
	c.Set(0, xb.Reshape(y, out...))
	return nil
}

func lowerConstantOfShape(c *Ctx) error {
	shape, err := c.ConstInts(0)
	if err != nil {
		return err
	}
	for _, s := range shape {
		if s < 0 {
			return c.Errorf("negative dimension in %v", shape)
		}
	}
	t, err := c.Node.TensorAttr("value")
	if err != nil {
		return err
	}
	var v *xb.Op
	if t == nil {
		v = c.B.ScalarOf(hlo.F32, 0)
	} else {
		if t.IsString() || t.Lit.Len() != 1 {
			return c.Unsupported("value must be a one-element numeric tensor")
		}
		v = xb.Reshape(c.B.Constant(t.Lit))
	}
	c.Set(0, xb.BroadcastInDim(v, shape))
	return nil
}

func lowerRange(c *Ctx) error {
	s0, err := c.Const(0)
	if err != nil {
		return err
	}
	t := s0.Lit.DType()
	st, err1 := c.ConstFloats(0)
	lim, err2 := c.ConstFloats(1)
	dl, err3 := c.ConstFloats(2)
	if err1 != nil || err2 != nil || err3 != nil || len(st) != 1 || len(lim) != 1 || len(dl) != 1 {
		return c.Errorf("start, limit and delta must be scalars")
	}
	if dl[0] == 0 {
		return c.Errorf("delta is zero")
	}
	n := int64(max(math.Ceil((lim[0]-st[0])/dl[0]), 0))
	if t.IsInteger() {
		si, _ := c.ConstInts(0)
		li, _ := c.ConstInts(1)
		di, _ := c.ConstInts(2)
		n = 0
		if di[0] > 0 && li[0] > si[0] {
			n = (li[0] - si[0] + di[0] - 1) / di[0]
		} else if di[0] < 0 && li[0] < si[0] {
			n = (si[0] - li[0] + (-di[0]) - 1) / (-di[0])
		}
		l := hlo.NewLiteral(hlo.ArrayShape(t, n))
		for i := int64(0); i < n; i++ {
			l.SetInt64(int(i), si[0]+i*di[0])
		}
		c.SetConst(0, onnx.TensorOf(l))
		return nil
	}
	l := hlo.NewLiteral(hlo.ArrayShape(t, n))
	for i := int64(0); i < n; i++ {
		l.SetFloat64(int(i), st[0]+float64(i)*dl[0])
	}
	c.SetConst(0, onnx.TensorOf(l))
	return nil
}
