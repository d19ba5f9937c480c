// Package optim holds optimizers as built computations and a trainer that
// runs a compiled training step with its parameters and optimizer state in
// device buffers, updated in place through donation.
//
// An Optimizer adds its update to the training step's builder, so the
// update fuses with the backward pass like any other op; the state (Adam's
// moments, RMSprop's mean square) is an input and an output of the step,
// and the Trainer donates the old buffers to each execution so the new
// state is written over the old, as JAX's donate_argnums does.
package optim

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Optimizer updates parameters from their gradients.
type Optimizer interface {
	// Init returns the initial optimizer state for parameters of these
	// shapes.
	Init(params []hlo.Shape) []*hlo.Literal
	// Update adds the update to the builder of params: params, grads and
	// state (parameters of the step computation, in Init's order) are
	// ops of one builder. It returns the new parameters and state.
	Update(params, grads, state []*xb.Op) (newParams, newState []*xb.Op)
}

// zerosLike returns zero literals of the shapes.
func zerosLike(shapes []hlo.Shape) []*hlo.Literal {
	out := make([]*hlo.Literal, len(shapes))
	for i, s := range shapes {
		out[i] = hlo.NewLiteral(s)
	}
	return out
}

// scalar is a rank-0 constant of x's element type.
func scalar(x *xb.Op, v float64) *xb.Op { return x.Builder().ScalarOf(x.DType(), v) }

// orDefault returns v, or def when v is zero.
func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}
