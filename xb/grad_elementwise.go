package xb

import (
	"math"

	"github.com/axle-ml/axle/hlo"
)

// Gradient rules of elementwise ops. z is the op's result, x (and y) its
// operands, g the adjoint of z; each rule returns g·∂z/∂operand. Where a
// derivative is undefined at a point (abs at 0, max at a tie) the rules
// follow JAX: sign(0) = 0, ties split the adjoint evenly.

func init() {
	registerGrad(func(z, g *Op) []*Op { return []*Op{g, g} }, hlo.OpAdd)
	registerGrad(func(z, g *Op) []*Op { return []*Op{g, Neg(g)} }, hlo.OpSubtract)
	registerGrad(func(z, g *Op) []*Op {
		x, y := z.inputs[0], z.inputs[1]
		return []*Op{Mul(g, y), Mul(g, x)}
	}, hlo.OpMultiply)
	registerGrad(func(z, g *Op) []*Op {
		y := z.inputs[1]
		gx := Div(g, y)
		return []*Op{gx, Neg(Mul(gx, z))}
	}, hlo.OpDivide)
	registerGrad(gradChooser, hlo.OpMaximum, hlo.OpMinimum)
	registerGrad(gradRemainder, hlo.OpRemainder)
	registerGrad(gradPow, hlo.OpPower)
	registerGrad(gradAtan2, hlo.OpAtan2)
	registerGrad(func(z, g *Op) []*Op { return []*Op{Neg(g)} }, hlo.OpNegate)
	registerGrad(func(z, g *Op) []*Op { return []*Op{g} }, hlo.OpCopy, hlo.OpReducePrecision)
	registerGrad(unaryGrad(func(x, z *Op) *Op { return Sign(x) }), hlo.OpAbs)
	registerGrad(unaryGrad(func(x, z *Op) *Op { return z }), hlo.OpExp)
	registerGrad(unaryGrad(func(x, z *Op) *Op { return Add(z, like(z, 1)) }), hlo.OpExpm1)
	registerGrad(func(z, g *Op) []*Op { return []*Op{Div(g, z.inputs[0])} }, hlo.OpLog)
	registerGrad(func(z, g *Op) []*Op {
		x := z.inputs[0]
		return []*Op{Div(g, Add(x, like(x, 1)))}
	}, hlo.OpLog1p)
	registerGrad(unaryGrad(func(x, z *Op) *Op { return Sub(like(z, 1), Mul(z, z)) }), hlo.OpTanh)
	registerGrad(unaryGrad(func(x, z *Op) *Op { return Mul(z, Sub(like(z, 1), z)) }), hlo.OpLogistic)
	registerGrad(func(z, g *Op) []*Op { return []*Op{Div(Mul(g, like(z, 0.5)), z)} }, hlo.OpSqrt)
	registerGrad(unaryGrad(func(x, z *Op) *Op {
		// d/dx x^-1/2 = -1/2 · x^-3/2 = -1/2 · z / x.
		return Mul(like(z, -0.5), Div(z, x))
	}), hlo.OpRsqrt)
	registerGrad(func(z, g *Op) []*Op {
		// d/dx x^1/3 = 1/3 · z / x = 1 / (3 z²).
		return []*Op{Div(g, Mul(like(z, 3), Mul(z, z)))}
	}, hlo.OpCbrt)
	registerGrad(unaryGrad(func(x, z *Op) *Op { return Cos(x) }), hlo.OpSin)
	registerGrad(unaryGrad(func(x, z *Op) *Op { return Neg(Sin(x)) }), hlo.OpCos)
	registerGrad(unaryGrad(func(x, z *Op) *Op { return Add(like(z, 1), Mul(z, z)) }), hlo.OpTan)
	registerGrad(unaryGrad(func(x, z *Op) *Op {
		return Mul(like(x, 2/math.Sqrt(math.Pi)), Exp(Neg(Mul(x, x))))
	}), hlo.OpErf)
	// Piecewise-constant functions have a zero derivative almost
	// everywhere; returning none leaves their operands' adjoints zero.
	registerGrad(func(z, g *Op) []*Op { return nil },
		hlo.OpFloor, hlo.OpCeil, hlo.OpRoundNearestEven, hlo.OpRoundNearestAfz, hlo.OpSign)
	registerGrad(gradConvert, hlo.OpConvert)
	registerGrad(gradSelect, hlo.OpSelect)
	registerGrad(gradClamp, hlo.OpClamp)
}

// unaryGrad makes the rule g·f'(x) from the derivative written in terms
// of the operand x and the result z.
func unaryGrad(deriv func(x, z *Op) *Op) gradRule {
	return func(z, g *Op) []*Op {
		return []*Op{Mul(g, deriv(z.inputs[0], z))}
	}
}

// gradChooser routes the adjoint of max or min to the operand that was
// chosen, half to each on a tie (JAX's balanced rule).
func gradChooser(z, g *Op) []*Op {
	x, y := z.inputs[0], z.inputs[1]
	full := func(v float64) *Op { return BroadcastTo(like(g, v), g.Dims()...) }
	xWins := Eq(x, z)
	yWins := Eq(y, z)
	gs := Mul(g, Select(And(xWins, yWins), full(0.5), full(1)))
	zeros := full(0)
	return []*Op{Select(xWins, gs, zeros), Select(yWins, gs, zeros)}
}

// gradRemainder: rem(x, y) = x - y·trunc(x/y).
func gradRemainder(z, g *Op) []*Op {
	x, y := z.inputs[0], z.inputs[1]
	q := Div(x, y)
	trunc := Mul(Sign(q), Floor(Abs(q)))
	return []*Op{g, Neg(Mul(g, trunc))}
}

// gradPow: ∂x^y/∂x = y·x^(y-1); ∂x^y/∂y = x^y·log x, taken as 0 where
// x ≤ 0 (where log is undefined and, for x = 0 and y > 0, the limit is 0).
func gradPow(z, g *Op) []*Op {
	x, y := z.inputs[0], z.inputs[1]
	gx := Mul(g, Mul(y, Pow(x, Sub(y, like(y, 1)))))
	positive := Gt(x, like(x, 0))
	safeX := Select(positive, x, BroadcastTo(like(x, 1), x.Dims()...))
	gy := Mul(g, Select(positive, Mul(z, Log(safeX)), BroadcastTo(like(z, 0), z.Dims()...)))
	return []*Op{gx, gy}
}

// gradAtan2: z = atan2(a, b); ∂z/∂a = b/(a²+b²), ∂z/∂b = -a/(a²+b²).
func gradAtan2(z, g *Op) []*Op {
	a, b := z.inputs[0], z.inputs[1]
	s := Div(g, Add(Mul(a, a), Mul(b, b)))
	return []*Op{Mul(s, b), Neg(Mul(s, a))}
}

// gradConvert converts the adjoint back to the operand's type; integer
// operands get none.
func gradConvert(z, g *Op) []*Op {
	x := z.inputs[0]
	if !differentiable(x) {
		return nil
	}
	if x.DType() == g.DType() {
		return []*Op{g}
	}
	return []*Op{Convert(g, x.DType())}
}

func gradSelect(z, g *Op) []*Op {
	p := z.inputs[0]
	if p.Rank() == 0 && g.Rank() > 0 {
		p = Broadcast(p, g.Dims()...)
	}
	zeros := BroadcastTo(like(g, 0), g.Dims()...)
	return []*Op{nil, Select(p, g, zeros), Select(p, zeros, g)}
}

// gradClamp: clamp(lo, x, hi) passes the adjoint to x inside [lo, hi] and
// to the bound that clipped it outside. Scalar bounds sum their share.
func gradClamp(z, g *Op) []*Op {
	lo, x, hi := z.inputs[0], z.inputs[1], z.inputs[2]
	zeros := BroadcastTo(like(g, 0), g.Dims()...)
	full := func(o *Op) *Op {
		if o.Rank() == 0 && g.Rank() > 0 {
			return Broadcast(o, g.Dims()...)
		}
		return o
	}
	below := Lt(x, full(lo))
	above := Gt(x, full(hi))
	inside := Not(Or(below, above))
	back := func(o, c *Op) *Op {
		if o.Rank() == 0 && g.Rank() > 0 {
			return ReduceSum(c, AllAxes(c)...)
		}
		return c
	}
	return []*Op{back(lo, Select(below, g, zeros)), Select(inside, g, zeros), back(hi, Select(above, g, zeros))}
}
