package main

import (
	"math"
	"testing"

	"github.com/axle-ml/axle/examples/internal/fashion"
	"github.com/axle-ml/axle/examples/internal/recipe"
)

// A few small steps on the synthetic stand-in for Fashion-MNIST: the
// whole step (convolutions, pooling, dropout, their gradients, RMSprop)
// builds, compiles and runs, and the loss falls.
func TestCNNTrainsSynthetic(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of convolutions")
	}
	data := fashion.Synthetic(256, 50, 1)
	res, err := run(&recipe.Flags{Steps: 8, Seed: 1}, 1e-3, 32, data)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(float64(res.lastLoss)) || !(res.lastLoss < res.firstLoss) {
		t.Fatalf("loss %v -> %v", res.firstLoss, res.lastLoss)
	}
}
