package optim_test

import (
	"math"
	"testing"

	"github.com/axle-ml/axle/optim"
)

func TestAdamByHand(t *testing.T) {
	const lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-7
	want := make([]float64, len(p0))
	for i := range p0 {
		p, m, v := float64(p0[i]), 0.0, 0.0
		for step := 1; step <= 3; step++ {
			g := p - float64(target[i])
			m = b1*m + (1-b1)*g
			v = b2*v + (1-b2)*g*g
			alpha := lr * math.Sqrt(1-math.Pow(b2, float64(step))) / (1 - math.Pow(b1, float64(step)))
			p -= alpha * m / (math.Sqrt(v) + eps)
		}
		want[i] = p
	}
	closeTo(t, "adam", run(t, optim.Adam{LR: lr}, p0, target, 3), want)
}
