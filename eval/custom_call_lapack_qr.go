package eval

import (
	"fmt"

	"gonum.org/v1/gonum/blas"

	"github.com/axle-ml/axle/hlo"
)

// The rest of JAX's QR family: column-pivoted QR (lax.linalg.qr with
// pivoting=True) and multiplying by Q without forming it (ormqr, behind
// jax.lax.linalg.householder_product's users). Real types, through gonum.

// kGeqp3: (x, jpvt) → (x_out, jpvt_out, tau): A·P = Q·R with column
// pivoting. On entry a nonzero jpvt(j) moves column j to the front; on
// return jpvt(j) = i (1-based) says A·P's column j is A's column i.
func kGeqp3(c *lapackCall) ([]*hlo.Literal, error) {
	x, jp, err := c.pivotedQRArgs()
	if err != nil {
		return nil, err
	}
	m, n, k, nb := x.m, x.n, x.k, x.nb
	_, _, a := c.realMats(0)
	tau := make([]float64, nb*k)
	piv := make([]int, n)
	for b := range nb {
		if m*n == 0 {
			break
		}
		for j := range n {
			piv[j] = -1 // free
			if jp[b*n+j] != 0 {
				piv[j] = 0 // leading
			}
		}
		mat, t := a[b*m*n:(b+1)*m*n], tau[b*k:(b+1)*k]
		work := workQuery(func(w []float64, l int) { lapack64.Dgeqp3(m, n, mat, n, piv, t, w, l) })
		lapack64.Dgeqp3(m, n, mat, n, piv, t, work, len(work))
		for j, p := range piv {
			jp[b*n+j] = int64(p + 1)
		}
	}
	return []*hlo.Literal{c.realMatsOut(0, a), c.intOut(1, jp), c.realVecOut(2, tau)}, nil
}

// pivotedQRArgs checks what geqp3 takes for real and complex x alike
// and returns x's matrices and the pivots jpvt in memory order.
func (c *lapackCall) pivotedQRArgs() (matrixBatch, []int64, error) {
	if len(c.ops) != 2 || c.ops[0].Shape().DType != c.dtype || c.ops[0].Shape().Rank() < 2 {
		return matrixBatch{}, nil, fmt.Errorf("takes a matrix of %s and s32 pivots", c.dtype)
	}
	x := c.matrices(0)
	ps := shapeOf(hlo.S32, x.batch, int64(x.n))
	if !c.ops[1].Shape().SameDims(ps) || c.ops[1].Shape().DType != hlo.S32 {
		return matrixBatch{}, nil, fmt.Errorf("operand 1 is %s, want %s", c.ops[1].Shape().HumanString(), ps.HumanString())
	}
	if err := c.checkResults(x.shape, ps, shapeOf(c.dtype, x.batch, int64(x.k))); err != nil {
		return matrixBatch{}, nil, err
	}
	return x, toPhys(loadInt64(c.ops[1]), c.ops[1].Shape().Dims, c.operandLayout(1)), nil
}

// kOrmqr: (a, tau, c) → c_out = op(Q)·c (left) or c·op(Q) (right), Q the
// product of the k reflectors geqrf left in a's columns, op(Q) = Qᵀ when
// transpose. a is m×k (left) or n×k (right) for c m×n.
func kOrmqr(c *lapackCall) ([]*hlo.Literal, error) {
	q, err := c.reflectorApply()
	if err != nil {
		return nil, err
	}
	batch, m, n, ar, ac, k, left, trans := q.batch, q.m, q.n, q.ar, q.ac, q.k, q.left, q.trans
	_, _, a := c.realMats(0)
	tau := c.realVec(1)
	_, _, y := c.realMats(2)
	side, tr := blas.Left, blas.NoTrans
	if !left {
		side = blas.Right
	}
	if trans {
		tr = blas.Trans
	}
	for b := range numBatch(batch) {
		if m*n == 0 || k == 0 {
			break
		}
		am, t, ym := a[b*ar*ac:(b+1)*ar*ac], tau[b*k:(b+1)*k], y[b*m*n:(b+1)*m*n]
		work := workQuery(func(w []float64, l int) { lapack64.Dormqr(side, tr, m, n, k, am, ac, t, ym, n, w, l) })
		lapack64.Dormqr(side, tr, m, n, k, am, ac, t, ym, n, work, len(work))
	}
	return []*hlo.Literal{c.realMatsOut(0, y)}, nil
}

// reflectorCall is what ormqr and unmqr read from their operands (a, tau,
// c): c is m×n, the k reflectors lie in a's ar×ac columns, of order m
// (left) or n (right), applied as Q or, with transpose, its adjoint.
type reflectorCall struct {
	batch           []int64
	m, n, ar, ac, k int
	left, trans     bool
	order           int
}

// reflectorApply checks ormqr's and unmqr's operands and results.
func (c *lapackCall) reflectorApply() (reflectorCall, error) {
	var q reflectorCall
	if err := c.checkOperands(2, 1, 2); err != nil {
		return q, err
	}
	q.batch = c.batchDims(2, 2)
	cs, as, ts := c.ops[2].Shape(), c.ops[0].Shape(), c.ops[1].Shape()
	q.m, q.n = int(cs.Dims[cs.Rank()-2]), int(cs.Dims[cs.Rank()-1])
	q.ar, q.ac = int(as.Dims[as.Rank()-2]), int(as.Dims[as.Rank()-1])
	q.k = int(ts.Dims[ts.Rank()-1])
	q.left, q.trans = c.attrOr("left", 1) != 0, c.attrOr("transpose", 0) != 0
	q.order = q.m
	if !q.left {
		q.order = q.n
	}
	if q.ar != q.order || q.k > q.ac || q.k > q.order || !as.SameDims(shapeOf(c.dtype, q.batch, int64(q.ar), int64(q.ac))) || !ts.SameDims(shapeOf(c.dtype, q.batch, int64(q.k))) {
		return q, fmt.Errorf("reflectors %s and scalars %s do not fit %s", as.HumanString(), ts.HumanString(), cs.HumanString())
	}
	return q, c.checkResults(cs)
}
