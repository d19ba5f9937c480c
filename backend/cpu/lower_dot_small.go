package cpu

import "github.com/axle-ml/axle/backend/cpu/kernels"

// Small-M products (a recurrent step's h·Rᵀ for a batch of one or two)
// run on kernels.GemvF32: B read in place, no packing, on the calling
// goroutine. lowerDot and gemmEpilogue try it first on each call.

// gemvDot computes g (a single product) into c from the operands' data
// a and b on the small-M kernels, reporting false (nothing computed) when
// they do not take it.
func gemvDot(g *gemmPlan, a, b, c []float32) bool {
	if g.batch != 1 || g.m > kernels.GemvMaxRows || 2*g.m*g.n*g.k > kernels.GemvMaxFlops {
		return false
	}
	if g.a.Col != 1 && g.k > 1 || g.b.Col != 1 && g.n > 1 {
		return false // a row of A or of B is not contiguous
	}
	lda := g.a.Row
	if g.m == 1 {
		lda = g.k
	}
	return kernels.GemvF32(g.m, g.n, g.k, a, lda, b, g.b.Row, c, g.n)
}
