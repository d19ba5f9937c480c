package kernels

// Small-M products: C (m×n) = A (m×k) · B (k×n) for a handful of rows, as
// a recurrent network's step computes h·Rᵀ for a batch of one or two. The
// packed GEMM would pack B for one use each call (as much work as the
// product, m = 1) and run its 6- or 12-row micro-kernels over rows that
// are mostly padding; here B is read in place, row by row, and each row
// of it is used for up to four rows of A at once. The product is small
// enough to run on the calling goroutine.

// GemvMaxRows is the most rows of A GemvF32 takes.
const GemvMaxRows = 8

// GemvMaxFlops is the most work (2·m·n·k) GemvF32 takes: larger products
// go to the GEMM, whose packing pays for itself there and which splits
// across threads.
const GemvMaxFlops = gemmParallelFlops

// GemvF32 sets C = A·B for A m×k with rows lda apart (each row
// contiguous), B k×n with rows ldb apart (each row contiguous) and C
// row-major with row stride ldc, for m ≤ GemvMaxRows and 2·m·n·k ≤
// GemvMaxFlops. It reports false, computing nothing, when it does not
// apply (sizes or the CPU); its sums run in order over k, as GemmF32's.
func GemvF32(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) bool {
	if !gemvFits(m, n, k, a, lda, c, ldc) || len(b) < (k-1)*ldb+n || ldb < n {
		return false
	}
	for i := 0; i < m; {
		r := gemvGroup(m - i)
		gemvRows(r, n, k, a[i*lda:], lda, b, ldb, c[i*ldc:], ldc)
		i += r
	}
	return true
}

// GemvStripsF32 is GemvF32 with B laid out in column strips of width
// strip (GemvStrip): strip s holds columns [s, s+strip) (the last fewer)
// of B's k rows, each row of the strip contiguous, from b[s·k]. It
// computes C's columns [j0, j1) only, and reports false, computing
// nothing, where GemvF32 would or the range or strips do not fit.
func GemvStripsF32(m, n, k int, a []float32, lda int, b []float32, strip int, c []float32, ldc int, j0, j1 int) bool {
	if !gemvFits(m, n, k, a, lda, c, ldc) || len(b) < k*n || strip <= 0 || j0 < 0 || j1 > n || j0 >= j1 {
		return false
	}
	for i := 0; i < m; {
		r := gemvGroup(m - i)
		f, fw := gemvWide(r)
		for s := j0 / strip * strip; s < j1; s += strip {
			w := min(strip, n-s)
			lo, hi := max(j0, s), min(j1, s+w)
			if lo > s || hi < s+w || w%fw != 0 {
				gemvRows(r, hi-lo, k, a[i*lda:], lda, b[s*k+lo-s:], w, c[i*ldc+lo:], ldc)
				continue
			}
			// A whole strip, a multiple of the widest kernel: its blocks
			// without gemvRows' choices (a GRU step's nine strips of 32
			// spent 0.2 µs of 1.6 in them).
			for j := 0; j < w; j += fw {
				f(k, &a[i*lda], lda, &b[s*k+j], w, &c[i*ldc+s+j], ldc)
			}
		}
		i += r
	}
	return true
}

// gemvKernel computes a block of C (rows and columns fixed by the
// kernel) from k steps of A's rows (lda apart) and B's rows (ldb apart).
type gemvKernel func(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

// gemvFits reports whether the small-M kernels take an m×k by k×n
// product with A and C so laid out (B is the caller's to check).
func gemvFits(m, n, k int, a []float32, lda int, c []float32, ldc int) bool {
	return gemvRuns && m > 0 && m <= GemvMaxRows && n > 0 && k > 0 && 2*m*n*k <= GemvMaxFlops &&
		len(a) >= (m-1)*lda+k && len(c) >= (m-1)*ldc+n && lda >= k && ldc >= n
}

// gemvGroup is how many of the rows left the next kernel call takes: 4,
// 2 or 1.
func gemvGroup(left int) int {
	switch {
	case left >= 4:
		return 4
	case left >= 2:
		return 2
	}
	return 1
}

// GemvStrip returns the width of the column strips (each strip's k rows
// contiguous, the last strip narrower) in which GemvF32 reads a k×n B
// fastest on this CPU, or 0 where plain rows read as fast: a caller that
// keeps B (a layer's weights) may lay it out so once and read it with
// GemvStripsF32.
func GemvStrip(k, n int) int { return gemvStrip(k, n) }

// gemvTail computes columns [j, n) of r rows in Go.
func gemvTail(r, n, k, j int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := range r {
		ar, cr := a[i*lda:i*lda+k], c[i*ldc:]
		for jj := j; jj < n; jj++ {
			var s float32
			for p, av := range ar {
				s += av * b[p*ldb+jj]
			}
			cr[jj] = s
		}
	}
}
