package optim

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Adam is Kingma and Ba's optimizer in Keras' formulation, with the bias
// correction folded into the step size:
//
//	t ← t + 1
//	m ← β1·m + (1−β1)·g
//	v ← β2·v + (1−β2)·g²
//	p ← p − lr·√(1−β2^t)/(1−β1^t) · m/(√v + ε)
//
// Zero fields take Keras' defaults: lr 1e-3, β1 0.9, β2 0.999, ε 1e-7.
// (PyTorch adds ε to √v/√(1−β2^t) instead; the two differ only in how ε
// is scaled.) The state is m and v per parameter, then the step t as an
// f32 scalar.
type Adam struct {
	LR, Beta1, Beta2, Epsilon float64
}

// defaults fills in the zero fields.
func (o Adam) defaults() Adam {
	return Adam{LR: orDefault(o.LR, 1e-3), Beta1: orDefault(o.Beta1, 0.9), Beta2: orDefault(o.Beta2, 0.999),
		Epsilon: orDefault(o.Epsilon, 1e-7)}
}

// Init returns zero m and v per parameter and a zero step counter.
func (o Adam) Init(params []hlo.Shape) []*hlo.Literal {
	st := append(zerosLike(params), zerosLike(params)...)
	return append(st, hlo.NewLiteral(hlo.ScalarShape(hlo.F32)))
}

// Update adds the Adam step to params' builder.
func (o Adam) Update(params, grads, state []*xb.Op) ([]*xb.Op, []*xb.Op) {
	o = o.defaults()
	n := len(params)
	t := state[2*n]
	b := t.Builder()
	t1 := xb.Add(t, b.ScalarOf(hlo.F32, 1))
	// The bias-corrected step size, a scalar computed once per step.
	pow := func(base float64) *xb.Op { return xb.Pow(b.ScalarOf(hlo.F32, base), t1) }
	one := b.ScalarOf(hlo.F32, 1)
	lrT := xb.Div(xb.Mul(b.ScalarOf(hlo.F32, o.LR), xb.Sqrt(xb.Sub(one, pow(o.Beta2)))), xb.Sub(one, pow(o.Beta1)))
	newP := make([]*xb.Op, n)
	newS := make([]*xb.Op, 2*n+1)
	for i, p := range params {
		g, m, v := grads[i], state[i], state[n+i]
		m = xb.Add(xb.Mul(scalar(p, o.Beta1), m), xb.Mul(scalar(p, 1-o.Beta1), g))
		v = xb.Add(xb.Mul(scalar(p, o.Beta2), v), xb.Mul(scalar(p, 1-o.Beta2), xb.Mul(g, g)))
		lr := lrT
		if p.DType() != hlo.F32 {
			lr = xb.Convert(lrT, p.DType())
		}
		step := xb.Mul(xb.Broadcast(lr, p.Dims()...), xb.Div(m, xb.Add(xb.Sqrt(v), scalar(p, o.Epsilon))))
		newP[i] = xb.Sub(p, step)
		newS[i], newS[n+i] = m, v
	}
	newS[2*n] = t1
	return newP, newS
}
