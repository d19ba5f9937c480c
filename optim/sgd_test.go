package optim_test

import (
	"testing"

	"github.com/axle-ml/axle/optim"
)

// Two steps of SGD through the Trainer (with momentum, Nesterov
// momentum, and none) against the update rules worked out in float64;
// the gradient of the quadratic loss is p − target.
func TestSGDMomentumByHand(t *testing.T) {
	const lr, mu = 0.1, 0.9
	want := make([]float64, len(p0))
	for i := range p0 {
		p, v := float64(p0[i]), 0.0
		for range 2 {
			g := p - float64(target[i])
			v = mu*v - lr*g
			p += v
		}
		want[i] = p
	}
	closeTo(t, "sgd momentum", run(t, optim.SGD{LR: lr, Momentum: mu}, p0, target, 2), want)

	for i := range p0 {
		p, v := float64(p0[i]), 0.0
		for range 2 {
			g := p - float64(target[i])
			v = mu*v - lr*g
			p += mu*v - lr*g
		}
		want[i] = p
	}
	closeTo(t, "sgd nesterov", run(t, optim.SGD{LR: lr, Momentum: mu, Nesterov: true}, p0, target, 2), want)

	for i := range p0 {
		p := float64(p0[i])
		for range 2 {
			p -= lr * (p - float64(target[i]))
		}
		want[i] = p
	}
	closeTo(t, "sgd", run(t, optim.SGD{LR: lr}, p0, target, 2), want)
}
