package eval

import (
	"math"
	"math/cmplx"

	"github.com/axle-ml/axle/hlo"
)

// Complex geev and gees: the Schur form A = Z·T·Zᴴ by Hessenberg
// reduction and the shifted QR algorithm (Wilkinson shifts, Givens
// rotations), then eigenvectors from T by substitution, as LAPACK's
// zgees / zgeev compute them (without balancing). Eigenvalues agree with
// LAPACK's to rounding; their order and the Schur vectors may differ, as
// between LAPACK builds.

// zschur overwrites the n×n a with its upper triangular Schur form T and
// returns Z; info is LAPACK's: 0, or i > 0 when eigenvalues i.. (1-based)
// did not converge.
func zschur(n int, a []complex128) (z []complex128, info int) {
	z = make([]complex128, n*n)
	for i := range n {
		z[i*n+i] = 1
	}
	if n < 2 {
		return z, 0
	}
	tau := make([]complex128, n-1)
	zgehd2(n, 0, n-1, a, tau)
	for i := 0; i < n-1; i++ { // Z = H(0)·H(1)·…, reflectors then cleared
		v := make([]complex128, n-i-1)
		v[0] = 1
		for r := i + 2; r < n; r++ {
			v[r-i-1] = a[r*n+i]
			a[r*n+i] = 0
		}
		applyRight(z, n, 0, n, i+1, v, tau[i])
	}
	const eps = 0x1p-52
	hi, iter := n-1, 0
	for hi > 0 {
		l := hi
		for ; l > 0; l-- {
			s := cabs1(a[(l-1)*n+l-1]) + cabs1(a[l*n+l])
			if cabs1(a[l*n+l-1]) <= eps*s {
				a[l*n+l-1] = 0
				break
			}
		}
		if l == hi {
			hi, iter = hi-1, 0
			continue
		}
		if iter++; iter > 30*n {
			return z, hi + 1
		}
		mu := wilkinsonShift(a, n, hi)
		if iter%10 == 0 { // an exceptional shift breaks cycles
			mu = a[hi*n+hi] + complex(0.75*cabs1(a[hi*n+hi-1]), 0)
		}
		qrSweep(a, z, n, l, hi, mu)
	}
	return z, 0
}

// wilkinsonShift is the eigenvalue of the trailing 2×2 block ending at
// hi nearer its last diagonal entry.
func wilkinsonShift(a []complex128, n, hi int) complex128 {
	p, q := a[(hi-1)*n+hi-1], a[(hi-1)*n+hi]
	r, s := a[hi*n+hi-1], a[hi*n+hi]
	half := (p - s) / 2
	root := cmplx.Sqrt(half*half + q*r)
	m1, m2 := s+half+root, s+half-root // (p+s)/2 ± root
	if cmplx.Abs(m1-s) <= cmplx.Abs(m2-s) {
		return m1
	}
	return m2
}

// qrSweep applies one explicitly shifted QR step to the active block
// l..hi of the Hessenberg a, updating the whole matrix and Z.
func qrSweep(a, z []complex128, n, l, hi int, mu complex128) {
	for k := l; k <= hi; k++ {
		a[k*n+k] -= mu
	}
	type rot struct {
		c float64
		s complex128
	}
	rots := make([]rot, 0, hi-l)
	for k := l; k < hi; k++ {
		x, y := a[k*n+k], a[(k+1)*n+k]
		r := math.Hypot(cmplx.Abs(x), cmplx.Abs(y))
		g := rot{0, 1}
		if r == 0 {
			g = rot{1, 0}
		} else if x != 0 {
			g = rot{cmplx.Abs(x) / r, x / complex(cmplx.Abs(x), 0) * cmplx.Conj(y) / complex(r, 0)}
		}
		rots = append(rots, g)
		cc := complex(g.c, 0)
		for j := k; j < n; j++ { // rows k, k+1 ← G·rows
			t1, t2 := a[k*n+j], a[(k+1)*n+j]
			a[k*n+j] = cc*t1 + g.s*t2
			a[(k+1)*n+j] = -cmplx.Conj(g.s)*t1 + cc*t2
		}
		a[(k+1)*n+k] = 0 // what the rotation annihilates, without rounding
	}
	for i, g := range rots { // columns k, k+1 ← columns·Gᴴ
		k := l + i
		cc := complex(g.c, 0)
		for _, m := range []struct {
			x    []complex128
			rows int
		}{{a, min(k+1, hi) + 1}, {z, n}} {
			for r := range m.rows {
				t1, t2 := m.x[r*n+k], m.x[r*n+k+1]
				m.x[r*n+k] = t1*cc + t2*cmplx.Conj(g.s)
				m.x[r*n+k+1] = -t1*g.s + t2*cc
			}
		}
	}
	for k := l; k <= hi; k++ {
		a[k*n+k] += mu
	}
}

// normalizeEigenvector scales v to unit norm with its largest component
// real and positive, as zgeev does.
func normalizeEigenvector(v []complex128) {
	var norm float64
	big, at := -1.0, 0
	for i, x := range v {
		m := real(x)*real(x) + imag(x)*imag(x)
		norm += m
		if m > big {
			big, at = m, i
		}
	}
	if norm == 0 {
		return
	}
	scale := cmplx.Conj(v[at]) / complex(math.Sqrt(big)*math.Sqrt(norm), 0)
	for i := range v {
		v[i] *= scale
	}
	v[at] = complex(real(v[at]), 0)
}

// triEigenvectors returns the right (or, when left, the left) eigenvectors
// of A = Z·T·Zᴴ as the columns of an n×n matrix.
func triEigenvectors(n int, t, z []complex128, left bool) []complex128 {
	out := make([]complex128, n*n)
	smin := 0x1p-52 * math.Max(1e-300, maxAbs(t))
	x := make([]complex128, n)
	for k := range n {
		clear(x)
		x[k] = 1
		lambda := t[k*n+k]
		div := func(num, d complex128) complex128 {
			if cmplx.Abs(d) < smin {
				d = complex(smin, 0)
			}
			return num / d
		}
		if !left { // (T - λ)·x = 0, x below k zero
			for j := k - 1; j >= 0; j-- {
				var s complex128
				for l := j + 1; l <= k; l++ {
					s += t[j*n+l] * x[l]
				}
				x[j] = div(-s, t[j*n+j]-lambda)
			}
		} else { // (Tᴴ - conj(λ))·u = 0, u above k zero
			for j := k + 1; j < n; j++ {
				var s complex128
				for l := k; l < j; l++ {
					s += cmplx.Conj(t[l*n+j]) * x[l]
				}
				x[j] = div(-s, cmplx.Conj(t[j*n+j]-lambda))
			}
		}
		v := make([]complex128, n)
		for i := range n {
			for l := range n {
				v[i] += z[i*n+l] * x[l]
			}
		}
		normalizeEigenvector(v)
		for i := range n {
			out[i*n+k] = v[i]
		}
	}
	return out
}

func maxAbs(v []complex128) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, cmplx.Abs(x))
	}
	return m
}

// kGeevComplex: x → (w, vl, vr, info) for complex x.
func kGeevComplex(c *lapackCall) ([]*hlo.Literal, error) {
	x, f, err := c.squareWith(leftAttr, rightAttr)
	if err != nil {
		return nil, err
	}
	n, nb, left, right := x.n, x.nb, f[0], f[1]
	if err := c.checkResults(shapeOf(c.dtype, x.batch, int64(n)), x.shape, x.shape, shapeOf(hlo.S32, x.batch)); err != nil {
		return nil, err
	}
	_, _, a := c.cplxMats(0)
	w, vl, vr, info := make([]complex128, nb*n), make([]complex128, nb*n*n), make([]complex128, nb*n*n), make([]int64, nb)
	for b := range nb {
		t := a[b*n*n : (b+1)*n*n]
		z, inf := zschur(n, t)
		if info[b] = int64(inf); inf != 0 {
			continue
		}
		for i := range n {
			w[b*n+i] = t[i*n+i]
		}
		if left == 'V' {
			copy(vl[b*n*n:], triEigenvectors(n, t, z, true))
		}
		if right == 'V' {
			copy(vr[b*n*n:], triEigenvectors(n, t, z, false))
		}
	}
	return []*hlo.Literal{c.cplxVecOut(0, w), c.cplxMatsOut(1, vl), c.cplxMatsOut(2, vr), c.intOut(3, info)}, nil
}

// kGeesComplex: x → (t, vs, w, sdim, info) for complex x, sort 'N' only.
func kGeesComplex(c *lapackCall) ([]*hlo.Literal, error) {
	x, mode, err := c.geesArgs()
	if err != nil {
		return nil, err
	}
	n, nb, batch, s := x.n, x.nb, x.batch, x.shape
	if err := c.checkResults(s, s, shapeOf(c.dtype, batch, int64(n)), shapeOf(hlo.S32, batch), shapeOf(hlo.S32, batch)); err != nil {
		return nil, err
	}
	_, _, a := c.cplxMats(0)
	zs, w, sdim, info := make([]complex128, nb*n*n), make([]complex128, nb*n), make([]int64, nb), make([]int64, nb)
	for b := range nb {
		t := a[b*n*n : (b+1)*n*n]
		z, inf := zschur(n, t)
		info[b] = int64(inf)
		for i := range n {
			w[b*n+i] = t[i*n+i]
		}
		if mode == 'V' {
			copy(zs[b*n*n:], z)
		}
	}
	return []*hlo.Literal{c.cplxMatsOut(0, a), c.cplxMatsOut(1, zs), c.cplxVecOut(2, w), c.intOut(3, sdim), c.intOut(4, info)}, nil
}
