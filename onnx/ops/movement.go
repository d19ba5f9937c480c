package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

func init() {
	Register(Op{Name: "Slice", Lower: lowerSlice, Host: hostMove})
	Register(Op{Name: "Slice", Since: 10, ConstInputs: []int{1, 2, 3, 4}, Lower: lowerSlice, Host: hostMove})
	Register(Op{Name: "Pad", Lower: lowerPad, Host: hostMove})
	Register(Op{Name: "Pad", Since: 11, ConstInputs: []int{1, 2, 3}, Lower: lowerPad, Host: hostMove})
	Register(Op{Name: "DepthToSpace", Lower: lowerDepthToSpace, Host: hostMove})
	Register(Op{Name: "SpaceToDepth", Lower: lowerSpaceToDepth, Host: hostMove})
	Register(Op{Name: "CenterCropPad", ConstInputs: []int{1}, Lower: lowerCenterCropPad, Host: hostMove})
	Register(Op{Name: "Trilu", ConstInputs: []int{1}, Lower: lowerTrilu})
	Register(Op{Name: "EyeLike", Lower: lowerEyeLike})
	Register(Op{Name: "CumSum", ConstInputs: []int{1}, Lower: func(c *Ctx) error { return lowerCum(c, false) }})
	Register(Op{Name: "CumProd", ConstInputs: []int{1}, Lower: func(c *Ctx) error { return lowerCum(c, true) }})
}

// movSliceAxis takes x[start:end:step] along one axis with ONNX's
// clamping rules (negative steps reverse).
func movSliceAxis(x *xb.Op, axis, start, end, step int64) *xb.Op {
	d := x.Dims()[axis]
	// A step longer than the dimension takes one element at most; bound
	// it so that the arithmetic below cannot overflow.
	step = min(max(step, -max(d, 1)), max(d, 1))
	if start < 0 {
		start += d
	}
	if end < 0 {
		end += d
	}
	r := x.Rank()
	starts := make([]int64, r)
	limits := x.Dims()
	strides := make([]int64, r)
	for i := range strides {
		strides[i] = 1
	}
	if step > 0 {
		start = min(max(start, 0), d)
		end = min(max(end, 0), d)
		if end < start {
			end = start
		}
		starts[axis], limits[axis], strides[axis] = start, end, step
		return xb.Slice(x, starts, limits, strides)
	}
	start = min(max(start, 0), d-1)
	end = min(max(end, -1), d-1)
	n := int64(0)
	if start > end {
		n = (start - end + (-step) - 1) / (-step)
	}
	if n == 0 {
		starts[axis], limits[axis] = 0, 0
		return xb.Slice(x, starts, limits, nil)
	}
	rev := xb.Reverse(x, axis)
	r0 := d - 1 - start
	starts[axis], limits[axis], strides[axis] = r0, r0+(n-1)*(-step)+1, -step
	return xb.Slice(rev, starts, limits, strides)
}

func lowerSlice(c *Ctx) error {
	x := c.Input(0)
	r := x.Rank()
	var starts, ends, axes, steps []int64
	var err error
	if c.Opset < 10 {
		starts, ends, axes = c.Node.Ints("starts"), c.Node.Ints("ends"), c.Node.Ints("axes")
	} else {
		if starts, err = c.ConstInts(1); err != nil {
			return err
		}
		if ends, err = c.ConstInts(2); err != nil {
			return err
		}
		if c.Has(3) {
			if axes, err = c.ConstInts(3); err != nil {
				return err
			}
		}
		if c.Has(4) {
			if steps, err = c.ConstInts(4); err != nil {
				return err
			}
		}
	}
	if axes == nil {
		for i := range starts {
			axes = append(axes, int64(i))
		}
	}
	if len(starts) != len(ends) || len(axes) != len(starts) || (steps != nil && len(steps) != len(starts)) {
		return c.Errorf("starts %v, ends %v, axes %v, steps %v differ in length", starts, ends, axes, steps)
	}
	seen := make([]bool, r)
	for i := range starts {
		a, ok := NormAxis(axes[i], r)
		if !ok || seen[a] {
			return c.Errorf("bad axes %v", axes)
		}
		seen[a] = true
		step := int64(1)
		if steps != nil {
			step = steps[i]
		}
		if step == 0 {
			return c.Errorf("zero step")
		}
		x = movSliceAxis(x, a, starts[i], ends[i], step)
	}
	c.Set(0, x)
	return nil
}

func lowerPad(c *Ctx) error {
	x := c.Input(0)
	r := x.Rank()
	mode := c.Node.Str("mode", "constant")
	var pads []int64
	var err error
	val := ScalarLike(x, 0)
	if c.Opset < 11 {
		pads = c.Node.Ints("pads")
		if pads == nil {
			pads = c.Node.Ints("paddings")
		}
		val = ScalarLike(x, float64(c.Node.Float("value", 0)))
	} else {
		if pads, err = c.ConstInts(1); err != nil {
			return err
		}
		if c.Has(2) {
			t, err := c.Const(2)
			if err != nil {
				return err
			}
			if t.IsString() || t.Lit.Len() != 1 {
				return c.Unsupported("constant_value must be a numeric scalar")
			}
			val = xb.Convert(xb.Reshape(c.B.Constant(t.Lit)), x.DType())
		}
	}
	axes := make([]int64, 0, r)
	if c.Has(3) {
		ax, err := c.ConstInts(3)
		if err != nil {
			return err
		}
		for _, a := range ax {
			na, ok := NormAxis(a, r)
			if !ok {
				return c.Errorf("axis %d out of range", a)
			}
			axes = append(axes, na)
		}
	} else {
		for i := range r {
			axes = append(axes, int64(i))
		}
	}
	if len(pads) != 2*len(axes) {
		return c.Errorf("pads %v for %d axes", pads, len(axes))
	}
	lo, hi := make([]int64, r), make([]int64, r)
	for i, a := range axes {
		lo[a], hi[a] = pads[i], pads[i+len(axes)]
	}
	if mode == "constant" {
		cfg := make(hlo.PaddingConfig, r)
		for i := range cfg {
			cfg[i] = hlo.PadDim{Lo: lo[i], Hi: hi[i]}
		}
		c.Set(0, xb.Pad(x, val, cfg))
		return nil
	}
	if mode != "reflect" && mode != "edge" && mode != "wrap" {
		return c.Unsupported("mode %q", mode)
	}
	for a := range r {
		if lo[a] == 0 && hi[a] == 0 {
			continue
		}
		d := x.Dims()[a]
		n := lo[a] + d + hi[a]
		if n < 0 {
			return c.Errorf("pads cut more than the dimension")
		}
		if d == 0 && n > 0 {
			return c.Errorf("cannot %s-pad an empty dimension", mode)
		}
		idx := make([]int64, n)
		for j := range idx {
			i := int64(j) - lo[a]
			switch mode {
			case "edge":
				i = min(max(i, 0), d-1)
			case "wrap":
				i = ((i % d) + d) % d
			case "reflect":
				if d == 1 {
					i = 0
					break
				}
				p := 2 * (d - 1)
				i = ((i % p) + p) % p
				if i >= d {
					i = p - i
				}
			}
			idx[j] = i
		}
		x = xb.Take(x, xb.Const(c.B, idx, n), int64(a))
	}
	c.Set(0, x)
	return nil
}

func lowerDepthToSpace(c *Ctx) error {
	x := c.Input(0)
	d := x.Dims()
	b := c.Node.Int("blocksize", 0)
	if len(d) != 4 || b <= 0 || d[1]%(b*b) != 0 {
		return c.Errorf("bad input %v or blocksize %d", d, b)
	}
	n, ch, h, w := d[0], d[1], d[2], d[3]
	cc := ch / (b * b)
	var y *xb.Op
	if c.Node.Str("mode", "DCR") == "CRD" {
		y = xb.Transpose(xb.Reshape(x, n, cc, b, b, h, w), 0, 1, 4, 2, 5, 3)
	} else {
		y = xb.Transpose(xb.Reshape(x, n, b, b, cc, h, w), 0, 3, 4, 1, 5, 2)
	}
	c.Set(0, xb.Reshape(y, n, cc, h*b, w*b))
	return nil
}

func lowerSpaceToDepth(c *Ctx) error {
	x := c.Input(0)
	d := x.Dims()
	b := c.Node.Int("blocksize", 0)
	if len(d) != 4 || b <= 0 || d[2]%b != 0 || d[3]%b != 0 {
		return c.Errorf("bad input %v or blocksize %d", d, b)
	}
	n, ch, h, w := d[0], d[1], d[2], d[3]
	y := xb.Transpose(xb.Reshape(x, n, ch, h/b, b, w/b, b), 0, 3, 5, 1, 2, 4)
	c.Set(0, xb.Reshape(y, n, ch*b*b, h/b, w/b))
	return nil
}

func lowerCenterCropPad(c *Ctx) error {
	x := c.Input(0)
	r := x.Rank()
	shape, err := c.ConstInts(1)
	if err != nil {
		return err
	}
	axes := c.Node.Ints("axes")
	if axes == nil {
		for i := range r {
			axes = append(axes, int64(i))
		}
	}
	if len(axes) != len(shape) {
		return c.Errorf("shape %v for axes %v", shape, axes)
	}
	cfg := make(hlo.PaddingConfig, r)
	for i, a := range axes {
		na, ok := NormAxis(a, r)
		if !ok {
			return c.Errorf("axis %d out of range", a)
		}
		d, t := x.Dims()[na], shape[i]
		if t < 0 {
			return c.Errorf("negative target %d", t)
		}
		if t < d {
			lo := (d - t) / 2
			cfg[na] = hlo.PadDim{Lo: -lo, Hi: -(d - t - lo)}
		} else {
			lo := (t - d) / 2
			cfg[na] = hlo.PadDim{Lo: lo, Hi: t - d - lo}
		}
	}
	c.Set(0, xb.Pad(x, ScalarLike(x, 0), cfg))
	return nil
}

func lowerTrilu(c *Ctx) error {
	x := c.Input(0)
	d := x.Dims()
	r := len(d)
	if r < 2 {
		return c.Errorf("input must have rank >= 2")
	}
	k := int64(0)
	if c.Has(1) {
		ks, err := c.ConstInts(1)
		if err != nil {
			return err
		}
		if len(ks) != 1 {
			return c.Errorf("k must be a scalar")
		}
		k = ks[0]
	}
	i := c.B.Iota(hlo.S64, int64(r-2), d...)
	j := c.B.Iota(hlo.S64, int64(r-1), d...)
	diff := xb.Sub(j, i) // j - i
	kk := xb.BroadcastTo(c.B.ScalarOf(hlo.S64, float64(k)), d...)
	var keep *xb.Op
	if c.Node.Int("upper", 1) != 0 {
		keep = xb.Ge(diff, kk)
	} else {
		keep = xb.Le(diff, kk)
	}
	c.Set(0, xb.Select(keep, x, FullLike(x, 0)))
	return nil
}

func lowerEyeLike(c *Ctx) error {
	x := c.Input(0)
	d := x.Dims()
	if len(d) != 2 {
		return c.Errorf("input must be 2-D")
	}
	t := x.DType()
	if c.Node.Has("dtype") {
		t = onnxHLO(c.Node.Int("dtype", 0))
		if t == hlo.Invalid {
			return c.Unsupported("dtype %d", c.Node.Int("dtype", 0))
		}
	}
	k := c.Node.Int("k", 0)
	i := c.B.Iota(hlo.S64, 0, d...)
	j := c.B.Iota(hlo.S64, 1, d...)
	on := xb.Eq(xb.Sub(j, i), xb.BroadcastTo(c.B.ScalarOf(hlo.S64, float64(k)), d...))
	c.Set(0, xb.Select(on, c.B.Full(t, 1, d...), c.B.Full(t, 0, d...)))
	return nil
}

func lowerCum(c *Ctx, prod bool) error {
	x := c.Input(0)
	ax, err := c.ConstInts(1)
	if err != nil {
		return err
	}
	if len(ax) != 1 {
		return c.Errorf("axis must be a scalar")
	}
	r := x.Rank()
	a, ok := NormAxis(ax[0], r)
	if !ok {
		return c.Errorf("axis out of range")
	}
	init := 0.0
	fn := func(_ *xb.Builder, p, q *xb.Op) *xb.Op { return xb.Add(p, q) }
	if prod {
		init = 1
		fn = func(_ *xb.Builder, p, q *xb.Op) *xb.Op { return xb.Mul(p, q) }
	}
	reverse := c.Node.Int("reverse", 0) != 0
	if reverse {
		x = xb.Reverse(x, a)
	}
	d := x.Dims()
	n := d[a]
	if c.Node.Int("exclusive", 0) != 0 && n > 0 {
		cfg := make(hlo.PaddingConfig, r)
		cfg[a] = hlo.PadDim{Lo: 1, Hi: -1}
		x = xb.Pad(x, ScalarLike(x, init), cfg)
	}
	switch {
	case n > 256:
		// Long axes: a log-step scan (x += x shifted by 1, 2, 4, ...)
		// instead of an n-wide window per element.
		for sh := int64(1); sh < n; sh *= 2 {
			cfg := make(hlo.PaddingConfig, r)
			cfg[a] = hlo.PadDim{Lo: sh, Hi: -sh}
			x = fn(c.B, x, xb.Pad(x, ScalarLike(x, init), cfg))
		}
	case n > 1:
		sizes := make([]int64, r)
		pad := make([][2]int64, r)
		for i := range sizes {
			sizes[i] = 1
		}
		sizes[a] = n
		pad[a] = [2]int64{n - 1, 0}
		x = xb.ReduceWindow(x, ScalarLike(x, init), fn, xb.Window{Sizes: sizes, Padding: pad})
	}
	if reverse {
		x = xb.Reverse(x, a)
	}
	c.Set(0, x)
	return nil
}

// onnxHLO maps an ONNX dtype attribute to an HLO element type.
func onnxHLO(code int64) hlo.DType {
	return onnx.ElemType(code).HLO()
}
