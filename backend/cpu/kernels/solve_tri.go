package kernels

// Triangular solves and Cholesky factorization. The unblocked kernels
// subtract each product in ascending column order of the triangle, one
// element at a time, as the reference evaluator does: run in float64 or
// complex128 they reproduce its results bit for bit. The blocked ones
// (float32 and float64, for large matrices) solve or factor a diagonal
// block with the unblocked kernel and push the rest through the GEMM, so
// their sums run in another order. Non-finite values propagate as real
// arithmetic does; the callers adjust that to the evaluator's complex
// arithmetic.

// Scalar is an element type the solvers compute in.
type Scalar interface{ float32 | float64 | complex128 }

// SolveBlock is the block size of the blocked kernels: the K dimension
// of their outer GEMM updates, deep enough for the micro-kernel to
// amortize packing. Diagonal blocks are solved the same way with blocks
// a quarter the size, down to minSolveBlock: the unblocked loops, scalar
// Go, then do about n·minSolveBlock/2 of the n²/2 steps per column.
const (
	SolveBlock    = 128
	minSolveBlock = 16
)

// TrsmLeft solves M·X = B in place: m is n×n (row stride ldm), read only
// in its lower or upper triangle; x (n×cols, row stride ldx) holds B on
// entry and X on return. Rows are substituted one at a time, each as a
// run of whole-row updates, so every element's sum still runs over the
// triangle's columns in ascending order.
func TrsmLeft[T Scalar](m []T, ldm, n int, lower bool, x []T, ldx, cols int) {
	for s := range n {
		i, lo, hi := s, 0, s
		if !lower {
			i, lo, hi = n-1-s, n-s, n
		}
		xi := x[i*ldx : i*ldx+cols]
		mi := m[i*ldm : i*ldm+n]
		for j := lo; j < hi; j++ {
			mij, xj := mi[j], x[j*ldx:j*ldx+cols]
			xj = xj[:len(xi)]
			for r := range xi {
				xi[r] -= mij * xj[r]
			}
		}
		d := mi[i]
		for r := range xi {
			xi[r] /= d
		}
	}
}

// TrsmRows solves M·y = c in place for each of rows rows y of x (length
// n, row stride ldx): the right-side solve x·Mᵀ = b.
func TrsmRows[T Scalar](m []T, ldm, n int, lower bool, x []T, ldx, rows int) {
	for r := range rows {
		y := x[r*ldx : r*ldx+n]
		for s := range n {
			i, lo, hi := s, 0, s
			if !lower {
				i, lo, hi = n-1-s, n-s, n
			}
			mi := m[i*ldm : i*ldm+n]
			v := y[i]
			for j := lo; j < hi; j++ {
				v -= mi[j] * y[j]
			}
			y[i] = v / mi[i]
		}
	}
}

// gemmFunc is GemmF32 or GemmF64.
type gemmFunc[T float32 | float64] func(m, n, k int, a, b Strided[T], c []T, ldc int, accumulate bool, threads int)

func gemmOf[T float32 | float64]() gemmFunc[T] {
	var f any = GemmF64
	if _, ok := any(T(0)).(float32); ok {
		f = GemmF32
	}
	return f.(func(m, n, k int, a, b Strided[T], c []T, ldc int, accumulate bool, threads int))
}

// blockRange is diagonal block s of n in substitution order: forward
// for a lower triangle, backward for an upper one.
func blockRange(s, n, nb int, lower bool) (k0, k1 int) {
	if lower {
		return s, min(n, s+nb)
	}
	return max(0, n-s-nb), n - s
}

// TrsmLeftBlocked is TrsmLeft for large n: it substitutes a block of
// SolveBlock rows (columns split across threads, the block itself
// solved the same way with smaller blocks), then subtracts that block's
// contribution from every row still to come with one GEMM. The GEMM only
// adds, so it multiplies a negated copy of M's panel.
func TrsmLeftBlocked[T float32 | float64](m []T, ldm, n int, lower bool, x []T, ldx, cols, threads int) {
	trsmLeftBlocked(m, ldm, n, lower, x, ldx, cols, threads, SolveBlock)
}

func trsmLeftBlocked[T float32 | float64](m []T, ldm, n int, lower bool, x []T, ldx, cols, threads, nb int) {
	if n <= minSolveBlock {
		TrsmLeft(m, ldm, n, lower, x, ldx, cols)
		return
	}
	gemm := gemmOf[T]()
	panel := make([]T, n*nb)
	blockSubstitute(n, nb, lower, func(k0, k1 int) {
		kb := k1 - k0
		ParallelRange(threads, cols, kb*kb*cols, func(c0, c1 int) {
			trsmLeftBlocked(m[k0*ldm+k0:], ldm, kb, lower, x[k0*ldx+c0:], ldx, c1-c0, 1, max(minSolveBlock, nb/4))
		})
	}, func(k0, k1, i0, i1 int) { // rows i0..i1 still to come
		kb := k1 - k0
		for i := i0; i < i1; i++ {
			negate(panel[(i-i0)*kb:(i-i0+1)*kb], m[i*ldm+k0:i*ldm+k1])
		}
		gemm(i1-i0, cols, kb, Strided[T]{Data: panel, Row: kb, Col: 1}, Strided[T]{Data: x[k0*ldx:], Row: ldx, Col: 1},
			x[i0*ldx:], ldx, true, threads)
	})
}

// blockSubstitute runs a blocked substitution over n unknowns in blocks
// of nb, in substitution order: solve(k0, k1) solves diagonal block
// [k0, k1) in place, then update(k0, k1, i0, i1) subtracts its
// contribution from the unknowns [i0, i1) still to come.
func blockSubstitute(n, nb int, lower bool, solve func(k0, k1 int), update func(k0, k1, i0, i1 int)) {
	for s := 0; s < n; s += nb {
		k0, k1 := blockRange(s, n, nb, lower)
		solve(k0, k1)
		i0, i1 := k1, n
		if !lower {
			i0, i1 = 0, k0
		}
		if i0 < i1 {
			update(k0, k1, i0, i1)
		}
	}
}

// TrsmRowsBlocked is TrsmRows for large n: the same block substitution
// on the columns of x, whose rows are split across threads.
func TrsmRowsBlocked[T float32 | float64](m []T, ldm, n int, lower bool, x []T, ldx, rows, threads int) {
	trsmRowsBlocked(m, ldm, n, lower, x, ldx, rows, threads, SolveBlock)
}

func trsmRowsBlocked[T float32 | float64](m []T, ldm, n int, lower bool, x []T, ldx, rows, threads, nb int) {
	if n <= minSolveBlock {
		TrsmRows(m, ldm, n, lower, x, ldx, rows)
		return
	}
	gemm := gemmOf[T]()
	panel := make([]T, n*nb)
	blockSubstitute(n, nb, lower, func(k0, k1 int) {
		kb := k1 - k0
		ParallelRange(threads, rows, kb*kb*rows, func(r0, r1 int) {
			trsmRowsBlocked(m[k0*ldm+k0:], ldm, kb, lower, x[r0*ldx+k0:], ldx, r1-r0, 1, max(minSolveBlock, nb/4))
		})
	}, func(k0, k1, i0, i1 int) { // columns i0..i1 still to come
		// x[:, i] -= Σ_p x[:, k0+p]·M[i][k0+p]: panel[p][i-i0] = -M[i][k0+p].
		kb, w := k1-k0, i1-i0
		for i := i0; i < i1; i++ {
			for p := range kb {
				panel[p*w+i-i0] = -m[i*ldm+k0+p]
			}
		}
		gemm(rows, w, kb, Strided[T]{Data: x[k0:], Row: ldx, Col: 1}, Strided[T]{Data: panel, Row: w, Col: 1},
			x[i0:], ldx, true, threads)
	})
}

func negate[T float32 | float64](dst, src []T) {
	for i, v := range src {
		dst[i] = -v
	}
}

// solveParallelFlops is the work below which a split loop runs on the
// calling goroutine (as for the GEMM, a wake-up costs tens of µs).
const solveParallelFlops = 1 << 20

// ParallelRange runs f over [0, n) split into up to threads chunks, or
// whole on the caller when the work (about flops) is small.
func ParallelRange(threads, n, flops int, f func(lo, hi int)) {
	threads = min(threads, n)
	if threads <= 1 || flops < solveParallelFlops {
		f(0, n)
		return
	}
	parallel(threads, func(t int) { f(t*n/threads, (t+1)*n/threads) })
}
