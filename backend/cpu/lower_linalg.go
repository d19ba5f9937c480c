package cpu

import (
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

func rowMajor(dims []int64) []int {
	st := make([]int, len(dims))
	n := 1
	for i := len(dims) - 1; i >= 0; i-- {
		st[i] = n
		n *= int(dims[i])
	}
	return st
}

// gemmPlan is a dot as the batched GEMM sees it: batch products of
// m×k by k×n, the operands read through strides (Data unset).
type gemmPlan struct {
	batch, m, n, k int
	a, b           kernels.Strided[float32]
}

// planDot maps an f32 dot with leading batch dimensions, at most one free
// and exactly one contracting dimension per operand onto the batched
// GEMM, reading either operand transposed through its strides.
func planDot(in *hlo.Instruction) (gemmPlan, bool) {
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	lb, _ := in.Ints("lhs_batch_dims")
	rb, _ := in.Ints("rhs_batch_dims")
	lc, _ := in.Ints("lhs_contracting_dims")
	rc, _ := in.Ints("rhs_contracting_dims")
	nb := len(lb)
	if !onKernels(l.DType, r.DType, in.Shape.DType) || len(lc) != 1 || len(rc) != 1 ||
		!leading(lb) || !leading(rb) || l.Rank() > nb+2 || r.Rank() > nb+2 || in.HasAttr("sparsity") {
		return gemmPlan{}, false
	}
	ls, rs := rowMajor(l.Dims), rowMajor(r.Dims)
	g := gemmPlan{batch: 1, m: 1, n: 1, k: int(l.Dims[lc[0]])}
	mStride, nStride := 0, 0
	if l.Rank() == nb+2 {
		free := nb + 1 - (int(lc[0]) - nb) // the other of the last two
		g.m, mStride = int(l.Dims[free]), ls[free]
	}
	if r.Rank() == nb+2 {
		free := nb + 1 - (int(rc[0]) - nb)
		g.n, nStride = int(r.Dims[free]), rs[free]
	}
	for _, d := range lb {
		g.batch *= int(l.Dims[d])
	}
	g.a = kernels.Strided[float32]{Row: mStride, Col: ls[lc[0]]}
	g.b = kernels.Strided[float32]{Row: rs[rc[0]], Col: nStride}
	return g, true
}

// lowerDot runs a dot planDot accepts on the batched GEMM.
func (x *Executable) lowerDot(in *hlo.Instruction) (kernelFunc, bool) {
	g, ok := planDot(in)
	if !ok {
		return nil, false
	}
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		c, finish := f32Into(out, x.threads)
		a, b := g.a, g.b // Execute may run concurrently
		var releaseA, releaseB func()
		a.Data, releaseA = asF32(ops[0], x.threads)
		defer releaseA()
		b.Data, releaseB = asF32(ops[1], x.threads)
		defer releaseB()
		kernels.GemmBatchF32(g.batch, g.m, g.n, g.k, a, g.m*g.k, b, g.k*g.n, c, g.n, g.m*g.n, false, x.threads)
		finish()
		return nil
	}, true
}

func leading(d []int64) bool {
	for i, v := range d {
		if v != int64(i) {
			return false
		}
	}
	return true
}

// onKernels: operands and result are f32, bf16 or f16 (narrow ones are
// widened for the f32 kernels), with the operands of one type.
func onKernels(l, r, out hlo.DType) bool {
	_, _, okL := kernelType(l)
	_, _, okO := kernelType(out)
	return okL && okO && l == r
}
