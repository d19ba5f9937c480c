package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

func init() {
	Register(Op{Name: "MatMul", Lower: lowerMatMul})
	Register(Op{Name: "Gemm", Lower: lowerGemm})
	Register(Op{Name: "MatMulInteger", Since: 10, Lower: lowerMatMulInteger})
	Register(Op{Name: "QLinearMatMul", Since: 10, Lower: lowerQLinearMatMul})
}

func lowerMatMul(c *Ctx) error {
	a, b := c.Input(0), c.Input(1)
	if a == nil || b == nil {
		return c.Errorf("MatMul needs two inputs")
	}
	if a.DType() != b.DType() {
		return c.Errorf("MatMul operands have types %s and %s", a.DType(), b.DType())
	}
	y, err := mmNumpy(c, a, b)
	if err != nil {
		return err
	}
	c.Set(0, y)
	return nil
}

// mmWiden reports whether Gemm of t computes A*B, alpha and C in float32
// and rounds to t once: float16 and bfloat16, as ONNX Runtime's CPU kernel
// does (bit for bit on float16 models); rounding A*B to t before adding C
// is one more rounding, an ulp off in about one element in five.
func mmWiden(t hlo.DType) bool { return t == hlo.F16 || t == hlo.BF16 }

// mmNumpy is numpy's matmul of a and b (same element type): 1-D operands
// are promoted to matrices and the promoted dimension removed again; the
// batch dimensions broadcast. It emits one DotGeneral, in the forms the
// CPU backend runs as a GEMM: when b has no batch, a's batch folds into
// its rows; otherwise the batch dimensions are the dot's, the operand with
// the smaller batch broadcast to the full one (only when they differ).
func mmNumpy(c *Ctx, a, b *xb.Op) (*xb.Op, error) {
	ad, bd := a.Dims(), b.Dims()
	if len(ad) == 0 || len(bd) == 0 {
		return nil, c.Errorf("MatMul operands must not be scalars (got %v and %v)", ad, bd)
	}
	aVec, bVec := len(ad) == 1, len(bd) == 1
	if aVec {
		ad = []int64{1, ad[0]}
	}
	if bVec {
		bd = []int64{bd[0], 1}
	}
	m, k := ad[len(ad)-2], ad[len(ad)-1]
	k2, n := bd[len(bd)-2], bd[len(bd)-1]
	if k != k2 {
		return nil, c.Errorf("MatMul inner dimensions differ: %v and %v", a.Dims(), b.Dims())
	}
	aB, bB := ad[:len(ad)-2], bd[:len(bd)-2]
	nb := max(len(aB), len(bB))
	pad := func(d []int64) []int64 {
		out := make([]int64, nb)
		for i := range out {
			out[i] = 1
		}
		copy(out[nb-len(d):], d)
		return out
	}
	aB, bB = pad(aB), pad(bB)
	outB, ok := BroadcastDims(aB, bB)
	if !ok {
		return nil, c.Errorf("MatMul batch dimensions do not broadcast: %v and %v", a.Dims(), b.Dims())
	}
	out := append([]int64(nil), outB...)
	if !aVec {
		out = append(out, m)
	}
	if !bVec {
		out = append(out, n)
	}
	if len(bd) == 2 && !aVec && !bVec && len(ad) > 2 {
		// A dense layer over a batch of rows: one plain matrix product
		// whose rows are a's batch dimensions and its rows, as they lie
		// (the GEMM reads nesting free dimensions as one). No reshape
		// between the product and its reader, so a bias or activation
		// after it can fold into the GEMM as its epilogue.
		return xb.DotGeneral(a, b, xb.DotDims{
			LhsContracting: []int64{int64(len(ad) - 1)}, RhsContracting: []int64{0},
		}), nil
	}
	if numElems(bB) == 1 {
		// b has no batch (a dense layer): fold a's batch dimensions into
		// its rows, one plain matrix product.
		rows := m * numElems(aB)
		y := xb.DotGeneral(xb.Reshape(a, rows, k), xb.Reshape(b, k, n), xb.DotDims{
			LhsContracting: []int64{1}, RhsContracting: []int64{0},
		})
		return xb.Reshape(y, out...), nil
	}
	return mmBatched(a, b, aB, bB, outB, out, m, k, n), nil
}

// mmBatched is mmNumpy's product when both operands have batch
// dimensions (aB and bB, padded to outB's rank): every batch dimension
// is a batch dimension of the dot; an operand whose batch is smaller (a
// size 1 against the other's larger) is broadcast to the full batch.
// (The GEMM reads batch dimensions through strides, but free and
// contracting ones only when they nest, which a size-1 batch dimension
// kept as a free dimension of the other side would break.) The result is
// reshaped to out.
func mmBatched(a, b *xb.Op, aB, bB, outB, out []int64, m, k, n int64) *xb.Op {
	nb := len(outB)
	aFull := append(append([]int64(nil), outB...), m, k)
	bFull := append(append([]int64(nil), outB...), k, n)
	if ar := append(append([]int64(nil), aB...), m, k); !equalDims(a.Dims(), ar) {
		a = xb.Reshape(a, ar...)
	}
	if br := append(append([]int64(nil), bB...), k, n); !equalDims(b.Dims(), br) {
		b = xb.Reshape(b, br...)
	}
	if !equalDims(aB, outB) {
		a = xb.BroadcastTo(a, aFull...)
	}
	if !equalDims(bB, outB) {
		b = xb.BroadcastTo(b, bFull...)
	}
	batch := make([]int64, nb)
	for i := range batch {
		batch[i] = int64(i)
	}
	y := xb.DotGeneral(a, b, xb.DotDims{
		LhsContracting: []int64{int64(nb + 1)}, RhsContracting: []int64{int64(nb)},
		LhsBatch: batch, RhsBatch: batch,
	})
	if !equalDims(y.Dims(), out) {
		y = xb.Reshape(y, out...)
	}
	return y
}

func equalDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func lowerGemm(c *Ctx) error {
	a, b := c.Input(0), c.Input(1)
	if a == nil || b == nil {
		return c.Errorf("Gemm needs inputs A and B")
	}
	if a.Rank() != 2 || b.Rank() != 2 {
		return c.Errorf("Gemm operands must be matrices, got %v and %v", a.Dims(), b.Dims())
	}
	if a.DType() != b.DType() {
		return c.Errorf("Gemm operands have types %s and %s", a.DType(), b.DType())
	}
	transA, transB := c.Node.Int("transA", 0) != 0, c.Node.Int("transB", 0) != 0
	alpha, beta := float64(c.Node.Float("alpha", 1)), float64(c.Node.Float("beta", 1))
	ca, cb := int64(1), int64(0)
	m, k := a.Dims()[0], a.Dims()[1]
	if transA {
		ca = 0
		m, k = k, m
	}
	kb, n := b.Dims()[0], b.Dims()[1]
	if transB {
		cb = 1
		kb, n = n, kb
	}
	if k != kb {
		return c.Errorf("Gemm inner dimensions differ: A %v (transA %v), B %v (transB %v)", a.Dims(), transA, b.Dims(), transB)
	}
	t := a.DType()
	if mmWiden(t) { // in float32, rounded once (see mmWiden)
		a, b = xb.Convert(a, hlo.F32), xb.Convert(b, hlo.F32)
	}
	y := xb.DotGeneral(a, b, xb.DotDims{LhsContracting: []int64{ca}, RhsContracting: []int64{cb}})
	if alpha != 1 {
		y = xb.Mul(y, ScalarLike(y, alpha))
	}
	if cc := c.Input(2); cc != nil && beta != 0 {
		if cc.DType() != t {
			return c.Errorf("Gemm C has type %s, A %s", cc.DType(), t)
		}
		if cc.DType() != y.DType() {
			cc = xb.Convert(cc, y.DType())
		}
		// Before opset 7 the broadcast attribute allowed C to broadcast;
		// C that broadcasts is accepted whatever it says.
		if bd, ok := BroadcastDims(cc.Dims(), []int64{m, n}); !ok || cc.Rank() > 2 || !equalDims(bd, []int64{m, n}) {
			return c.Errorf("Gemm C of shape %v does not broadcast to [%d %d]", cc.Dims(), m, n)
		}
		if beta != 1 {
			cc = xb.Mul(cc, ScalarLike(cc, beta))
		}
		y = xb.Add(y, xb.BroadcastTo(cc, m, n))
	}
	if y.DType() != t {
		y = xb.Convert(y, t)
	}
	c.Set(0, y)
	return nil
}

// mmIntOperand converts an 8-bit operand to s32 and subtracts its zero
// point; zpAxis is the dimension (from the end) a 1-D zero point runs
// along: 2 for a's per-row zero point ([M] against [..., M, K]), 1 for
// b's per-column one ([N] against [..., K, N]).
func mmIntOperand(c *Ctx, x, zp *xb.Op, zpAxis int) (*xb.Op, error) {
	x = xb.Convert(x, hlo.S32)
	if zp == nil {
		return x, nil
	}
	z := xb.Convert(zp, hlo.S32)
	zd := z.Dims()
	switch {
	case numElems(zd) == 1:
		z = xb.Reshape(z)
		return xb.Sub(x, xb.BroadcastTo(z, x.Dims()...)), nil
	case len(zd) == 1 && x.Rank() >= zpAxis && zd[0] == x.Dims()[x.Rank()-zpAxis]:
		if zpAxis == 2 {
			z = xb.Reshape(z, zd[0], 1)
		}
	}
	if _, ok := BroadcastDims(z.Dims(), x.Dims()); !ok {
		return nil, c.Errorf("zero point of shape %v does not fit operand %v", zp.Dims(), x.Dims())
	}
	return xb.Sub(x, xb.BroadcastTo(z, x.Dims()...)), nil
}

func lowerMatMulInteger(c *Ctx) error {
	a, b := c.Input(0), c.Input(1)
	if a == nil || b == nil {
		return c.Errorf("MatMulInteger needs inputs A and B")
	}
	y, err := mmInteger(c, a, b, c.Input(2), c.Input(3))
	if err != nil {
		return err
	}
	c.Set(0, y)
	return nil
}

// mmInteger is numpy's matmul of (a - za) and (b - zb) in s32 (za per
// tensor, per row of a or N-D [..., M, 1]; zb per tensor, per column of b
// or N-D [..., 1, N]; nil for 0): the operands widened to s32, their zero
// points subtracted, an s32 dot — the form quantized models write, which
// the CPU backend recognises (int8-dot-fusion) and runs on its 8-bit GEMM
// with the zero-point terms folded in.
func mmInteger(c *Ctx, a, b, za, zb *xb.Op) (*xb.Op, error) {
	a, err := mmIntOperand(c, a, za, 2)
	if err != nil {
		return nil, err
	}
	b, err = mmIntOperand(c, b, zb, 1)
	if err != nil {
		return nil, err
	}
	return mmNumpy(c, a, b)
}

// qScaleF64 is the scale multiplier (sa·sb/sy computed in the scales'
// type, as the reference does) as f64.
func qMultiplier(sa, sb, sy *xb.Op) *xb.Op {
	t := sa.DType()
	if sb.DType() != t {
		sb = xb.Convert(sb, t)
	}
	if sy.DType() != t {
		sy = xb.Convert(sy, t)
	}
	r := Broadcast(sa.Builder(), sa, sb, sy)
	m := xb.Div(xb.Mul(r[0], r[1]), r[2])
	return xb.Convert(m, hlo.F64)
}

// qIntRange is the range of an integer element type.
func qIntRange(t hlo.DType) (float64, float64, bool) {
	switch t {
	case hlo.U8:
		return 0, 255, true
	case hlo.S8:
		return -128, 127, true
	case hlo.U16:
		return 0, 65535, true
	case hlo.S16:
		return -32768, 32767, true
	case hlo.U4:
		return 0, 15, true
	case hlo.S4:
		return -8, 7, true
	case hlo.U2:
		return 0, 3, true
	case hlo.S2:
		return -2, 1, true
	case hlo.S32:
		return -2147483648, 2147483647, true
	case hlo.U32:
		return 0, 4294967295, true
	}
	return 0, 0, false
}

// qRequantize turns the s32 accumulator acc into the quantized output:
// round-half-even(acc·mult + zp) clipped to t's range, computed in f64.
// mult is broadcast against acc numpy-style unless perAxis ≥ 0, in which
// case a 1-D mult runs along that axis.
func qRequantize(c *Ctx, acc, mult, zp *xb.Op, t hlo.DType, perAxis int) (*xb.Op, error) {
	lo, hi, ok := qIntRange(t)
	if !ok {
		return nil, c.Unsupported("output type %s", t)
	}
	d := xb.Convert(acc, hlo.F64)
	fit := func(v *xb.Op) (*xb.Op, error) {
		if numElems(v.Dims()) == 1 {
			return xb.BroadcastTo(xb.Reshape(v), d.Dims()...), nil
		}
		if perAxis >= 0 && v.Rank() == 1 && perAxis < d.Rank() && v.Dims()[0] == d.Dims()[perAxis] {
			return xb.BroadcastInDim(v, d.Dims(), int64(perAxis)), nil
		}
		if _, ok := BroadcastDims(v.Dims(), d.Dims()); !ok {
			return nil, c.Errorf("scale or zero point of shape %v does not fit %v", v.Dims(), d.Dims())
		}
		return xb.BroadcastTo(v, d.Dims()...), nil
	}
	mb, err := fit(mult)
	if err != nil {
		return nil, err
	}
	d = xb.Mul(d, mb)
	if zp != nil {
		z, err := fit(xb.Convert(zp, hlo.F64))
		if err != nil {
			return nil, err
		}
		d = xb.Add(d, z)
	}
	d = xb.Clamp(c.B.ScalarOf(hlo.F64, lo), xb.Round(d), c.B.ScalarOf(hlo.F64, hi))
	return xb.Convert(d, t), nil
}

func lowerQLinearMatMul(c *Ctx) error {
	for _, i := range []int{0, 1, 3, 4, 6} {
		if !c.Has(i) {
			return c.Errorf("QLinearMatMul input %d is required", i)
		}
	}
	acc, err := mmInteger(c, c.Input(0), c.Input(3), c.Input(2), c.Input(5))
	if err != nil {
		return err
	}
	sa, sb, sy := c.Input(1), c.Input(4), c.Input(6)
	// Per-row a scale ([M]) and per-column b scale ([N]).
	if sa.Rank() == 1 && sa.Dims()[0] != 1 {
		sa = xb.Reshape(sa, sa.Dims()[0], 1)
	}
	mult := qMultiplier(sa, sb, sy)
	t := c.Input(0).DType()
	if zp := c.Input(7); zp != nil {
		t = zp.DType()
	}
	y, err := qRequantize(c, acc, mult, c.Input(7), t, -1)
	if err != nil {
		return err
	}
	c.Set(0, y)
	return nil
}

var _ = onnx.Float
