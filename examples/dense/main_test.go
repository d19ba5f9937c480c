package main

import (
	"testing"

	"github.com/axle-ml/axle/examples/internal/fashion"
	"github.com/axle-ml/axle/examples/internal/recipe"
)

// Thirty steps on the synthetic stand-in for Fashion-MNIST learn
// something: the loss falls and the test accuracy beats chance.
func TestDenseLearnsSynthetic(t *testing.T) {
	data := fashion.Synthetic(3000, 500, 1)
	res, err := run(&recipe.Flags{Steps: 30, Seed: 1}, 1e-3, data)
	if err != nil {
		t.Fatal(err)
	}
	if !(res.lastLoss < res.firstLoss/2) || res.accuracy < 0.5 {
		t.Fatalf("loss %v -> %v, accuracy %v", res.firstLoss, res.lastLoss, res.accuracy)
	}
}
