package ops

import (
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
	"github.com/axle-ml/axle/xb"
)

// GroupQueryAttention (com.microsoft): the causal self-attention of the
// decoder LLMs onnxruntime-genai exports (Llama, Phi, Qwen, Mistral), with
// kv_num_heads key and value heads shared by num_heads query heads, a KV
// cache, and optionally the rotary embedding of query and key. As ONNX
// Runtime's CPU kernel: batch row b holds seqlens_k[b]+1 positions in
// all; in the first prompt (S = total_sequence_length) its past is empty,
// later its past is the first seqlens_k[b]+1−S positions of past_key and
// past_value; the new keys and values follow the past in present_key and
// present_value ([B, kv heads, max(total_sequence_length, past buffer),
// H]); query s, at position past+s, attends the valid positions up to its
// own (and within local_window_size), its scores times scale, capped by
// softcap, plus attention_bias; smooth_softmax and head_sink add one
// logit (0, or the head's sink) to each row's softmax denominator.
// total_sequence_length fixes the present buffers' shape, so it is read
// at compile time.

func init() {
	msRegister(Op{Name: "GroupQueryAttention", Lower: lowerGroupQueryAttention, ConstInputs: []int{6}})
}

func lowerGroupQueryAttention(c *Ctx) error {
	n, nkv := c.Node.Int("num_heads", 0), c.Node.Int("kv_num_heads", 0)
	if n <= 0 || nkv <= 0 || n%nkv != 0 {
		return c.Errorf("num_heads %d is not a multiple of kv_num_heads %d", n, nkv)
	}
	if c.Has(12) || c.Node.Int("qk_output", 0) != 0 {
		return c.Unsupported("the QK output")
	}
	q := c.Input(0)
	if q == nil || q.Rank() != 3 || !q.DType().IsFloat() {
		return c.Errorf("query must be [B, S, hidden] floats")
	}
	bsz, s := q.Dims()[0], q.Dims()[1]
	u, back := elemUp(q)
	var qh, kh, vh *xb.Op // [B, heads, S, H]
	heads := func(x *xb.Op, nh int64) *xb.Op {
		d := x.Dims()
		return xb.Transpose(xb.Reshape(x, d[0], d[1], nh, d[2]/nh), 0, 2, 1, 3)
	}
	if k, v := c.Input(1), c.Input(2); k != nil && v != nil {
		if k.DType() != q.DType() || v.DType() != q.DType() || k.Rank() != 3 || !slices.Equal(k.Dims(), v.Dims()) || k.Dims()[0] != bsz || k.Dims()[1] != s ||
			q.Dims()[2]%n != 0 || k.Dims()[2] != nkv*(q.Dims()[2]/n) {
			return c.Errorf("query %v, key %v and value %v do not fit %d and %d heads", q.Dims(), k.Dims(), v.Dims(), n, nkv)
		}
		ku, _ := elemUp(k)
		vu, _ := elemUp(v)
		qh, kh, vh = heads(u, n), heads(ku, nkv), heads(vu, nkv)
	} else {
		if k != nil || v != nil || q.Dims()[2]%(n+2*nkv) != 0 {
			return c.Errorf("packed query %v does not split into %d + 2×%d heads", q.Dims(), n, nkv)
		}
		h := q.Dims()[2] / (n + 2*nkv)
		qh = heads(xb.SliceAxis(u, 2, 0, n*h), n)
		kh = heads(xb.SliceAxis(u, 2, n*h, (n+nkv)*h), nkv)
		vh = heads(xb.SliceAxis(u, 2, (n+nkv)*h, (n+2*nkv)*h), nkv)
	}
	h := qh.Dims()[3]
	pk, pv := c.Input(3), c.Input(4)
	pbuf := int64(0)
	if pk != nil || pv != nil {
		if pk == nil || pv == nil || pk.Rank() != 4 || !slices.Equal(pk.Dims(), pv.Dims()) || pk.Dims()[0] != bsz || pk.Dims()[1] != nkv || pk.Dims()[3] != h {
			return c.Errorf("past_key and past_value must both be [%d, %d, P, %d]", bsz, nkv, h)
		}
		pbuf = pk.Dims()[2]
	}
	seqlens := c.Input(5)
	if seqlens == nil || seqlens.DType() != hlo.S32 || numElems(seqlens.Dims()) != bsz {
		return c.Errorf("seqlens_k must be int32 [%d]", bsz)
	}
	totals, err := c.ConstInts(6)
	if err != nil {
		return err
	}
	if len(totals) != 1 || totals[0] < s {
		return c.Errorf("total_sequence_length %v is not one value of at least the sequence length %d", totals, s)
	}
	total := totals[0]
	tp := max(total, pbuf) // the present buffers' length
	prompt := s == total
	// The positions: past[b] = seqlens_k[b]+1−S (0 in the first prompt),
	// valid[b] = seqlens_k[b]+1.
	valid := xb.Add(xb.Reshape(seqlens, bsz), xb.BroadcastTo(c.B.ScalarOf(hlo.S32, 1), bsz))
	past := xb.Sub(valid, xb.BroadcastTo(c.B.ScalarOf(hlo.S32, float64(s)), bsz))
	if prompt {
		past = xb.BroadcastTo(c.B.ScalarOf(hlo.S32, 0), bsz)
	}
	if c.Node.Int("do_rotary", 0) != 0 {
		pos := xb.Add(xb.Convert(c.B.Iota(hlo.S32, 1, bsz, s), hlo.S64), xb.Convert(xb.BroadcastInDim(past, []int64{bsz, s}, 0), hlo.S64))
		if qh, err = gqaRotary(c, qh, pos); err != nil {
			return err
		}
		if kh, err = gqaRotary(c, kh, pos); err != nil {
			return err
		}
	}
	presentK, presentV := gqaPresent(c, pk, kh, past, tp, prompt), gqaPresent(c, pv, vh, past, tp, prompt)
	// Each query head reads kv head n / (N / Nkv).
	group := n / nkv
	expand := func(x *xb.Op) *xb.Op { // [B, Nkv, T, H] → [B, N, T, H]
		d := x.Dims()
		e := xb.BroadcastInDim(x, []int64{d[0], d[1], group, d[2], d[3]}, 0, 1, 3, 4)
		return xb.Reshape(e, d[0], d[1]*group, d[2], d[3])
	}
	scale := float64(c.Node.Float("scale", 0))
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(h))
	}
	scores := xb.DotGeneral(qh, expand(presentK), xb.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1},
		LhsContracting: []int64{3}, RhsContracting: []int64{3}}) // [B, N, S, Tp]
	scores = xb.Mul(scores, ScalarLike(scores, scale))
	if cap := float64(c.Node.Float("softcap", 0)); cap > 0 {
		scores = xb.Mul(xb.Tanh(xb.Div(scores, ScalarLike(scores, cap))), ScalarLike(scores, cap))
	}
	if ab := c.Input(10); ab != nil {
		abu, _ := elemUp(ab)
		if _, ok := BroadcastDims(abu.Dims(), scores.Dims()); !ok {
			return c.Errorf("attention_bias %v does not broadcast to the scores %v", ab.Dims(), scores.Dims())
		}
		scores = xb.Add(scores, xb.BroadcastTo(abu, scores.Dims()...))
	}
	// key j of query s in row b: j < valid[b], j ≤ past[b]+s, and within the window.
	dims := []int64{bsz, s, tp}
	key := c.B.Iota(hlo.S32, 2, dims...)
	at := xb.Add(c.B.Iota(hlo.S32, 1, dims...), xb.BroadcastInDim(past, dims, 0))
	ok := xb.And(xb.Lt(key, xb.BroadcastInDim(valid, dims, 0)), xb.Le(key, at))
	if w := c.Node.Int("local_window_size", -1); w > 0 {
		ok = xb.And(ok, xb.Gt(key, xb.Sub(at, xb.BroadcastTo(c.B.ScalarOf(hlo.S32, float64(w)), dims...))))
	}
	okAll := xb.BroadcastInDim(ok, scores.Dims(), 0, 2, 3)
	scores = xb.Select(okAll, scores, xb.BroadcastTo(c.B.ScalarOf(scores.DType(), math.Inf(-1)), scores.Dims()...))
	probs, err := gqaSoftmax(c, scores)
	if err != nil {
		return err
	}
	out := xb.DotGeneral(probs, expand(presentV), xb.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1},
		LhsContracting: []int64{3}, RhsContracting: []int64{2}}) // [B, N, S, H]
	c.Set(0, back(xb.Reshape(xb.Transpose(out, 0, 2, 1, 3), bsz, s, n*h)))
	c.Set(1, back(presentK))
	c.Set(2, back(presentV))
	return nil
}

// gqaPresent is a present buffer [B, Nkv, tp, H]: row b's first past[b]
// positions from the past buffer (none in the first prompt), the new
// ones after them, zeros past those.
func gqaPresent(c *Ctx, pastBuf, fresh, past *xb.Op, tp int64, prompt bool) *xb.Op {
	d := fresh.Dims() // [B, Nkv, S, H]
	bsz, nkv, h := d[0], d[1], d[3]
	base := xb.BroadcastTo(c.B.ScalarOf(fresh.DType(), 0), bsz, nkv, tp, h)
	if pastBuf != nil && !prompt && pastBuf.Dims()[2] > 0 {
		pu, _ := elemUp(pastBuf)
		pl := pu.Dims()[2]
		if pl < tp {
			pu = xb.Concatenate(2, pu, xb.BroadcastTo(c.B.ScalarOf(pu.DType(), 0), bsz, nkv, tp-pl, h))
		}
		// Keep the past only below past[b]: the buffer beyond is stale.
		keep := xb.Lt(c.B.Iota(hlo.S32, 2, bsz, nkv, tp, h), xb.BroadcastInDim(past, []int64{bsz, nkv, tp, h}, 0))
		base = xb.Select(keep, pu, base)
	}
	zero := c.B.ScalarOf(hlo.S32, 0)
	rows := make([]*xb.Op, bsz)
	for b := range bsz {
		row := xb.SliceAxis(base, 0, b, b+1)
		at := xb.Reshape(xb.SliceAxis(past, 0, b, b+1))
		rows[b] = xb.DynamicUpdateSlice(row, xb.SliceAxis(fresh, 0, b, b+1), zero, zero, at, zero)
	}
	if bsz == 1 {
		return rows[0]
	}
	return xb.Concatenate(0, rows...)
}

// gqaRotary rotates heads x [B, heads, S, H] by the positions pos [B, S]
// with cos_cache and sin_cache (inputs 7 and 8), as RotaryEmbedding does.
func gqaRotary(c *Ctx, x, pos *xb.Op) (*xb.Op, error) {
	if !c.Has(7) || !c.Has(8) {
		return nil, c.Errorf("do_rotary needs cos_cache and sin_cache")
	}
	sc := *c
	sc.In, sc.Out = []*Val{FromOp(x), FromOp(pos), c.In[7], c.In[8]}, nil
	sc.Node = gqaRotaryNode(c)
	if err := lowerRotaryEmbedding(&sc); err != nil {
		return nil, err
	}
	return sc.Out[0].In(c.B), nil
}

// gqaRotaryNode is the RotaryEmbedding node GroupQueryAttention's rotation
// is: rotary_interleaved, over twice the caches' width.
func gqaRotaryNode(c *Ctx) *onnx.Node {
	attr := func(v int64) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Type: onnxpb.AttributeProto_INT.Enum(), I: &v}
	}
	return &onnx.Node{Name: c.Node.Name, Op: "RotaryEmbedding", Domain: msDomain, Attrs: map[string]*onnxpb.AttributeProto{
		"interleaved":          attr(c.Node.Int("rotary_interleaved", 0)),
		"rotary_embedding_dim": attr(2 * c.In[7].Dims()[1]),
	}}
}

// gqaSoftmax is the softmax over the keys of scores [B, N, S, T], with
// one more logit in each row's denominator where the node asks for it:
// 0 with smooth_softmax, head_sink[n] (input 11) for head n's rows.
func gqaSoftmax(c *Ctx, scores *xb.Op) (*xb.Op, error) {
	var extra *xb.Op // [B, N, S]
	d := scores.Dims()
	rows := d[:3]
	if sink := c.Input(11); sink != nil {
		if sink.Rank() != 1 || sink.Dims()[0] != d[1] {
			return nil, c.Errorf("head_sink %v is not [num_heads] = [%d]", sink.Dims(), d[1])
		}
		su, _ := elemUp(sink)
		extra = xb.BroadcastInDim(su, rows, 1)
	} else if c.Node.Int("smooth_softmax", 0) != 0 {
		extra = xb.BroadcastTo(c.B.ScalarOf(scores.DType(), 0), rows...)
	}
	if extra == nil {
		return msSoftmaxLast(scores), nil
	}
	axes := []int64{3}
	m := xb.Max(xb.ReduceMax(scores, axes...), extra)
	e := xb.Exp(xb.Sub(scores, rdBack(m, d, axes)))
	denom := xb.Add(rdSum(e, axes...), xb.Exp(xb.Sub(extra, m)))
	return xb.Div(e, rdBack(denom, d, axes)), nil
}
