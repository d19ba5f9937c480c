package ops

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Attention (opsets 23, 24) and RotaryEmbedding (23), and the preview
// FlexAttention. Scores are computed with a batched dot over (batch, kv
// head) so grouped-query attention needs no repeat of K and V.

func init() {
	Register(Op{Name: "Attention", Since: 23, Lower: lowerAttention})
	Register(Op{Name: "RotaryEmbedding", Since: 23, Lower: lowerRotary})
	Register(Op{Name: "FlexAttention", Domain: "ai.onnx.preview", Since: 1, Lower: lowerFlexAttention})
}

// attnCalcType is the type attention math runs in: f32 for narrow floats.
func attnCalcType(t hlo.DType) hlo.DType {
	if t == hlo.F64 {
		return t
	}
	return hlo.F32
}

// attnTo4D turns [B, S, H*D] into [B, H, S, D].
func attnTo4D(x *xb.Op, heads int64) *xb.Op {
	d := x.Dims()
	return xb.Transpose(xb.Reshape(x, d[0], d[1], heads, d[2]/heads), 0, 2, 1, 3)
}

// attnSoftmax is a softmax over the last axis whose rows that are
// entirely -inf give zeros instead of NaN.
func attnSoftmax(x *xb.Op) *xb.Op {
	d := x.Dims()
	last := int64(len(d) - 1)
	mapping := make([]int64, last)
	for i := range mapping {
		mapping[i] = int64(i)
	}
	m := xb.ReduceMax(x, last)
	m = xb.Select(xb.IsFinite(m), m, FullLike(m, 0))
	e := xb.Exp(xb.Sub(x, xb.BroadcastInDim(m, d, mapping...)))
	s := xb.ReduceSum(e, last)
	s = xb.Select(xb.Gt(s, FullLike(s, 0)), s, FullLike(s, 1))
	return xb.Div(e, xb.BroadcastInDim(s, d, mapping...))
}

// attnScores is Q·Kᵀ for Q [B, Hq, q, D] and K [B, Hkv, kv, D], Hq a
// multiple of Hkv: [B, Hq, q, kv].
func attnScores(q, k *xb.Op) *xb.Op {
	qd, kd := q.Dims(), k.Dims()
	g := qd[1] / kd[1]
	q5 := xb.Reshape(q, qd[0], kd[1], g, qd[2], qd[3])
	s := xb.DotGeneral(q5, k, xb.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1}, LhsContracting: []int64{4}, RhsContracting: []int64{3}})
	return xb.Reshape(s, qd[0], qd[1], qd[2], kd[2])
}

// attnApply is P·V for P [B, Hq, q, kv] and V [B, Hkv, kv, Dv].
func attnApply(p, v *xb.Op) *xb.Op {
	pd, vd := p.Dims(), v.Dims()
	g := pd[1] / vd[1]
	p5 := xb.Reshape(p, pd[0], vd[1], g, pd[2], pd[3])
	o := xb.DotGeneral(p5, v, xb.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1}, LhsContracting: []int64{4}, RhsContracting: []int64{2}})
	return xb.Reshape(o, pd[0], pd[1], pd[2], vd[3])
}

func lowerAttention(c *Ctx) error {
	q, k, v := c.Input(0), c.Input(1), c.Input(2)
	if q == nil || k == nil || v == nil {
		return c.Errorf("Q, K and V are required")
	}
	dt := q.DType()
	ct := attnCalcType(dt)
	rank := q.Rank()
	if rank != 3 && rank != 4 {
		return c.Unsupported("rank-%d Q", rank)
	}
	if rank == 3 {
		hq, hkv := c.Node.Int("q_num_heads", 0), c.Node.Int("kv_num_heads", 0)
		if hq <= 0 || hkv <= 0 {
			return c.Errorf("3-D inputs need q_num_heads and kv_num_heads")
		}
		q, k, v = attnTo4D(q, hq), attnTo4D(k, hkv), attnTo4D(v, hkv)
	}
	pastLen := int64(0)
	if c.Has(4) {
		pk := c.Input(4)
		pastLen = pk.Dims()[2]
		k = xb.Concatenate(2, pk, k)
	}
	if c.Has(5) {
		v = xb.Concatenate(2, c.Input(5), v)
	}
	presentK, presentV := k, v
	qd, kd := q.Dims(), k.Dims()
	B, Hq, S, D := qd[0], qd[1], qd[2], qd[3]
	Hkv, L := kd[1], kd[2]
	if Hkv == 0 || Hq%Hkv != 0 || v.Dims()[1] != Hkv {
		return c.Errorf("%d query heads and %d key/value heads", Hq, Hkv)
	}
	scale := 1 / math.Sqrt(float64(D))
	if c.Node.Has("scale") {
		scale = float64(c.Node.Float("scale", 0))
	}
	ss := math.Sqrt(scale)
	qc, kc, vc := xb.Convert(q, ct), xb.Convert(k, ct), xb.Convert(v, ct)
	qc = xb.Mul(qc, FullLike(qc, ss))
	kc = xb.Mul(kc, FullLike(kc, ss))
	full := []int64{B, Hq, S, L}
	scores := attnScores(qc, kc)
	if sc := float64(c.Node.Float("softcap", 0)); sc > 0 {
		scores = xb.Mul(xb.Tanh(xb.Div(scores, FullLike(scores, sc))), FullLike(scores, sc))
	}
	ninf := math.Inf(-1)
	var bias *xb.Op
	addBias := func(x *xb.Op) {
		x = xb.BroadcastTo(x, full...)
		if bias == nil {
			bias = x
		} else {
			bias = xb.Add(bias, x)
		}
	}
	if c.Has(3) {
		m := c.Input(3)
		md := m.Dims()
		if len(md) == 0 || len(md) > 4 {
			return c.Errorf("attn_mask of rank %d", len(md))
		}
		if pw := L - md[len(md)-1]; pw > 0 {
			cfg := make(hlo.PaddingConfig, len(md))
			cfg[len(md)-1].Hi = pw
			if m.DType() == hlo.Pred {
				m = xb.Pad(m, c.B.ScalarOf(hlo.Pred, 0), cfg)
			} else {
				m = xb.Pad(m, ScalarLike(m, ninf), cfg)
			}
		}
		if m.DType() == hlo.Pred {
			m = xb.Select(m, c.B.Full(ct, 0, m.Dims()...), c.B.Full(ct, ninf, m.Dims()...))
		} else {
			m = xb.Convert(m, ct)
		}
		addBias(m)
	}
	var nonpad *xb.Op
	if c.Has(6) {
		nonpad = xb.Convert(c.Input(6), hlo.S64)
		if len(nonpad.Dims()) != 1 {
			nonpad = xb.Reshape(nonpad, B)
		}
	}
	if c.Node.Int("is_causal", 0) != 0 {
		i := c.B.Iota(hlo.S64, 2, B, 1, S, L)
		j := c.B.Iota(hlo.S64, 3, B, 1, S, L)
		var lim *xb.Op
		if !c.Has(4) && nonpad != nil {
			off := xb.Sub(nonpad, FullLike(nonpad, float64(S)))
			lim = xb.Add(i, xb.BroadcastInDim(off, []int64{B, 1, S, L}, 0))
		} else {
			lim = xb.Add(i, FullLike(i, float64(pastLen)))
		}
		allowed := xb.Le(j, lim)
		addBias(xb.Select(allowed, c.B.Full(ct, 0, B, 1, S, L), c.B.Full(ct, ninf, B, 1, S, L)))
	}
	if nonpad != nil {
		j := c.B.Iota(hlo.S64, 3, B, 1, 1, L)
		ok := xb.Lt(j, xb.BroadcastInDim(nonpad, []int64{B, 1, 1, L}, 0))
		addBias(xb.Select(ok, c.B.Full(ct, 0, B, 1, 1, L), c.B.Full(ct, ninf, B, 1, 1, L)))
	}
	withBias := scores
	if bias != nil {
		withBias = xb.Add(scores, bias)
	}
	smIn := withBias
	if sp := c.Node.Int("softmax_precision", 0); sp != 0 {
		_ = sp // softmax runs in f32 or f64 already
	}
	p := attnSoftmax(smIn)
	out := attnApply(p, vc)
	if rank == 3 {
		od := out.Dims()
		out = xb.Reshape(xb.Transpose(out, 0, 2, 1, 3), od[0], od[2], od[1]*od[3])
	}
	c.Set(0, xb.Convert(out, dt))
	c.Set(1, presentK)
	c.Set(2, presentV)
	var qk *xb.Op
	switch c.Node.Int("qk_matmul_output_mode", 0) {
	case 0, 1:
		qk = scores
	case 2:
		qk = withBias
	case 3:
		qk = p
	default:
		return c.Unsupported("qk_matmul_output_mode %d", c.Node.Int("qk_matmul_output_mode", 0))
	}
	c.Set(3, xb.Convert(qk, dt))
	return nil
}

func lowerRotary(c *Ctx) error {
	x := c.Input(0)
	cosC, sinC := c.Input(1), c.Input(2)
	dt := x.DType()
	orig := x.Dims()
	var x4 *xb.Op // [B, S, H, D]
	switch len(orig) {
	case 4:
		x4 = xb.Transpose(x, 0, 2, 1, 3)
	case 3:
		h := c.Node.Int("num_heads", 0)
		if h <= 0 {
			return c.Errorf("3-D input needs num_heads")
		}
		x4 = xb.Reshape(x, orig[0], orig[1], h, orig[2]/h)
	default:
		return c.Errorf("rank-%d input", len(orig))
	}
	d := x4.Dims()
	B, S, H, D := d[0], d[1], d[2], d[3]
	rd := c.Node.Int("rotary_embedding_dim", 0)
	if rd == 0 {
		rd = D
	}
	if rd > D || rd%2 != 0 {
		return c.Errorf("rotary_embedding_dim %d for head size %d", rd, D)
	}
	half := rd / 2
	var cs, sn *xb.Op
	if c.Has(3) {
		pos := c.Input(3)
		cs, sn = xb.Take(cosC, pos, 0), xb.Take(sinC, pos, 0)
	} else {
		cs, sn = cosC, sinC
	}
	// [B, S, half] -> [B, S, 1, half] broadcast to [B, S, H, half].
	bd := []int64{B, S, H, half}
	bc := func(t *xb.Op) *xb.Op {
		td := t.Dims()
		if len(td) == 2 {
			t = xb.Reshape(t, 1, td[0], td[1])
		}
		td = t.Dims()
		if len(td) != 3 || td[2] != half {
			return nil
		}
		return xb.Convert(xb.BroadcastTo(xb.Reshape(t, td[0], td[1], 1, half), bd...), dt)
	}
	cs, sn = bc(cs), bc(sn)
	if cs == nil || sn == nil {
		return c.Errorf("cos/sin caches do not have %d columns", half)
	}
	rot := xb.SliceAxis(x4, 3, 0, rd)
	interleaved := c.Node.Int("interleaved", 0) != 0
	var x1, x2 *xb.Op
	if interleaved {
		r5 := xb.Reshape(rot, B, S, H, half, 2)
		x1 = xb.Reshape(xb.SliceAxis(r5, 4, 0, 1), bd...)
		x2 = xb.Reshape(xb.SliceAxis(r5, 4, 1, 2), bd...)
	} else {
		x1, x2 = xb.SliceAxis(rot, 3, 0, half), xb.SliceAxis(rot, 3, half, rd)
	}
	re := xb.Sub(xb.Mul(cs, x1), xb.Mul(sn, x2))
	im := xb.Add(xb.Mul(sn, x1), xb.Mul(cs, x2))
	if interleaved {
		e := append(append([]int64(nil), bd...), 1)
		rot = xb.Reshape(xb.Concatenate(4, xb.Reshape(re, e...), xb.Reshape(im, e...)), B, S, H, rd)
	} else {
		rot = xb.Concatenate(3, re, im)
	}
	if rd < D {
		rot = xb.Concatenate(3, rot, xb.SliceAxis(x4, 3, rd, D))
	}
	if len(orig) == 3 {
		c.Set(0, xb.Reshape(rot, orig...))
	} else {
		c.Set(0, xb.Transpose(rot, 0, 2, 1, 3))
	}
	return nil
}

// lowerFlexAttention: scaled Q·Kᵀ in f32, the score_mod subgraph on the
// scores [B, H, L, S], softmax, the prob_mod subgraph on the
// probabilities, then ·V. The subgraphs are inlined.
func lowerFlexAttention(c *Ctx) error {
	q, k, v := c.Input(0), c.Input(1), c.Input(2)
	if q == nil || k == nil || v == nil || q.Rank() != 4 || k.Rank() != 4 || v.Rank() != 4 {
		return c.Errorf("Q, K and V must be 4-D")
	}
	dt := q.DType()
	ct := attnCalcType(dt)
	qd, kd := q.Dims(), k.Dims()
	if kd[1] == 0 || qd[1]%kd[1] != 0 || v.Dims()[1] != kd[1] {
		return c.Errorf("%d query heads and %d key/value heads", qd[1], kd[1])
	}
	scale := 1 / math.Sqrt(float64(qd[3]))
	if c.Node.Has("scale") {
		scale = float64(c.Node.Float("scale", 0))
	}
	ss := math.Sqrt(scale)
	qc, kc, vc := xb.Convert(q, ct), xb.Convert(k, ct), xb.Convert(v, ct)
	qc = xb.Mul(qc, FullLike(qc, ss))
	kc = xb.Mul(kc, FullLike(kc, ss))
	scores := attnScores(qc, kc)
	mod := func(name string, x *xb.Op) (*xb.Op, error) {
		g, ok := c.Node.Graphs[name]
		if !ok || g == nil {
			return x, nil
		}
		if c.Sub == nil {
			return nil, c.Unsupported("%s subgraph cannot be lowered here", name)
		}
		if len(g.Inputs) != 1 || len(g.Outputs) != 1 {
			return nil, c.Errorf("%s must have one input and one output", name)
		}
		outs, err := c.Sub.LowerSubgraph(c.B, g, []*Val{FromOp(x)}, nil)
		if err != nil {
			return nil, err
		}
		y := outs[0].In(c.B)
		if y == nil {
			return nil, c.Errorf("%s output is not a tensor", name)
		}
		y = xb.BroadcastTo(xb.Convert(y, ct), x.Dims()...)
		return y, nil
	}
	scores, err := mod("score_mod", scores)
	if err != nil {
		return err
	}
	p := attnSoftmax(scores)
	p, err = mod("prob_mod", p)
	if err != nil {
		return err
	}
	c.Set(0, xb.Convert(attnApply(p, vc), dt))
	return nil
}
