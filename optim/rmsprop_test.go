package optim_test

import (
	"math"
	"testing"

	"github.com/axle-ml/axle/optim"
)

func TestRMSpropByHand(t *testing.T) {
	const lr, rho, eps, mu = 0.01, 0.9, 1e-7, 0.5
	want := make([]float64, len(p0))
	for i := range p0 {
		p, s := float64(p0[i]), 0.0
		for range 2 {
			g := p - float64(target[i])
			s = rho*s + (1-rho)*g*g
			p -= lr * g / (math.Sqrt(s) + eps)
		}
		want[i] = p
	}
	closeTo(t, "rmsprop", run(t, optim.RMSprop{LR: lr}, p0, target, 2), want)

	for i := range p0 {
		p, s, u := float64(p0[i]), 0.0, 0.0
		for range 2 {
			g := p - float64(target[i])
			s = rho*s + (1-rho)*g*g
			u = mu*u + lr*g/(math.Sqrt(s)+eps)
			p -= u
		}
		want[i] = p
	}
	closeTo(t, "rmsprop momentum", run(t, optim.RMSprop{LR: lr, Momentum: mu}, p0, target, 2), want)
}
