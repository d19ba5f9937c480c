package cpu

import (
	"slices"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// gemmPlan is a dot as the batched GEMM sees it: batch products of
// m×k by k×n, the operands read through strides (Data unset). The batch
// dimensions (sizes batchDims, row-major in the result) may sit anywhere
// in the operands: aBatch and bBatch are their strides there.
type gemmPlan struct {
	batch, m, n, k int
	a, b           kernels.Strided[float32]
	batchDims      []int
	aBatch, bBatch []int
	// strip, where not 0, says each product's B is laid out in column
	// strips of that width (the last narrower), each strip's k rows
	// contiguous (stripedB); b's strides then say nothing.
	strip int
}

// product returns product i's operands: the plan's strides over la and
// lb from where the product starts (a copy each call: Execute may run
// concurrently).
func (g *gemmPlan) product(i int, la, lb []float32) (a, b kernels.Strided[float32]) {
	ao, bo := g.offsets(i)
	a, b = g.a, g.b
	a.Data, b.Data = la[ao:], lb[bo:]
	return a, b
}

// offsets returns where product i of the batch starts in A and in B.
func (g *gemmPlan) offsets(i int) (a, b int) {
	for d := len(g.batchDims) - 1; d >= 0; d-- {
		j := i % g.batchDims[d]
		i /= g.batchDims[d]
		a += j * g.aBatch[d]
		b += j * g.bBatch[d]
	}
	return a, b
}

// planDot maps an f32 dot onto the batched GEMM, reading the operands
// through strides: each operand's free dimensions and its contracting
// dimensions must each collapse into one index (their strides nest, as a
// row-major array's run of adjacent dimensions does), wherever they sit;
// batch dimensions may sit anywhere. So a dense layer over a sequence,
// [B,T,D]·[D,F], is one GEMM of B·T rows, and attention's [B,T,H,D]
// scores are B·H products. The result's order (batch, lhs free, rhs
// free) is the GEMM's C.
func planDot(in *hlo.Instruction) (gemmPlan, bool) {
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	if !onKernels(l.DType, r.DType, in.Shape.DType) {
		return gemmPlan{}, false
	}
	return planProduct(in)
}

// planProduct is planDot's mapping of any dot's dimensions onto the
// batched GEMM, whatever its element types (the 8-bit GEMM's too).
func planProduct(in *hlo.Instruction) (gemmPlan, bool) {
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	lb, _ := in.Ints("lhs_batch_dims")
	rb, _ := in.Ints("rhs_batch_dims")
	lc, _ := in.Ints("lhs_contracting_dims")
	rc, _ := in.Ints("rhs_contracting_dims")
	if len(lb) != len(rb) || len(lc) != len(rc) || in.HasAttr("sparsity") {
		return gemmPlan{}, false
	}
	ls, rs := hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(r.Dims)
	g := gemmPlan{batch: 1}
	var ok [4]bool
	var kA, kB int
	g.k, kA, ok[0] = collapse(l.Dims, ls, lc)
	_, kB, ok[1] = collapse(r.Dims, rs, rc)
	var mStride, nStride int
	g.m, mStride, ok[2] = collapse(l.Dims, ls, freeDims(l.Rank(), lb, lc))
	g.n, nStride, ok[3] = collapse(r.Dims, rs, freeDims(r.Rank(), rb, rc))
	for i := range lc {
		if l.Dims[lc[i]] != r.Dims[rc[i]] {
			return gemmPlan{}, false
		}
	}
	for i := range lb {
		if l.Dims[lb[i]] != r.Dims[rb[i]] {
			return gemmPlan{}, false
		}
		g.batch *= int(l.Dims[lb[i]])
		g.batchDims = append(g.batchDims, int(l.Dims[lb[i]]))
		g.aBatch = append(g.aBatch, ls[lb[i]])
		g.bBatch = append(g.bBatch, rs[rb[i]])
	}
	for _, good := range ok {
		if !good {
			return gemmPlan{}, false
		}
	}
	g.a = kernels.Strided[float32]{Row: mStride, Col: kA}
	g.b = kernels.Strided[float32]{Row: kB, Col: nStride}
	return g, true
}

// freeDims lists, in order, the dimensions of a rank-n operand that are
// neither batch nor contracting.
func freeDims(n int, batch, contracting []int64) []int64 {
	var free []int64
	for d := range int64(n) {
		if !slices.Contains(batch, d) && !slices.Contains(contracting, d) {
			free = append(free, d)
		}
	}
	return free
}

// collapse reads dimensions ds (in that order) of an array with the given
// dims and strides as one index: it returns their element count and the
// stride of that index, ok false when their strides do not nest (each
// dimension's stride the next one's times its size). Dimensions of size 1
// take no part (they move no address); none left make one index of size 1.
func collapse(dims []int64, strides []int, ds []int64) (size, stride int, ok bool) {
	size, last := 1, int64(-1)
	for _, d := range ds {
		if dims[d] == 1 {
			continue
		}
		if last >= 0 && strides[last] != strides[d]*int(dims[d]) {
			return 0, 0, false
		}
		size *= int(dims[d])
		last = d
	}
	if last >= 0 {
		stride = strides[last]
	}
	return size, stride, true
}

// lowerDot runs a dot planDot accepts on the batched GEMM.
func (x *compiler) lowerDot(in *hlo.Instruction) (kernelFunc, bool) {
	g, ok := planDot(in)
	if !ok {
		return nil, false
	}
	pw := x.constantRHS(in.Operands[1], &g)
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		c, finish := tile.F32Into(out, x.threads)
		a, b := g.a, g.b // Execute may run concurrently
		var releaseA, releaseB func()
		a.Data, releaseA = tile.AsF32(ops[0], x.threads)
		defer releaseA()
		b.Data, releaseB = pw.values(ops[1], x.threads)
		defer releaseB()
		la, lb := a.Data, b.Data
		if rg, rows, ok := pw.rowsB(ops[1], &g, lb); ok && gemvDot(rg, la, rows, c, x.threads) {
			finish()
			return nil
		}
		if gemvDot(&g, la, lb, c, x.threads) {
			finish()
			return nil
		}
		if packed := pw.gemmB(ops[1], &g, lb); packed != nil {
			err := kernels.GemmPackedEpilogueF32(g.m, g.n, g.k, a, b, packed, c, g.n, x.threads, nil, false)
			finish()
			return err
		}
		runBatch(g.batch, g.m, g.n, g.k, x.threads, func(i, threads int) {
			a, b := g.product(i, la, lb)
			kernels.GemmF32(g.m, g.n, g.k, a, b, c[i*g.m*g.n:], g.n, false, threads)
		})
		finish()
		return nil
	}, true
}

// runBatch runs product(i, t) for each product i of a batch of m×k by
// k×n products, t the threads it may use. Products too small to split
// (the GEMM runs them on one thread: attention's per-head scores) or a
// batch that divides evenly among the threads go out whole to the
// workers, each on one thread: no product waits for another, and no
// thread packs what another packed too. Other batches run one product at
// a time, each split across all the threads. A product's bits do not
// depend on its thread count, so neither do the batch's.
func runBatch(batch, m, n, k, threads int, product func(i, threads int)) {
	t := batchThreads(batch, m, n, k, threads)
	if t <= 1 {
		for i := range batch {
			product(i, threads)
		}
		return
	}
	kernels.Parallel(t, func(w int) {
		for i := w * batch / t; i < (w+1)*batch/t; i++ {
			product(i, 1)
		}
	})
}

// batchThreads is how many workers runBatch hands whole products to (1:
// none; the products run in turn).
func batchThreads(batch, m, n, k, threads int) int {
	t := min(threads, batch)
	if t <= 1 || kernels.GemmRunsInline(batch*m, n, k, false) {
		return 1 // the whole batch is too little work to wake a worker for
	}
	if kernels.GemmRunsInline(m, n, k, false) || batch%t == 0 {
		return t
	}
	return 1
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
	_, _, okL := tile.KernelType(l)
	_, _, okO := tile.KernelType(out)
	return okL && okO && l == r
}
