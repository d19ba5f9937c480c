package ops

import (
	"github.com/axle-ml/axle/xb"
)

// ONNX Runtime's layer norms outside the standard: SimplifiedLayerNormalization
// (RMS normalization, which ONNX Runtime registers in the default domain
// and its optimizer writes for T5- and LLaMA-style norms), and the
// transformer optimizer's SkipLayerNormalization and
// SkipSimplifiedLayerNormalization (com.microsoft): the residual sum
// input + skip (+ bias) normalized over the last axis.

func init() {
	Register(Op{Name: "SimplifiedLayerNormalization", Lower: lowerSimplifiedLayerNorm})
	msRegister(
		Op{Name: "SkipLayerNormalization", Lower: lowerSkipLayerNorm(false)},
		Op{Name: "SkipSimplifiedLayerNormalization", Lower: lowerSkipLayerNorm(true)},
	)
}

// lowerSimplifiedLayerNorm: Y = X / √(mean(X²) + epsilon) · scale over
// axis..rank-1, in the stash type; output 1 is the inverse RMS (kept
// dimensions).
func lowerSimplifiedLayerNorm(c *Ctx) error {
	n, err := nmTrailingInput(c)
	if err != nil {
		return err
	}
	if !c.Has(1) {
		return c.Errorf("SimplifiedLayerNormalization needs scale")
	}
	inv := nmInvRMS(n)
	c.Set(0, n.affine(c, xb.Mul(n.xs, rdBack(inv, n.dims, n.axes))))
	c.Set(1, rdKeep(inv, n.dims, n.axes))
	return nil
}

// nmInvRMS is 1/√(mean(x²) + eps) over n's axes.
func nmInvRMS(n *nmTrailing) *xb.Op {
	ms := xb.Div(rdSum(xb.Mul(n.xs, n.xs), n.axes...), ScalarLike(n.xs, float64(rdCount(n.dims, n.axes))))
	return xb.Rsqrt(xb.Add(ms, ScalarLike(ms, n.eps)))
}

// lowerSkipLayerNorm: inputs input, skip, gamma, beta, bias (simplified:
// input, skip, gamma, bias); s = input + skip (+ bias), output =
// LayerNorm(s)·gamma + beta over the last axis (simplified: the RMS norm
// times gamma), epsilon 1e-12 unless given. Outputs output, mean,
// inv_std_var and s.
func lowerSkipLayerNorm(simplified bool) func(c *Ctx) error {
	return func(c *Ctx) error {
		x, skip, gamma := c.Input(0), c.Input(1), c.Input(2)
		if x == nil || skip == nil || gamma == nil {
			return c.Errorf("%s needs input, skip and gamma", c.Node.Op)
		}
		if !x.DType().IsFloat() || skip.DType() != x.DType() {
			return c.Unsupported("input %s and skip %s", x.DType(), skip.DType())
		}
		biasAt := 4
		if simplified {
			biasAt = 3
		}
		x, skip = Broadcast2(c.B, x, skip)
		s := xb.Add(x, skip)
		if bias := c.Input(biasAt); bias != nil {
			var bb *xb.Op
			s, bb = Broadcast2(c.B, s, bias)
			s = xb.Add(s, bb)
		}
		w, err := nmStash(c, s.DType())
		if err != nil {
			return err
		}
		dims := s.Dims()
		axes := []int64{int64(len(dims) - 1)}
		n := &nmTrailing{t: s.DType(), w: w, dims: dims, axes: axes,
			eps: float64(c.Node.Float("epsilon", 1e-12)), xs: xb.Convert(s, w)}
		var y, mean, inv *xb.Op
		if simplified {
			inv = nmInvRMS(n)
			y = xb.Mul(n.xs, rdBack(inv, dims, axes))
		} else {
			var v *xb.Op
			mean, v = nmMeanVar(n.xs, axes)
			inv = xb.Rsqrt(xb.Add(v, ScalarLike(v, n.eps)))
			y = xb.Mul(xb.Sub(n.xs, rdBack(mean, dims, axes)), rdBack(inv, dims, axes))
		}
		g := xb.Convert(gamma, w)
		y, g = Broadcast2(c.B, y, g)
		y = xb.Mul(y, g)
		if beta := c.Input(3); !simplified && beta != nil {
			var bb *xb.Op
			y, bb = Broadcast2(c.B, y, xb.Convert(beta, w))
			y = xb.Add(y, bb)
		}
		c.Set(0, xb.Convert(y, n.t))
		if mean != nil {
			c.Set(1, rdKeep(mean, dims, axes))
		}
		c.Set(2, rdKeep(inv, dims, axes))
		c.Set(3, s)
		return nil
	}
}
