package ops

import (
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// ONNX Runtime's fused BERT and GPT-2 layers (com.microsoft), which its
// transformer optimizer (onnxruntime.transformers, Optimum's "O2" and
// above) writes: Attention, the whole self-attention block from the
// input through the packed Q, K, V projection to the heads' concatenated
// outputs, and EmbedLayerNormalization, the embeddings' lookups, sum and
// layer norm. Both lower to the standard ops (gathers, dots, softmax), so
// the compiler fuses them as it does an unfused export. The masks follow
// ONNX Runtime's CPU kernels: a masked position gets mask_filter_value
// (-10000) added to its score, not -∞, and the causal mask of a
// unidirectional layer adds it again.

func init() {
	msRegister(
		Op{Name: "Attention", Lower: lowerMSAttention},
		Op{Name: "EmbedLayerNormalization", Lower: lowerEmbedLayerNorm},
		Op{Name: "RotaryEmbedding", Lower: lowerRotaryEmbedding},
		Op{Name: "MultiHeadAttention", Lower: lowerMultiHeadAttention},
	)
}

// lowerMSAttention: inputs input [B, S, Hin], weights [Hin, Dq+Dk+Dv],
// bias [Dq+Dk+Dv] (optional), mask_index (int32, optional: [B] valid
// lengths, [2B] ends then starts, [B, T] or [B, S, T] 1/0), past
// [2, B, N, P, Dk/N] (optional), attention_bias [B or 1, N, S, T]
// (optional); attributes num_heads, qkv_hidden_sizes, unidirectional,
// scale, mask_filter_value. Outputs output [B, S, Dv] and present
// [2, B, N, P+S, Dk/N].
func lowerMSAttention(c *Ctx) error {
	x, w := c.Input(0), c.Input(1)
	if x == nil || w == nil {
		return c.Errorf("Attention needs input and weights")
	}
	if x.Rank() != 3 || w.Rank() != 2 || x.Dims()[2] != w.Dims()[0] {
		return c.Errorf("input %v and weights %v are not [B, S, H] and [H, 3·hidden]", x.Dims(), w.Dims())
	}
	if !x.DType().IsFloat() || w.DType() != x.DType() {
		return c.Unsupported("input %s and weights %s", x.DType(), w.DType())
	}
	n := c.Node.Int("num_heads", 0)
	if n <= 0 {
		return c.Errorf("num_heads %d", n)
	}
	if c.Node.Int("do_rotary", 0) != 0 || c.Node.Int("past_present_share_buffer", 0) != 0 || c.Has(6) {
		return c.Unsupported("rotary embeddings or a shared past buffer")
	}
	sizes := c.Node.Ints("qkv_hidden_sizes")
	if len(sizes) == 0 {
		h := w.Dims()[1] / 3
		sizes = []int64{h, h, h}
	}
	if len(sizes) != 3 || sizes[0] != sizes[1] || sizes[0]+sizes[1]+sizes[2] != w.Dims()[1] ||
		sizes[0]%n != 0 || sizes[2]%n != 0 {
		return c.Errorf("qkv_hidden_sizes %v do not split weights %v into %d heads", sizes, w.Dims(), n)
	}
	t := x.DType()
	u, back := elemUp(x)
	wu, _ := elemUp(w)
	bsz, s := x.Dims()[0], x.Dims()[1]
	proj := xb.DotGeneral(u, wu, xb.DotDims{LhsContracting: []int64{2}, RhsContracting: []int64{0}}) // [B, S, D]
	if bias := c.Input(2); bias != nil {
		bu, _ := elemUp(bias)
		var bb *xb.Op
		proj, bb = Broadcast2(c.B, proj, bu)
		proj = xb.Add(proj, bb)
	}
	// heads splits columns [lo, lo+d) of the projection into [B, N, S, d/N].
	heads := func(lo, d int64) *xb.Op {
		p := xb.SliceAxis(proj, 2, lo, lo+d)
		return xb.Transpose(xb.Reshape(p, bsz, s, n, d/n), 0, 2, 1, 3)
	}
	q, k, v := heads(0, sizes[0]), heads(sizes[0], sizes[1]), heads(sizes[0]+sizes[1], sizes[2])
	hk := sizes[0] / n
	past := int64(0)
	if p := c.Input(4); p != nil {
		pd := p.Dims()
		if len(pd) != 5 || pd[0] != 2 || pd[1] != bsz || pd[2] != n || pd[4] != hk || sizes[2] != sizes[1] {
			return c.Errorf("past %v is not [2, %d, %d, P, %d]", pd, bsz, n, hk)
		}
		pu, _ := elemUp(p)
		past = pd[3]
		k = xb.Concatenate(2, xb.Reshape(xb.SliceAxis(pu, 0, 0, 1), bsz, n, past, hk), k)
		v = xb.Concatenate(2, xb.Reshape(xb.SliceAxis(pu, 0, 1, 2), bsz, n, past, hk), v)
	}
	out, err := msAttend(c, q, k, v, past, 3, 5)
	if err != nil {
		return err
	}
	c.Set(0, back(xb.Reshape(xb.Transpose(out, 0, 2, 1, 3), bsz, s, sizes[2])))
	if sizes[2] == sizes[1] {
		total := past + s
		present := xb.Concatenate(0, xb.Reshape(k, 1, bsz, n, total, hk), xb.Reshape(v, 1, bsz, n, total, hk))
		if present.DType() != t {
			present = xb.Convert(present, t)
		}
		c.Set(1, present)
	}
	return nil
}

// msAttend is the attention of heads q [B, N, S, h] over k [B, N, T, h]
// and v [B, N, T, hv] (T = past + the new positions), in f32: softmax of
// q·kᵀ·scale plus the mask (input maskAt) and the attention bias (input
// biasAt), times v: [B, N, S, hv].
func msAttend(c *Ctx, q, k, v *xb.Op, past int64, maskAt, biasAt int) (*xb.Op, error) {
	bsz, s, total := q.Dims()[0], q.Dims()[2], k.Dims()[2]
	scale := float64(c.Node.Float("scale", 0))
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(q.Dims()[3]))
	}
	scores := xb.DotGeneral(q, k, xb.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1},
		LhsContracting: []int64{3}, RhsContracting: []int64{3}}) // [B, N, S, T]
	scores = xb.Mul(scores, ScalarLike(scores, scale))
	mask, err := msAttentionMask(c, maskAt, bsz, s, past, total, float64(c.Node.Float("mask_filter_value", -10000)), scores.DType())
	if err != nil {
		return nil, err
	}
	if mask != nil {
		scores = xb.Add(scores, xb.BroadcastInDim(mask, scores.Dims(), 0, 2, 3))
	}
	if ab := c.Input(biasAt); ab != nil {
		abu, _ := elemUp(ab)
		if _, ok := BroadcastDims(abu.Dims(), scores.Dims()); !ok {
			return nil, c.Errorf("attention bias %v does not broadcast to the scores %v", ab.Dims(), scores.Dims())
		}
		scores = xb.Add(scores, xb.BroadcastTo(abu, scores.Dims()...))
	}
	return xb.DotGeneral(msSoftmaxLast(scores), v, xb.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1},
		LhsContracting: []int64{3}, RhsContracting: []int64{2}}), nil
}

// msAttentionMask is the additive mask [B, S, T] of the mask input at i
// (Attention's mask_index, MultiHeadAttention's key_padding_mask) and the
// unidirectional attribute (nil: none), in type dt; the S queries sit at
// positions past.. of the T keys.
func msAttentionMask(c *Ctx, i int, bsz, s, past, total int64, filter float64, dt hlo.DType) (*xb.Op, error) {
	dims := []int64{bsz, s, total}
	var mask *xb.Op
	if m := c.Input(i); m != nil {
		if m.DType() != hlo.S32 {
			return nil, c.Errorf("mask_index has type %s, not int32", m.DType())
		}
		col := c.B.Iota(hlo.S32, 2, dims...) // key position
		keep := func(ok *xb.Op) *xb.Op {
			return xb.Select(ok, xb.BroadcastTo(c.B.ScalarOf(dt, 0), dims...), xb.BroadcastTo(c.B.ScalarOf(dt, filter), dims...))
		}
		md := m.Dims()
		switch {
		case len(md) == 1 && md[0] == bsz: // valid lengths (right padding)
			end := xb.BroadcastInDim(m, dims, 0)
			mask = keep(xb.Lt(col, end))
		case len(md) == 1 && md[0] == 2*bsz: // exclusive ends, then inclusive starts
			end := xb.BroadcastInDim(xb.SliceAxis(m, 0, 0, bsz), dims, 0)
			start := xb.BroadcastInDim(xb.SliceAxis(m, 0, bsz, 2*bsz), dims, 0)
			mask = keep(xb.And(xb.Lt(col, end), xb.Ge(col, start)))
		case len(md) == 2 && md[0] == bsz && md[1] == total: // 1 keep, 0 mask
			mask = keep(xb.Gt(xb.BroadcastInDim(m, dims, 0, 2), xb.BroadcastTo(c.B.ScalarOf(hlo.S32, 0), dims...)))
		case len(md) == 3 && md[0] == bsz && md[1] == s && md[2] == total:
			mask = keep(xb.Gt(m, xb.BroadcastTo(c.B.ScalarOf(hlo.S32, 0), dims...)))
		default:
			return nil, c.Unsupported("mask_index of shape %v (batch %d, sequence %d, total %d)", md, bsz, s, total)
		}
	}
	if c.Node.Int("unidirectional", 0) != 0 {
		row := xb.Add(c.B.Iota(hlo.S32, 1, dims...), xb.BroadcastTo(c.B.ScalarOf(hlo.S32, float64(past)), dims...))
		col := c.B.Iota(hlo.S32, 2, dims...)
		causal := xb.Select(xb.Gt(col, row), xb.BroadcastTo(c.B.ScalarOf(dt, filter), dims...), xb.BroadcastTo(c.B.ScalarOf(dt, 0), dims...))
		if mask == nil {
			mask = causal
		} else {
			mask = xb.Add(mask, causal)
		}
	}
	return mask, nil
}

// msSoftmaxLast is the softmax over the last axis (max subtracted).
func msSoftmaxLast(x *xb.Op) *xb.Op {
	r := int64(x.Rank())
	axes := []int64{r - 1}
	m := rdBack(xb.ReduceMax(x, axes...), x.Dims(), axes)
	e := xb.Exp(xb.Sub(x, m))
	return xb.Div(e, rdBack(rdSum(e, axes...), x.Dims(), axes))
}

// lowerEmbedLayerNorm: inputs input_ids [B, S], segment_ids, word,
// position and segment embeddings, gamma, beta, mask [B, S], position_ids
// ([B, S] or [1, S]; else 0..S-1); epsilon (1e-12). Outputs the layer
// norm of the embeddings' sum, mask_index (the mask's per-row sum; 0
// without one) and the sum itself.
func lowerEmbedLayerNorm(c *Ctx) error {
	ids, word, pos, gamma, beta := c.Input(0), c.Input(2), c.Input(3), c.Input(5), c.Input(6)
	if ids == nil || word == nil || pos == nil || gamma == nil || beta == nil {
		return c.Errorf("EmbedLayerNormalization needs input_ids, word_embedding, position_embedding, gamma and beta")
	}
	if ids.Rank() != 2 || word.Rank() != 2 || pos.Rank() != 2 || word.Dims()[1] != pos.Dims()[1] {
		return c.Errorf("input_ids %v, word_embedding %v, position_embedding %v", ids.Dims(), word.Dims(), pos.Dims())
	}
	if !word.DType().IsFloat() {
		return c.Unsupported("embeddings of %s", word.DType())
	}
	bsz, s := ids.Dims()[0], ids.Dims()[1]
	sum := xb.Take(word, idxWrapN(ids, word.Dims()[0]), 0) // [B, S, H]
	var pids *xb.Op
	if p := c.Input(8); p != nil {
		pids = xb.BroadcastTo(p, bsz, s)
		if p.Rank() == 2 && p.Dims()[0] == 1 {
			pids = xb.BroadcastInDim(xb.Reshape(p, s), []int64{bsz, s}, 1)
		}
	} else {
		pids = c.B.Iota(ids.DType(), 1, bsz, s)
	}
	sum = xb.Add(sum, xb.Take(pos, idxWrapN(pids, pos.Dims()[0]), 0))
	if seg, segIDs := c.Input(4), c.Input(1); seg != nil && segIDs != nil {
		sum = xb.Add(sum, xb.Take(seg, idxWrapN(segIDs, seg.Dims()[0]), 0))
	}
	w, err := nmStash(c, sum.DType())
	if err != nil {
		return err
	}
	dims := sum.Dims()
	axes := []int64{2}
	n := &nmTrailing{t: sum.DType(), w: w, dims: dims, axes: axes,
		eps: float64(c.Node.Float("epsilon", 1e-12)), xs: xb.Convert(sum, w)}
	mean, variance := nmMeanVar(n.xs, axes)
	inv := xb.Rsqrt(xb.Add(variance, ScalarLike(variance, n.eps)))
	y := xb.Mul(xb.Sub(n.xs, rdBack(mean, dims, axes)), rdBack(inv, dims, axes))
	y = xb.Add(xb.Mul(y, xb.BroadcastInDim(xb.Convert(gamma, w), dims, 2)), xb.BroadcastInDim(xb.Convert(beta, w), dims, 2))
	c.Set(0, xb.Convert(y, n.t))
	if m := c.Input(7); m != nil {
		c.Set(1, xb.Convert(rdSum(xb.Convert(m, hlo.S32), 1), hlo.S32))
	} else {
		c.Set(1, xb.BroadcastTo(c.B.ScalarOf(hlo.S32, 0), bsz))
	}
	c.Set(2, sum)
	return nil
}

// lowerRotaryEmbedding: inputs input ([B, S, N·H] or [B, N, S, H]),
// position_ids (int64 [B, S], or [1]: the first position, the others
// following), cos_cache and sin_cache [max positions, R/2]; attributes
// interleaved, rotary_embedding_dim R (0: the head size), num_heads (for
// a 3-D input with a partial rotation). The first R dimensions of each
// head rotate in pairs, (i, i+R/2) or with interleaved (2i, 2i+1):
// (a·cos − b·sin, b·cos + a·sin); the rest pass through.
func lowerRotaryEmbedding(c *Ctx) error {
	x, pos, cosC, sinC := c.Input(0), c.Input(1), c.Input(2), c.Input(3)
	if x == nil || pos == nil || cosC == nil || sinC == nil {
		return c.Errorf("RotaryEmbedding needs input, position_ids, cos_cache and sin_cache")
	}
	if !x.DType().IsFloat() || cosC.DType() != x.DType() || sinC.DType() != x.DType() {
		return c.Unsupported("input %s, caches %s and %s", x.DType(), cosC.DType(), sinC.DType())
	}
	if c.Node.Int("is_packed_batching", 0) != 0 || c.Node.Float("scale", 1) != 1 {
		return c.Unsupported("packed batching or a custom scale")
	}
	if cosC.Rank() != 2 || !slices.Equal(cosC.Dims(), sinC.Dims()) {
		return c.Errorf("cos_cache %v and sin_cache %v are not one [max positions, R/2] shape", cosC.Dims(), sinC.Dims())
	}
	half := cosC.Dims()[1]
	rot := c.Node.Int("rotary_embedding_dim", 0)
	d := x.Dims()
	var bsz, s, n, h int64
	switch x.Rank() {
	case 4:
		bsz, n, s, h = d[0], d[1], d[2], d[3]
	case 3:
		bsz, s = d[0], d[1]
		n = c.Node.Int("num_heads", 0)
		if n <= 0 {
			if rot != 0 {
				return c.Errorf("a 3-D input with rotary_embedding_dim needs num_heads")
			}
			h = 2 * half
			n = d[2] / max(h, 1)
		} else {
			h = d[2] / n
		}
		if n*h != d[2] {
			return c.Errorf("hidden size %d is not num_heads × head size", d[2])
		}
	default:
		return c.Errorf("input %v is neither 3-D nor 4-D", d)
	}
	if rot == 0 {
		rot = h
	}
	if rot != 2*half || rot > h || rot%2 != 0 {
		return c.Errorf("rotary dimension %d does not fit head size %d and caches of %d", rot, h, half)
	}
	var pids *xb.Op
	switch {
	case pos.Rank() == 2 && pos.Dims()[0] == bsz && pos.Dims()[1] == s:
		pids = xb.Convert(pos, hlo.S64)
	case numElems(pos.Dims()) == 1:
		pids = xb.Add(c.B.Iota(hlo.S64, 1, bsz, s), xb.BroadcastTo(xb.Reshape(xb.Convert(pos, hlo.S64)), bsz, s))
	default:
		return c.Errorf("position_ids %v is neither [1] nor [%d, %d]", pos.Dims(), bsz, s)
	}
	u, back := elemUp(x)
	cu, _ := elemUp(cosC)
	su, _ := elemUp(sinC)
	pids = idxWrapN(pids, cosC.Dims()[0])
	// [B, S, R/2] → [B, N, S, R/2]
	spread := func(t *xb.Op) *xb.Op {
		return xb.BroadcastInDim(xb.Take(t, pids, 0), []int64{bsz, n, s, half}, 0, 2, 3)
	}
	cs, sn := spread(cu), spread(su)
	y := u
	if x.Rank() == 3 {
		y = xb.Transpose(xb.Reshape(u, bsz, s, n, h), 0, 2, 1, 3)
	}
	r := xb.SliceAxis(y, 3, 0, rot)
	var a, b *xb.Op
	if c.Node.Int("interleaved", 0) != 0 {
		pairs := xb.Reshape(r, bsz, n, s, half, 2)
		a = xb.Reshape(xb.SliceAxis(pairs, 4, 0, 1), bsz, n, s, half)
		b = xb.Reshape(xb.SliceAxis(pairs, 4, 1, 2), bsz, n, s, half)
	} else {
		a, b = xb.SliceAxis(r, 3, 0, half), xb.SliceAxis(r, 3, half, rot)
	}
	ra := xb.Sub(xb.Mul(a, cs), xb.Mul(b, sn))
	rb := xb.Add(xb.Mul(b, cs), xb.Mul(a, sn))
	if c.Node.Int("interleaved", 0) != 0 {
		r = xb.Reshape(xb.Concatenate(4, xb.Reshape(ra, bsz, n, s, half, 1), xb.Reshape(rb, bsz, n, s, half, 1)), bsz, n, s, rot)
	} else {
		r = xb.Concatenate(3, ra, rb)
	}
	if rot < h {
		r = xb.Concatenate(3, r, xb.SliceAxis(y, 3, rot, h))
	}
	if x.Rank() == 3 {
		r = xb.Reshape(xb.Transpose(r, 0, 2, 1, 3), bsz, s, n*h)
	}
	c.Set(0, back(r))
	return nil
}

// lowerMultiHeadAttention: inputs query [B, S, D], key and value
// ([B, L, D] and [B, L, Dv], or [B, N, L, h] heads already split, as a
// cross-attention cache), bias [D+D+Dv] (for 3-D key and value),
// key_padding_mask (the mask_index forms of Attention), attention_bias,
// past_key and past_value [B, N, P, h]; attributes num_heads, scale,
// mask_filter_value, unidirectional. Outputs output [B, S, Dv],
// present_key and present_value [B, N, P+L, h]. Packed Q, K, V are not
// read.
func lowerMultiHeadAttention(c *Ctx) error {
	q, k, v := c.Input(0), c.Input(1), c.Input(2)
	if q == nil || k == nil || v == nil {
		return c.Unsupported("packed query, key and value")
	}
	if q.Rank() != 3 || !q.DType().IsFloat() || k.DType() != q.DType() || v.DType() != q.DType() {
		return c.Errorf("query %v (%s), key %v and value %v", q.Dims(), q.DType(), k.Dims(), v.Dims())
	}
	n := c.Node.Int("num_heads", 0)
	if n <= 0 || q.Dims()[2]%n != 0 {
		return c.Errorf("num_heads %d does not divide the query's hidden size %d", n, q.Dims()[2])
	}
	if c.Has(8) || c.Has(9) {
		return c.Unsupported("past_sequence_length or cache_indirection")
	}
	bsz, s, d := q.Dims()[0], q.Dims()[1], q.Dims()[2]
	u, back := elemUp(q)
	ku, _ := elemUp(k)
	vu, _ := elemUp(v)
	split := func(x *xb.Op) *xb.Op { // [B, L, D] → [B, N, L, D/N]
		xd := x.Dims()
		return xb.Transpose(xb.Reshape(x, xd[0], xd[1], n, xd[2]/n), 0, 2, 1, 3)
	}
	if k.Rank() != v.Rank() || k.Rank() != 3 && k.Rank() != 4 || k.Dims()[0] != bsz {
		return c.Errorf("key %v and value %v are neither [B, L, D] nor [B, N, L, h]", k.Dims(), v.Dims())
	}
	if bias := c.Input(3); bias != nil {
		dv := v.Dims()[v.Rank()-1]
		if k.Rank() == 3 {
			dv = v.Dims()[2]
		}
		if bias.Rank() != 1 || bias.Dims()[0] != 2*d+dv || k.Rank() == 4 {
			return c.Errorf("bias %v does not fit query %v, key %v and value %v", bias.Dims(), q.Dims(), k.Dims(), v.Dims())
		}
		bu, _ := elemUp(bias)
		u = xb.Add(u, xb.BroadcastInDim(xb.SliceAxis(bu, 0, 0, d), u.Dims(), 2))
		ku = xb.Add(ku, xb.BroadcastInDim(xb.SliceAxis(bu, 0, d, 2*d), ku.Dims(), 2))
		vu = xb.Add(vu, xb.BroadcastInDim(xb.SliceAxis(bu, 0, 2*d, 2*d+dv), vu.Dims(), 2))
	}
	qh := split(u)
	kh, vh := ku, vu
	if k.Rank() == 3 {
		if k.Dims()[2] != d || v.Dims()[1] != k.Dims()[1] || v.Dims()[2]%n != 0 {
			return c.Errorf("key %v and value %v do not fit query %v", k.Dims(), v.Dims(), q.Dims())
		}
		kh, vh = split(ku), split(vu)
	} else if k.Dims()[1] != n || k.Dims()[3] != d/n || v.Dims()[1] != n || v.Dims()[2] != k.Dims()[2] {
		return c.Errorf("key %v and value %v are not [B, %d, L, %d] heads", k.Dims(), v.Dims(), n, d/n)
	}
	past := int64(0)
	if pk, pv := c.Input(6), c.Input(7); pk != nil || pv != nil {
		if pk == nil || pv == nil || k.Rank() != 3 || pk.Rank() != 4 || pv.Rank() != 4 ||
			pk.Dims()[0] != bsz || pk.Dims()[1] != n || pk.Dims()[3] != kh.Dims()[3] ||
			!slices.Equal(pv.Dims()[:3], pk.Dims()[:3]) || pv.Dims()[3] != vh.Dims()[3] {
			return c.Errorf("past_key and past_value must both be [B, N, P, h] beside a 3-D key and value")
		}
		pku, _ := elemUp(pk)
		pvu, _ := elemUp(pv)
		past = pk.Dims()[2]
		kh, vh = xb.Concatenate(2, pku, kh), xb.Concatenate(2, pvu, vh)
	}
	out, err := msAttend(c, qh, kh, vh, past, 4, 5)
	if err != nil {
		return err
	}
	hv := vh.Dims()[3]
	c.Set(0, back(xb.Reshape(xb.Transpose(out, 0, 2, 1, 3), bsz, s, n*hv)))
	c.Set(1, back(kh))
	c.Set(2, back(vh))
	return nil
}
