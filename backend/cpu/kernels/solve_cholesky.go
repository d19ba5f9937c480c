package kernels

import "math"

// Cholesky factors in place the Hermitian positive definite matrix whose
// lower triangle a holds (n×n, row stride lda): on return that triangle
// is L with A = L·Lᴴ; the upper triangle is neither read nor written. It
// runs column by column (Cholesky–Crout), every sum over k in ascending
// order, as the evaluator does. It reports false, leaving a partly
// factored, at the first pivot that is not positive (NaN included).
func Cholesky[T Scalar](a []T, lda, n int) bool {
	conjBuf := make([]T, n)
	for j := range n {
		lj := a[j*lda : j*lda+j]
		cj := conjRow(lj, conjBuf)
		d := a[j*lda+j]
		for k, x := range lj {
			d -= x * cj[k]
		}
		ljj, ok := sqrtPivot(d)
		if !ok {
			return false
		}
		a[j*lda+j] = ljj
		for i := j + 1; i < n; i++ {
			li := a[i*lda : i*lda+j]
			v := a[i*lda+j]
			for k, x := range li {
				v -= x * cj[k]
			}
			a[i*lda+j] = v / ljj
		}
	}
	return true
}

// conjRow returns the conjugate of row: row itself for real types, a
// copy in buf (at least as long) for complex ones. Conjugation is exact,
// so multiplying by it is the evaluator's l·conj(l).
func conjRow[T Scalar](row, buf []T) []T {
	c, ok := any(row).([]complex128)
	if !ok {
		return row
	}
	out := any(buf).([]complex128)
	for k, v := range c {
		out[k] = complex(real(v), -imag(v))
	}
	return buf[:len(row)]
}

// sqrtPivot is √d for a positive real part of d (the imaginary part of a
// Hermitian diagonal is ignored), or false.
func sqrtPivot[T Scalar](d T) (T, bool) {
	var r T
	switch p := any(&r).(type) {
	case *float32:
		x := any(d).(float32)
		*p = float32(math.Sqrt(float64(x)))
		return r, x > 0
	case *float64:
		x := any(d).(float64)
		*p = math.Sqrt(x)
		return r, x > 0
	case *complex128:
		x := real(any(d).(complex128))
		*p = complex(math.Sqrt(x), 0)
		return r, x > 0
	}
	return r, false
}

// CholeskyBlocked is Cholesky for large real matrices, right-looking:
// factor a diagonal block (Cholesky), solve the panel below it against
// that block's transpose (TrsmRows, rows split across threads), and
// subtract the panel's outer product from the trailing lower triangle
// with GEMMs, one per block column so the upper triangle is skipped.
// Diagonal blocks and panels are done the same way with smaller blocks.
func CholeskyBlocked[T float32 | float64](a []T, lda, n, threads int) bool {
	return choleskyBlocked(a, lda, n, threads, SolveBlock)
}

func choleskyBlocked[T float32 | float64](a []T, lda, n, threads, nb int) bool {
	if n <= minSolveBlock {
		return Cholesky(a, lda, n)
	}
	gemm := gemmOf[T]()
	panel := make([]T, n*nb)
	inner := max(minSolveBlock, nb/4)
	for k0 := 0; k0 < n; k0 += nb {
		k1 := min(n, k0+nb)
		kb := k1 - k0
		if !choleskyBlocked(a[k0*lda+k0:], lda, kb, 1, inner) {
			return false
		}
		if k1 == n {
			break
		}
		// L[i, K]·L[K, K]ᵀ = A[i, K]  ⇔  L[K, K]·L[i, K]ᵀ = A[i, K]ᵀ.
		rows := n - k1
		ParallelRange(threads, rows, kb*kb*rows, func(r0, r1 int) {
			trsmRowsBlocked(a[k0*lda+k0:], lda, kb, true, a[(k1+r0)*lda+k0:], lda, r1-r0, 1, inner)
		})
		for i := k1; i < n; i++ {
			negate(panel[(i-k1)*kb:(i-k1+1)*kb], a[i*lda+k0:i*lda+k1])
		}
		for j0 := k1; j0 < n; j0 += nb {
			jb := min(nb, n-j0)
			// A[j0:, j0:j0+jb] += (-L[j0:, K])·L[j0:j0+jb, K]ᵀ
			gemm(n-j0, jb, kb, Strided[T]{Data: panel[(j0-k1)*kb:], Row: kb, Col: 1},
				Strided[T]{Data: a[j0*lda+k0:], Row: 1, Col: lda}, a[j0*lda+j0:], lda, true, threads)
		}
	}
	return true
}
