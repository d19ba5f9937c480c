package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Det: the determinant of square matrices by Gaussian elimination with
// partial pivoting, unrolled over the (static) matrix size.

// detMaxSize bounds the unrolled elimination.
const detMaxSize = 128

func init() {
	Register(Op{Name: "Det", Lower: lowerDet})
}

func lowerDet(c *Ctx) error {
	x, t, err := floatInput(c)
	if err != nil {
		return err
	}
	dims := x.Dims()
	r := len(dims)
	if r < 2 || dims[r-1] != dims[r-2] {
		return c.Errorf("input %v is not a (batch of) square matrices", dims)
	}
	m := dims[r-1]
	outDims := dims[:r-2]
	bn := numElems(outDims)
	if m == 0 {
		c.Set(0, c.B.Full(t, 1, outDims...))
		return nil
	}
	if m > detMaxSize {
		return c.Unsupported("matrices of size %d", m)
	}
	b := c.B
	ct := t
	if t.Bits() < 32 {
		// Narrow floats eliminate in f32 and round the result once.
		ct = hlo.F32
	}
	a := xb.Reshape(xb.Convert(x, ct), bn, m, m)
	det := b.Full(ct, 1, bn)
	rowIdx := b.Iota(hlo.S64, 1, bn, m)
	rowIdx3 := b.Iota(hlo.S64, 1, bn, m, m)
	zero2 := b.Full(ct, 0, bn, m)
	for k := range m {
		col := xb.Reshape(xb.SliceAxis(a, 2, k, k+1), bn, m)
		kk := FullLike(rowIdx, float64(k))
		cand := xb.Select(xb.Ge(rowIdx, kk), xb.Abs(col), FullLike(col, -1))
		mx := xb.ReduceMax(cand, 1)
		p := rdArgIndex(c, cand, mx, 1, false) // (bn)
		isP3 := xb.Eq(rowIdx3, xb.BroadcastInDim(p, []int64{bn, m, m}, 0))
		isK3 := xb.Eq(rowIdx3, FullLike(rowIdx3, float64(k)))
		rowK := xb.Reshape(xb.SliceAxis(a, 1, k, k+1), bn, m)
		rowP := xb.ReduceSum(xb.Select(isP3, a, FullLike(a, 0)), 1)
		rowK3 := xb.BroadcastInDim(rowK, []int64{bn, m, m}, 0, 2)
		rowP3 := xb.BroadcastInDim(rowP, []int64{bn, m, m}, 0, 2)
		a = xb.Select(isP3, rowK3, xb.Select(isK3, rowP3, a))
		swapped := xb.Ne(p, FullLike(p, float64(k)))
		pivot := xb.Reshape(xb.SliceAxis(rowP, 1, k, k+1), bn)
		det = xb.Mul(det, xb.Select(swapped, xb.Neg(pivot), pivot))
		safe := xb.Select(xb.Eq(pivot, FullLike(pivot, 0)), FullLike(pivot, 1), pivot)
		colK := xb.Reshape(xb.SliceAxis(a, 2, k, k+1), bn, m)
		f := xb.Div(colK, xb.BroadcastInDim(safe, []int64{bn, m}, 0))
		f = xb.Select(xb.Gt(rowIdx, kk), f, zero2)
		a = xb.Sub(a, xb.Mul(xb.BroadcastInDim(f, []int64{bn, m, m}, 0, 1), rowP3))
	}
	c.Set(0, xb.Reshape(xb.Convert(det, t), outDims...))
	return nil
}
