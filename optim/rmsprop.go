package optim

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// RMSprop divides each step by a running root mean square of the
// gradients, in Keras 3's formulation (ε outside the square root; TF 2's
// fused kernel added it under the root):
//
//	s ← ρ·s + (1−ρ)·g²
//	p ← p − lr·g/(√s + ε)
//
// and with momentum μ: u ← μ·u + lr·g/(√s + ε), p ← p − u. Zero fields
// take Keras' defaults: lr 1e-3, ρ 0.9, ε 1e-7. (PyTorch's RMSprop is
// the same with alpha = ρ.) The state is s per parameter, then u per
// parameter with momentum.
type RMSprop struct {
	LR, Rho, Epsilon, Momentum float64
}

// defaults fills in the zero fields.
func (o RMSprop) defaults() RMSprop {
	return RMSprop{LR: orDefault(o.LR, 1e-3), Rho: orDefault(o.Rho, 0.9), Epsilon: orDefault(o.Epsilon, 1e-7), Momentum: o.Momentum}
}

// Init returns a zero mean square per parameter, and a zero momentum
// per parameter when Momentum is set.
func (o RMSprop) Init(params []hlo.Shape) []*hlo.Literal {
	if o.Momentum != 0 {
		return append(zerosLike(params), zerosLike(params)...)
	}
	return zerosLike(params)
}

// Update adds the RMSprop step to params' builder.
func (o RMSprop) Update(params, grads, state []*xb.Op) ([]*xb.Op, []*xb.Op) {
	o = o.defaults()
	n := len(params)
	newP := make([]*xb.Op, n)
	newS := make([]*xb.Op, len(state))
	for i, p := range params {
		g := grads[i]
		s := xb.Add(xb.Mul(scalar(p, o.Rho), state[i]), xb.Mul(scalar(p, 1-o.Rho), xb.Mul(g, g)))
		newS[i] = s
		step := xb.Div(xb.Mul(scalar(p, o.LR), g), xb.Add(xb.Sqrt(s), scalar(p, o.Epsilon)))
		if o.Momentum != 0 {
			step = xb.Add(xb.Mul(scalar(p, o.Momentum), state[n+i]), step)
			newS[n+i] = step
		}
		newP[i] = xb.Sub(p, step)
	}
	return newP, newS
}
