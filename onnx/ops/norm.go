package ops

import (
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// Normalizations: BatchNormalization, InstanceNormalization,
// LayerNormalization, GroupNormalization, RMSNormalization,
// LpNormalization, MeanVarianceNormalization, LRN.

func init() {
	Register(Op{Name: "BatchNormalization", Lower: lowerBatchNorm})
	Register(Op{Name: "InstanceNormalization", Lower: lowerInstanceNorm})
	Register(Op{Name: "LayerNormalization", Lower: lowerLayerNorm})
	Register(Op{Name: "GroupNormalization", Lower: lowerGroupNorm})
	Register(Op{Name: "RMSNormalization", Lower: lowerRMSNorm})
	Register(Op{Name: "LpNormalization", Lower: lowerLpNorm})
	Register(Op{Name: "MeanVarianceNormalization", Lower: lowerMVN})
	Register(Op{Name: "LRN", Lower: lowerLRN})
}

// nmMeanVar is the mean and population variance of x over axes, reduced
// (without kept dims).
func nmMeanVar(x *xb.Op, axes []int64) (mean, variance *xb.Op) {
	dims := x.Dims()
	n := ScalarLike(x, float64(rdCount(dims, axes)))
	mean = xb.Div(rdSum(x, axes...), n)
	d := xb.Sub(x, rdBack(mean, dims, axes))
	variance = xb.Div(rdSum(xb.Mul(d, d), axes...), n)
	return mean, variance
}

// nmChannel broadcasts a per-channel vector v (C) along dimension 1 of
// dims; a v of higher rank (C, D1, ...) maps to dims 1...
func nmChannel(v *xb.Op, dims []int64) *xb.Op {
	mapping := make([]int64, v.Rank())
	for i := range mapping {
		mapping[i] = int64(1 + i)
	}
	if v.Rank() == 0 {
		return xb.BroadcastTo(v, dims...)
	}
	return xb.BroadcastInDim(v, dims, mapping...)
}

// nmStash is the computation type of stash_type (1: float32) for input
// type t.
func nmStash(c *Ctx, t hlo.DType) (hlo.DType, error) {
	st := onnx.ElemType(c.Node.Int("stash_type", 1))
	w := st.HLO()
	if !w.IsFloat() {
		return 0, c.Unsupported("stash_type %d", st)
	}
	if t.Bits() > w.Bits() {
		// Never compute below the input's precision.
		return t, nil
	}
	return w, nil
}

// nmHalf reports whether t is float16 or bfloat16: the normalizations
// compute those in float32 and round the result once, as ONNX Runtime's
// kernels do (bit for bit on float16); rounding each step to float16 is
// ulps away from it in about half the elements.
func nmHalf(t hlo.DType) bool { return t == hlo.F16 || t == hlo.BF16 }

// nmRound converts y to t where it was computed wider.
func nmRound(y *xb.Op, t hlo.DType) *xb.Op {
	if y.DType() == t {
		return y
	}
	return xb.Convert(y, t)
}

func lowerBatchNorm(c *Ctx) error {
	x, scale, bias, mean, vr := c.Input(0), c.Input(1), c.Input(2), c.Input(3), c.Input(4)
	if x == nil || scale == nil || bias == nil || mean == nil || vr == nil {
		return c.Errorf("five inputs are required")
	}
	t := x.DType()
	if !t.IsFloat() {
		return c.Unsupported("%s input", t)
	}
	dims := x.Dims()
	if len(dims) < 2 {
		return c.Unsupported("rank %d input", len(dims))
	}
	eps := float64(c.Node.Float("epsilon", 1e-5))
	momentum := float64(c.Node.Float("momentum", 0.9))
	training := c.Opset >= 14 && c.Node.Int("training_mode", 0) != 0
	if c.Opset < 14 {
		isTest := c.Opset >= 7 || c.Node.Int("is_test", 0) != 0
		if len(c.Node.Outputs) > 1 && !isTest {
			return c.Unsupported("training outputs before opset 14")
		}
	}
	ot := t
	if !training && nmHalf(t) {
		x, t = xb.Convert(x, hlo.F32), hlo.F32
	}
	conv := func(v *xb.Op) *xb.Op { return xb.Convert(v, t) }
	scale, bias, mean, vr = conv(scale), conv(bias), conv(mean), conv(vr)
	if training {
		var axes []int64
		for d := range int64(len(dims)) {
			if d != 1 {
				axes = append(axes, d)
			}
		}
		bm, bv := nmMeanVar(x, axes)
		if bm.Rank() == mean.Rank() {
			mom := ScalarLike(mean, momentum)
			one := ScalarLike(mean, 1-momentum)
			c.Set(1, xb.Add(xb.Mul(mean, mom), xb.Mul(bm, one)))
			c.Set(2, xb.Add(xb.Mul(vr, mom), xb.Mul(bv, one)))
		}
		mean, vr = bm, bv
	}
	inv := xb.Div(FullLike(vr, 1), xb.Sqrt(xb.Add(vr, ScalarLike(vr, eps))))
	y := xb.Mul(xb.Sub(x, nmChannel(mean, dims)), nmChannel(xb.Mul(inv, xb.BroadcastTo(scale, inv.Dims()...)), dims))
	y = xb.Add(y, nmChannel(bias, dims))
	c.Set(0, nmRound(y, ot))
	if !training {
		for i := 1; i < len(c.Node.Outputs); i++ {
			if c.Node.Outputs[i] != "" {
				return c.Unsupported("statistics outputs in inference mode")
			}
		}
	}
	return nil
}

func lowerInstanceNorm(c *Ctx) error {
	x, scale, bias := c.Input(0), c.Input(1), c.Input(2)
	t := x.DType()
	if !t.IsFloat() {
		return c.Unsupported("%s input", t)
	}
	if scale == nil || bias == nil {
		return c.Errorf("scale and bias are required")
	}
	dims := x.Dims()
	if len(dims) < 3 {
		return c.Unsupported("rank %d input", len(dims))
	}
	eps := float64(c.Node.Float("epsilon", 1e-5))
	var axes []int64
	for d := int64(2); d < int64(len(dims)); d++ {
		axes = append(axes, d)
	}
	ot := t
	if nmHalf(t) {
		x, t = xb.Convert(x, hlo.F32), hlo.F32
	}
	m, v := nmMeanVar(x, axes)
	inv := xb.Rsqrt(xb.Add(v, ScalarLike(v, eps)))
	y := xb.Mul(xb.Sub(x, rdBack(m, dims, axes)), rdBack(inv, dims, axes))
	y = xb.Add(xb.Mul(y, nmChannel(xb.Convert(scale, t), dims)), nmChannel(xb.Convert(bias, t), dims))
	c.Set(0, nmRound(y, ot))
	return nil
}

// nmTrailingAxes lists axis..rank-1.
func nmTrailingAxes(axis int64, rank int) []int64 {
	var axes []int64
	for d := axis; d < int64(rank); d++ {
		axes = append(axes, d)
	}
	return axes
}

// nmTrailing is what LayerNormalization and RMSNormalization share: the
// input in the stash type, normalized over axis..rank-1.
type nmTrailing struct {
	t    hlo.DType // the input's type
	w    hlo.DType // the stash type the arithmetic runs in
	dims []int64
	axes []int64
	eps  float64
	xs   *xb.Op // the input in the stash type
}

func nmTrailingInput(c *Ctx) (*nmTrailing, error) {
	x := c.Input(0)
	t := x.DType()
	if !t.IsFloat() {
		return nil, c.Unsupported("%s input", t)
	}
	dims := x.Dims()
	axis, ok := NormAxis(c.Node.Int("axis", -1), len(dims))
	if !ok {
		return nil, c.Errorf("axis out of range")
	}
	w, err := nmStash(c, t)
	if err != nil {
		return nil, err
	}
	return &nmTrailing{t: t, w: w, dims: dims, axes: nmTrailingAxes(axis, len(dims)),
		eps: float64(c.Node.Float("epsilon", 1e-5)), xs: xb.Convert(x, w)}, nil
}

// affine applies the optional scale (input 1) and bias (input 2) in the
// stash type and rounds Y to T once: for float16/bfloat16 inputs this is
// what ONNX Runtime computes (its kernels work in float32), where rounding
// the normalized value to T first (the function body's Cast before Mul)
// loses up to an ulp of |normalized*scale| to the cancellation against the
// bias.
func (n *nmTrailing) affine(c *Ctx, y *xb.Op) *xb.Op {
	if s := c.Input(1); s != nil {
		y, s = Broadcast2(c.B, y, xb.Convert(s, n.w))
		y = xb.Mul(y, s)
	}
	if b := c.Input(2); b != nil {
		var bb *xb.Op
		y, bb = Broadcast2(c.B, y, xb.Convert(b, n.w))
		y = xb.Add(y, bb)
	}
	return xb.Convert(y, n.t)
}

func lowerLayerNorm(c *Ctx) error {
	n, err := nmTrailingInput(c)
	if err != nil {
		return err
	}
	m, v := nmMeanVar(n.xs, n.axes)
	inv := xb.Rsqrt(xb.Add(v, ScalarLike(v, n.eps)))
	y := xb.Mul(xb.Sub(n.xs, rdBack(m, n.dims, n.axes)), rdBack(inv, n.dims, n.axes))
	c.Set(0, n.affine(c, y))
	c.Set(1, rdKeep(m, n.dims, n.axes))
	c.Set(2, rdKeep(inv, n.dims, n.axes))
	return nil
}

// lowerRMSNorm: RMSNormalization has no bias input, so affine applies the
// scale only.
func lowerRMSNorm(c *Ctx) error {
	n, err := nmTrailingInput(c)
	if err != nil {
		return err
	}
	ms := xb.Div(rdSum(xb.Mul(n.xs, n.xs), n.axes...), ScalarLike(n.xs, float64(rdCount(n.dims, n.axes))))
	inv := xb.Rsqrt(xb.Add(ms, ScalarLike(ms, n.eps)))
	c.Set(0, n.affine(c, xb.Mul(n.xs, rdBack(inv, n.dims, n.axes))))
	return nil
}

func lowerGroupNorm(c *Ctx) error {
	x, scale, bias := c.Input(0), c.Input(1), c.Input(2)
	t := x.DType()
	if !t.IsFloat() {
		return c.Unsupported("%s input", t)
	}
	dims := x.Dims()
	if len(dims) < 2 {
		return c.Errorf("rank %d input", len(dims))
	}
	if scale == nil || bias == nil || scale.Rank() != 1 || bias.Rank() != 1 {
		return c.Errorf("scale and bias must be vectors")
	}
	g := c.Node.Int("num_groups", 0)
	ch := dims[1]
	if g <= 0 || ch%g != 0 {
		return c.Errorf("num_groups %d does not divide %d channels", g, ch)
	}
	w, err := nmStash(c, t)
	if err != nil {
		return err
	}
	eps := float64(c.Node.Float("epsilon", 1e-5))
	gd := append([]int64{dims[0], g, ch / g}, dims[2:]...)
	xs := xb.Reshape(xb.Convert(x, w), gd...)
	axes := nmTrailingAxes(2, len(gd))
	m, v := nmMeanVar(xs, axes)
	inv := xb.Rsqrt(xb.Add(v, ScalarLike(v, eps)))
	y := xb.Mul(xb.Sub(xs, rdBack(m, gd, axes)), rdBack(inv, gd, axes))
	// Scale and bias in the stash type, rounded once (as LayerNormalization).
	if c.Opset < 21 && scale.Dims()[0] == g && g != ch {
		// Opset 18: scale and bias per group.
		y = xb.Add(xb.Mul(y, nmChannel(xb.Convert(scale, w), gd)), nmChannel(xb.Convert(bias, w), gd))
		c.Set(0, nmRound(xb.Reshape(y, dims...), t))
		return nil
	}
	y = xb.Reshape(y, dims...)
	y = xb.Add(xb.Mul(y, nmChannel(xb.Convert(scale, w), dims)), nmChannel(xb.Convert(bias, w), dims))
	c.Set(0, nmRound(y, t))
	return nil
}

func lowerLpNorm(c *Ctx) error {
	x, t, err := floatInput(c)
	if err != nil {
		return err
	}
	dims := x.Dims()
	axis, ok := NormAxis(c.Node.Int("axis", -1), len(dims))
	if !ok {
		return c.Errorf("axis out of range")
	}
	ax := []int64{axis}
	if nmHalf(t) {
		x = xb.Convert(x, hlo.F32)
	}
	var n *xb.Op
	switch p := c.Node.Int("p", 2); p {
	case 1:
		n = rdSum(xb.Abs(x), axis)
	case 2:
		n = xb.Sqrt(rdSum(xb.Mul(x, x), axis))
	default:
		return c.Errorf("p %d is not 1 or 2", p)
	}
	// A zero norm leaves the zero vector (no division by zero).
	zero := xb.Eq(n, FullLike(n, 0))
	n = xb.Select(zero, FullLike(n, 1), n)
	c.Set(0, nmRound(xb.Div(x, rdBack(n, dims, ax)), t))
	return nil
}

func lowerMVN(c *Ctx) error {
	x, t, err := floatInput(c)
	if err != nil {
		return err
	}
	dims := x.Dims()
	raw := c.Node.Ints("axes")
	if !c.Node.Has("axes") {
		raw = []int64{0, 2, 3}
	}
	var axes []int64
	for _, a := range raw {
		n, ok := NormAxis(a, len(dims))
		if !ok {
			return c.Errorf("axis %d out of range", a)
		}
		if !slices.Contains(axes, n) {
			axes = append(axes, n)
		}
	}
	slices.Sort(axes)
	if nmHalf(t) {
		x = xb.Convert(x, hlo.F32)
	}
	n := ScalarLike(x, float64(rdCount(dims, axes)))
	mean := xb.Div(rdSum(x, axes...), n)
	msq := xb.Div(rdSum(xb.Mul(x, x), axes...), n)
	v := xb.Sub(msq, xb.Mul(mean, mean))
	std := xb.Sqrt(xb.Max(v, FullLike(v, 0)))
	y := xb.Div(xb.Sub(x, rdBack(mean, dims, axes)), rdBack(xb.Add(std, ScalarLike(std, 1e-9)), dims, axes))
	c.Set(0, nmRound(y, t))
	return nil
}

func lowerLRN(c *Ctx) error {
	x, _, err := floatInput(c)
	if err != nil {
		return err
	}
	dims := x.Dims()
	if len(dims) < 2 {
		return c.Errorf("rank %d input", len(dims))
	}
	size := c.Node.Int("size", 0)
	if size <= 0 {
		return c.Errorf("size %d", size)
	}
	alpha := float64(c.Node.Float("alpha", 1e-4))
	beta := float64(c.Node.Float("beta", 0.75))
	bias := float64(c.Node.Float("bias", 1))
	sizes := make([]int64, len(dims))
	pads := make([][2]int64, len(dims))
	for i := range sizes {
		sizes[i] = 1
	}
	sizes[1] = size
	pads[1] = [2]int64{(size - 1) / 2, int64(math.Ceil(float64(size-1) / 2))}
	sq := xb.ReduceWindow(xb.Mul(x, x), ScalarLike(x, 0), func(sb *xb.Builder, a, b *xb.Op) *xb.Op { return xb.Add(a, b) },
		xb.Window{Sizes: sizes, Padding: pads})
	den := xb.Add(xb.Mul(sq, ScalarLike(sq, alpha/float64(size))), ScalarLike(sq, bias))
	den = xb.Pow(den, ScalarLike(den, beta))
	c.Set(0, xb.Div(x, den))
	return nil
}

// floatInput is the node's input 0 and its type, which must be a float.
func floatInput(c *Ctx) (*xb.Op, hlo.DType, error) {
	x := c.Input(0)
	if x == nil {
		return nil, 0, c.Errorf("missing input 0")
	}
	t := x.DType()
	if !t.IsFloat() {
		return nil, 0, c.Unsupported("%s input", t)
	}
	return x, t, nil
}
