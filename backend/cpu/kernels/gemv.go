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
	if !gemvRuns || m <= 0 || m > GemvMaxRows || n <= 0 || k <= 0 || 2*m*n*k > GemvMaxFlops ||
		len(a) < (m-1)*lda+k || len(b) < (k-1)*ldb+n || len(c) < (m-1)*ldc+n || lda < k || ldb < n || ldc < n {
		return false
	}
	for i := 0; i < m; {
		r := 4
		switch {
		case m-i >= 4:
		case m-i >= 2:
			r = 2
		default:
			r = 1
		}
		gemvRows(r, n, k, a[i*lda:], lda, b, ldb, c[i*ldc:], ldc)
		i += r
	}
	return true
}

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
