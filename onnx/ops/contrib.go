package ops

import (
	"math"
	"slices"

	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// ONNX Runtime's contrib operators (domain com.microsoft, version 1) that
// its graph optimizer writes into the models it saves: a session with
// graph optimization "extended" or "all" and an optimized-model path, or
// Optimum's and onnxruntime.transformers' optimizers, replace a Conv or
// Gemm and its activation by FusedConv or FusedGemm, a MatMul and its
// scaling or transposes by FusedMatMul, the erf and tanh GELUs and
// x·sigmoid(αx) by Gelu, BiasGelu, FastGelu and QuickGelu. Each lowers to
// the standard ops it stands for, so the compiler fuses them again its own
// way. Semantics from ONNX Runtime's operator schemas (contrib_defs.cc,
// ContribOperators.md); the tests' references are ONNX Runtime's outputs
// on models its own optimizer wrote (onnxtest/testdata/ortopt).

const msDomain = "com.microsoft"

func init() {
	MaxOpsets[msDomain] = 1
	msRegister(
		Op{Name: "Gelu", Lower: actFloat(func(_ *onnx.Node, x *xb.Op) *xb.Op { return msGelu(x) })},
		Op{Name: "BiasGelu", Lower: lowerBiasGelu},
		Op{Name: "FastGelu", Lower: lowerFastGelu},
		Op{Name: "QuickGelu", Lower: actFloat(func(n *onnx.Node, x *xb.Op) *xb.Op {
			a := actAttr(n, "alpha", 1.702)
			return xb.Mul(x, xb.Logistic(xb.Mul(x, ScalarLike(x, a))))
		})},
		Op{Name: "FusedConv", Lower: lowerFusedConv, Types: convFloatTypes},
		Op{Name: "FusedGemm", Lower: lowerFusedGemm},
		Op{Name: "FusedMatMul", Lower: lowerFusedMatMul},
	)
}

// msRegister registers ops of ONNX Runtime's contrib domain.
func msRegister(ops ...Op) {
	for _, o := range ops {
		o.Domain = msDomain
		Register(o)
	}
}

// msGelu is the erf GELU as ONNX Runtime's function body writes it:
// x·((erf(x·√½) + 1)·½).
func msGelu(x *xb.Op) *xb.Op {
	e := xb.Erf(xb.Mul(x, ScalarLike(x, math.Sqrt(0.5))))
	return xb.Mul(x, xb.Mul(xb.Add(e, ScalarLike(x, 1)), ScalarLike(x, 0.5)))
}

// msBiased is input 0 plus the optional bias input i (a vector along the
// last axis, broadcast), in f32 for narrow floats; back rounds a result
// to the input's type.
func msBiased(c *Ctx, i int) (x *xb.Op, back func(*xb.Op) *xb.Op, err error) {
	a := c.Input(0)
	if a == nil {
		return nil, nil, c.Errorf("input 0 is required")
	}
	if !a.DType().IsFloat() {
		return nil, nil, c.Unsupported("%s of %s", c.Node.Op, a.DType())
	}
	x, back = elemUp(a)
	if b := c.Input(i); b != nil {
		if b.DType() != a.DType() {
			return nil, nil, c.Errorf("bias type %s differs from the input's %s", b.DType(), a.DType())
		}
		bu, _ := elemUp(b)
		x, bu = Broadcast2(c.B, x, bu)
		x = xb.Add(x, bu)
	}
	return x, back, nil
}

// lowerBiasGelu: Gelu(A + B), B a bias along the last axis.
func lowerBiasGelu(c *Ctx) error {
	if !c.Has(1) {
		return c.Errorf("BiasGelu needs the bias B")
	}
	x, back, err := msBiased(c, 1)
	if err != nil {
		return err
	}
	c.Set(0, back(msGelu(x)))
	return nil
}

// lowerFastGelu: the tanh approximation of GELU of X (+ bias) with ONNX
// Runtime's rounded constants, as its function body writes it:
// 0.5·(x·(1 + tanh(x·(0.797885 + 0.035677·x²)))).
func lowerFastGelu(c *Ctx) error {
	x, back, err := msBiased(c, 1)
	if err != nil {
		return err
	}
	in := xb.Mul(x, xb.Add(ScalarLike(x, 0.797885), xb.Mul(ScalarLike(x, 0.035677), xb.Mul(x, x))))
	c.Set(0, back(xb.Mul(ScalarLike(x, 0.5), xb.Mul(x, xb.Add(ScalarLike(x, 1), xb.Tanh(in))))))
	return nil
}

// msActivation applies a fused op's activation (ONNX Runtime's MLAS
// activation kinds) to y, with its parameters in order (alpha, beta for
// LeakyRelu and HardSigmoid; min, max for Clip); missing ones take the
// standard ops' defaults.
func msActivation(c *Ctx, name string, params []float64, y *xb.Op) (*xb.Op, error) {
	param := func(i int, def float64) float64 {
		if i < len(params) {
			return params[i]
		}
		return def
	}
	u, back := elemUp(y)
	switch name {
	case "":
		return y, nil
	case "Relu":
		u = xb.Max(u, FullLike(u, 0))
	case "Tanh":
		u = xb.Tanh(u)
	case "Sigmoid":
		u = xb.Logistic(u)
	case "LeakyRelu":
		u = xb.Select(xb.Lt(u, FullLike(u, 0)), xb.Mul(u, ScalarLike(u, param(0, 0.01))), u)
	case "HardSigmoid":
		u = actHardSigmoid(u, param(0, 0.2), param(1, 0.5))
	case "Clip":
		if len(params) != 2 {
			return nil, c.Errorf("activation Clip needs activation_params (min, max), got %v", params)
		}
		u = xb.Clamp(ScalarLike(u, params[0]), u, ScalarLike(u, params[1]))
	default:
		return nil, c.Unsupported("activation %q", name)
	}
	return back(u), nil
}

// msFinish sets output 0 to y under the node's activation.
func msFinish(c *Ctx, params []float64, y *xb.Op) error {
	y, err := msActivation(c, c.Node.Str("activation", ""), params, y)
	if err != nil {
		return err
	}
	c.Set(0, y)
	return nil
}

// msSub lowers the node's first n inputs with the standard op's lowering
// (its attributes are the fused op's too) and returns output 0.
func msSub(c *Ctx, n int, lower func(*Ctx) error) (*xb.Op, error) {
	sc := *c
	sc.In, sc.Out = c.In[:min(n, len(c.In))], nil
	if err := lower(&sc); err != nil {
		return nil, err
	}
	if len(sc.Out) == 0 || sc.Out[0] == nil {
		return nil, c.Errorf("no output")
	}
	return sc.Out[0].In(c.B), nil
}

// lowerFusedConv: activation(Conv(X, W, B) + Z), Z an optional tensor of
// the output's shape (a residual added before the activation).
func lowerFusedConv(c *Ctx) error {
	y, err := msSub(c, 3, lowerConv)
	if err != nil {
		return err
	}
	if z := c.Input(3); z != nil {
		if z.DType() != y.DType() {
			return c.Errorf("Z has type %s, the convolution %s", z.DType(), y.DType())
		}
		if !slices.Equal(z.Dims(), y.Dims()) {
			return c.Errorf("Z %v is not of the output's shape %v", z.Dims(), y.Dims())
		}
		y = xb.Add(y, z)
	}
	params := make([]float64, 0, 2)
	for _, p := range c.Node.Floats("activation_params") {
		params = append(params, float64(p))
	}
	return msFinish(c, params, y)
}

// lowerFusedGemm: activation(Gemm(A, B, C)), the activation's parameters
// in activation_alpha and activation_beta.
func lowerFusedGemm(c *Ctx) error {
	y, err := msSub(c, 3, lowerGemm)
	if err != nil {
		return err
	}
	var params []float64
	if c.Node.Has("activation_alpha") {
		params = append(params, float64(c.Node.Float("activation_alpha", 0)))
		if c.Node.Has("activation_beta") {
			params = append(params, float64(c.Node.Float("activation_beta", 0)))
		}
	}
	return msFinish(c, params, y)
}

// lowerFusedMatMul: alpha·op(A)·op(B), numpy's matmul of the operands
// after their transposes. transBatchX moves X's first dimension in
// among its matrix dimensions: X [d0, d1, …, dk, dn] is multiplied as
// [d1, …, dk] matrices of [d0, dn]; transX then swaps the two matrix
// dimensions (ONNX Runtime's FusedMatMul shape inference; it refuses
// transBatch unless both operands have one rank of 3 or more). A 1-D
// operand is never transposed.
func lowerFusedMatMul(c *Ctx) error {
	a, b := c.Input(0), c.Input(1)
	if a == nil || b == nil {
		return c.Errorf("FusedMatMul needs inputs A and B")
	}
	if a.DType() != b.DType() {
		return c.Errorf("FusedMatMul operands have types %s and %s", a.DType(), b.DType())
	}
	if !a.DType().IsFloat() {
		return c.Unsupported("FusedMatMul of %s", a.DType())
	}
	tba, tbb := c.Node.Int("transBatchA", 0) != 0, c.Node.Int("transBatchB", 0) != 0
	if (tba || tbb) && (a.Rank() < 3 || a.Rank() != b.Rank()) {
		return c.Errorf("transBatchA or transBatchB needs operands of one rank, 3 or more (got %v and %v)", a.Dims(), b.Dims())
	}
	a = msTransposed(a, c.Node.Int("transA", 0) != 0, tba)
	b = msTransposed(b, c.Node.Int("transB", 0) != 0, tbb)
	y, err := mmNumpy(c, a, b)
	if err != nil {
		return err
	}
	if alpha := float64(c.Node.Float("alpha", 1)); alpha != 1 {
		u, back := elemUp(y)
		y = back(xb.Mul(u, ScalarLike(u, alpha)))
	}
	c.Set(0, y)
	return nil
}

// msTransposed is FusedMatMul's view of operand x (see lowerFusedMatMul).
func msTransposed(x *xb.Op, trans, transBatch bool) *xb.Op {
	r := x.Rank()
	if r < 2 || !trans && (!transBatch || r == 2) {
		return x
	}
	perm := make([]int64, 0, r)
	if transBatch {
		for d := 1; d < r-1; d++ {
			perm = append(perm, int64(d))
		}
		perm = append(perm, 0, int64(r-1))
	} else {
		for d := range r {
			perm = append(perm, int64(d))
		}
	}
	if trans {
		perm[r-2], perm[r-1] = perm[r-1], perm[r-2]
	}
	return xb.Transpose(x, perm...)
}
