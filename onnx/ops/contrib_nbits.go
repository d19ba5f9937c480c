package ops

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// MatMulNBits (com.microsoft): A times weights stored as 2-, 4- or 8-bit
// integers in blocks along K, each block with its scale and zero point —
// what ONNX Runtime's MatMul4BitsQuantizer and onnxruntime-genai write for
// quantized transformers. The weights are an initializer: they are
// dequantized here, once, to the f32 matrix w[k, n] = (q − zp)·scale of
// their block, and the node lowers to A·w (+ bias), so the product runs
// on the f32 GEMM. accuracy_level asks ONNX Runtime for a minimum
// precision of A; level 4 lets it quantize A to int8 per block, which
// moves its results by A's quantization error: Axle computes every level
// in f32 (level 0's arithmetic), the most accurate of them.

func init() {
	msRegister(Op{Name: "MatMulNBits", Lower: lowerMatMulNBits, ConstInputs: []int{1, 2, 3}},
		Op{Name: "GatherBlockQuantized", Lower: lowerGatherBlockQuantized})
}

// lowerMatMulNBits: inputs A [..., K], B (u8 [N, blocks, blob]), scales
// ([N·blocks] or [N, blocks]), zero_points (u8 packed like B's values,
// optional: 2^(bits-1)), g_idx (not read), bias [N]; attributes K, N,
// bits, block_size.
func lowerMatMulNBits(c *Ctx) error {
	a := c.Input(0)
	if a == nil {
		return c.Errorf("MatMulNBits needs A")
	}
	if a.DType() != hlo.F32 && a.DType() != hlo.F16 {
		return c.Unsupported("A of %s", a.DType())
	}
	if c.Has(4) {
		return c.Unsupported("g_idx (act-order)")
	}
	w, err := nbitsWeights(c)
	if err != nil {
		return err
	}
	k, n := w.Shape().Dims[0], w.Shape().Dims[1]
	if a.Rank() < 1 || a.Dims()[a.Rank()-1] != k {
		return c.Errorf("A %v does not end in K = %d", a.Dims(), k)
	}
	u, back := elemUp(a)
	y := xb.DotGeneral(u, c.B.Constant(w), xb.DotDims{LhsContracting: []int64{int64(a.Rank() - 1)}, RhsContracting: []int64{0}})
	if bias := c.Input(5); bias != nil {
		if bias.Rank() != 1 || bias.Dims()[0] != n {
			return c.Errorf("bias %v is not [N] = [%d]", bias.Dims(), n)
		}
		bu, _ := elemUp(bias)
		y = xb.Add(y, xb.BroadcastInDim(bu, y.Dims(), int64(y.Rank()-1)))
	}
	c.Set(0, back(y))
	return nil
}

// nbitsWeights dequantizes MatMulNBits' constant weights to f32 [K, N].
func nbitsWeights(c *Ctx) (*hlo.Literal, error) {
	k, n := c.Node.Int("K", 0), c.Node.Int("N", 0)
	bits, bs := c.Node.Int("bits", 4), c.Node.Int("block_size", 0)
	if k <= 0 || n <= 0 || bs < 16 || bs&(bs-1) != 0 || bits != 2 && bits != 4 && bits != 8 {
		return nil, c.Errorf("K %d, N %d, bits %d, block_size %d (a power of two from 16; bits 2, 4 or 8)", k, n, bits, bs)
	}
	blocks := (k + bs - 1) / bs
	blob := bs * bits / 8
	q, err := nbitsBytes(c, 1, "B", n*blocks*blob)
	if err != nil {
		return nil, err
	}
	st, err := c.Const(2)
	if err != nil {
		return nil, err
	}
	if !st.Lit.DType().IsFloat() || int64(st.Lit.Len()) != n*blocks {
		return nil, c.Errorf("scales %v: want %d floats (N × blocks)", st, n*blocks)
	}
	scales, _ := Float64s(st)
	zero := func(int64) float64 { return float64(int64(1) << (bits - 1)) }
	if c.Has(3) {
		zt, err := c.Const(3)
		if err != nil {
			return nil, err
		}
		if zt.Lit.DType() != hlo.U8 {
			return nil, c.Unsupported("zero points of %s (packed uint8 only)", zt.Lit.DType())
		}
		perRow := (blocks*bits + 7) / 8
		zb, err := nbitsBytes(c, 3, "zero_points", n*perRow)
		if err != nil {
			return nil, err
		}
		zero = func(i int64) float64 { // i = row·blocks + block
			row, blk := i/blocks, i%blocks
			return float64(nbitsAt(zb[row*perRow:], blk, bits))
		}
	}
	out := make([]float32, k*n)
	for row := range n {
		for blk := range blocks {
			i := row*blocks + blk
			s, z := float32(scales[i]), float32(zero(i))
			vals := q[i*blob : (i+1)*blob]
			for j := range min(bs, k-blk*bs) {
				out[(blk*bs+j)*n+row] = (float32(nbitsAt(vals, j, bits)) - z) * s
			}
		}
	}
	return hlo.LiteralFromSlice(out, k, n)
}

// nbitsBytes is constant input i (u8) as bytes, of want of them.
func nbitsBytes(c *Ctx, i int, name string, want int64) ([]byte, error) {
	t, err := c.Const(i)
	if err != nil {
		return nil, err
	}
	if t.Lit.DType() != hlo.U8 {
		return nil, c.Errorf("%s is %s, not uint8", name, onnx.ElemTypeOf(t.Lit.DType()))
	}
	if int64(t.Lit.Len()) != want {
		return nil, c.Errorf("%s holds %d bytes, the attributes give %d", name, t.Lit.Len(), want)
	}
	return t.Lit.Data().([]uint8), nil
}

// nbitsAt is the j-th bits-wide value packed in b, lowest bits first.
func nbitsAt(b []byte, j, bits int64) uint8 {
	per := 8 / bits
	return b[j/per] >> (bits * (j % per)) & uint8(1<<bits-1)
}

// lowerGatherBlockQuantized: Gather (gather_axis 0) of a table quantized
// in blocks along its last axis — onnxruntime-genai's quantized
// embeddings: data u8 with bits 4 (two values a byte, lowest first) or 8,
// scales [..., blocks], zero_points packed as data (optional:
// 2^(bits-1)); the gathered rows are dequantized, (q − zp)·scale. Only the
// gathered rows are unpacked, so a large vocabulary stays packed.
func lowerGatherBlockQuantized(c *Ctx) error {
	data, idx, scales := c.Input(0), c.Input(1), c.Input(2)
	if data == nil || idx == nil || scales == nil {
		return c.Errorf("GatherBlockQuantized needs data, indices and scales")
	}
	bits, bs := c.Node.Int("bits", 4), c.Node.Int("block_size", 128)
	r := int64(data.Rank())
	if data.DType() != hlo.U8 || bits != 4 && bits != 8 {
		return c.Unsupported("data of %s with %d bits (uint8 with 4 or 8 only)", data.DType(), bits)
	}
	if ga, qa := c.Node.Int("gather_axis", 0), c.Node.Int("quantize_axis", 1); ga != 0 || (qa+r)%r != r-1 || r < 2 {
		return c.Unsupported("gather_axis %d and quantize_axis %d (0 and the last axis only)", ga, qa)
	}
	if !scales.DType().IsFloat() || bs < 16 || bs&(bs-1) != 0 {
		return c.Errorf("scales of %s, block_size %d", scales.DType(), bs)
	}
	per := 8 / bits
	width := data.Dims()[r-1] * per // values along the last axis
	blocks := (width + bs - 1) / bs
	if scales.Rank() != int(r) || scales.Dims()[r-1] != blocks || !slices.Equal(scales.Dims()[:r-1], data.Dims()[:r-1]) {
		return c.Errorf("scales %v do not fit data %v in blocks of %d", scales.Dims(), data.Dims(), bs)
	}
	ids := idxWrapN(idx, data.Dims()[0])
	rows := xb.Take(data, ids, 0) // [idx..., d1, ..., packed]
	q := nbitsUnpack(c, rows, bits)
	rd := q.Dims()
	blockOf := func(x *xb.Op) *xb.Op { // [..., blocks] → [..., width], each block's value repeated
		d := x.Dims()
		e := xb.BroadcastInDim(x, append(slices.Clone(d), bs), nbitsIota(len(d))...)
		return xb.SliceAxis(xb.Reshape(e, append(slices.Clone(d[:len(d)-1]), d[len(d)-1]*bs)...), int64(len(d)-1), 0, width)
	}
	s := blockOf(xb.Convert(xb.Take(scales, ids, 0), hlo.F32))
	var z *xb.Op
	if zp := c.Input(3); zp != nil {
		if zp.DType() != hlo.U8 {
			return c.Errorf("zero_points of %s, not uint8", zp.DType())
		}
		zq := nbitsUnpack(c, xb.Take(zp, ids, 0), bits)
		z = blockOf(xb.SliceAxis(zq, int64(zq.Rank()-1), 0, blocks))
	} else {
		z = xb.BroadcastTo(c.B.ScalarOf(hlo.F32, float64(int64(1)<<(bits-1))), rd...)
	}
	y := xb.Mul(xb.Sub(q, z), s)
	if t := scales.DType(); t != hlo.F32 {
		y = xb.Convert(y, t)
	}
	c.Set(0, y)
	return nil
}

// nbitsUnpack is u8 x's packed values along its last axis as f32, each
// byte's lowest bits first.
func nbitsUnpack(c *Ctx, x *xb.Op, bits int64) *xb.Op {
	if bits == 8 {
		return xb.Convert(x, hlo.F32)
	}
	d := x.Dims()
	per := 8 / bits
	mask := xb.BroadcastTo(c.B.ScalarOf(hlo.U8, float64(int64(1)<<bits-1)), d...)
	parts := make([]*xb.Op, per)
	for j := range per {
		v := xb.And(xb.ShiftRightLogical(x, xb.BroadcastTo(c.B.ScalarOf(hlo.U8, float64(j*bits)), d...)), mask)
		parts[j] = xb.Reshape(v, append(slices.Clone(d), 1)...)
	}
	out := xb.Concatenate(int64(len(d)), parts...)
	return xb.Convert(xb.Reshape(out, append(slices.Clone(d[:len(d)-1]), d[len(d)-1]*per)...), hlo.F32)
}

// nbitsIota is 0..n-1 as int64s.
func nbitsIota(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}
