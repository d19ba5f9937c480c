package ops

import (
	"math"

	"github.com/axle-ml/axle/hlo"
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

// linAttnSeq turns [B, S, H*D] (or [B, H, S, D]) into sequence-major
// [S, B, H, D].
func linAttnSeq(x *xb.Op, heads int64) *xb.Op {
	d := x.Dims()
	if len(d) == 4 {
		return xb.Transpose(x, 2, 0, 1, 3)
	}
	B, S, W := d[0], d[1], d[2]
	return xb.Transpose(xb.Reshape(x, B, S, heads, W/heads), 1, 0, 2, 3)
}

// linAttn is one LinearAttention configuration.
type linAttn struct {
	gated, delta       bool
	B, hq, hkv, dk, dv int64
	scale              float64
}

// step advances the state [B, Hkv, Dk, Dv] by one token (q [B, Hq, Dk],
// k [B, Hkv, Dk], v [B, Hkv, Dv], decay [B, Hkv, Dk or 1], beta [B, Hkv
// or 1, 1]) and returns it with the output [B, Hq·Dv].
func (a *linAttn) step(st, q, k, v, decay, beta *xb.Op) (*xb.Op, *xb.Op) {
	B, hkv, dk, dv := a.B, a.hkv, a.dk, a.dv
	sd := []int64{B, hkv, dk, dv}
	if a.gated {
		e := xb.Exp(decay)
		ed := e.Dims()
		st = xb.Mul(st, xb.BroadcastTo(xb.Reshape(e, ed[0], ed[1], ed[2], 1), sd...))
	}
	w := v
	if a.delta {
		r := xb.DotGeneral(st, k, xb.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1}, LhsContracting: []int64{2}, RhsContracting: []int64{2}})
		w = xb.Mul(xb.BroadcastTo(beta, B, hkv, dv), xb.Sub(v, r))
	}
	st = xb.Add(st, xb.Mul(xb.BroadcastTo(xb.Reshape(k, B, hkv, dk, 1), sd...), xb.BroadcastTo(xb.Reshape(w, B, hkv, 1, dv), sd...)))
	q4 := xb.Reshape(q, B, hkv, a.hq/hkv, dk)
	o := xb.DotGeneral(q4, st, xb.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1}, LhsContracting: []int64{3}, RhsContracting: []int64{2}})
	o = xb.Mul(o, FullLike(o, a.scale))
	return st, xb.Reshape(o, B, a.hq*dv)
}

// linAttnUnroll is the sequence length up to which the recurrence is
// unrolled; longer ones run in a while loop.
const linAttnUnroll = 16

// lowerLinearAttention runs the recurrence of LinearAttention over the
// (static) sequence: the state [B, Hkv, Dk, Dv] is decayed (gated rules),
// written with k⊗v or the delta rule's k⊗β(v - Sᵀk), and read by q.
func lowerLinearAttention(c *Ctx) error {
	q, k, v := c.Input(0), c.Input(1), c.Input(2)
	dt := q.DType()
	ct := attnCalcType(dt)
	hq, hkv := c.Node.Int("q_num_heads", 0), c.Node.Int("kv_num_heads", 0)
	if q.Rank() == 4 {
		hq, hkv = q.Dims()[1], k.Dims()[1]
	}
	if hq <= 0 || hkv <= 0 || hq%hkv != 0 || q.Rank() != k.Rank() || q.Rank() < 3 || q.Rank() > 4 {
		return c.Errorf("q_num_heads %d and kv_num_heads %d", hq, hkv)
	}
	rule := c.Node.Str("update_rule", "gated_delta")
	a := &linAttn{hq: hq, hkv: hkv}
	a.gated = rule == "gated" || rule == "gated_delta"
	a.delta = rule == "delta" || rule == "gated_delta"
	if !a.gated && !a.delta && rule != "linear" {
		return c.Unsupported("update_rule %q", rule)
	}
	conv := func(x *xb.Op) *xb.Op { return xb.Convert(x, ct) }
	qs, ks, vs := linAttnSeq(conv(q), hq), linAttnSeq(conv(k), hkv), linAttnSeq(conv(v), hkv)
	qd, vd := qs.Dims(), vs.Dims()
	S := qd[0]
	if ks.Dims()[0] != S || vd[0] != S || S == 0 {
		return c.Unsupported("sequence lengths")
	}
	a.B, a.dk, a.dv = qd[1], qd[3], vd[3]
	seqs := []*xb.Op{qs, ks, vs, nil, nil}
	if a.gated {
		if !c.Has(4) {
			return c.Errorf("update rule %q needs decay", rule)
		}
		// [B, S, Hkv·Dk], or per head [B, S, Hkv].
		seqs[3] = linAttnSeq(conv(c.Input(4)), hkv)
	}
	if a.delta {
		if !c.Has(5) {
			return c.Errorf("update rule %q needs beta", rule)
		}
		bd := c.Input(5).Dims()
		seqs[4] = linAttnSeq(conv(c.Input(5)), bd[len(bd)-1])
	}
	a.scale = 1 / math.Sqrt(float64(a.dk))
	if c.Node.Has("scale") {
		a.scale = float64(c.Node.Float("scale", 0))
	}
	var st *xb.Op
	if c.Has(3) {
		st = conv(c.Input(3))
	} else {
		st = c.B.Zeros(ct, a.B, hkv, a.dk, a.dv)
	}
	at := func(x *xb.Op, t int64) *xb.Op {
		if x == nil {
			return nil
		}
		d := x.Dims()
		return xb.Reshape(xb.SliceAxis(x, 0, t, t+1), d[1:]...)
	}
	var out *xb.Op // [S, B, Hq·Dv]
	if S <= linAttnUnroll {
		outs := make([]*xb.Op, S)
		for t := range S {
			var o *xb.Op
			st, o = a.step(st, at(qs, t), at(ks, t), at(vs, t), at(seqs[3], t), at(seqs[4], t))
			outs[t] = xb.Reshape(o, 1, a.B, hq*a.dv)
		}
		out = xb.Concatenate(0, outs...)
	} else {
		st, out = a.loop(c.B, st, seqs)
	}
	c.Set(0, xb.Convert(xb.Transpose(out, 1, 0, 2), dt))
	c.Set(1, xb.Convert(st, dt))
	return nil
}

// loop runs the recurrence in a while loop over the sequence-major
// inputs seqs (q, k, v, decay or nil, beta or nil).
func (a *linAttn) loop(b *xb.Builder, st *xb.Op, seqs []*xb.Op) (*xb.Op, *xb.Op) {
	S := seqs[0].Dims()[0]
	ct := st.DType()
	// State: t, state, outputs, then the present inputs.
	init := []*xb.Op{b.ScalarOf(hlo.S32, 0), st, b.Zeros(ct, S, a.B, a.hq*a.dv)}
	var present []int
	for i, x := range seqs {
		if x != nil {
			present = append(present, i)
			init = append(init, x)
		}
	}
	res := xb.While(b.Tuple(init...), func(sb *xb.Builder, p *xb.Op) *xb.Op {
		return xb.Lt(xb.GetTupleElement(p, 0), sb.ScalarOf(hlo.S32, float64(S)))
	}, func(sb *xb.Builder, p *xb.Op) *xb.Op {
		t := xb.GetTupleElement(p, 0)
		zero := sb.ScalarOf(hlo.S32, 0)
		cur := make([]*xb.Op, len(seqs))
		rest := make([]*xb.Op, 0, len(present))
		for j, i := range present {
			x := xb.GetTupleElement(p, 3+j)
			rest = append(rest, x)
			d := x.Dims()
			starts := []*xb.Op{t}
			for range d[1:] {
				starts = append(starts, zero)
			}
			sizes := append([]int64{1}, d[1:]...)
			cur[i] = xb.Reshape(xb.DynamicSlice(x, starts, sizes...), d[1:]...)
		}
		s2, o := a.step(xb.GetTupleElement(p, 1), cur[0], cur[1], cur[2], cur[3], cur[4])
		outs := xb.DynamicUpdateSlice(xb.GetTupleElement(p, 2), xb.Reshape(o, 1, a.B, a.hq*a.dv), t, zero, zero)
		next := append([]*xb.Op{xb.Add(t, sb.ScalarOf(hlo.S32, 1)), s2, outs}, rest...)
		return sb.Tuple(next...)
	})
	return xb.GetTupleElement(res, 1), xb.GetTupleElement(res, 2)
}
