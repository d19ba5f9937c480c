package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

func init() {
	Register(Op{Name: "QuantizeLinear", Since: 10, Lower: lowerQuantizeLinear})
	Register(Op{Name: "DequantizeLinear", Since: 10, Lower: lowerDequantizeLinear})
	Register(Op{Name: "DynamicQuantizeLinear", Since: 11, Lower: lowerDynamicQuantizeLinear})
}

// qExpand brings a scale or zero point v to x's dims: a scalar (or
// one-element 1-D tensor) is per tensor, a 1-D tensor per axis, and with
// blockSize > 0 a tensor of x's rank whose axis dimension holds one value
// per block of blockSize elements.
func qExpand(c *Ctx, v *xb.Op, dims []int64, axis int64, blockSize int64) (*xb.Op, error) {
	vd := v.Dims()
	if len(vd) == 0 || (len(vd) == 1 && vd[0] == 1) {
		if len(vd) != 0 {
			v = xb.Reshape(v)
		}
		return xb.BroadcastTo(v, dims...), nil
	}
	a, ok := NormAxis(axis, len(dims))
	if !ok {
		return nil, c.Errorf("axis %d out of range for rank %d", axis, len(dims))
	}
	if blockSize <= 0 {
		if len(vd) != 1 || vd[0] != dims[a] {
			return nil, c.Errorf("per-axis scale or zero point of shape %v does not fit %v on axis %d", vd, dims, a)
		}
		return xb.BroadcastInDim(v, dims, a), nil
	}
	if len(vd) != len(dims) {
		return nil, c.Errorf("blocked scale or zero point of shape %v does not fit %v", vd, dims)
	}
	nb := vd[a]
	for i := range dims {
		if int64(i) != a && vd[i] != dims[i] {
			return nil, c.Errorf("blocked scale or zero point of shape %v does not fit %v", vd, dims)
		}
	}
	if nb*blockSize < dims[a] || (nb-1)*blockSize >= dims[a] {
		return nil, c.Errorf("blocked scale or zero point of shape %v does not fit %v with block size %d on axis %d", vd, dims, blockSize, a)
	}
	// [.., nb, ..] -> [.., nb, bs, ..] -> [.., nb*bs, ..] -> slice.
	ext := make([]int64, 0, len(dims)+1)
	mapping := make([]int64, 0, len(dims))
	for i, d := range vd {
		mapping = append(mapping, int64(len(ext)))
		ext = append(ext, d)
		if int64(i) == a {
			ext = append(ext, blockSize)
		}
	}
	e := xb.BroadcastInDim(v, ext, mapping...)
	full := append([]int64(nil), dims...)
	full[a] = nb * blockSize
	e = xb.Reshape(e, full...)
	if full[a] != dims[a] {
		e = xb.SliceAxis(e, a, 0, dims[a])
	}
	return e, nil
}

// qPromote is numpy's promotion of two float types.
func qPromote(a, b hlo.DType) hlo.DType {
	if a == b {
		return a
	}
	if a == hlo.F64 || b == hlo.F64 {
		return hlo.F64
	}
	return hlo.F32
}

// qFloatMax is the largest finite value of a small float type.
func qFloatMax(t hlo.DType) (float64, bool) {
	switch t {
	case hlo.F8E4M3FN:
		return 448, true
	case hlo.F8E4M3FNUZ:
		return 240, true
	case hlo.F8E5M2:
		return 57344, true
	case hlo.F8E5M2FNUZ:
		return 57344, true
	case hlo.F4E2M1FN:
		return 6, true
	}
	return 0, false
}

func lowerQuantizeLinear(c *Ctx) error {
	x, scale := c.Input(0), c.Input(1)
	if x == nil || scale == nil {
		return c.Errorf("QuantizeLinear needs x and y_scale")
	}
	zp := c.Input(2)
	axis := c.Node.Int("axis", 1)
	blockSize := c.Node.Int("block_size", 0)
	saturate := c.Node.Int("saturate", 1) != 0
	t := hlo.U8
	if zp != nil {
		t = zp.DType()
	} else if od := c.Node.Int("output_dtype", 0); od != 0 {
		t = onnx.ElemType(od).HLO()
		if t == hlo.Invalid {
			return c.Unsupported("output_dtype %d", od)
		}
	}
	if !scale.DType().IsFloat() || !(x.DType().IsFloat() || x.DType().IsInteger()) {
		return c.Errorf("QuantizeLinear: x (%s) and y_scale (%s) must be numbers and floats", x.DType(), scale.DType())
	}
	ct := hlo.F64 // int32 x / float scale: numpy computes in double
	if x.DType().IsFloat() {
		ct = qPromote(x.DType(), scale.DType())
	}
	if p := c.Node.Int("precision", 0); p != 0 {
		ct = onnx.ElemType(p).HLO()
		if !ct.IsFloat() {
			return c.Unsupported("precision %d", p)
		}
	}
	dims := x.Dims()
	s, err := qExpand(c, scale, dims, axis, blockSize)
	if err != nil {
		return err
	}
	if x.DType() != ct {
		x = xb.Convert(x, ct)
	}
	if s.DType() != ct {
		s = xb.Convert(s, ct)
	}
	q := xb.Div(x, s)
	var z *xb.Op
	if zp != nil {
		if z, err = qExpand(c, zp, dims, axis, blockSize); err != nil {
			return err
		}
	}
	if lo, hi, ok := qIntRange(t); ok && t != hlo.S32 && t != hlo.U32 {
		// The zero point is added exactly in f64; in f32 too for targets
		// of up to 16 bits when q is at most f32: an in-range sum is an
		// integer below 2^17, exact, and rounding is monotonic, so a sum
		// past a bound stays past it. f32 keeps the quantizing step in
		// the fused f32 loop (in f64 it ran as three unfused
		// elementwise kernels, most of a small quantized CNN's time).
		rt := hlo.F64
		if ct != hlo.F64 && lo >= -1<<16 && hi <= 1<<16 {
			rt = hlo.F32
		}
		r := xb.Convert(xb.Round(q), rt)
		if z != nil {
			r = xb.Add(r, xb.Convert(z, rt))
		}
		r = xb.Clamp(c.B.ScalarOf(rt, lo), r, c.B.ScalarOf(rt, hi))
		c.Set(0, xb.Convert(r, t))
		return nil
	}
	fmax, ok := qFloatMax(t)
	if !ok {
		return c.Unsupported("quantizing to %s", t)
	}
	if t == hlo.F4E2M1FN {
		if z != nil {
			q = xb.Add(q, xb.Convert(z, ct))
		}
		saturate = true
	}
	if saturate {
		lo, hi := c.B.ScalarOf(ct, -fmax), c.B.ScalarOf(ct, fmax)
		// Infinities saturate too (the reference clips); NaN stays NaN.
		q = xb.Clamp(lo, q, hi)
	}
	c.Set(0, xb.Convert(q, t))
	return nil
}

func lowerDequantizeLinear(c *Ctx) error {
	x, scale := c.Input(0), c.Input(1)
	if x == nil || scale == nil {
		return c.Errorf("DequantizeLinear needs x and x_scale")
	}
	axis := c.Node.Int("axis", 1)
	blockSize := c.Node.Int("block_size", 0)
	if !scale.DType().IsFloat() {
		return c.Errorf("DequantizeLinear: x_scale must be a float, not %s", scale.DType())
	}
	out := scale.DType()
	if od := c.Node.Int("output_dtype", 0); od != 0 {
		out = onnx.ElemType(od).HLO()
		if !out.IsFloat() {
			return c.Unsupported("output_dtype %d", od)
		}
	}
	ct := hlo.F32
	if scale.DType() == hlo.F64 {
		ct = hlo.F64
	}
	dims := x.Dims()
	dx := xb.Convert(x, ct)
	if zp := c.Input(2); zp != nil && x.DType().IsInteger() {
		z, err := qExpand(c, zp, dims, axis, blockSize)
		if err != nil {
			return err
		}
		dx = xb.Sub(dx, xb.Convert(z, ct))
	}
	s, err := qExpand(c, scale, dims, axis, blockSize)
	if err != nil {
		return err
	}
	if s.DType() != ct {
		s = xb.Convert(s, ct)
	}
	y := xb.Mul(dx, s)
	if out != ct {
		y = xb.Convert(y, out)
	}
	c.Set(0, y)
	return nil
}

func lowerDynamicQuantizeLinear(c *Ctx) error {
	x := c.Input(0)
	if x == nil {
		return c.Errorf("DynamicQuantizeLinear needs x")
	}
	xt := x.DType()
	if !xt.IsFloat() {
		return c.Errorf("DynamicQuantizeLinear: x must be a float, not %s", xt)
	}
	q, scale, zp := dynamicQuantizeU8(c.B, x)
	c.Set(0, q)
	if xt != hlo.F32 {
		scale = xb.Convert(scale, xt)
	}
	c.Set(1, scale)
	c.Set(2, zp)
	return nil
}

// dynamicQuantizeU8 is DynamicQuantizeLinear of float x: x quantized to
// u8 over its range widened to hold 0, the f32 scale and the u8 zero
// point.
func dynamicQuantizeU8(b *xb.Builder, x *xb.Op) (q, scale, zp *xb.Op) {
	if x.DType() != hlo.F32 {
		x = xb.Convert(x, hlo.F32)
	}
	zero := b.ScalarOf(hlo.F32, 0)
	maxx, minx := zero, zero
	if numElems(x.Dims()) > 0 {
		maxx = xb.Max(zero, xb.ReduceMax(x))
		minx = xb.Min(zero, xb.ReduceMin(x))
	}
	rng := xb.Sub(maxx, minx)
	scale = xb.Select(xb.Eq(maxx, minx), b.ScalarOf(hlo.F32, 1), xb.Div(rng, b.ScalarOf(hlo.F32, 255)))
	zp0 := xb.Sub(zero, xb.Div(minx, scale))
	zpi := xb.Round(xb.Clamp(zero, zp0, b.ScalarOf(hlo.F32, 255)))
	qf := xb.Add(xb.Round(xb.Div(x, xb.BroadcastTo(scale, x.Dims()...))), xb.BroadcastTo(zpi, x.Dims()...))
	qf = xb.Clamp(zero, qf, b.ScalarOf(hlo.F32, 255))
	return xb.Convert(qf, hlo.U8), scale, xb.Convert(zpi, hlo.U8)
}
