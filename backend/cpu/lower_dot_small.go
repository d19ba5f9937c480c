package cpu

import "github.com/axle-ml/axle/backend/cpu/kernels"

// Small-M products (a recurrent step's h·Rᵀ for a batch of one or two)
// run on kernels.GemvF32: B read in place, no packing, on the calling
// goroutine. lowerDot and gemmEpilogue try it first on each call.

// gemvDot computes g into c from the operands' data a and b on the
// small-M kernels, product by product for a batch (a bidirectional
// recurrence steps both directions in one batched dot), reporting false
// (nothing computed) when they do not take it.
func gemvDot(g *gemmPlan, a, b, c []float32, threads int) bool {
	if !smallM(g) || g.b.Col != 1 && g.n > 1 {
		return false // too large, or a row of B is not contiguous
	}
	lda := g.a.Row
	if g.m == 1 {
		lda = g.k
	}
	for i := range g.batch { // every product in bounds, or none computed
		ao, bo := g.offsets(i)
		bLen := (g.k-1)*g.b.Row + g.n
		if g.strip > 0 {
			bLen = g.k * g.n
		}
		if len(a)-ao < (g.m-1)*lda+g.k || len(b)-bo < bLen {
			return false
		}
	}
	if threads >= 2 && g.batch == 1 && 2*g.m*g.n*g.k >= gemvColumnFlops && g.n >= 2*gemvColumnStep {
		return gemvColumns(g, a, b, c, lda, threads)
	}
	if threads < 2 || g.batch < 2 || 2*g.batch*g.m*g.n*g.k < gemvParallelFlops {
		for i := range g.batch {
			if !gemvPart(g, a, b, c, lda, i) {
				if i > 0 {
					panic("cpu: gemvDot: the kernels declined part of a batch")
				}
				return false
			}
		}
		return true
	}
	// A batch (a bidirectional step's two directions) splits across the
	// threads by product: each core reads its own products' B, half the
	// step's, from its own cache. (Splitting one product's columns lost:
	// a GRU step's 1×96·96×288 went from 1.9 to 2.2 µs.)
	var probe [1]float32
	if !kernels.GemvF32(1, 1, 1, probe[:], 1, probe[:], 1, probe[:], 1) {
		return false // no kernels on this CPU: decline before writing
	}
	threads = min(threads, g.batch)
	kernels.Parallel(threads, func(t int) {
		for i := t * g.batch / threads; i < (t+1)*g.batch/threads; i++ {
			gemvPart(g, a, b, c, lda, i)
		}
	})
	return true
}

// gemvPart computes product i of gemvDot's batch. (A function, not a
// closure: one captured by the parallel branch's closure was allocated on
// every call, the serial path's too.)
func gemvPart(g *gemmPlan, a, b, c []float32, lda, i int) bool {
	return gemvRange(g, a, b, c, lda, i, 0, g.n)
}

// gemvRange computes columns [j0, j1) of product i of gemvDot's batch,
// from B's column strips where it is laid out in strips.
func gemvRange(g *gemmPlan, a, b, c []float32, lda, i, j0, j1 int) bool {
	ao, bo := g.offsets(i)
	ci := c[i*g.m*g.n:]
	if g.strip == 0 {
		return kernels.GemvF32(g.m, j1-j0, g.k, a[ao:], lda, b[bo+j0:], g.b.Row, ci[j0:], g.n)
	}
	return kernels.GemvStripsF32(g.m, g.n, g.k, a[ao:], lda, b[bo:bo+g.k*g.n], g.strip, ci, g.n, j0, j1)
}

// smallM reports whether g's size and A suit the small-M kernels (which
// also want B's rows contiguous).
func smallM(g *gemmPlan) bool {
	return g.m <= kernels.GemvMaxRows && 2*g.batch*g.m*g.n*g.k <= kernels.GemvMaxFlops && (g.a.Col == 1 || g.k == 1)
}

// gemvParallelFlops is the least work (2·batch·m·n·k) a batch of
// small-M products splits across threads for: the BiLSTM tagger's step,
// two directions of 2×128·128×512 (524 KFLOP), went from 0.78 to 0.62 ms
// a run.
const gemvParallelFlops = 1 << 17

// gemvColumnFlops is the least work (2·m·n·k) one small-M product splits
// its columns across threads for: ResNet's classifier, 1×1024·1024×1000
// with its weights turned row-major, streams 4 MB of B, which two cores
// read faster than one; a GRU step's 1×96·96×288 lost (1.9 against
// 2.2 µs) and stays on one.
const gemvColumnFlops = 1 << 20

// gemvColumnStep is the column granularity of gemvColumns: the widest
// kernel's 64 columns.
const gemvColumnStep = 64

// gemvColumns computes one small-M product with its columns split across
// the threads, each reading its own columns of B.
func gemvColumns(g *gemmPlan, a, b, c []float32, lda, threads int) bool {
	var probe [1]float32
	if !kernels.GemvF32(1, 1, 1, probe[:], 1, probe[:], 1, probe[:], 1) {
		return false // no kernels on this CPU: decline before writing
	}
	step := gemvColumnStep
	if g.strip > 0 {
		step = g.strip
	}
	steps := (g.n + step - 1) / step
	threads = min(threads, steps)
	kernels.Parallel(threads, func(t int) {
		j0 := t * steps / threads * step
		j1 := min(g.n, (t+1)*steps/threads*step)
		gemvRange(g, a, b, c, lda, 0, j0, j1)
	})
	return true
}
