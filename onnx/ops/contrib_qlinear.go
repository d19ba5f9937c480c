package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// ONNX Runtime's quantized operators outside the standard (com.microsoft),
// which its static quantization writes in the QOperator format (the ONNX
// Model Zoo's int8 models hold QLinearAdd and QLinearGlobalAveragePool
// beside the standard QLinearConv and QLinearMatMul) and its optimizer
// writes for a QDQ model's adds, pools and dense layers. Each follows the
// arithmetic of ONNX Runtime's CPU kernels (MLAS) as its documentation
// and schemas give it, per tensor scales and zero points:
//   - QLinearAdd and QLinearMul: the inputs' zero-point-shifted integers
//     times the scale ratios, in f32, plus the output zero point, rounded
//     half to even and clamped;
//   - QLinearSigmoid, QLinearLeakyRelu and QLinearConcat's requantized
//     inputs: f of the dequantized value, quantized as QuantizeLinear
//     does (round(v / scale) + zero point);
//   - QLinearGlobalAveragePool and QGemm: an exact s32 sum or product,
//     times one f32 multiplier, rounded, plus the zero point;
//   - QLinearAveragePool: the average of the dequantized values,
//     quantized.
// The references are ONNX Runtime's outputs (onnxtest/testdata/ortopt);
// an f32 tie may round either way in its vectorized code, so those tests
// allow one step.

func init() {
	msRegister(
		Op{Name: "QLinearAdd", Lower: lowerQLinearBinary(false)},
		Op{Name: "QLinearMul", Lower: lowerQLinearBinary(true)},
		Op{Name: "QLinearSigmoid", Lower: lowerQLinearUnary(func(c *Ctx, v *xb.Op) *xb.Op { return xb.Logistic(v) })},
		Op{Name: "QLinearLeakyRelu", Lower: lowerQLinearUnary(func(c *Ctx, v *xb.Op) *xb.Op {
			a := actAttr(c.Node, "alpha", 0.01)
			return xb.Select(xb.Lt(v, FullLike(v, 0)), xb.Mul(v, ScalarLike(v, a)), v)
		})},
		Op{Name: "QLinearGlobalAveragePool", Lower: lowerQLinearGlobalAveragePool},
		Op{Name: "QLinearAveragePool", Lower: lowerQLinearAveragePool},
		Op{Name: "QLinearConcat", Lower: lowerQLinearConcat},
		Op{Name: "QGemm", Lower: lowerQGemm},
		Op{Name: "QuantizeLinear", Lower: lowerQuantizeLinear},
		Op{Name: "DequantizeLinear", Lower: lowerDequantizeLinear},
	)
}

// qlScalar is per-tensor input i (a scale or zero point) as an f32
// scalar; a zero point left out is 0.
func qlScalar(c *Ctx, i int, zeroPoint bool) (*xb.Op, error) {
	v := c.Input(i)
	if v == nil {
		if zeroPoint {
			return c.B.ScalarOf(hlo.F32, 0), nil
		}
		return nil, c.Errorf("input %d (a scale) is required", i)
	}
	if numElems(v.Dims()) != 1 {
		return nil, c.Unsupported("input %d of shape %v: per-tensor scales and zero points only", i, v.Dims())
	}
	return xb.Convert(xb.Reshape(v), hlo.F32), nil
}

// qlType is the quantized type of the output: its zero point's, else the
// quantized input's.
func qlType(c *Ctx, zpInput, dataInput int) (hlo.DType, error) {
	t := c.Input(dataInput).DType()
	if z := c.Input(zpInput); z != nil {
		t = z.DType()
	}
	if t != hlo.U8 && t != hlo.S8 {
		return 0, c.Unsupported("quantized type %s (uint8 and int8 only)", t)
	}
	return t, nil
}

// qlShift is integer x minus zero point z, in f32 (exact).
func qlShift(x, z *xb.Op) *xb.Op {
	f := xb.Convert(x, hlo.F32)
	return xb.Sub(f, xb.BroadcastTo(z, f.Dims()...))
}

// qlRoundClamp rounds f32 v half to even and clamps it to t's range.
func qlRoundClamp(c *Ctx, v *xb.Op, t hlo.DType) *xb.Op {
	lo, hi, _ := qIntRange(t)
	r := xb.Clamp(c.B.ScalarOf(hlo.F32, lo), xb.Round(v), c.B.ScalarOf(hlo.F32, hi))
	return xb.Convert(r, t)
}

// qlQuantize is QuantizeLinear of f32 v with scalar scale s and zero
// point z: round(v / s) + z, clamped to t.
func qlQuantize(c *Ctx, v, s, z *xb.Op, t hlo.DType) *xb.Op {
	q := xb.Round(xb.Div(v, xb.BroadcastTo(s, v.Dims()...)))
	q = xb.Add(q, xb.BroadcastTo(z, v.Dims()...))
	lo, hi, _ := qIntRange(t)
	return xb.Convert(xb.Clamp(c.B.ScalarOf(hlo.F32, lo), q, c.B.ScalarOf(hlo.F32, hi)), t)
}

// lowerQLinearBinary: inputs A, A_scale, A_zero_point, B, B_scale,
// B_zero_point, C_scale, C_zero_point; A and B broadcast. Add:
// (A−za)·(sa/sc) + (B−zb)·(sb/sc) + zc; Mul: (A−za)·(B−zb)·(sa·sb/sc) + zc.
func lowerQLinearBinary(mul bool) func(c *Ctx) error {
	return func(c *Ctx) error {
		for _, i := range []int{0, 1, 3, 4, 6} {
			if !c.Has(i) {
				return c.Errorf("input %d is required", i)
			}
		}
		t, err := qlType(c, 7, 0)
		if err != nil {
			return err
		}
		var p [8]*xb.Op
		for _, i := range []int{1, 2, 4, 5, 6, 7} {
			if p[i], err = qlScalar(c, i, i%3 == 2 || i == 7); err != nil {
				return err
			}
		}
		a, b := Broadcast2(c.B, c.Input(0), c.Input(3))
		da, db := qlShift(a, p[2]), qlShift(b, p[5])
		var v *xb.Op
		if mul {
			ratio := xb.Div(xb.Mul(p[1], p[4]), p[6])
			v = xb.Mul(xb.Mul(da, db), xb.BroadcastTo(ratio, da.Dims()...))
		} else {
			ra, rb := xb.Div(p[1], p[6]), xb.Div(p[4], p[6])
			v = xb.Add(xb.Mul(da, xb.BroadcastTo(ra, da.Dims()...)), xb.Mul(db, xb.BroadcastTo(rb, db.Dims()...)))
		}
		v = xb.Add(v, xb.BroadcastTo(p[7], v.Dims()...))
		c.Set(0, qlRoundClamp(c, v, t))
		return nil
	}
}

// lowerQLinearUnary: inputs X, X_scale, X_zero_point, Y_scale,
// Y_zero_point; Y = QuantizeLinear(f(DequantizeLinear(X))).
func lowerQLinearUnary(f func(c *Ctx, v *xb.Op) *xb.Op) func(c *Ctx) error {
	return func(c *Ctx) error {
		if !c.Has(0) {
			return c.Errorf("input X is required")
		}
		t, err := qlType(c, 4, 0)
		if err != nil {
			return err
		}
		sx, zx, sy, zy, err := qlInOut(c, 1)
		if err != nil {
			return err
		}
		v := xb.Mul(qlShift(c.Input(0), zx), xb.BroadcastTo(sx, c.Input(0).Dims()...))
		c.Set(0, qlQuantize(c, f(c, v), sy, zy, t))
		return nil
	}
}

// qlScaleZero reads a per-tensor scale at input i and its zero point at
// i+1 (0 when left out).
func qlScaleZero(c *Ctx, i int) (s, z *xb.Op, err error) {
	if s, err = qlScalar(c, i, false); err != nil {
		return nil, nil, err
	}
	z, err = qlScalar(c, i+1, true)
	return s, z, err
}

// qlInOut reads the input scale and zero point at i, i+1 and the output's
// at i+2, i+3.
func qlInOut(c *Ctx, i int) (sx, zx, sy, zy *xb.Op, err error) {
	if sx, zx, err = qlScaleZero(c, i); err != nil {
		return
	}
	sy, zy, err = qlScaleZero(c, i+2)
	return
}

// qlSpatialAxes are the pooled axes of a rank-r tensor, channels first
// or last.
func qlSpatialAxes(c *Ctx, r int) []int64 {
	var axes []int64
	if c.Node.Int("channels_last", 0) != 0 {
		for d := 1; d < r-1; d++ {
			axes = append(axes, int64(d))
		}
		return axes
	}
	for d := 2; d < r; d++ {
		axes = append(axes, int64(d))
	}
	return axes
}

// lowerQLinearGlobalAveragePool: the exact s32 sum of X − zx over the
// spatial axes, times sx/(sy·n), rounded, plus zy; channels_last picks
// NHWC.
func lowerQLinearGlobalAveragePool(c *Ctx) error {
	x, t, sx, zx, sy, zy, err := qlPoolInputs(c)
	if err != nil {
		return err
	}
	axes := qlSpatialAxes(c, x.Rank())
	n := rdCount(x.Dims(), axes)
	xi := xb.Sub(xb.Convert(x, hlo.S32), xb.BroadcastTo(xb.Convert(zx, hlo.S32), x.Dims()...))
	acc := xb.Convert(rdSum(xi, axes...), hlo.F32)
	scale := xb.Div(sx, xb.Mul(sy, c.B.ScalarOf(hlo.F32, float64(n))))
	y := qlRequantize(c, xb.Mul(acc, xb.BroadcastTo(scale, acc.Dims()...)), zy, t)
	c.Set(0, rdKeep(y, x.Dims(), axes))
	return nil
}

// qlPoolInputs reads a quantized pool's X (rank 3 or more), output type,
// and input and output scales and zero points.
func qlPoolInputs(c *Ctx) (x *xb.Op, t hlo.DType, sx, zx, sy, zy *xb.Op, err error) {
	if x = c.Input(0); x == nil || x.Rank() < 3 {
		return nil, 0, nil, nil, nil, nil, c.Errorf("%s needs X of rank 3 or more", c.Node.Op)
	}
	if t, err = qlType(c, 4, 0); err != nil {
		return
	}
	sx, zx, sy, zy, err = qlInOut(c, 1)
	return
}

// qlRequantize is round(v) + zero point z, clamped to t's range: MLAS's
// requantization of an s32 sum scaled to the output.
func qlRequantize(c *Ctx, v, z *xb.Op, t hlo.DType) *xb.Op {
	v = xb.Add(xb.Round(v), xb.BroadcastTo(z, v.Dims()...))
	lo, hi, _ := qIntRange(t)
	return xb.Convert(xb.Clamp(c.B.ScalarOf(hlo.F32, lo), v, c.B.ScalarOf(hlo.F32, hi)), t)
}

// lowerQLinearAveragePool: AveragePool (its attributes) of the
// dequantized X, quantized; channels_last runs it on NCHW and back.
func lowerQLinearAveragePool(c *Ctx) error {
	x, t, sx, zx, sy, zy, err := qlPoolInputs(c)
	if err != nil {
		return err
	}
	r := x.Rank()
	last := c.Node.Int("channels_last", 0) != 0
	toFirst, toLast := make([]int64, r), make([]int64, r)
	for d := range r {
		toFirst[d], toLast[d] = int64(d), int64(d)
	}
	if last { // NHWC → NCHW: [0, r-1, 1, ..., r-2]; back: [0, 2, ..., r-1, 1]
		toFirst[1] = int64(r - 1)
		for d := 2; d < r; d++ {
			toFirst[d] = int64(d - 1)
		}
		for d := 1; d < r-1; d++ {
			toLast[d] = int64(d + 1)
		}
		toLast[r-1] = 1
		x = xb.Transpose(x, toFirst...)
	}
	v := xb.Mul(qlShift(x, zx), xb.BroadcastTo(sx, x.Dims()...))
	sc := *c
	sc.In, sc.Out = []*Val{FromOp(v)}, nil
	if err := lowerAveragePool(&sc); err != nil {
		return err
	}
	y := qlQuantize(c, sc.Out[0].In(c.B), sy, zy, t)
	if last {
		y = xb.Transpose(y, toLast...)
	}
	c.Set(0, y)
	return nil
}

// lowerQLinearConcat: inputs Y_scale, Y_zero_point, then (X, X_scale,
// X_zero_point) per tensor; each requantized to Y's scale and zero point
// (kept as they are where those are Y's), concatenated along axis.
func lowerQLinearConcat(c *Ctx) error {
	if len(c.In) < 5 || (len(c.In)-2)%3 != 0 {
		return c.Errorf("QLinearConcat needs Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples, got %d inputs", len(c.In))
	}
	t, err := qlType(c, 1, 2)
	if err != nil {
		return err
	}
	sy, zy, err := qlScaleZero(c, 0)
	if err != nil {
		return err
	}
	var parts []*xb.Op
	for i := 2; i < len(c.In); i += 3 {
		x := c.Input(i)
		if x == nil {
			return c.Errorf("input %d is required", i)
		}
		if x.DType() != t {
			return c.Errorf("input %d is %s, the output %s", i, x.DType(), t)
		}
		sx, zx, err := qlScaleZero(c, i+1)
		if err != nil {
			return err
		}
		v := xb.Mul(qlShift(x, zx), xb.BroadcastTo(sx, x.Dims()...))
		parts = append(parts, qlQuantize(c, v, sy, zy, t))
	}
	axis, ok := NormAxis(c.Node.Int("axis", 0), parts[0].Rank())
	if !ok {
		return c.Errorf("axis out of range")
	}
	c.Set(0, xb.Concatenate(axis, parts...))
	return nil
}

// lowerQGemm: inputs A, a_scale, a_zero_point, B, b_scale, b_zero_point,
// C (s32, optional), y_scale, y_zero_point (optional: without y_scale the
// output is f32); transA, transB, alpha. acc = op(A−za)·op(B−zb) + C in
// s32, then alpha·sa·sb·acc, quantized by y_scale (one multiplier
// alpha·sa·sb/sy, rounded, plus the zero point).
func lowerQGemm(c *Ctx) error {
	a, b := c.Input(0), c.Input(3)
	if a == nil || b == nil || a.Rank() != 2 || b.Rank() != 2 {
		return c.Errorf("QGemm needs matrices A and B")
	}
	sa, err := qlScalar(c, 1, false)
	if err != nil {
		return err
	}
	sb := c.Input(4)
	if sb == nil {
		return c.Errorf("QGemm needs b_scale")
	}
	transA, transB := c.Node.Int("transA", 0) != 0, c.Node.Int("transB", 0) != 0
	if transA {
		a = xb.Transpose(a, 1, 0)
	}
	if transB {
		b = xb.Transpose(b, 1, 0)
	}
	zb := c.Input(5)
	if zb != nil && numElems(zb.Dims()) != 1 && numElems(zb.Dims()) != b.Dims()[1] {
		return c.Errorf("b_zero_point of shape %v fits neither B nor its columns", zb.Dims())
	}
	acc, err := mmInteger(c, a, b, c.Input(2), zb)
	if err != nil {
		return err
	}
	if bias := c.Input(6); bias != nil {
		if bias.DType() != hlo.S32 {
			return c.Errorf("C has type %s, not int32", bias.DType())
		}
		var bb *xb.Op
		acc, bb = Broadcast2(c.B, acc, bias)
		acc = xb.Add(acc, bb)
	}
	alpha := c.B.ScalarOf(hlo.F32, float64(c.Node.Float("alpha", 1)))
	scale := xb.Mul(xb.Mul(alpha, sa), msColumnVector(xb.Convert(sb, hlo.F32)))
	f := xb.Convert(acc, hlo.F32)
	if !c.Has(7) {
		f, scale = Broadcast2(c.B, f, scale)
		c.Set(0, xb.Mul(f, scale))
		return nil
	}
	sy, zy, err := qlScaleZero(c, 7)
	if err != nil {
		return err
	}
	t := hlo.U8
	if z := c.Input(8); z != nil {
		t = z.DType()
	}
	if t != hlo.U8 && t != hlo.S8 {
		return c.Unsupported("quantized type %s (uint8 and int8 only)", t)
	}
	mult := xb.Div(scale, sy)
	f, mult = Broadcast2(c.B, f, mult)
	c.Set(0, qlRequantize(c, xb.Mul(f, mult), zy, t))
	return nil
}
