package optim_test

import (
	"math"
	"testing"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/optim"
	"github.com/axle-ml/axle/xb"
)

// quadratic is the loss ½·Σ(p − target)², whose gradient is p − target:
// easy to follow by hand.
func quadratic(b *xb.Builder, params, batch []*xb.Op, key *xb.Op) (*xb.Op, *xb.Op) {
	d := xb.Sub(params[0], batch[0])
	return xb.Mul(b.ScalarOf(hlo.F32, 0.5), xb.ReduceSum(xb.Mul(d, d))), key
}

// run trains p0 towards target for steps steps and returns the final
// parameters.
func run(t *testing.T, opt optim.Optimizer, p0, target []float32, steps int) []float32 {
	t.Helper()
	c, err := axle.NewClient(axle.ClientOptions{Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := hlo.LiteralFromSlice(p0, int64(len(p0)))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := optim.NewTrainer(c, opt, []*hlo.Literal{p}, []hlo.Shape{p.Shape()}, quadratic, 1)
	if err != nil {
		t.Fatal(err)
	}
	for range steps {
		batch, err := axle.BufferFromSlice(c, target, int64(len(target)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Step(batch); err != nil {
			t.Fatal(err)
		}
	}
	got, err := axle.ToSlice[float32](tr.ParamBuffers()[0])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func closeTo(t *testing.T, what string, got []float32, want []float64) {
	t.Helper()
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-6*(1+math.Abs(want[i])) {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

var (
	p0     = []float32{1, -2, 0.5}
	target = []float32{0, 1, 0.5}
)

// Two steps of each optimizer against the update rules worked out in
// float64 (the gradient is p − target).
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

// A linear regression on a fixed batch: every optimizer lowers the loss,
// and the trainer reports the loss of the parameters before each update.
func TestTrainerLowersLoss(t *testing.T) {
	c, err := axle.NewClient(axle.ClientOptions{Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	// y = x·[2, -1] + 0.5 on 8 points.
	xs := []float32{0, 1, 1, 0, 1, 1, 2, 0, 0, 2, -1, 1, 3, -2, 0.5, 0.5}
	ys := make([]float32, 8)
	for i := range ys {
		ys[i] = 2*xs[2*i] - xs[2*i+1] + 0.5
	}
	mse := func(b *xb.Builder, params, batch []*xb.Op, key *xb.Op) (*xb.Op, *xb.Op) {
		pred := xb.Linear(batch[0], params[0], params[1])
		d := xb.Sub(xb.Reshape(pred, 8), batch[1])
		return xb.Mean(xb.Mul(d, d)), key
	}
	for _, opt := range []optim.Optimizer{optim.SGD{LR: 0.05, Momentum: 0.9}, optim.Adam{LR: 0.05}, optim.RMSprop{LR: 0.02}} {
		w := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 2, 1))
		bias := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 1))
		tr, err := optim.NewTrainer(c, opt, []*hlo.Literal{w, bias},
			[]hlo.Shape{hlo.ArrayShape(hlo.F32, 8, 2), hlo.ArrayShape(hlo.F32, 8)}, mse, 1)
		if err != nil {
			t.Fatal(err)
		}
		var first, last float32
		for step := range 200 {
			xb_, _ := axle.BufferFromSlice(c, xs, 8, 2)
			yb, _ := axle.BufferFromSlice(c, ys, 8)
			loss, err := tr.Step(xb_, yb)
			if err != nil {
				t.Fatal(err)
			}
			if step == 0 {
				first = loss
			}
			last = loss
		}
		if !(last < first/100) {
			t.Errorf("%T: loss went from %v to %v in 200 steps", opt, first, last)
		}
	}
}
