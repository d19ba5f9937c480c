package eval

import (
	"math"
	"math/cmplx"
)

// Unblocked complex LAPACK routines (gonum's LAPACK is real only), written
// from LAPACK's reference algorithms (zpotf2, zgetf2, zgeqr2 with zlarfg,
// zung2r, ztrsm). Matrices are row-major: a[i*cols+j] is A(i,j).

// zpotf2 factors the Hermitian n×n a in place (A = L·Lᴴ, or Uᴴ·U when
// !lower), reading and writing only that triangle, and returns LAPACK's
// info: 0, or the order j of the first leading minor that is not positive
// definite (a(j,j) then holds the non-positive pivot).
func zpotf2(lower bool, n int, a []complex128) int {
	// at addresses the factor's (row i, column j) element of L, or of Uᴴ
	// through the transposed storage, so one loop serves both triangles.
	at := func(i, j int) *complex128 {
		if lower {
			return &a[i*n+j]
		}
		return &a[j*n+i]
	}
	// conjU conjugates values read from and written to U's storage: the
	// loop computes Uᴴ = L, whose elements are U's conjugates.
	conjU := func(v complex128) complex128 {
		if lower {
			return v
		}
		return cmplx.Conj(v)
	}
	for j := range n {
		d := real(*at(j, j))
		for k := range j {
			l := conjU(*at(j, k))
			d -= real(l)*real(l) + imag(l)*imag(l)
		}
		if !(d > 0) {
			*at(j, j) = complex(d, 0)
			return j + 1
		}
		d = math.Sqrt(d)
		*at(j, j) = complex(d, 0)
		for i := j + 1; i < n; i++ {
			v := conjU(*at(i, j))
			for k := range j {
				v -= conjU(*at(i, k)) * cmplx.Conj(conjU(*at(j, k)))
			}
			*at(i, j) = conjU(v / complex(d, 0))
		}
	}
	return 0
}

func cabs1(v complex128) float64 { return math.Abs(real(v)) + math.Abs(imag(v)) }

// zgetf2 factors the m×n a = P·L·U in place with partial pivoting on
// |re|+|im| (LAPACK's izamax), returning 1-based pivots and info.
func zgetf2(m, n int, a []complex128) ([]int64, int) {
	k := min(m, n)
	ipiv := make([]int64, k)
	info := 0
	for j := range k {
		p := j
		for i := j + 1; i < m; i++ {
			if cabs1(a[i*n+j]) > cabs1(a[p*n+j]) {
				p = i
			}
		}
		ipiv[j] = int64(p + 1)
		if a[p*n+j] == 0 {
			if info == 0 {
				info = j + 1
			}
			continue
		}
		if p != j {
			for c := range n {
				a[j*n+c], a[p*n+c] = a[p*n+c], a[j*n+c]
			}
		}
		piv := a[j*n+j]
		for i := j + 1; i < m; i++ {
			a[i*n+j] /= piv
			l := a[i*n+j]
			for c := j + 1; c < n; c++ {
				a[i*n+c] -= l * a[j*n+c]
			}
		}
	}
	return ipiv, info
}

// zlarfg makes the reflector H = I - tau·v·vᴴ with Hᴴ·(alpha, x) =
// (beta, 0), beta real, as LAPACK's zlarfg: x is overwritten by v's tail
// (v's head is 1) and alpha's slot by beta.
func zlarfg(alpha *complex128, x []complex128) complex128 {
	xnorm := 0.0
	for _, v := range x {
		xnorm = math.Hypot(xnorm, cmplx.Abs(v))
	}
	ar, ai := real(*alpha), imag(*alpha)
	if xnorm == 0 && ai == 0 {
		return 0
	}
	beta := -math.Copysign(math.Hypot(math.Hypot(ar, ai), xnorm), ar)
	tau := complex((beta-ar)/beta, -ai/beta)
	scale := 1 / (*alpha - complex(beta, 0))
	for i := range x {
		x[i] *= scale
	}
	*alpha = complex(beta, 0)
	return tau
}

// zlarfLeft applies H = I - tau·v·vᴴ from the left to the rows r0.. and
// columns c0..c1-1 of a (n columns), v = (1, a[r0+1.., col]).
func zlarfLeft(a []complex128, n, m, r0, col, c0, c1 int, tau complex128) {
	if tau == 0 {
		return
	}
	v := func(i int) complex128 {
		if i == r0 {
			return 1
		}
		return a[i*n+col]
	}
	for c := c0; c < c1; c++ {
		var w complex128 // vᴴ·C(:,c)
		for i := r0; i < m; i++ {
			w += cmplx.Conj(v(i)) * a[i*n+c]
		}
		w *= tau
		for i := r0; i < m; i++ {
			a[i*n+c] -= v(i) * w
		}
	}
}

// zgeqr2 computes A = Q·R in place as LAPACK's zgeqr2: R on and above the
// diagonal, reflector tails below it, scalars in tau (min(m,n) of them).
func zgeqr2(m, n int, a, tau []complex128) {
	for j := range min(m, n) {
		x := make([]complex128, m-j-1)
		for i := range x {
			x[i] = a[(j+1+i)*n+j]
		}
		t := zlarfg(&a[j*n+j], x)
		for i := range x {
			a[(j+1+i)*n+j] = x[i]
		}
		tau[j] = t
		// Apply Hᴴ (scalar conj(tau)) to the trailing columns.
		beta := a[j*n+j]
		a[j*n+j] = 1
		zlarfLeft(a, n, m, j, j, j+1, n, cmplx.Conj(t))
		a[j*n+j] = beta
	}
}

// zung2r overwrites the m×n a (n ≤ m) holding k reflectors with the first
// n columns of Q = H(1)·…·H(k), as LAPACK's zung2r.
func zung2r(m, n, k int, a, tau []complex128) {
	for j := k; j < n; j++ {
		for l := range m {
			a[l*n+j] = 0
		}
		a[j*n+j] = 1
	}
	for i := k - 1; i >= 0; i-- {
		if i < n-1 {
			a[i*n+i] = 1
			zlarfLeft(a, n, m, i, i, i+1, n, tau[i])
		}
		for l := i + 1; l < m; l++ {
			a[l*n+i] *= -tau[i]
		}
		a[i*n+i] = 1 - tau[i]
		for l := range i {
			a[l*n+i] = 0
		}
	}
}

// ztrsm solves op(A)·X = alpha·B (side L, A m×m) or X·op(A) = alpha·B
// (side R, A n×n) in place in the m×n b, reading only A's uplo triangle
// (and taking its diagonal as 1 when diag is 'U').
func ztrsm(f trsmFlags, m, n int, a, b []complex128) {
	k := m
	if f.side == 'R' {
		k = n
	}
	// t is op(A) as a dense triangular matrix.
	t := make([]complex128, k*k)
	for i := range k {
		for j := range k {
			if (f.uplo == 'L') != (i >= j) && i != j {
				continue
			}
			v := a[i*k+j]
			if i == j && f.diag == 'U' {
				v = 1
			}
			switch f.trans {
			case 'N':
				t[i*k+j] = v
			case 'T':
				t[j*k+i] = v
			default:
				t[j*k+i] = cmplx.Conj(v)
			}
		}
	}
	lower := (f.uplo == 'L') == (f.trans == 'N')
	for i := range b {
		b[i] *= f.alpha
	}
	if f.side == 'L' {
		for c := range n {
			for s := range m {
				i := s // forward substitution for lower, backward for upper
				if !lower {
					i = m - 1 - s
				}
				v := b[i*n+c]
				for j := range m {
					if (lower && j < i) || (!lower && j > i) {
						v -= t[i*k+j] * b[j*n+c]
					}
				}
				b[i*n+c] = v / t[i*k+i]
			}
		}
		return
	}
	// X·T = B column by column of X: x_j = (b_j - Σ_{i≠j} x_i·T(i,j)) / T(j,j),
	// in increasing j when T is upper, decreasing when lower.
	for r := range m {
		for s := range n {
			j := s
			if lower {
				j = n - 1 - s
			}
			v := b[r*n+j]
			for i := range n {
				if (lower && i > j) || (!lower && i < j) {
					v -= b[r*n+i] * t[i*k+j]
				}
			}
			b[r*n+j] = v / t[j*k+j]
		}
	}
}
