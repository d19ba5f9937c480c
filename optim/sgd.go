package optim

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// SGD is stochastic gradient descent with optional momentum, in Keras'
// formulation:
//
//	v ← momentum·v − lr·g
//	p ← p + v                      (Nesterov: p ← p + momentum·v − lr·g)
//
// and without momentum simply p ← p − lr·g. (PyTorch accumulates g in v
// and scales by lr after; for a constant lr the parameters are the same.)
// A zero LR takes Keras' default, 0.01. The state is one velocity per
// parameter, none without momentum.
type SGD struct {
	LR, Momentum float64
	Nesterov     bool
}

// Init returns one zero velocity per parameter, or nothing without
// momentum.
func (o SGD) Init(params []hlo.Shape) []*hlo.Literal {
	if o.Momentum == 0 {
		return nil
	}
	return zerosLike(params)
}

// Update adds the SGD step to params' builder.
func (o SGD) Update(params, grads, state []*xb.Op) ([]*xb.Op, []*xb.Op) {
	o.LR = orDefault(o.LR, 0.01)
	newP := make([]*xb.Op, len(params))
	if o.Momentum == 0 {
		for i, p := range params {
			newP[i] = xb.Sub(p, xb.Mul(scalar(p, o.LR), grads[i]))
		}
		return newP, nil
	}
	newS := make([]*xb.Op, len(params))
	for i, p := range params {
		step := xb.Mul(scalar(p, o.LR), grads[i])
		v := xb.Sub(xb.Mul(scalar(p, o.Momentum), state[i]), step)
		newS[i] = v
		if o.Nesterov {
			newP[i] = xb.Sub(xb.Add(p, xb.Mul(scalar(p, o.Momentum), v)), step)
		} else {
			newP[i] = xb.Add(p, v)
		}
	}
	return newP, newS
}
