package ops

import (
	"github.com/axle-ml/axle/xb"
)

// State-carrying sequence ops (opset 27): CausalConvWithState.

func init() {
	Register(Op{Name: "CausalConvWithState", Since: 27, Lower: lowerCausalConvWithState})
}

// lowerCausalConvWithState: a depthwise causal convolution along the last
// axis of [B, C, L] with kernel [C, 1, K], the past K-1 steps (zeros if
// absent) prepended; present_state is the last K-1 steps of that.
func lowerCausalConvWithState(c *Ctx) error {
	x, w := c.Input(0), c.Input(1)
	dt := x.DType()
	ct := attnCalcType(dt)
	d := x.Dims()
	wd := w.Dims()
	if len(d) != 3 || len(wd) != 3 || wd[0] != d[1] || wd[1] != 1 {
		return c.Unsupported("input %v with weight %v", d, wd)
	}
	B, C, L, K := d[0], d[1], d[2], wd[2]
	if K < 1 {
		return c.Errorf("empty kernel")
	}
	var past *xb.Op
	if c.Has(3) {
		past = c.Input(3)
	} else {
		past = c.B.Zeros(dt, B, C, K-1)
	}
	padded := xb.Concatenate(2, past, x)
	pl := padded.Dims()[2]
	if pl < K-1 {
		return c.Errorf("past_state is shorter than the kernel")
	}
	pc := xb.Convert(padded, ct)
	wc := xb.Convert(w, ct)
	var acc *xb.Op
	off := pl - L - (K - 1) // steps of past beyond K-1 are not used
	for k := int64(0); k < K; k++ {
		s := xb.SliceAxis(pc, 2, off+k, off+k+L)
		wk := xb.BroadcastInDim(xb.Reshape(xb.SliceAxis(wc, 2, k, k+1), C), []int64{B, C, L}, 1)
		t := xb.Mul(s, wk)
		if acc == nil {
			acc = t
		} else {
			acc = xb.Add(acc, t)
		}
	}
	if c.Has(2) {
		acc = xb.Add(acc, xb.BroadcastInDim(xb.Convert(c.Input(2), ct), []int64{B, C, L}, 1))
	}
	switch a := c.Node.Str("activation", "none"); a {
	case "none", "":
	case "silu", "swish":
		acc = xb.Mul(acc, xb.Logistic(acc))
	default:
		return c.Unsupported("activation %q", a)
	}
	c.Set(0, xb.Convert(acc, dt))
	c.Set(1, xb.SliceAxis(padded, 2, pl-(K-1), pl))
	return nil
}
