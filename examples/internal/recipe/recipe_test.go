package recipe

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/axle-ml/axle/examples/internal/fashion"
)

func TestTotalSteps(t *testing.T) {
	for _, c := range []struct {
		f                 Flags
		def, defEpochs, n int
	}{
		{Flags{Steps: 7, Epochs: 2}, 1000, 0, 7},
		{Flags{Epochs: 2}, 1000, 0, 20},
		{Flags{}, 1000, 0, 1000},
		{Flags{}, 0, 3, 30},
	} {
		if n := c.f.TotalSteps(10, c.def, c.defEpochs); n != c.n {
			t.Errorf("%+v: %d steps, want %d", c.f, n, c.n)
		}
	}
}

func TestGlorotRange(t *testing.T) {
	l := Glorot(rand.New(rand.NewPCG(1, 2)), 784, 10, 784, 10)
	limit := math.Sqrt(6.0 / 794)
	lo, hi := 0.0, 0.0
	for _, v := range l.Data().([]float32) {
		lo, hi = min(lo, float64(v)), max(hi, float64(v))
	}
	if lo < -limit || hi > limit || hi-lo < limit {
		t.Fatalf("values in [%v, %v], limit %v", lo, hi, limit)
	}
}

// Every example appears once per epoch, and the order changes between
// epochs.
func TestBatcherEpochs(t *testing.T) {
	d := fashion.Synthetic(10, 1, 1)
	b := NewBatcher(&d.Train, 5, 1)
	x := make([]float32, 5*fashion.Side*fashion.Side)
	labels := make([]int32, 5)
	var epochs [2][]int32
	for e := range epochs {
		for i := range 2 {
			end := b.Next(x, labels, 1)
			if end != (i == 1) {
				t.Fatalf("epoch %d batch %d: end of epoch %v", e, i, end)
			}
			epochs[e] = append(epochs[e], labels...)
		}
	}
	for e, got := range epochs {
		got = slices.Clone(got)
		want := slices.Clone(d.Train.Labels)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("epoch %d drew labels %v, want a permutation of %v", e, got, want)
		}
	}
	if b.Epoch != 2 {
		t.Fatalf("Epoch = %d", b.Epoch)
	}
}
