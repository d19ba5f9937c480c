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
		if !(math.Abs(float64(got[i])-want[i]) <= 1e-6*(1+math.Abs(want[i]))) {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

var (
	p0     = []float32{1, -2, 0.5}
	target = []float32{0, 1, 0.5}
)
