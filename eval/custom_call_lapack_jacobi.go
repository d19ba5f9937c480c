package eval

import (
	"cmp"
	"math"
	"math/cmplx"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Complex eigh and svd (lapack_{c,z}heevd_ffi, lapack_{c,z}gesdd_ffi and
// gesvd_ffi). gonum has no complex LAPACK, so these use Jacobi's methods —
// slow (a few n³ sweeps) but simple and accurate to working precision,
// which suits a reference evaluator. The eigen- and singular values are
// LAPACK's (to rounding); the vectors are another valid choice (a phase
// per vector, or a rotation within a repeated value).

// jacobiRotation returns the rotation J (J_pp = J_qq = c, J_pq = s·e^{iφ},
// J_qp = -s·e^{-iφ}) that zeroes the (p,q) entry of Jᴴ·H·J for the
// Hermitian 2×2 [[app, apq], [conj(apq), aqq]], φ = arg(apq).
func jacobiRotation(app, aqq float64, apq complex128) (c float64, s, sc complex128) {
	r := cmplx.Abs(apq)
	phase := apq / complex(r, 0)
	zeta := (aqq - app) / (2 * r)
	t := 1 / (math.Abs(zeta) + math.Sqrt(1+zeta*zeta))
	if zeta < 0 {
		t = -t
	}
	c = 1 / math.Sqrt(1+t*t)
	st := complex(c*t, 0)
	return c, st * phase, -st * cmplx.Conj(phase)
}

// rotateCols sets columns p, q of the rows×cols x to x·J.
func rotateCols(x []complex128, rows, cols, p, q int, c float64, jpq, jqp complex128) {
	cc := complex(c, 0)
	for k := range rows {
		xp, xq := x[k*cols+p], x[k*cols+q]
		x[k*cols+p] = xp*cc + xq*jqp
		x[k*cols+q] = xp*jpq + xq*cc
	}
}

// zheevJacobi diagonalizes the Hermitian n×n a (full storage) by cyclic
// Jacobi rotations, returning the eigenvalues ascending and the
// eigenvectors as the columns of v.
func zheevJacobi(n int, a []complex128) (w []float64, v []complex128) {
	v = make([]complex128, n*n)
	for i := range n {
		v[i*n+i] = 1
	}
	var norm float64
	for _, x := range a {
		norm += real(x)*real(x) + imag(x)*imag(x)
	}
	for sweep := 0; sweep < 100; sweep++ {
		var off float64
		for p := range n {
			for q := p + 1; q < n; q++ {
				off += 2 * math.Pow(cmplx.Abs(a[p*n+q]), 2)
			}
		}
		if off <= 1e-32*norm || off == 0 {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				if a[p*n+q] == 0 {
					continue
				}
				c, jpq, jqp := jacobiRotation(real(a[p*n+p]), real(a[q*n+q]), a[p*n+q])
				rotateCols(a, n, n, p, q, c, jpq, jqp)
				// Rows: A ← Jᴴ·A.
				cc := complex(c, 0)
				for k := range n {
					ap, aq := a[p*n+k], a[q*n+k]
					a[p*n+k] = cc*ap + cmplx.Conj(jqp)*aq
					a[q*n+k] = cmplx.Conj(jpq)*ap + cc*aq
				}
				a[p*n+q], a[q*n+p] = 0, 0
				rotateCols(v, n, n, p, q, c, jpq, jqp)
			}
		}
	}
	w = make([]float64, n)
	for i := range n {
		w[i] = real(a[i*n+i])
	}
	order := sortedOrder(w, func(x, y float64) int { return cmp.Compare(x, y) })
	return permute(w, order), permuteCols(v, n, order)
}

// sortedOrder returns the indices of w in the order cmpf sorts them (a
// stable sort: ties keep their order).
func sortedOrder(w []float64, cmpf func(x, y float64) int) []int {
	order := make([]int, len(w))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmpf(w[i], w[j]) })
	return order
}

func permute(w []float64, order []int) []float64 {
	out := make([]float64, len(w))
	for i, o := range order {
		out[i] = w[o]
	}
	return out
}

// permuteCols reorders the columns of the rows×len(order) x.
func permuteCols(x []complex128, rows int, order []int) []complex128 {
	cols := len(order)
	out := make([]complex128, len(x))
	for k := range rows {
		for i, o := range order {
			out[k*cols+i] = x[k*cols+o]
		}
	}
	return out
}

// kHeevd: x → (x_out, w, info) for Hermitian x, as kSyevd.
func kHeevd(c *lapackCall) ([]*hlo.Literal, error) {
	x, f, err := c.squareWith(uploAttr, vectorAttr)
	if err != nil {
		return nil, err
	}
	n, nb, uplo := x.n, x.nb, f[0]
	if err := c.checkResults(x.shape, shapeOf(c.dtype.ComplexComponent(), x.batch, int64(n)), shapeOf(hlo.S32, x.batch)); err != nil {
		return nil, err
	}
	_, _, a := c.cplxMats(0)
	w, info := make([]float64, nb*n), make([]int64, nb)
	for b := range nb {
		m := a[b*n*n : (b+1)*n*n]
		// Fill the Hermitian matrix from the triangle uplo names (its
		// diagonal's imaginary parts are ignored, as LAPACK does).
		for i := range n {
			m[i*n+i] = complex(real(m[i*n+i]), 0)
			for j := range i {
				if uplo == 'L' {
					m[j*n+i] = cmplx.Conj(m[i*n+j])
				} else {
					m[i*n+j] = cmplx.Conj(m[j*n+i])
				}
			}
		}
		wb, v := zheevJacobi(n, m)
		copy(w[b*n:], wb)
		copy(m, v)
	}
	return []*hlo.Literal{c.cplxMatsOut(0, a), c.realVecOut(1, w), c.intOut(2, info)}, nil
}
