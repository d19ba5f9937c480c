package eval

import (
	"cmp"
	"math"
	"math/cmplx"

	"github.com/axle-ml/axle/hlo"
)

// Complex SVD by one-sided Jacobi (Hestenes): rotate A's columns until
// they are mutually orthogonal; their norms are the singular values.

// zsvdTall computes A = U·diag(s)·Vᴴ for the m×n a, m ≥ n: u m×n with
// orthonormal columns, s descending, v n×n unitary.
func zsvdTall(m, n int, a []complex128) (u []complex128, s []float64, v []complex128) {
	u = append([]complex128(nil), a...)
	v = make([]complex128, n*n)
	for i := range n {
		v[i*n+i] = 1
	}
	colDot := func(p, q int) complex128 { // u_pᴴ·u_q
		var d complex128
		for k := range m {
			d += cmplx.Conj(u[k*n+p]) * u[k*n+q]
		}
		return d
	}
	for sweep := 0; sweep < 100; sweep++ {
		rotated := false
		for p := range n {
			for q := p + 1; q < n; q++ {
				alpha, beta, gamma := real(colDot(p, p)), real(colDot(q, q)), colDot(p, q)
				if cmplx.Abs(gamma) <= 1e-15*math.Sqrt(alpha*beta) || gamma == 0 {
					continue
				}
				rotated = true
				c, jpq, jqp := jacobiRotation(alpha, beta, gamma)
				rotateCols(u, m, n, p, q, c, jpq, jqp)
				rotateCols(v, n, n, p, q, c, jpq, jqp)
			}
		}
		if !rotated {
			break
		}
	}
	s = make([]float64, n)
	for j := range n {
		s[j] = math.Sqrt(real(colDot(j, j)))
	}
	order := sortedOrder(s, func(x, y float64) int { return cmp.Compare(y, x) })
	s, u, v = permute(s, order), permuteCols(u, m, order), permuteCols(v, n, order)
	// Normalize the columns; those of a zero singular value are completed
	// to an orthonormal set instead.
	keep := 0
	for j := range n {
		if s[j] <= 1e-300 || s[j] <= s[0]*1e-300 {
			break
		}
		for k := range m {
			u[k*n+j] /= complex(s[j], 0)
		}
		keep++
	}
	return completeBasis(u, m, n, keep), s, v
}

// completeBasis returns the m×cols matrix whose first keep columns are
// x's (orthonormal) and whose others extend them to an orthonormal set,
// by Gram–Schmidt (twice) on the standard basis vectors.
func completeBasis(x []complex128, m, n, keep int) []complex128 {
	cols := n
	out := make([]complex128, m*cols)
	for k := range m {
		copy(out[k*cols:k*cols+keep], x[k*n:k*n+keep])
	}
	next := 0
	for j := keep; j < cols; j++ {
		for ; next < m; next++ {
			v := make([]complex128, m)
			v[next] = 1
			for range 2 {
				for i := range j {
					var d complex128
					for k := range m {
						d += cmplx.Conj(out[k*cols+i]) * v[k]
					}
					for k := range m {
						v[k] -= d * out[k*cols+i]
					}
				}
			}
			var norm float64
			for _, e := range v {
				norm += real(e)*real(e) + imag(e)*imag(e)
			}
			if norm = math.Sqrt(norm); norm > 0.5 {
				for k := range m {
					out[k*cols+j] = v[k] / complex(norm, 0)
				}
				next++
				break
			}
		}
	}
	return out
}

// widen returns the m×cols matrix of x's n columns followed by zeros.
func widen(x []complex128, m, n, cols int) []complex128 {
	out := make([]complex128, m*cols)
	for k := range m {
		copy(out[k*cols:k*cols+n], x[k*n:(k+1)*n])
	}
	return out
}

// zsvd computes A = U·diag(s)·Vᴴ for the m×n a with U m×uc and Vᴴ vr×n
// (uc, vr each min(m,n) or the full order).
func zsvd(m, n int, a []complex128, uc, vr int) (u []complex128, s []float64, vt []complex128) {
	if m >= n {
		ut, sv, v := zsvdTall(m, n, a)
		u = ut
		if uc > n {
			u = completeBasis(widen(ut, m, n, uc), m, uc, n)
		}
		return u, sv, adjointMat(v, n, n)[:vr*n]
	}
	// A = (Aᴴ)ᴴ: the SVD of the tall Aᴴ swaps the roles of U and V.
	ut, sv, v := zsvdTall(n, m, adjointMat(a, m, n))
	w := ut
	if vr > m {
		w = completeBasis(widen(ut, n, m, vr), n, vr, m)
	}
	return v[:m*m], sv, adjointMat(w, n, vr)
}

func adjointMat(a []complex128, m, n int) []complex128 {
	out := make([]complex128, m*n)
	for i := range m {
		for j := range n {
			out[j*m+i] = cmplx.Conj(a[i*n+j])
		}
	}
	return out
}

// kGesddComplex: x → (x_out, s, u, vt, info) for complex x, as kGesdd.
func kGesddComplex(c *lapackCall) ([]*hlo.Literal, error) {
	g, err := c.svdSize(c.dtype.ComplexComponent())
	if err != nil {
		return nil, err
	}
	m, n, k, nb, uc, vr, mode := g.m, g.n, g.k, g.nb, g.uc, g.vr, g.mode
	_, _, a := c.cplxMats(0)
	sv, u, vt, info := make([]float64, nb*k), make([]complex128, nb*m*uc), make([]complex128, nb*vr*n), make([]int64, nb)
	for b := range nb {
		if k == 0 {
			break
		}
		ub, sb, vb := zsvd(m, n, a[b*m*n:(b+1)*m*n], max(uc, k), max(vr, k))
		copy(sv[b*k:], sb)
		if mode != 'N' {
			copy(u[b*m*uc:(b+1)*m*uc], ub)
			copy(vt[b*vr*n:(b+1)*vr*n], vb)
		}
	}
	return []*hlo.Literal{c.cplxMatsOut(0, a), c.realVecOut(1, sv), c.cplxMatsOut(2, u), c.cplxMatsOut(3, vt), c.intOut(4, info)}, nil
}
