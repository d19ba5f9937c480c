package eval_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"testing"
)

// reflectorsQ builds Q = H(1)·…·H(r) from Householder vectors stored in a
// (n×n, row-major) below row offset off of each column j (v(j+off) = 1,
// v(i) = a(i,j) for i > j+off) with scalars tau, as gehrd and sytrd
// (lower) store them.
func reflectorsQ(a, tau []complex128, n, off int) []complex128 {
	q := identity(n)
	for j := len(tau) - 1; j >= 0; j-- {
		v := make([]complex128, n)
		v[j+off] = 1
		for i := j + off + 1; i < n; i++ {
			v[i] = a[i*n+j]
		}
		// q = (I - tau·v·vᴴ)·q
		for c := range n {
			var s complex128
			for i := range n {
				s += cmplx.Conj(v[i]) * q[i*n+c]
			}
			for i := range n {
				q[i*n+c] -= tau[j] * v[i] * s
			}
		}
	}
	return q
}

func TestLapackGeesIdentity(t *testing.T) {
	c := loadNumpy(t)["geev"]
	a := c.get(t, "a", false)
	for _, dt := range []string{"f32", "f64"} {
		letter := map[string]string{"f32": "s", "f64": "d"}[dt]
		tol := map[string]float64{"f32": 1e-5, "f64": 1e-12}[dt]
		m, v := dt+"[4,4]{0,1}", dt+"[4]{0}"
		out := runLapack(t, lapackModule("lapack_"+letter+"gees_ffi", "mode = 86 : ui8, sort = 78 : ui8",
			"("+m+", "+m+", "+v+", "+v+", s32[], s32[])", m), matLit(t, dtOf(dt), a, 4, 4))
		tm, z := values(out[0]), values(out[1])
		near(t, dt+" Z·T·Zᵀ", matmul(matmul(z, tm, 4, 4, 4), adjoint(z, 4, 4), 4, 4, 4), a, 100*tol)
		near(t, dt+" ZᵀZ", matmul(adjoint(z, 4, 4), z, 4, 4, 4), identity(4), 10*tol)
		// Quasi-upper-triangular: nothing below the subdiagonal, and no two
		// consecutive nonzero subdiagonal entries.
		for i := range 4 {
			for j := range i - 1 {
				if tm[i*4+j] != 0 {
					t.Fatalf("%s: T(%d,%d) = %v", dt, i, j, tm[i*4+j])
				}
			}
		}
		wr, wi := values(out[2]), values(out[3])
		w := make([]complex128, 4)
		for i := range w {
			w[i] = complex(real(wr[i]), real(wi[i]))
		}
		near(t, dt+" eigenvalues", sortEig(w), c.get(t, "w", true), 10*tol)
		wantInts(t, "sdim", out[4], 0)
		wantInts(t, "info", out[5], 0)
	}
}

// gehrd over a batch in JAX's {1,2,0} layout: H upper Hessenberg with
// Qᵀ·A·Q = H for the Q its reflectors define.
func TestLapackGehrdIdentity(t *testing.T) {
	a := loadNumpy(t)["geev"].get(t, "a", false)
	b := loadNumpy(t)["det"].get(t, "a", false)
	out := runLapack(t, lapackModule("lapack_dgehrd_ffi", "high = 4 : i32, low = 1 : i32",
		"(f64[2,4,4]{1,2,0}, f64[2,3]{1,0}, s32[2]{0})", "f64[2,4,4]{1,2,0}"), matLit(t, dtOf("f64"), append(a, b...), 2, 4, 4))
	all, taus := values(out[0]), values(out[1])
	for k, x := range [][]complex128{a, b} {
		h, tau := all[16*k:16*(k+1)], taus[3*k:3*(k+1)]
		q := reflectorsQ(h, tau, 4, 1)
		hess := make([]complex128, 16)
		for i := range 4 {
			for j := range 4 {
				if i <= j+1 {
					hess[i*4+j] = h[i*4+j]
				}
			}
		}
		near(t, fmt.Sprintf("batch %d Qᵀ·A·Q", k), matmul(matmul(adjoint(q, 4, 4), x, 4, 4, 4), q, 4, 4, 4), hess, 1e-12)
	}
	wantInts(t, "info", out[2], 0, 0)
}

// sytrd (lower): Qᵀ·A·Q is tridiagonal with diagonal d and off-diagonal e.
func TestLapackSytrdIdentity(t *testing.T) {
	a := loadNumpy(t)["syevd"].get(t, "a", false)
	out := runLapack(t, lapackModule("lapack_dsytrd_ffi", "uplo = 76 : ui8",
		"(f64[4,4]{0,1}, f64[4]{0}, f64[3]{0}, f64[3]{0}, s32[])", "f64[4,4]{0,1}"), matLit(t, dtOf("f64"), a, 4, 4))
	h, d, e, tau := values(out[0]), values(out[1]), values(out[2]), values(out[3])
	q := reflectorsQ(h, tau, 4, 1)
	tri := make([]complex128, 16)
	for i := range 4 {
		tri[i*4+i] = d[i]
		if i < 3 {
			tri[(i+1)*4+i], tri[i*4+i+1] = e[i], e[i]
		}
	}
	near(t, "Qᵀ·A·Q", matmul(matmul(adjoint(q, 4, 4), a, 4, 4, 4), q, 4, 4, 4), tri, 1e-12)
	// The trace is invariant.
	var tr, td float64
	for i := range 4 {
		tr += real(a[i*4+i])
		td += real(d[i])
	}
	if math.Abs(tr-td) > 1e-12 {
		t.Fatalf("trace %v, diagonal sum %v", tr, td)
	}
	wantInts(t, "info", out[4], 0)
}

// Complex gehrd and hetrd (lower): Qᴴ·A·Q is Hessenberg, resp. the real
// tridiagonal (d, e); the upper triangle hetrd does not read comes back
// unchanged.
func TestLapackComplexReductions(t *testing.T) {
	np := loadNumpy(t)
	re, im := np["geev"].get(t, "a", false), np["det"].get(t, "a", false)
	a := make([]complex128, 16)
	for i := range a {
		a[i] = complex(real(re[i]), real(im[i]))
	}
	out := runLapack(t, lapackModule("lapack_zgehrd_ffi", "high = 4 : i32, low = 1 : i32",
		"(c128[4,4]{0,1}, c128[3]{0}, s32[])", "c128[4,4]{0,1}"), matLit(t, dtOf("c128"), a, 4, 4))
	h, tau := values(out[0]), values(out[1])
	hess := make([]complex128, 16)
	for i := range 4 {
		for j := range 4 {
			if i <= j+1 {
				hess[i*4+j] = h[i*4+j]
			}
		}
	}
	q := reflectorsQ(h, tau, 4, 1)
	near(t, "gehrd Qᴴ·A·Q", matmul(matmul(adjoint(q, 4, 4), a, 4, 4, 4), q, 4, 4, 4), hess, 1e-12)

	herm := np["heevd"].get(t, "a", true)
	in := append([]complex128(nil), herm...)
	for i := range 4 {
		for j := i + 1; j < 4; j++ {
			in[i*4+j] = 7 // not read, returned as is
		}
	}
	out = runLapack(t, lapackModule("lapack_zhetrd_ffi", "uplo = 76 : ui8",
		"(c128[4,4]{0,1}, f64[4]{0}, f64[3]{0}, c128[3]{0}, s32[])", "c128[4,4]{0,1}"), matLit(t, dtOf("c128"), in, 4, 4))
	h, d, e, tau := values(out[0]), values(out[1]), values(out[2]), values(out[3])
	tri := make([]complex128, 16)
	for i := range 4 {
		tri[i*4+i] = d[i]
		if i < 3 {
			tri[(i+1)*4+i], tri[i*4+i+1] = e[i], e[i]
		}
		for j := i + 1; j < 4; j++ {
			if h[i*4+j] != 7 {
				t.Fatalf("hetrd changed the upper triangle: %v", h)
			}
		}
	}
	q = reflectorsQ(h, tau, 4, 1)
	near(t, "hetrd Qᴴ·A·Q", matmul(matmul(adjoint(q, 4, 4), herm, 4, 4, 4), q, 4, 4, 4), tri, 1e-12)
}

// Complex gtsv: T·x = b for the tridiagonal T, with a row interchange
// (a sub-diagonal entry larger than the diagonal one).
func TestLapackGtsvComplex(t *testing.T) {
	dl := []complex128{0, 5 + 1i, 0.5, 2i}
	d := []complex128{1, 2 - 1i, 3, 1 + 1i}
	du := []complex128{1i, 1, -2, 0}
	b := []complex128{1, 2i, 3, 4 - 1i, 0, 1, 1i, 2}
	v := "c128[4]{0}"
	out := runLapack(t, lapackModule("lapack_zgtsv_ffi", "", "("+v+", "+v+", "+v+", c128[4,2]{0,1}, s32[])", v, v, v, "c128[4,2]{0,1}"),
		matLit(t, dtOf("c128"), dl, 4), matLit(t, dtOf("c128"), d, 4), matLit(t, dtOf("c128"), du, 4), matLit(t, dtOf("c128"), b, 4, 2))
	tm := make([]complex128, 16)
	for i := range 4 {
		tm[i*4+i] = d[i]
		if i > 0 {
			tm[i*4+i-1] = dl[i]
		}
		if i < 3 {
			tm[i*4+i+1] = du[i]
		}
	}
	near(t, "T·x", matmul(tm, values(out[3]), 4, 4, 2), b, 1e-12)
	wantInts(t, "info", out[4], 0)
}

// Complex unmqr: Qᴴ·C and C·Q against the Q ungqr forms.
func TestLapackUnmqr(t *testing.T) {
	np := loadNumpy(t)
	a := np["det_c"].get(t, "a", true)         // 3×3
	cm := np["gesdd_c_wide"].get(t, "a", true) // 3×5
	qr := runLapack(t, lapackModule("lapack_zgeqrf_ffi", "", "(c128[3,3]{0,1}, c128[3]{0})", "c128[3,3]{0,1}"), matLit(t, dtOf("c128"), a, 3, 3))
	q := values(runLapack(t, lapackModule("lapack_zungqr_ffi", "", "c128[3,3]{0,1}", "c128[3,3]{0,1}", "c128[3]{0}"), qr[0], qr[1])[0])
	for _, tc := range []struct {
		cfg  string
		want []complex128
	}{
		{"left = true, transpose = true", matmul(adjoint(q, 3, 3), cm, 3, 3, 5)},
		{"left = true, transpose = false", matmul(q, cm, 3, 3, 5)},
	} {
		out := runLapack(t, lapackModule("lapack_zunmqr_ffi", tc.cfg, "c128[3,5]{0,1}", "c128[3,3]{0,1}", "c128[3]{0}", "c128[3,5]{0,1}"),
			qr[0], qr[1], matLit(t, dtOf("c128"), cm, 3, 5))
		near(t, tc.cfg, values(out[0]), tc.want, 1e-12)
	}
	ct := adjoint(cm, 3, 5) // 5×3
	for _, tc := range []struct {
		cfg  string
		want []complex128
	}{
		{"left = false, transpose = false", matmul(ct, q, 5, 3, 3)},
		{"left = false, transpose = true", matmul(ct, adjoint(q, 3, 3), 5, 3, 3)},
	} {
		out := runLapack(t, lapackModule("lapack_zunmqr_ffi", tc.cfg, "c128[5,3]{0,1}", "c128[3,3]{0,1}", "c128[3]{0}", "c128[5,3]{0,1}"),
			qr[0], qr[1], matLit(t, dtOf("c128"), ct, 5, 3))
		near(t, tc.cfg, values(out[0]), tc.want, 1e-12)
	}
}

// hetrd with uplo 'U': on a real symmetric matrix it gives what gonum's
// dsytrd gives (an independent implementation of the same algorithm); on
// a complex Hermitian one T keeps the trace and the Frobenius norm, and
// the lower triangle comes back unchanged.
func TestLapackHetrdUpper(t *testing.T) {
	np := loadNumpy(t)
	sym := np["syevd"].get(t, "a", false)
	res := func(dt, rdt string) string {
		return "(" + dt + "[4,4]{0,1}, " + rdt + "[4]{0}, " + rdt + "[3]{0}, " + dt + "[3]{0}, s32[])"
	}
	want := runLapack(t, lapackModule("lapack_dsytrd_ffi", "uplo = 85 : ui8", res("f64", "f64"), "f64[4,4]{0,1}"), matLit(t, dtOf("f64"), sym, 4, 4))
	got := runLapack(t, lapackModule("lapack_zhetrd_ffi", "uplo = 85 : ui8", res("c128", "f64"), "c128[4,4]{0,1}"), matLit(t, dtOf("c128"), sym, 4, 4))
	for i := range 4 {
		near(t, fmt.Sprintf("result %d", i), values(got[i]), values(want[i]), 1e-12)
	}
	herm := np["heevd"].get(t, "a", true)
	in := append([]complex128(nil), herm...)
	for i := range 4 {
		for j := range i {
			in[i*4+j] = 7
		}
	}
	got = runLapack(t, lapackModule("lapack_zhetrd_ffi", "uplo = 85 : ui8", res("c128", "f64"), "c128[4,4]{0,1}"), matLit(t, dtOf("c128"), in, 4, 4))
	h, d, e := values(got[0]), values(got[1]), values(got[2])
	var tr, td, fa, ft float64
	for i := range 4 {
		tr += real(herm[i*4+i])
		td += real(d[i])
		ft += real(d[i]) * real(d[i])
		for j := range 4 {
			fa += math.Pow(cmplx.Abs(herm[i*4+j]), 2)
			if j < i && h[i*4+j] != 7 {
				t.Fatalf("hetrd changed the lower triangle: %v", h)
			}
		}
	}
	for _, x := range e {
		ft += 2 * real(x) * real(x)
	}
	if math.Abs(tr-td) > 1e-12 || math.Abs(fa-ft) > 1e-10 {
		t.Fatalf("trace %v vs %v, squared norm %v vs %v", tr, td, fa, ft)
	}
}
