package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Softmax, LogSoftmax and Hardmax.

func init() {
	for _, name := range []string{"Softmax", "LogSoftmax", "Hardmax"} {
		Register(Op{Name: name, Lower: lowerSoftmaxFamily})
	}
}

// smLogSoftmax is x - max - log(sum(exp(x - max))) along axis.
func smLogSoftmax(x *xb.Op, axis int64) *xb.Op {
	dims := x.Dims()
	ax := []int64{axis}
	m := xb.ReduceMax(x, axis)
	m = xb.Select(xb.IsFinite(m), m, FullLike(m, 0))
	sh := xb.Sub(x, rdBack(m, dims, ax))
	lse := xb.Log(rdSum(xb.Exp(sh), axis))
	return xb.Sub(sh, rdBack(lse, dims, ax))
}

// smSoftmax is exp(x - max) / sum(exp(x - max)) along axis.
func smSoftmax(x *xb.Op, axis int64) *xb.Op {
	dims := x.Dims()
	ax := []int64{axis}
	m := xb.ReduceMax(x, axis)
	m = xb.Select(xb.IsFinite(m), m, FullLike(m, 0))
	e := xb.Exp(xb.Sub(x, rdBack(m, dims, ax)))
	return xb.Div(e, rdBack(rdSum(e, axis), dims, ax))
}

// smHardmax is 1 at the first maximum along axis, 0 elsewhere.
func smHardmax(c *Ctx, x *xb.Op, axis int64) *xb.Op {
	dims := x.Dims()
	m := xb.ReduceMax(x, axis)
	idx := rdArgIndex(c, x, m, axis, false)
	iota := c.B.Iota(hlo.S64, axis, dims...)
	hit := xb.Eq(iota, rdBack(idx, dims, []int64{axis}))
	return xb.Select(hit, FullLike(x, 1), FullLike(x, 0))
}

func lowerSoftmaxFamily(c *Ctx) error {
	x := c.Input(0)
	if !x.DType().IsFloat() {
		return c.Unsupported("%s input", x.DType())
	}
	dims := x.Dims()
	r := len(dims)
	def := int64(-1)
	if c.Opset < 13 {
		def = 1
	}
	if r == 0 {
		// A scalar is a single-element axis.
		x1 := xb.Reshape(x, 1)
		c.Set(0, xb.Reshape(smApply(c, x1, 0), dims...))
		return nil
	}
	axis, ok := NormAxis(c.Node.Int("axis", def), r)
	if !ok {
		return c.Errorf("axis %d out of range for rank %d", c.Node.Int("axis", def), r)
	}
	if c.Opset >= 13 {
		c.Set(0, smApply(c, x, axis))
		return nil
	}
	// Before opset 13: flatten to 2-D at axis, normalize each row.
	rows, cols := numElems(dims[:axis]), numElems(dims[axis:])
	y := smApply(c, xb.Reshape(x, rows, cols), 1)
	c.Set(0, xb.Reshape(y, dims...))
	return nil
}

func smApply(c *Ctx, x *xb.Op, axis int64) *xb.Op {
	switch c.Node.Op {
	case "LogSoftmax":
		return smWide(x, func(x *xb.Op) *xb.Op { return smLogSoftmax(x, axis) })
	case "Hardmax":
		return smHardmax(c, x, axis)
	}
	return smWide(x, func(x *xb.Op) *xb.Op { return smSoftmax(x, axis) })
}

// smWide runs f on a float16/bfloat16 x in float32 and rounds the result
// once, as ONNX Runtime's kernels do (bit for bit on float16); exp, sum and
// divide each rounded to float16 are ulps away from it in half the
// elements. Other types run as they are.
func smWide(x *xb.Op, f func(*xb.Op) *xb.Op) *xb.Op {
	t := x.DType()
	if t != hlo.F16 && t != hlo.BF16 {
		return f(x)
	}
	return xb.Convert(f(xb.Convert(x, hlo.F32)), t)
}
