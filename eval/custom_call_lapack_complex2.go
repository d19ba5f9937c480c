package eval

import (
	"math/cmplx"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Complex gtsv, gehrd, hetrd, unmqr and geqp3, from LAPACK's reference
// algorithms (zgtsv, zgehd2, zhetd2, zunm2r). Row-major: a[i*n+j] is A(i,j).

// applyLeft sets C = (I - tau·v·vᴴ)·C for C = a's rows r0.. (len(v) of
// them) and columns c0..c1-1, n columns in all.
func applyLeft(a []complex128, n, r0, c0, c1 int, v []complex128, tau complex128) {
	if tau == 0 {
		return
	}
	for c := c0; c < c1; c++ {
		var w complex128
		for i, vi := range v {
			w += cmplx.Conj(vi) * a[(r0+i)*n+c]
		}
		w *= tau
		for i, vi := range v {
			a[(r0+i)*n+c] -= vi * w
		}
	}
}

// applyRight sets C = C·(I - tau·v·vᴴ) for C = a's rows r0..r1-1 and
// columns c0.. (len(v) of them).
func applyRight(a []complex128, n, r0, r1, c0 int, v []complex128, tau complex128) {
	if tau == 0 {
		return
	}
	for r := r0; r < r1; r++ {
		var w complex128
		for j, vj := range v {
			w += a[r*n+c0+j] * vj
		}
		w *= tau
		for j, vj := range v {
			a[r*n+c0+j] -= w * cmplx.Conj(vj)
		}
	}
}

// columnReflector makes the reflector annihilating a(r+1.., col) below
// a(r, col) (rows up to end-1), leaves beta in a(r, col) and the tail in
// place, and returns v (head 1) and tau.
func columnReflector(a []complex128, n, r, col, end int) ([]complex128, complex128) {
	x := make([]complex128, end-r-1)
	for i := range x {
		x[i] = a[(r+1+i)*n+col]
	}
	tau := zlarfg(&a[r*n+col], x)
	v := append([]complex128{1}, x...)
	for i := range x {
		a[(r+1+i)*n+col] = x[i]
	}
	return v, tau
}

// zgehd2 reduces a to upper Hessenberg form Qᴴ·A·Q in rows and columns
// lo..hi (0-based, inclusive), as LAPACK's zgehd2.
func zgehd2(n, lo, hi int, a, tau []complex128) {
	for i := lo; i < hi; i++ {
		v, t := columnReflector(a, n, i+1, i, hi+1)
		tau[i] = t
		applyRight(a, n, 0, hi+1, i+1, v, t)
		applyLeft(a, n, i+1, i+1, n, v, cmplx.Conj(t))
	}
}

// zhetd2Lower reduces the Hermitian a (lower triangle read) to real
// tridiagonal form as LAPACK's zhetd2 with uplo 'L'; the upper triangle of
// a comes back as it was.
func zhetd2Lower(n int, a []complex128, d, e []float64, tau []complex128) {
	orig := append([]complex128(nil), a...)
	for i := range n { // full Hermitian storage from the lower triangle
		a[i*n+i] = complex(real(a[i*n+i]), 0)
		for j := range i {
			a[j*n+i] = cmplx.Conj(a[i*n+j])
		}
	}
	for i := 0; i < n-1; i++ {
		v, t := columnReflector(a, n, i+1, i, n)
		e[i] = real(a[(i+1)*n+i])
		tau[i] = t
		// Hᴴ·A·H on the trailing block, then mirror the reflected column.
		applyLeft(a, n, i+1, i+1, n, v, cmplx.Conj(t))
		applyRight(a, n, i+1, n, i+1, v, t)
		for j := i + 1; j < n; j++ {
			a[i*n+j] = cmplx.Conj(a[j*n+i])
		}
		d[i] = real(a[i*n+i])
	}
	if n > 0 {
		d[n-1] = real(a[(n-1)*n+n-1])
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			a[i*n+j] = orig[i*n+j]
		}
	}
}

func kGtsvComplex(c *lapackCall) ([]*hlo.Literal, error) {
	rhsm, err := c.tridiagonalSystems()
	if err != nil {
		return nil, err
	}
	n, nrhs := rhsm.m, rhsm.n
	dl, d, du := c.cplxVec(0), c.cplxVec(1), c.cplxVec(2)
	_, _, rhs := c.cplxMats(3)
	info := make([]int64, rhsm.nb)
	for b := range info {
		o := b * n
		info[b] = int64(zgtsv(n, nrhs, dl[o:o+n], d[o:o+n], du[o:o+n], rhs[b*n*nrhs:(b+1)*n*nrhs]))
	}
	return []*hlo.Literal{c.cplxVecOut(0, dl), c.cplxVecOut(1, d), c.cplxVecOut(2, du), c.cplxMatsOut(3, rhs), c.intOut(4, info)}, nil
}

// zgtsv solves the tridiagonal system (sub-diagonal dl[1:], diagonal d,
// super-diagonal du[:n-1]) for the n×nrhs b by Gaussian elimination with
// partial pivoting, as LAPACK's zgtsv; it returns info.
func zgtsv(n, nrhs int, dl, d, du, b []complex128) int {
	sub := dl[min(1, n):] // LAPACK's DL(i) is JAX's dl[i+1]
	for k := 0; k < n-1; k++ {
		if cabs1(d[k]) >= cabs1(sub[k]) {
			if d[k] == 0 {
				return k + 1
			}
			mult := sub[k] / d[k]
			d[k+1] -= mult * du[k]
			for j := range nrhs {
				b[(k+1)*nrhs+j] -= mult * b[k*nrhs+j]
			}
			if k < n-2 {
				sub[k] = 0
			}
			continue
		}
		// Interchange rows k and k+1.
		mult := d[k] / sub[k]
		d[k] = sub[k]
		temp := d[k+1]
		d[k+1] = du[k] - mult*temp
		if k < n-2 {
			sub[k] = du[k+1]
			du[k+1] = -mult * sub[k]
		}
		du[k] = temp
		for j := range nrhs {
			b[k*nrhs+j], b[(k+1)*nrhs+j] = b[(k+1)*nrhs+j], b[k*nrhs+j]-mult*b[(k+1)*nrhs+j]
		}
	}
	if n > 0 && d[n-1] == 0 {
		return n
	}
	for j := range nrhs {
		for k := n - 1; k >= 0; k-- {
			v := b[k*nrhs+j]
			if k+1 < n {
				v -= du[k] * b[(k+1)*nrhs+j]
			}
			if k+2 < n {
				v -= sub[k] * b[(k+2)*nrhs+j]
			}
			b[k*nrhs+j] = v / d[k]
		}
	}
	return 0
}

func kGehrdComplex(c *lapackCall) ([]*hlo.Literal, error) {
	g, err := c.gehrdSize()
	if err != nil {
		return nil, err
	}
	n, lo, hi, nt, nb := g.n, g.lo, g.hi, g.nt, g.nb
	_, _, a := c.cplxMats(0)
	tau := make([]complex128, nb*nt)
	for b := range nb {
		if n > 1 {
			zgehd2(n, lo-1, hi-1, a[b*n*n:(b+1)*n*n], tau[b*nt:(b+1)*nt])
		}
	}
	return []*hlo.Literal{c.cplxMatsOut(0, a), c.cplxVecOut(1, tau), c.intOut(2, make([]int64, nb))}, nil
}

func kHetrd(c *lapackCall) ([]*hlo.Literal, error) {
	x, f, err := c.squareWith(uploAttr)
	if err != nil {
		return nil, err
	}
	n, nb, batch, uplo := x.n, x.nb, x.batch, f[0]
	nt := max(0, n-1)
	rdt := c.dtype.ComplexComponent()
	if err := c.checkResults(x.shape, shapeOf(rdt, batch, int64(n)), shapeOf(rdt, batch, int64(nt)),
		shapeOf(c.dtype, batch, int64(nt)), shapeOf(hlo.S32, batch)); err != nil {
		return nil, err
	}
	_, _, a := c.cplxMats(0)
	d, e, tau := make([]float64, nb*n), make([]float64, nb*nt), make([]complex128, nb*nt)
	for b := range nb {
		m, db, eb, tb := a[b*n*n:(b+1)*n*n], d[b*n:(b+1)*n], e[b*nt:(b+1)*nt], tau[b*nt:(b+1)*nt]
		if uplo == 'L' {
			zhetd2Lower(n, m, db, eb, tb)
			continue
		}
		// zhetd2's upper variant is the lower one on the matrix with rows
		// and columns reversed (its lower triangle is A's upper one): the
		// same reflectors, last step first, their vectors reversed.
		reverseMatrix(n, m)
		zhetd2Lower(n, m, db, eb, tb)
		reverseMatrix(n, m)
		slices.Reverse(db)
		slices.Reverse(eb)
		slices.Reverse(tb)
	}
	return []*hlo.Literal{c.cplxMatsOut(0, a), c.realVecOut(1, d), c.realVecOut(2, e), c.cplxVecOut(3, tau), c.intOut(4, make([]int64, nb))}, nil
}

// kUnmqr: complex ormqr, op(Q) = Qᴴ when transpose.
func kUnmqr(c *lapackCall) ([]*hlo.Literal, error) {
	q, err := c.reflectorApply()
	if err != nil {
		return nil, err
	}
	batch, m, n, ar, ac, k, left, trans, order := q.batch, q.m, q.n, q.ar, q.ac, q.k, q.left, q.trans, q.order
	_, _, a := c.cplxMats(0)
	tau := c.cplxVec(1)
	_, _, y := c.cplxMats(2)
	for b := range numBatch(batch) {
		am, t, ym := a[b*ar*ac:(b+1)*ar*ac], tau[b*k:(b+1)*k], y[b*m*n:(b+1)*m*n]
		// Q = H(0)·…·H(k-1). Left: Q·C applies H(k-1) first, Qᴴ·C H(0)
		// first (with conj(tau)); right: C·Q applies H(0) first.
		for s := range k {
			i := s
			if left != trans {
				i = k - 1 - s
			}
			v := make([]complex128, order-i)
			v[0] = 1
			for r := i + 1; r < order; r++ {
				v[r-i] = am[r*ac+i]
			}
			ti := t[i]
			if trans {
				ti = cmplx.Conj(ti)
			}
			if left {
				applyLeft(ym, n, i, 0, n, v, ti)
			} else {
				applyRight(ym, n, 0, m, i, v, ti)
			}
		}
	}
	return []*hlo.Literal{c.cplxMatsOut(0, y)}, nil
}

// reverseMatrix reverses the order of the rows and of the columns of the
// n×n a in place.
func reverseMatrix(n int, a []complex128) {
	slices.Reverse(a)
}

// zgeqp3 is LAPACK's column-pivoted QR, unblocked: the columns jpvt marks
// (nonzero) move to the front and are factored in order, then each step
// takes the remaining column of largest norm (the first of equal ones).
// jpvt comes back 1-based: A·P's column j is A's column jpvt[j].
func zgeqp3(m, n int, a, tau []complex128, jpvt []int64) {
	perm := make([]int64, n)
	fixed := 0
	for j := range n {
		perm[j] = int64(j + 1)
	}
	swap := func(i, j int) {
		for r := range m {
			a[r*n+i], a[r*n+j] = a[r*n+j], a[r*n+i]
		}
		perm[i], perm[j] = perm[j], perm[i]
	}
	for j := range n {
		if jpvt[j] != 0 {
			swap(fixed, j)
			fixed++
		}
	}
	for j := range min(m, n) {
		if j >= fixed {
			best, bestNorm := j, -1.0
			for c := j; c < n; c++ {
				var s float64
				for r := j; r < m; r++ {
					s += real(a[r*n+c])*real(a[r*n+c]) + imag(a[r*n+c])*imag(a[r*n+c])
				}
				if s > bestNorm {
					best, bestNorm = c, s
				}
			}
			swap(j, best)
		}
		v, t := columnReflector(a, n, j, j, m)
		tau[j] = t
		applyLeft(a, n, j, j+1, n, v, cmplx.Conj(t))
	}
	copy(jpvt, perm)
}

func kGeqp3Complex(c *lapackCall) ([]*hlo.Literal, error) {
	x, jp, err := c.pivotedQRArgs()
	if err != nil {
		return nil, err
	}
	m, n, k, nb := x.m, x.n, x.k, x.nb
	_, _, a := c.cplxMats(0)
	tau := make([]complex128, nb*k)
	for b := range nb {
		zgeqp3(m, n, a[b*m*n:(b+1)*m*n], tau[b*k:(b+1)*k], jp[b*n:(b+1)*n])
	}
	return []*hlo.Literal{c.cplxMatsOut(0, a), c.intOut(1, jp), c.cplxVecOut(2, tau)}, nil
}
