package optim_test

import (
	"testing"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/optim"
	"github.com/axle-ml/axle/xb"
)

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
			xbuf, err := axle.BufferFromSlice(c, xs, 8, 2)
			if err != nil {
				t.Fatal(err)
			}
			ybuf, err := axle.BufferFromSlice(c, ys, 8)
			if err != nil {
				t.Fatal(err)
			}
			loss, err := tr.Step(xbuf, ybuf)
			xbuf.Release()
			ybuf.Release()
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

// A step donates the parameter buffers it was given (their storage now
// holds the new values) and Params reads the new ones.
func TestTrainerDonatesAndSwaps(t *testing.T) {
	c, tr := sgdTrainer(t)
	old := tr.ParamBuffers()[0]
	batch, err := axle.BufferFromSlice(c, []float32{0, 0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := tr.Step(batch)
	if err != nil {
		t.Fatal(err)
	}
	// ½(1² + 2²) before the update; p − 0.5·p after it.
	if loss != 2.5 {
		t.Errorf("loss %v, want 2.5", loss)
	}
	if !old.IsReleased() || batch.IsReleased() {
		t.Errorf("after a step: old parameters released %v (want true), batch released %v (want false)", old.IsReleased(), batch.IsReleased())
	}
	got, err := tr.Params()
	if err != nil {
		t.Fatal(err)
	}
	if v := got[0].Data().([]float32); v[0] != 0.5 || v[1] != 1 {
		t.Errorf("parameters %v, want [0.5 1]", v)
	}
}

// A batch of the wrong shape is rejected before anything is donated, so
// the trainer carries on.
func TestTrainerSurvivesRejectedBatch(t *testing.T) {
	c, tr := sgdTrainer(t)
	bad, err := axle.BufferFromSlice(c, []float32{0, 0, 0}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(bad); err == nil {
		t.Fatal("a batch of 3 for a parameter of 2 was accepted")
	}
	good, err := axle.BufferFromSlice(c, []float32{0, 0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if loss, err := tr.Step(good); err != nil || loss != 2.5 {
		t.Fatalf("after a rejected batch: loss %v, %v", loss, err)
	}
}

// sgdTrainer trains p = [1, 2] on the quadratic loss with SGD at 0.5.
func sgdTrainer(t *testing.T) (*axle.Client, *optim.Trainer) {
	t.Helper()
	c, err := axle.NewClient(axle.ClientOptions{Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := hlo.LiteralFromSlice([]float32{1, 2}, 2)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := optim.NewTrainer(c, optim.SGD{LR: 0.5}, []*hlo.Literal{p}, []hlo.Shape{p.Shape()}, quadratic, 1)
	if err != nil {
		t.Fatal(err)
	}
	return c, tr
}
