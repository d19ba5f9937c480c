package eval

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	blasgonum "gonum.org/v1/gonum/blas/gonum"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"

	"github.com/axle-ml/axle/hlo"
)

// The factorizations and solvers JAX's CPU lowering calls (lax.linalg's
// cholesky, lu, qr, triangular_solve, tridiagonal_solve), with the
// operands, results and attributes of jaxlib/cpu/lapack_kernels.cc's FFI
// handlers.
//
// f32 and c64 are computed in float64 / complex128 and rounded once on
// output: gonum's LAPACK is float64 only, so an f32 result can differ from
// single-precision LAPACK's in the last bits. Real types use gonum's
// routines (blocked, as LAPACK's); complex types use the unblocked
// algorithms in custom_call_lapack_complex.go.

var (
	lapack64 = lapackgonum.Implementation{}
	blas64   = blasgonum.Implementation{}
)

func uploOf(c byte) blas.Uplo {
	if c == 'U' {
		return blas.Upper
	}
	return blas.Lower
}

// squareWith checks the operands of a call on one batch of square
// matrices (operand 0, rank 2 or more) and reads the character
// attributes attrs, in order.
func (c *lapackCall) squareWith(attrs ...charAttr) (matrixBatch, []byte, error) {
	if err := c.checkOperands(2); err != nil {
		return matrixBatch{}, nil, err
	}
	if _, err := c.squareOperand(0); err != nil {
		return matrixBatch{}, nil, err
	}
	flags, err := c.chars(attrs...)
	if err != nil {
		return matrixBatch{}, nil, err
	}
	return c.matrices(0), flags, nil
}

// squareOperand returns n for operand i of shape [..., n, n].
func (c *lapackCall) squareOperand(i int) (int, error) {
	s := c.ops[i].Shape()
	r, cl := s.Dims[s.Rank()-2], s.Dims[s.Rank()-1]
	if r != cl {
		return 0, fmt.Errorf("operand %d is %s, want square matrices", i, s.HumanString())
	}
	return int(r), nil
}

// kPotrf: x → (x_out, info). x_out holds the Cholesky factor in the
// triangle uplo names (A = L·Lᴴ or Uᴴ·U); the other triangle is x's.
// info is 0, or the order j of the first leading minor that is not
// positive definite.
func kPotrf(c *lapackCall) ([]*hlo.Literal, error) {
	x, f, err := c.squareWith(uploAttr)
	if err != nil {
		return nil, err
	}
	n, uplo := x.n, f[0]
	if err := c.checkResults(x.shape, shapeOf(hlo.S32, x.batch)); err != nil {
		return nil, err
	}
	info := make([]int64, x.nb)
	if c.dtype.IsComplex() {
		_, _, a := c.cplxMats(0)
		for b := range info {
			info[b] = int64(zpotf2(uplo == 'L', n, a[b*n*n:(b+1)*n*n]))
		}
		return []*hlo.Literal{c.cplxMatsOut(0, a), c.intOut(1, info)}, nil
	}
	_, _, a := c.realMats(0)
	for b := range info {
		m := a[b*n*n : (b+1)*n*n]
		orig := make([]complex128, len(m))
		for i, v := range m {
			orig[i] = complex(v, 0)
		}
		if n > 0 && !lapack64.Dpotrf(uploOf(uplo), n, m, n) {
			// gonum reports only failure; the unblocked algorithm finds
			// the order of the failing minor LAPACK's info gives.
			info[b] = int64(zpotf2(uplo == 'L', n, orig))
		}
	}
	return []*hlo.Literal{c.realMatsOut(0, a), c.intOut(1, info)}, nil
}

// kGetrf: x → (x_out, ipiv, info): x = P·L·U with L unit lower (below the
// diagonal of x_out) and U upper; ipiv holds LAPACK's 1-based row swaps;
// info is 0 or the 1-based index of the first exactly zero U(i,i).
func kGetrf(c *lapackCall) ([]*hlo.Literal, error) {
	if err := c.checkOperands(2); err != nil {
		return nil, err
	}
	x := c.matrices(0)
	m, n, k, nb := x.m, x.n, x.k, x.nb
	if err := c.checkResults(x.shape, shapeOf(hlo.S32, x.batch, int64(k)), shapeOf(hlo.S32, x.batch)); err != nil {
		return nil, err
	}
	ipiv, info := make([]int64, nb*k), make([]int64, nb)
	if c.dtype.IsComplex() {
		_, _, a := c.cplxMats(0)
		for b := range nb {
			piv, inf := zgetf2(m, n, a[b*m*n:(b+1)*m*n])
			copy(ipiv[b*k:], piv)
			info[b] = int64(inf)
		}
		return []*hlo.Literal{c.cplxMatsOut(0, a), c.intOut(1, ipiv), c.intOut(2, info)}, nil
	}
	_, _, a := c.realMats(0)
	piv := make([]int, k)
	for b := range nb {
		mat := a[b*m*n : (b+1)*m*n]
		if k > 0 {
			lapack64.Dgetrf(m, n, mat, n, piv)
		}
		for i, p := range piv {
			ipiv[b*k+i] = int64(p + 1) // gonum's pivots are 0-based
		}
		for i := range k {
			if mat[i*n+i] == 0 {
				info[b] = int64(i + 1)
				break
			}
		}
	}
	return []*hlo.Literal{c.realMatsOut(0, a), c.intOut(1, ipiv), c.intOut(2, info)}, nil
}

// workQuery returns the optimal workspace a gonum routine reports for
// lwork = -1.
func workQuery(f func(work []float64, lwork int)) []float64 {
	w := make([]float64, 1)
	f(w, -1)
	return make([]float64, max(1, int(w[0])))
}

// kGeqrf: x → (x_out, tau): R in the upper triangle of x_out, the
// Householder vectors (implicit unit head) below it, their scalars in tau.
func kGeqrf(c *lapackCall) ([]*hlo.Literal, error) {
	if err := c.checkOperands(2); err != nil {
		return nil, err
	}
	x := c.matrices(0)
	m, n, k, nb := x.m, x.n, x.k, x.nb
	if err := c.checkResults(x.shape, shapeOf(c.dtype, x.batch, int64(k))); err != nil {
		return nil, err
	}
	if c.dtype.IsComplex() {
		_, _, a := c.cplxMats(0)
		tau := make([]complex128, nb*k)
		for b := range nb {
			zgeqr2(m, n, a[b*m*n:(b+1)*m*n], tau[b*k:(b+1)*k])
		}
		return []*hlo.Literal{c.cplxMatsOut(0, a), c.cplxVecOut(1, tau)}, nil
	}
	_, _, a := c.realMats(0)
	tau := make([]float64, nb*k)
	for b := range nb {
		if k == 0 {
			break
		}
		mat, t := a[b*m*n:(b+1)*m*n], tau[b*k:(b+1)*k]
		work := workQuery(func(w []float64, l int) { lapack64.Dgeqrf(m, n, mat, n, t, w, l) })
		lapack64.Dgeqrf(m, n, mat, n, t, work, len(work))
	}
	return []*hlo.Literal{c.realMatsOut(0, a), c.realVecOut(1, tau)}, nil
}

// kOrgqr: (x, tau) → x_out, the m×n matrix Q with orthonormal columns
// that the k reflectors in x's first columns and tau define (geqrf's
// output); n ≤ m and k ≤ n.
func kOrgqr(c *lapackCall) ([]*hlo.Literal, error) {
	if err := c.checkOperands(2, 1); err != nil {
		return nil, err
	}
	x := c.matrices(0)
	m, n, nb := x.m, x.n, x.nb
	ts := c.ops[1].Shape()
	k := int(ts.Dims[ts.Rank()-1])
	if !ts.SameDims(shapeOf(c.dtype, x.batch, int64(k))) || n > m || k > n {
		return nil, fmt.Errorf("operands %s and %s are not an m×n matrix (n ≤ m) and k ≤ n scalars per batch", x.shape.HumanString(), ts.HumanString())
	}
	if err := c.checkResults(x.shape); err != nil {
		return nil, err
	}
	if c.dtype.IsComplex() {
		_, _, a := c.cplxMats(0)
		tau := c.cplxVec(1)
		for b := range nb {
			zung2r(m, n, k, a[b*m*n:(b+1)*m*n], tau[b*k:(b+1)*k])
		}
		return []*hlo.Literal{c.cplxMatsOut(0, a)}, nil
	}
	_, _, a := c.realMats(0)
	tau := c.realVec(1)
	for b := range nb {
		if n == 0 {
			break
		}
		mat, t := a[b*m*n:(b+1)*m*n], tau[b*k:(b+1)*k]
		work := workQuery(func(w []float64, l int) { lapack64.Dorgqr(m, n, k, mat, n, t, w, l) })
		lapack64.Dorgqr(m, n, k, mat, n, t, work, len(work))
	}
	return []*hlo.Literal{c.realMatsOut(0, a)}, nil
}

// trsmFlags are trsm's side, uplo, trans_x and diag characters and the
// scale alpha of the right-hand side (1 for the FFI call).
type trsmFlags struct {
	side, uplo, trans, diag byte
	alpha                   complex128
}

func (c *lapackCall) trsmFlags() (trsmFlags, error) {
	v, err := c.chars(charAttr{"side", 'L', "LR"}, uploAttr, charAttr{"trans_x", 'N', "NTC"}, charAttr{"diag", 'N', "NU"})
	if err != nil {
		return trsmFlags{}, err
	}
	return trsmFlags{side: v[0], uplo: v[1], trans: v[2], diag: v[3], alpha: 1}, nil
}

// kTrsm: (x, y) → y_out solving op(x)·y_out = y (side L) or
// y_out·op(x) = y (side R), x triangular per uplo and diag.
func kTrsm(c *lapackCall) ([]*hlo.Literal, error) {
	f, err := c.trsmFlags()
	if err != nil {
		return nil, err
	}
	return trsm(c, f)
}

func trsm(c *lapackCall, f trsmFlags) ([]*hlo.Literal, error) {
	if err := c.checkOperands(2, 2); err != nil {
		return nil, err
	}
	k, err := c.squareOperand(0)
	if err != nil {
		return nil, err
	}
	batch := c.batchDims(1, 2)
	ys := c.ops[1].Shape()
	m, n := int(ys.Dims[ys.Rank()-2]), int(ys.Dims[ys.Rank()-1])
	want := m
	if f.side == 'R' {
		want = n
	}
	if k != want || !c.ops[0].Shape().SameDims(shapeOf(c.dtype, batch, int64(k), int64(k))) {
		return nil, fmt.Errorf("triangular operand %s does not fit right-hand sides %s on side %c", c.ops[0].Shape().HumanString(), ys.HumanString(), f.side)
	}
	if err := c.checkResults(ys); err != nil {
		return nil, err
	}
	nb := numBatch(batch)
	if c.dtype.IsComplex() {
		_, _, a := c.cplxMats(0)
		_, _, y := c.cplxMats(1)
		for b := range nb {
			ztrsm(f, m, n, a[b*k*k:(b+1)*k*k], y[b*m*n:(b+1)*m*n])
		}
		return []*hlo.Literal{c.cplxMatsOut(0, y)}, nil
	}
	_, _, a := c.realMats(0)
	_, _, y := c.realMats(1)
	tr := blas.NoTrans
	if f.trans != 'N' {
		tr = blas.Trans // 'C' is 'T' for real matrices
	}
	side, diag := blas.Left, blas.NonUnit
	if f.side == 'R' {
		side = blas.Right
	}
	if f.diag == 'U' {
		diag = blas.Unit
	}
	for b := range nb {
		if m*n == 0 {
			break
		}
		blas64.Dtrsm(side, uploOf(f.uplo), tr, diag, m, n, real(f.alpha), a[b*k*k:(b+1)*k*k], max(1, k), y[b*m*n:(b+1)*m*n], n)
	}
	return []*hlo.Literal{c.realMatsOut(0, y)}, nil
}

// kGtsv: (dl, d, du, b) → (dl_out, d_out, du_out, b_out, info) solving
// the tridiagonal system with sub-diagonal dl[1:], diagonal d and
// super-diagonal du[:n-1] (JAX passes all three with n entries) for each
// column of b. The diagonals come back overwritten by the factorization;
// info is 0 or the index of the first exactly zero pivot.
func kGtsv(c *lapackCall) ([]*hlo.Literal, error) {
	rhsm, err := c.tridiagonalSystems()
	if err != nil {
		return nil, err
	}
	n, nrhs := rhsm.m, rhsm.n
	dl, d, du := c.realVec(0), c.realVec(1), c.realVec(2)
	_, _, rhs := c.realMats(3)
	info := make([]int64, rhsm.nb)
	for b := range info {
		if n == 0 {
			break
		}
		o := b * n
		if !lapack64.Dgtsv(n, nrhs, dl[o+1:o+n], d[o:o+n], du[o:o+n-1], rhs[b*n*nrhs:(b+1)*n*nrhs], max(1, nrhs)) {
			for i := range n {
				if d[o+i] == 0 {
					info[b] = int64(i + 1)
					break
				}
			}
		}
	}
	return []*hlo.Literal{c.realVecOut(0, dl), c.realVecOut(1, d), c.realVecOut(2, du), c.realMatsOut(3, rhs), c.intOut(4, info)}, nil
}

// tridiagonalSystems checks gtsv's operands (dl, d, du, b) and results
// for real and complex types alike and returns b's matrices: each system
// is of order m with n right-hand sides.
func (c *lapackCall) tridiagonalSystems() (matrixBatch, error) {
	if err := c.checkOperands(1, 1, 1, 2); err != nil {
		return matrixBatch{}, err
	}
	b := c.matrices(3)
	ds := shapeOf(c.dtype, b.batch, int64(b.m))
	for i := range 3 {
		if !c.ops[i].Shape().SameDims(ds) {
			return matrixBatch{}, fmt.Errorf("operand %d is %s, want %s", i, c.ops[i].Shape().HumanString(), ds.HumanString())
		}
	}
	return b, c.checkResults(ds, ds, ds, b.shape, shapeOf(hlo.S32, b.batch))
}
