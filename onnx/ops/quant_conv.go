package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

func init() {
	Register(Op{Name: "ConvInteger", Since: 10, Lower: lowerConvInteger})
	Register(Op{Name: "QLinearConv", Since: 10, Lower: lowerQLinearConv})
}

// qConvZeroPoint subtracts a zero point from x (already s32): a scalar,
// or a 1-D tensor along dimension axis (the output channels of a kernel).
func qConvZeroPoint(c *Ctx, x, zp *xb.Op, axis int64) (*xb.Op, error) {
	if zp == nil {
		return x, nil
	}
	z := xb.Convert(zp, hlo.S32)
	zd := z.Dims()
	switch {
	case numElems(zd) == 1 && len(zd) <= 1:
		if len(zd) == 1 {
			z = xb.Reshape(z)
		}
		z = xb.BroadcastTo(z, x.Dims()...)
	case len(zd) == 1 && axis < int64(x.Rank()) && zd[0] == x.Dims()[axis]:
		z = xb.BroadcastInDim(z, x.Dims(), axis)
	default:
		return nil, c.Errorf("zero point of shape %v does not fit %v", zd, x.Dims())
	}
	return xb.Sub(x, z), nil
}

// qConv is ONNX Conv's geometry (auto_pad, pads, strides, dilations,
// group) applied to x [N, C, D...] and w [M, C/group, K...], both s32;
// narrow says they are 8-bit values less their zero points.
func qConv(c *Ctx, x, w *xb.Op, narrow bool) (*xb.Op, error) {
	xd, wd := x.Dims(), w.Dims()
	if len(xd) < 3 || len(wd) != len(xd) {
		return nil, c.Errorf("convolution input %v and kernel %v do not fit", xd, wd)
	}
	n := len(xd) - 2
	group := c.Node.Int("group", 1)
	if group < 1 || xd[1] != wd[1]*group || wd[0]%group != 0 {
		return nil, c.Errorf("convolution input %v, kernel %v and group %d do not fit", xd, wd, group)
	}
	if ks := c.Node.Ints("kernel_shape"); len(ks) > 0 && !equalDims(ks, wd[2:]) {
		return nil, c.Errorf("kernel_shape %v differs from the kernel's %v", ks, wd[2:])
	}
	ones := func() []int64 {
		o := make([]int64, n)
		for i := range o {
			o[i] = 1
		}
		return o
	}
	strides := c.Node.Ints("strides")
	if len(strides) == 0 {
		strides = ones()
	}
	dil := c.Node.Ints("dilations")
	if len(dil) == 0 {
		dil = ones()
	}
	if len(strides) != n || len(dil) != n {
		return nil, c.Errorf("strides %v or dilations %v do not have %d entries", strides, dil, n)
	}
	padding := make([][2]int64, n)
	switch ap := c.Node.Str("auto_pad", "NOTSET"); ap {
	case "NOTSET", "":
		if pads := c.Node.Ints("pads"); len(pads) > 0 {
			if len(pads) != 2*n {
				return nil, c.Errorf("pads %v do not have %d entries", pads, 2*n)
			}
			for i := range padding {
				padding[i] = [2]int64{pads[i], pads[n+i]}
			}
		}
	case "VALID":
	case "SAME_UPPER", "SAME_LOWER":
		for i := range padding {
			in := xd[2+i]
			out := (in + strides[i] - 1) / strides[i]
			k := (wd[2+i]-1)*dil[i] + 1
			total := max(0, (out-1)*strides[i]+k-in)
			small := total / 2
			if ap == "SAME_UPPER" {
				padding[i] = [2]int64{small, total - small}
			} else {
				padding[i] = [2]int64{total - small, small}
			}
		}
	default:
		return nil, c.Unsupported("auto_pad %q", ap)
	}
	cfg := xb.ConvConfig{Dims: channelsFirst(n), Strides: strides, Padding: padding, RhsDilation: dil, FeatureGroupCount: group}
	// A 1-D or 2-D convolution stays in s32: the CPU backend's
	// int8-conv-fusion runs it on the 8-bit GEMM. In 3-D, with 8-bit
	// operands, zero points subtracted, each product is at most
	// 255² < 2¹⁶; when a whole output's sum stays below 2²⁴ every partial
	// sum is an integer f32 holds exactly, in any order, so the f32
	// convolution kernels compute the s32 result exactly.
	if narrow && n > 2 {
		if terms := numElems(wd[1:]); terms*255*255 < 1<<24 {
			y := xb.Conv(xb.Convert(x, hlo.F32), xb.Convert(w, hlo.F32), cfg)
			return xb.Convert(y, hlo.S32), nil
		}
	}
	return xb.Conv(x, w, cfg), nil
}

// channelsFirst is ONNX's NCHW/OIHW convolution layout with n spatial
// dimensions.
func channelsFirst(n int) *xb.ConvDims {
	sp := make([]int64, n)
	for i := range sp {
		sp[i] = int64(2 + i)
	}
	return &xb.ConvDims{
		InputBatch: 0, InputFeature: 1, InputSpatial: sp,
		KernelOutput: 0, KernelInput: 1, KernelSpatial: sp,
		OutputBatch: 0, OutputFeature: 1, OutputSpatial: sp,
	}
}

func is8(t hlo.DType) bool { return t == hlo.U8 || t == hlo.S8 }

func lowerConvInteger(c *Ctx) error {
	x, w := c.Input(0), c.Input(1)
	if x == nil || w == nil {
		return c.Errorf("ConvInteger needs x and w")
	}
	narrow := is8(x.DType()) && is8(w.DType())
	x, err := qConvZeroPoint(c, xb.Convert(x, hlo.S32), c.Input(2), 1)
	if err != nil {
		return err
	}
	w, err = qConvZeroPoint(c, xb.Convert(w, hlo.S32), c.Input(3), 0)
	if err != nil {
		return err
	}
	y, err := qConv(c, x, w, narrow)
	if err != nil {
		return err
	}
	c.Set(0, y)
	return nil
}

func lowerQLinearConv(c *Ctx) error {
	for _, i := range []int{0, 1, 3, 4, 6} {
		if !c.Has(i) {
			return c.Errorf("QLinearConv input %d is required", i)
		}
	}
	x, err := qConvZeroPoint(c, xb.Convert(c.Input(0), hlo.S32), c.Input(2), 1)
	if err != nil {
		return err
	}
	w, err := qConvZeroPoint(c, xb.Convert(c.Input(3), hlo.S32), c.Input(5), 0)
	if err != nil {
		return err
	}
	acc, err := qConv(c, x, w, is8(c.Input(0).DType()) && is8(c.Input(3).DType()))
	if err != nil {
		return err
	}
	if bias := c.Input(8); bias != nil {
		bb := xb.Convert(bias, hlo.S32)
		if bb.Rank() != 1 || bb.Dims()[0] != acc.Dims()[1] {
			return c.Errorf("QLinearConv bias of shape %v does not fit output %v", bb.Dims(), acc.Dims())
		}
		acc = xb.Add(acc, xb.BroadcastInDim(bb, acc.Dims(), 1))
	}
	mult := qMultiplier(c.Input(1), c.Input(4), c.Input(6))
	t := c.Input(0).DType()
	if zp := c.Input(7); zp != nil {
		t = zp.DType()
	}
	y, err := qRequantize(c, acc, mult, c.Input(7), t, 1)
	if err != nil {
		return err
	}
	c.Set(0, y)
	return nil
}
