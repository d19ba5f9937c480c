package eval

import (
	"fmt"

	"gonum.org/v1/gonum/lapack"

	"github.com/axle-ml/axle/hlo"
)

// The eigenvalue, singular value and reduction targets of JAX's CPU
// lowering (lax.linalg's eigh, svd, eig, schur, hessenberg,
// tridiagonal), real types only: gonum's LAPACK is float64, and the
// complex forms (heevd, complex gesdd/geev/gees/gehrd, hetrd) are refused
// by name. f32 is computed in float64 and rounded once on output.

// kSyevd: x → (x_out, w, info): the eigenvalues of the symmetric x (its
// uplo triangle is read) in ascending order, and with mode 'V' the
// orthonormal eigenvectors as x_out's columns.
func kSyevd(c *lapackCall) ([]*hlo.Literal, error) {
	x, f, err := c.squareWith(uploAttr, vectorAttr)
	if err != nil {
		return nil, err
	}
	n, nb, uplo, mode := x.n, x.nb, f[0], f[1]
	if err := c.checkResults(x.shape, shapeOf(c.dtype, x.batch, int64(n)), shapeOf(hlo.S32, x.batch)); err != nil {
		return nil, err
	}
	_, _, a := c.realMats(0)
	w, info := make([]float64, nb*n), make([]int64, nb)
	for b := range nb {
		if n == 0 {
			break
		}
		mat, wb := a[b*n*n:(b+1)*n*n], w[b*n:(b+1)*n]
		job := lapack.EVJob(mode)
		work := workQuery(func(wk []float64, l int) { lapack64.Dsyev(job, uploOf(uplo), n, mat, n, wb, wk, l) })
		if !lapack64.Dsyev(job, uploOf(uplo), n, mat, n, wb, work, len(work)) {
			info[b] = 1
		}
	}
	return []*hlo.Literal{c.realMatsOut(0, a), c.realVecOut(1, w), c.intOut(2, info)}, nil
}

// kGesdd: x → (x_out, s, u, vt, info), x = U·diag(s)·Vᵀ with s
// descending. mode 'A' gives U m×m and Vᵀ n×n, 'S' m×k and k×n, 'N' only
// s (u and vt keep the shapes JAX gives them, zero-filled). Computed with
// gonum's Dgesvd: the singular values are LAPACK's; the vectors of a
// repeated singular value may differ by a rotation, as between any two
// LAPACK builds.
func kGesdd(c *lapackCall) ([]*hlo.Literal, error) {
	g, err := c.svdSize(c.dtype)
	if err != nil {
		return nil, err
	}
	m, n, k, nb, uc, vr, mode := g.m, g.n, g.k, g.nb, g.uc, g.vr, g.mode
	_, _, a := c.realMats(0)
	sv, u, vt, info := make([]float64, nb*k), make([]float64, nb*m*uc), make([]float64, nb*vr*n), make([]int64, nb)
	for b := range nb {
		if k == 0 {
			break
		}
		mat, sb := a[b*m*n:(b+1)*m*n], sv[b*k:(b+1)*k]
		ub, vb, ldu, ldvt := u[b*m*uc:(b+1)*m*uc], vt[b*vr*n:(b+1)*vr*n], max(1, uc), max(1, n)
		job := lapack.SVDJob(mode)
		if mode == 'N' {
			ub, vb, ldu, ldvt = nil, nil, 1, 1
		}
		work := workQuery(func(w []float64, l int) { lapack64.Dgesvd(job, job, m, n, mat, n, sb, ub, ldu, vb, ldvt, w, l) })
		if !lapack64.Dgesvd(job, job, m, n, mat, n, sb, ub, ldu, vb, ldvt, work, len(work)) {
			info[b] = 1
		}
	}
	return []*hlo.Literal{c.realMatsOut(0, a), c.realVecOut(1, sv), c.realMatsOut(2, u), c.realMatsOut(3, vt), c.intOut(4, info)}, nil
}

// svdSize is what gesdd and gesvd work on: x's matrices, U m×uc and Vᵀ
// vr×n as mode asks.
type svdSize struct {
	matrixBatch
	uc, vr int
	mode   byte
}

// svdSize checks what gesdd takes for real and complex x alike; the
// singular values are of type sdt.
func (c *lapackCall) svdSize(sdt hlo.DType) (svdSize, error) {
	if err := c.checkOperands(2); err != nil {
		return svdSize{}, err
	}
	mode, err := c.char("mode", 'A', "ASN")
	if err != nil {
		return svdSize{}, err
	}
	x := c.matrices(0)
	g, r := svdSize{x, x.m, x.n, mode}, x.shape.Rank()
	switch mode {
	case 'S':
		g.uc, g.vr = x.k, x.k
	case 'N':
		// JAX sizes the unused u and vt by full_matrices, which mode 'N'
		// does not say: take the result's own.
		if len(c.results) == 5 && c.results[2].Rank() == r && c.results[3].Rank() == r {
			g.uc, g.vr = int(c.results[2].Dims[r-1]), int(c.results[3].Dims[r-2])
		}
	}
	b := x.batch
	return g, c.checkResults(x.shape, shapeOf(sdt, b, int64(x.k)), shapeOf(c.dtype, b, int64(x.m), int64(g.uc)),
		shapeOf(c.dtype, b, int64(g.vr), int64(x.n)), shapeOf(hlo.S32, b))
}

// kGeev: x → (wr, wi, vl, vr, info): the eigenvalues of the general x
// as real and imaginary parts (conjugate pairs adjacent, positive
// imaginary part first) and, per compute_left / compute_right = 'V', the
// left and right eigenvectors as complex columns, each of unit norm with
// its largest component real (LAPACK's dgeev, unpacked as JAX's kernel
// does). info > 0: the QR algorithm failed and the first info-1
// eigenvalues were not computed.
func kGeev(c *lapackCall) ([]*hlo.Literal, error) {
	x, f, err := c.squareWith(leftAttr, rightAttr)
	if err != nil {
		return nil, err
	}
	n, nb, batch, left, right := x.n, x.nb, x.batch, f[0], f[1]
	cdt := hlo.C64
	if c.dtype == hlo.F64 {
		cdt = hlo.C128
	}
	vs := shapeOf(c.dtype, batch, int64(n))
	ms := shapeOf(cdt, batch, int64(n), int64(n))
	if err := c.checkResults(vs, vs, ms, ms, shapeOf(hlo.S32, batch)); err != nil {
		return nil, err
	}
	_, _, a := c.realMats(0)
	wr, wi, info := make([]float64, nb*n), make([]float64, nb*n), make([]int64, nb)
	vl, vr := make([]complex128, nb*n*n), make([]complex128, nb*n*n)
	for b := range nb {
		if n == 0 {
			break
		}
		mat, r, i := a[b*n*n:(b+1)*n*n], wr[b*n:(b+1)*n], wi[b*n:(b+1)*n]
		var l, rv []float64
		if left == 'V' {
			l = make([]float64, n*n)
		}
		if right == 'V' {
			rv = make([]float64, n*n)
		}
		jl, jr := lapack.LeftEVJob(left), lapack.RightEVJob(right)
		work := workQuery(func(w []float64, lw int) { lapack64.Dgeev(jl, jr, n, mat, n, r, i, l, n, rv, n, w, lw) })
		if first := lapack64.Dgeev(jl, jr, n, mat, n, r, i, l, n, rv, n, work, len(work)); first > 0 {
			info[b] = int64(first)
			continue
		}
		unpackEigenvectors(n, i, l, vl[b*n*n:(b+1)*n*n])
		unpackEigenvectors(n, i, rv, vr[b*n*n:(b+1)*n*n])
	}
	return []*hlo.Literal{c.realVecOut(0, wr), c.realVecOut(1, wi), c.cplxMatsOut(2, vl), c.cplxMatsOut(3, vr), c.intOut(4, info)}, nil
}

// unpackEigenvectors turns dgeev's real eigenvector columns into complex
// ones: a conjugate pair (wi[j] > 0) is stored as columns j (real part)
// and j+1 (imaginary part). v is nil when the vectors were not computed.
func unpackEigenvectors(n int, wi, v []float64, out []complex128) {
	if v == nil {
		return
	}
	for j := 0; j < n; j++ {
		if wi[j] == 0 || j == n-1 {
			for i := range n {
				out[i*n+j] = complex(v[i*n+j], 0)
			}
			continue
		}
		for i := range n {
			re, im := v[i*n+j], v[i*n+j+1]
			out[i*n+j] = complex(re, im)
			out[i*n+j+1] = complex(re, -im)
		}
		j++
	}
}

// geesArgs checks what gees takes for real and complex x alike: one
// batch of square matrices, the mode, and sort 'N'.
func (c *lapackCall) geesArgs() (matrixBatch, byte, error) {
	x, f, err := c.squareWith(vectorAttr, charAttr{"sort", 'N', "NS"})
	if err != nil {
		return x, 0, err
	}
	if sort := f[1]; sort != 'N' {
		return x, 0, fmt.Errorf("sort = %q is not implemented (only 'N', what JAX emits)", sort)
	}
	return x, f[0], nil
}

// kGees: x → (t, vs, wr, wi, sdim, info): the real Schur form x =
// vs·t·vsᵀ (t quasi-upper-triangular with standardized 2×2 blocks for
// complex pairs), its eigenvalues as wr, wi, vs when mode is 'V'. Only
// sort 'N' (JAX's only choice): sdim is 0. Computed as LAPACK's dgees
// without its balancing step: Hessenberg reduction, then the QR
// algorithm accumulating Schur vectors.
func kGees(c *lapackCall) ([]*hlo.Literal, error) {
	x, mode, err := c.geesArgs()
	if err != nil {
		return nil, err
	}
	n, nb, batch := x.n, x.nb, x.batch
	s, vs := x.shape, shapeOf(c.dtype, batch, int64(n))
	if err := c.checkResults(s, s, vs, vs, shapeOf(hlo.S32, batch), shapeOf(hlo.S32, batch)); err != nil {
		return nil, err
	}
	_, _, a := c.realMats(0)
	z, wr, wi := make([]float64, nb*n*n), make([]float64, nb*n), make([]float64, nb*n)
	sdim, info := make([]int64, nb), make([]int64, nb)
	for b := range nb {
		if n == 0 {
			break
		}
		h, zb := a[b*n*n:(b+1)*n*n], z[b*n*n:(b+1)*n*n]
		tau := make([]float64, n-1)
		work := workQuery(func(w []float64, l int) { lapack64.Dgehrd(n, 0, n-1, h, n, tau, w, l) })
		lapack64.Dgehrd(n, 0, n-1, h, n, tau, work, len(work))
		copy(zb, h)
		work = workQuery(func(w []float64, l int) { lapack64.Dorghr(n, 0, n-1, zb, n, tau, w, l) })
		lapack64.Dorghr(n, 0, n-1, zb, n, tau, work, len(work))
		for i := 2; i < n; i++ { // the reflectors below the subdiagonal
			for j := range i - 1 {
				h[i*n+j] = 0
			}
		}
		comp := lapack.SchurOrig
		if mode == 'N' {
			comp = lapack.SchurNone
		}
		r, i := wr[b*n:(b+1)*n], wi[b*n:(b+1)*n]
		work = workQuery(func(w []float64, l int) {
			lapack64.Dhseqr(lapack.EigenvaluesAndSchur, comp, n, 0, n-1, h, n, r, i, zb, n, w, l)
		})
		if u := lapack64.Dhseqr(lapack.EigenvaluesAndSchur, comp, n, 0, n-1, h, n, r, i, zb, n, work, len(work)); u > 0 {
			info[b] = int64(u)
		}
		if mode == 'N' {
			clear(zb)
		}
	}
	return []*hlo.Literal{c.realMatsOut(0, a), c.realMatsOut(1, z), c.realVecOut(2, wr), c.realVecOut(3, wi), c.intOut(4, sdim), c.intOut(5, info)}, nil
}

// kGehrd: x → (x_out, tau, info): Qᵀ·x·Q = H upper Hessenberg, rows and
// columns outside low..high (1-based, JAX's attributes) already
// reduced; H on and above the subdiagonal of x_out, the reflectors below
// it, their scalars in tau (n-1 of them).
func kGehrd(c *lapackCall) ([]*hlo.Literal, error) {
	g, err := c.gehrdSize()
	if err != nil {
		return nil, err
	}
	n, lo, hi, nt, nb := g.n, g.lo, g.hi, g.nt, g.nb
	_, _, a := c.realMats(0)
	tau, info := make([]float64, nb*nt), make([]int64, nb)
	for b := range nb {
		if n <= 1 {
			break
		}
		h, t := a[b*n*n:(b+1)*n*n], tau[b*nt:(b+1)*nt]
		work := workQuery(func(w []float64, l int) { lapack64.Dgehrd(n, lo-1, hi-1, h, n, t, w, l) })
		lapack64.Dgehrd(n, lo-1, hi-1, h, n, t, work, len(work))
	}
	return []*hlo.Literal{c.realMatsOut(0, a), c.realVecOut(1, tau), c.intOut(2, info)}, nil
}

// gehrdSize is what gehrd works on: nb matrices of order n, the 1-based
// rows and columns lo..hi still to reduce, nt reflectors each.
type gehrdSize struct{ n, lo, hi, nt, nb int }

// gehrdSize checks what gehrd takes for real and complex x alike.
func (c *lapackCall) gehrdSize() (gehrdSize, error) {
	x, _, err := c.squareWith()
	if err != nil {
		return gehrdSize{}, err
	}
	n := x.n
	lo, hi := int(c.attrOr("low", 1)), int(c.attrOr("high", int64(n)))
	if n > 0 && (lo < 1 || hi > n || lo > hi) {
		return gehrdSize{}, fmt.Errorf("low = %d, high = %d is not 1 ≤ low ≤ high ≤ %d", lo, hi, n)
	}
	nt := max(0, n-1)
	if err := c.checkResults(x.shape, shapeOf(c.dtype, x.batch, int64(nt)), shapeOf(hlo.S32, x.batch)); err != nil {
		return gehrdSize{}, err
	}
	return gehrdSize{n, lo, hi, nt, x.nb}, nil
}

func (c *lapackCall) attrOr(name string, def int64) int64 {
	if v, ok := c.attrs[name]; ok {
		return v
	}
	return def
}

// kSytrd: x → (x_out, d, e, tau, info): Qᵀ·x·Q = T tridiagonal with
// diagonal d and off-diagonal e; x_out holds T's and the reflectors in
// the uplo triangle as LAPACK's dsytrd.
func kSytrd(c *lapackCall) ([]*hlo.Literal, error) {
	x, f, err := c.squareWith(uploAttr)
	if err != nil {
		return nil, err
	}
	n, nb, uplo := x.n, x.nb, f[0]
	nt := max(0, n-1)
	ds, es := shapeOf(c.dtype, x.batch, int64(n)), shapeOf(c.dtype, x.batch, int64(nt))
	if err := c.checkResults(x.shape, ds, es, es, shapeOf(hlo.S32, x.batch)); err != nil {
		return nil, err
	}
	_, _, a := c.realMats(0)
	d, e, tau, info := make([]float64, nb*n), make([]float64, nb*nt), make([]float64, nb*nt), make([]int64, nb)
	for b := range nb {
		if n == 0 {
			break
		}
		m, db, eb, tb := a[b*n*n:(b+1)*n*n], d[b*n:(b+1)*n], e[b*nt:(b+1)*nt], tau[b*nt:(b+1)*nt]
		work := workQuery(func(w []float64, l int) { lapack64.Dsytrd(uploOf(uplo), n, m, n, db, eb, tb, w, l) })
		lapack64.Dsytrd(uploOf(uplo), n, m, n, db, eb, tb, work, len(work))
	}
	return []*hlo.Literal{c.realMatsOut(0, a), c.realVecOut(1, d), c.realVecOut(2, e), c.realVecOut(3, tau), c.intOut(4, info)}, nil
}
