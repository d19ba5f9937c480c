package ops

import (
	"math"

	"github.com/axle-ml/axle/xb"
)

// State-carrying sequence ops (opset 27): CausalConvWithState.

func init() {
	Register(Op{Name: "CausalConvWithState", Since: 27, Lower: lowerCausalConvWithState})
	Register(Op{Name: "LinearAttention", Since: 27, Lower: lowerLinearAttention})
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

// linAttnSteps splits [B, S, H*D] (or [B, H, S, D]) into S steps of
// [B, H, D]; d is the per-head size, or -1 to infer it from H.
func linAttnSteps(x *xb.Op, heads int64) []*xb.Op {
	d := x.Dims()
	if len(d) == 4 {
		x = xb.Transpose(x, 0, 2, 1, 3)
		d = x.Dims()
		x = xb.Reshape(x, d[0], d[1], d[2]*d[3])
		d = x.Dims()
	}
	B, S, W := d[0], d[1], d[2]
	out := make([]*xb.Op, S)
	for t := range S {
		out[t] = xb.Reshape(xb.SliceAxis(x, 1, t, t+1), B, heads, W/heads)
	}
	return out
}

// lowerLinearAttention runs the recurrence of LinearAttention step by
// step over the (static) sequence: the state [B, Hkv, Dk, Dv] is decayed
// (gated rules), written with k⊗v or the delta rule's k⊗β(v - Sᵀk), and
// read by q.
func lowerLinearAttention(c *Ctx) error {
	q, k, v := c.Input(0), c.Input(1), c.Input(2)
	dt := q.DType()
	ct := attnCalcType(dt)
	hq, hkv := c.Node.Int("q_num_heads", 0), c.Node.Int("kv_num_heads", 0)
	if q.Rank() == 4 {
		hq, hkv = q.Dims()[1], k.Dims()[1]
	}
	if hq <= 0 || hkv <= 0 || hq%hkv != 0 {
		return c.Errorf("q_num_heads %d and kv_num_heads %d", hq, hkv)
	}
	rule := c.Node.Str("update_rule", "gated_delta")
	gated := rule == "gated" || rule == "gated_delta"
	delta := rule == "delta" || rule == "gated_delta"
	if !gated && !delta && rule != "linear" {
		return c.Unsupported("update_rule %q", rule)
	}
	conv := func(x *xb.Op) *xb.Op { return xb.Convert(x, ct) }
	qs := linAttnSteps(conv(q), hq)
	ks := linAttnSteps(conv(k), hkv)
	vs := linAttnSteps(conv(v), hkv)
	S := int64(len(qs))
	if int64(len(ks)) != S || int64(len(vs)) != S || S == 0 {
		return c.Unsupported("sequence lengths")
	}
	qd, vd := qs[0].Dims(), vs[0].Dims()
	B, Dk, Dv := qd[0], qd[2], vd[2]
	sd := []int64{B, hkv, Dk, Dv}
	var st *xb.Op
	if c.Has(3) {
		st = conv(c.Input(3))
	} else {
		st = c.B.Zeros(ct, sd...)
	}
	var decays, betas []*xb.Op
	if gated {
		if !c.Has(4) {
			return c.Errorf("update rule %q needs decay", rule)
		}
		// [B, S, Hkv·Dk], or per head [B, S, Hkv].
		decays = linAttnSteps(conv(c.Input(4)), hkv)
	}
	if delta {
		if !c.Has(5) {
			return c.Errorf("update rule %q needs beta", rule)
		}
		bd := c.Input(5).Dims()
		betas = linAttnSteps(conv(c.Input(5)), bd[len(bd)-1])
	}
	scale := 1 / math.Sqrt(float64(Dk))
	if c.Node.Has("scale") {
		scale = float64(c.Node.Float("scale", 0))
	}
	g := hq / hkv
	outs := make([]*xb.Op, S)
	for t := range S {
		if gated {
			e := xb.Exp(decays[t]) // [B, Hkv, Dk or 1]
			ed := e.Dims()
			st = xb.Mul(st, xb.BroadcastTo(xb.Reshape(e, ed[0], ed[1], ed[2], 1), sd...))
		}
		kt, vt := ks[t], vs[t]
		w := vt
		if delta {
			r := xb.DotGeneral(st, kt, xb.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1}, LhsContracting: []int64{2}, RhsContracting: []int64{2}})
			bt := betas[t] // [B, Hkv or 1, 1]
			w = xb.Mul(xb.BroadcastTo(bt, B, hkv, Dv), xb.Sub(vt, r))
		}
		st = xb.Add(st, xb.Mul(xb.BroadcastTo(xb.Reshape(kt, B, hkv, Dk, 1), sd...), xb.BroadcastTo(xb.Reshape(w, B, hkv, 1, Dv), sd...)))
		q4 := xb.Reshape(qs[t], B, hkv, g, Dk)
		o := xb.DotGeneral(q4, st, xb.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1}, LhsContracting: []int64{3}, RhsContracting: []int64{2}})
		o = xb.Mul(o, FullLike(o, scale))
		outs[t] = xb.Reshape(o, B, 1, hq*Dv)
	}
	c.Set(0, xb.Convert(xb.Concatenate(1, outs...), dt))
	c.Set(1, xb.Convert(st, dt))
	return nil
}
