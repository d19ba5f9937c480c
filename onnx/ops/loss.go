package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.

func init() {
	Register(Op{Name: "NegativeLogLikelihoodLoss", Lower: lowerNLLLoss})
	Register(Op{Name: "SoftmaxCrossEntropyLoss", Lower: lowerSCELoss})
}

// lsNLL computes the NLL loss of log-probabilities x (N, C, d...) at
// integer targets (N, d...), with optional per-class weight (C).
func lsNLL(c *Ctx, x, target, weight *xb.Op) (*xb.Op, error) {
	if target == nil {
		return nil, c.Errorf("the target is required")
	}
	dims := x.Dims()
	if len(dims) < 2 {
		return nil, c.Errorf("input of rank %d", len(dims))
	}
	td := target.Dims()
	if len(td) != len(dims)-1 {
		return nil, c.Errorf("target rank %d for input rank %d", len(td), len(dims))
	}
	t := x.DType()
	if !target.DType().IsInteger() {
		return nil, c.Unsupported("%s target", target.DType())
	}
	tg := xb.Convert(target, hlo.S64)
	// hit[n, c, d...] is target[n, d...] == c.
	tb := xb.BroadcastInDim(tg, dims, append([]int64{0}, nmTrailingAxes(2, len(dims))...)...)
	hit := xb.Eq(c.B.Iota(hlo.S64, 1, dims...), tb)
	picked := rdSum(xb.Select(hit, x, FullLike(x, 0)), 1)
	// w[n, d...]: the weight of the target class (0 for ignore_index).
	var w *xb.Op
	if weight != nil {
		wb := xb.BroadcastInDim(xb.Convert(weight, t), dims, 1)
		w = rdSum(xb.Select(hit, wb, FullLike(x, 0)), 1)
	} else {
		w = FullLike(picked, 1)
	}
	if c.Node.Has("ignore_index") {
		ii := c.Node.Int("ignore_index", 0)
		keep := xb.Ne(tg, FullLike(tg, float64(ii)))
		w = xb.Select(keep, w, FullLike(w, 0))
	}
	loss := xb.Neg(xb.Mul(picked, w))
	// Where the weight is 0, the loss is 0 even for an infinite picked value.
	loss = xb.Select(xb.Eq(w, FullLike(w, 0)), FullLike(loss, 0), loss)
	switch red := c.Node.Str("reduction", "mean"); red {
	case "none":
		return loss, nil
	case "sum":
		return rdSum(loss), nil
	case "mean":
		return xb.Div(rdSum(loss), rdSum(w)), nil
	default:
		return nil, c.Errorf("reduction %q", red)
	}
}

func lowerNLLLoss(c *Ctx) error {
	x := c.Input(0)
	if !x.DType().IsFloat() {
		return c.Unsupported("%s input", x.DType())
	}
	l, err := lsNLL(c, x, c.Input(1), c.Input(2))
	if err != nil {
		return err
	}
	c.Set(0, l)
	return nil
}

func lowerSCELoss(c *Ctx) error {
	x := c.Input(0)
	if !x.DType().IsFloat() {
		return c.Unsupported("%s input", x.DType())
	}
	if x.Rank() < 2 {
		return c.Errorf("input of rank %d", x.Rank())
	}
	lp := smLogSoftmax(x, 1)
	l, err := lsNLL(c, lp, c.Input(1), c.Input(2))
	if err != nil {
		return err
	}
	c.Set(0, l)
	c.Set(1, lp)
	return nil
}
