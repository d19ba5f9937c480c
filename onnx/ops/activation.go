package ops

import (
	"math"

	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// actFloat is an activation of a float input x with the node's float
// attributes; it computes in f32 for narrow floats and rounds once.
func actFloat(f func(n *onnx.Node, x *xb.Op) *xb.Op) func(c *Ctx) error {
	return func(c *Ctx) error {
		x := c.Input(0)
		if x == nil {
			return c.Errorf("input 0 is required")
		}
		if !x.DType().IsFloat() && (c.Node.Op != "Shrink" || !x.DType().IsInteger()) {
			return c.Unsupported("%s of %s", c.Node.Op, x.DType())
		}
		u, back := elemUp(x)
		c.Set(0, back(f(c.Node, u)))
		return nil
	}
}

func actAttr(n *onnx.Node, name string, def float32) float64 {
	return float64(n.Float(name, def))
}

// actSoftplus is log(1+e^x), stable for large |x|.
func actSoftplus(x *xb.Op) *xb.Op {
	return xb.Add(xb.Max(x, FullLike(x, 0)), xb.Log1p(xb.Exp(xb.Neg(xb.Abs(x)))))
}

// actHardSigmoid is max(0, min(1, alpha*x + beta)).
func actHardSigmoid(x *xb.Op, alpha, beta float64) *xb.Op {
	y := xb.Add(xb.Mul(x, ScalarLike(x, alpha)), ScalarLike(x, beta))
	return xb.Max(FullLike(x, 0), xb.Min(FullLike(x, 1), y))
}

// actElu is x for x >= 0, alpha*(e^x - 1) below.
func actElu(x *xb.Op, alpha float64) *xb.Op {
	neg := xb.Mul(xb.Expm1(x), ScalarLike(x, alpha))
	return xb.Select(xb.Lt(x, FullLike(x, 0)), neg, x)
}

var activations = map[string]func(n *onnx.Node, x *xb.Op) *xb.Op{
	"LeakyRelu": func(n *onnx.Node, x *xb.Op) *xb.Op {
		a := actAttr(n, "alpha", 0.01)
		return xb.Select(xb.Lt(x, FullLike(x, 0)), xb.Mul(x, ScalarLike(x, a)), x)
	},
	"Elu": func(n *onnx.Node, x *xb.Op) *xb.Op { return actElu(x, actAttr(n, "alpha", 1)) },
	"Selu": func(n *onnx.Node, x *xb.Op) *xb.Op {
		a := actAttr(n, "alpha", 1.67326319217681884765625)
		g := actAttr(n, "gamma", 1.05070102214813232421875)
		neg := xb.Mul(xb.Expm1(x), ScalarLike(x, a))
		y := xb.Select(xb.Gt(x, FullLike(x, 0)), x, neg)
		return xb.Mul(y, ScalarLike(x, g))
	},
	"Celu": func(n *onnx.Node, x *xb.Op) *xb.Op {
		a := actAttr(n, "alpha", 1)
		neg := xb.Mul(xb.Expm1(xb.Div(x, ScalarLike(x, a))), ScalarLike(x, a))
		return xb.Add(xb.Max(x, FullLike(x, 0)), xb.Min(FullLike(x, 0), neg))
	},
	"ThresholdedRelu": func(n *onnx.Node, x *xb.Op) *xb.Op {
		a := actAttr(n, "alpha", 1)
		return xb.Select(xb.Gt(x, FullLike(x, a)), x, FullLike(x, 0))
	},
	"HardSigmoid": func(n *onnx.Node, x *xb.Op) *xb.Op {
		return actHardSigmoid(x, actAttr(n, "alpha", 0.2), actAttr(n, "beta", 0.5))
	},
	"HardSwish": func(n *onnx.Node, x *xb.Op) *xb.Op {
		return xb.Mul(x, actHardSigmoid(x, 1.0/6, 0.5))
	},
	"Softplus": func(n *onnx.Node, x *xb.Op) *xb.Op { return actSoftplus(x) },
	"Softsign": func(n *onnx.Node, x *xb.Op) *xb.Op {
		return xb.Div(x, xb.Add(xb.Abs(x), ScalarLike(x, 1)))
	},
	"Swish": func(n *onnx.Node, x *xb.Op) *xb.Op {
		a := actAttr(n, "alpha", 1)
		return xb.Mul(x, xb.Logistic(xb.Mul(x, ScalarLike(x, a))))
	},
	"Mish": func(n *onnx.Node, x *xb.Op) *xb.Op { return xb.Mul(x, xb.Tanh(actSoftplus(x))) },
	"Shrink": func(n *onnx.Node, x *xb.Op) *xb.Op {
		bias, l := actAttr(n, "bias", 0), actAttr(n, "lambd", 0.5)
		lo := xb.Add(x, ScalarLike(x, bias))
		hi := xb.Sub(x, ScalarLike(x, bias))
		zero := FullLike(x, 0)
		return xb.Select(xb.Lt(x, FullLike(x, -l)), lo, xb.Select(xb.Gt(x, FullLike(x, l)), hi, zero))
	},
}

func init() {
	for name, f := range activations {
		elemRegister(Op{Name: name, Lower: actFloat(f)})
	}
	elemRegister(Op{Name: "Gelu", Lower: actFloat(func(n *onnx.Node, x *xb.Op) *xb.Op {
		half := ScalarLike(x, 0.5)
		if n.Str("approximate", "none") == "tanh" {
			x3 := xb.Mul(xb.Mul(x, x), x)
			in := xb.Mul(xb.Add(x, xb.Mul(x3, ScalarLike(x, 0.044715))), ScalarLike(x, math.Sqrt(2/math.Pi)))
			return xb.Mul(xb.Mul(x, half), xb.Add(xb.Tanh(in), ScalarLike(x, 1)))
		}
		e := xb.Erf(xb.Mul(x, ScalarLike(x, 1/math.Sqrt2)))
		return xb.Mul(xb.Mul(x, half), xb.Add(e, ScalarLike(x, 1)))
	})})
	elemRegister(Op{Name: "PRelu", Lower: func(c *Ctx) error {
		x, s := c.Input(0), c.Input(1)
		if x.DType() != s.DType() {
			return c.Errorf("input types %s and %s differ", x.DType(), s.DType())
		}
		// Before opset 7 a 1-D slope runs along the channel axis 1.
		if c.Opset < 7 && s.Rank() == 1 && x.Rank() >= 2 && s.Dims()[0] != 1 && s.Dims()[0] == x.Dims()[1] {
			d := make([]int64, x.Rank()-1)
			for i := range d {
				d[i] = 1
			}
			d[0] = s.Dims()[0]
			s = xb.Reshape(s, d...)
		}
		x, s = Broadcast2(c.B, x, s)
		c.Set(0, xb.Select(xb.Lt(x, FullLike(x, 0)), xb.Mul(x, s), x))
		return nil
	}})
	elemRegister(Op{Name: "SwiGLU", Lower: func(c *Ctx) error {
		a, b := c.Input(0), c.Input(1)
		if a.DType() != b.DType() || !a.DType().IsFloat() {
			return c.Unsupported("SwiGLU of %s and %s", a.DType(), b.DType())
		}
		a, b = Broadcast2(c.B, a, b)
		au, back := elemUp(a)
		bu, _ := elemUp(b)
		alpha := float64(c.Node.Float("alpha", 1))
		sw := xb.Mul(au, xb.Logistic(xb.Mul(au, ScalarLike(au, alpha))))
		c.Set(0, back(xb.Mul(sw, bu)))
		return nil
	}})
}
