package cpu

import "github.com/axle-ml/axle/backend/cpu/kernels"

// Small-M products (a recurrent step's h·Rᵀ for a batch of one or two)
// run on kernels.GemvF32: B read in place, no packing, on the calling
// goroutine. lowerDot and gemmEpilogue try it first on each call.

// gemvDot computes g into c from the operands' data a and b on the
// small-M kernels, product by product for a batch (a bidirectional
// recurrence steps both directions in one batched dot), reporting false
// (nothing computed) when they do not take it.
func gemvDot(g *gemmPlan, a, b, c []float32) bool {
	if g.m > kernels.GemvMaxRows || 2*g.batch*g.m*g.n*g.k > kernels.GemvMaxFlops {
		return false
	}
	if g.a.Col != 1 && g.k > 1 || g.b.Col != 1 && g.n > 1 {
		return false // a row of A or of B is not contiguous
	}
	lda := g.a.Row
	if g.m == 1 {
		lda = g.k
	}
	for i := range g.batch { // every product in bounds, or none computed
		ao, bo := g.offsets(i)
		if len(a)-ao < (g.m-1)*lda+g.k || len(b)-bo < (g.k-1)*g.b.Row+g.n {
			return false
		}
	}
	for i := range g.batch {
		ao, bo := g.offsets(i)
		if !kernels.GemvF32(g.m, g.n, g.k, a[ao:], lda, b[bo:], g.b.Row, c[i*g.m*g.n:], g.n) {
			if i > 0 {
				panic("cpu: gemvDot: the kernels declined part of a batch")
			}
			return false
		}
	}
	return true
}
