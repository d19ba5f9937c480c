package ops

import (
	"github.com/axle-ml/axle/xb"
)

// binaryOps are the ONNX ops that are one HLO binary op after numpy
// broadcasting.
var binaryOps = map[string]func(x, y *xb.Op) *xb.Op{
	"Add": xb.Add, "Sub": xb.Sub, "Mul": xb.Mul,
}

// unaryOps are the ONNX ops that are one HLO unary op.
var unaryOps = map[string]func(x *xb.Op) *xb.Op{
	"Neg": xb.Neg, "Exp": xb.Exp, "Sqrt": xb.Sqrt, "Tanh": xb.Tanh, "Sigmoid": xb.Logistic,
}

func init() {
	for name, f := range binaryOps {
		Register(Op{Name: name, Lower: func(c *Ctx) error {
			x, y := Broadcast2(c.B, c.Input(0), c.Input(1))
			c.Set(0, f(x, y))
			return nil
		}})
	}
	for name, f := range unaryOps {
		Register(Op{Name: name, Lower: func(c *Ctx) error {
			c.Set(0, f(c.Input(0)))
			return nil
		}})
	}
	Register(Op{Name: "Relu", Lower: func(c *Ctx) error {
		x := c.Input(0)
		c.Set(0, xb.Max(x, FullLike(x, 0)))
		return nil
	}})
}
