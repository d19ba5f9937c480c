package eval_test

import (
	"fmt"
	"math/cmplx"
	"testing"
)

// heevd on a complex Hermitian matrix: NumPy's eigenvalues, A·V = V·Λ and
// VᴴV = I, from either triangle (the other holds garbage).
func TestLapackHeevdNumpy(t *testing.T) {
	c := loadNumpy(t)["heevd"]
	a := c.get(t, "a", true)
	for _, dt := range []string{"c64", "c128"} {
		letter, rdt := map[string]string{"c64": "c", "c128": "z"}[dt], map[string]string{"c64": "f32", "c128": "f64"}[dt]
		tol := map[string]float64{"c64": 1e-5, "c128": 1e-12}[dt]
		for _, uplo := range "LU" {
			in := append([]complex128(nil), a...)
			for i := range 4 {
				for j := range 4 {
					if (uplo == 'L' && j > i) || (uplo == 'U' && j < i) {
						in[i*4+j] = 1e6 + 1e6i // must not be read
					}
				}
			}
			out := runLapack(t, lapackModule("lapack_"+letter+"heevd_ffi", fmt.Sprintf("mode = 86 : ui8, uplo = %d : ui8", uplo),
				"("+dt+"[4,4]{0,1}, "+rdt+"[4]{0}, s32[])", dt+"[4,4]{0,1}"), matLit(t, dtOf(dt), in, 4, 4))
			v, w := values(out[0]), values(out[1])
			near(t, dt+" eigenvalues", w, c.get(t, "w", false), tol)
			vw := make([]complex128, 16)
			for i := range 4 {
				for j := range 4 {
					vw[i*4+j] = v[i*4+j] * w[j]
				}
			}
			near(t, dt+" A·V", matmul(a, v, 4, 4, 4), vw, 10*tol)
			near(t, dt+" VᴴV", matmul(adjoint(v, 4, 4), v, 4, 4, 4), identity(4), 10*tol)
			wantInts(t, "info", out[2], 0)
		}
	}
}

// Complex gesdd, tall and wide, every mode: NumPy's singular values,
// U·S·Vᴴ = A, unitary U and V (completed to full ones in mode A).
func TestLapackGesddComplexNumpy(t *testing.T) {
	np := loadNumpy(t)
	for _, name := range []string{"gesdd_c_tall", "gesdd_c_wide"} {
		c := np[name]
		a := c.get(t, "a", true)
		m, n := 4, 3
		if name == "gesdd_c_wide" {
			m, n = 3, 5
		}
		k := min(m, n)
		for _, mode := range "ASN" {
			uc, vr := m, n
			if mode == 'S' {
				uc, vr = k, k
			}
			res := fmt.Sprintf("(c128[%d,%d]{0,1}, f64[%d]{0}, c128[%d,%d]{0,1}, c128[%d,%d]{0,1}, s32[])", m, n, k, m, uc, vr, n)
			out := runLapack(t, lapackModule("lapack_zgesdd_ffi", fmt.Sprintf("mode = %d : ui8", mode), res, fmt.Sprintf("c128[%d,%d]{0,1}", m, n)),
				matLit(t, dtOf("c128"), a, int64(m), int64(n)))
			s := values(out[1])
			near(t, name+" singular values", s, c.get(t, "s", false), 1e-12)
			if mode == 'N' {
				continue
			}
			u, vt := values(out[2]), values(out[3])
			usk := make([]complex128, m*k)
			for i := range m {
				for j := range k {
					usk[i*k+j] = u[i*uc+j] * s[j]
				}
			}
			near(t, fmt.Sprintf("%s mode %c U·S·Vᴴ", name, mode), matmul(usk, vt[:k*n], m, k, n), a, 1e-12)
			near(t, fmt.Sprintf("%s mode %c UᴴU", name, mode), matmul(adjoint(u, m, uc), u, uc, m, uc), identity(uc), 1e-12)
			near(t, fmt.Sprintf("%s mode %c VᴴV", name, mode), matmul(vt, adjoint(vt, vr, n), vr, n, vr), identity(vr), 1e-12)
		}
	}
}

// gesvd_ffi (JAX's algorithm=QR) shares gesdd's contract.
func TestLapackGesvdNumpy(t *testing.T) {
	c := loadNumpy(t)["gesdd_tall"]
	out := runLapack(t, lapackModule("lapack_dgesvd_ffi", "mode = 83 : ui8", "(f64[4,3]{0,1}, f64[3]{0}, f64[4,3]{0,1}, f64[3,3]{0,1}, s32[])", "f64[4,3]{0,1}"),
		matLit(t, dtOf("f64"), c.get(t, "a", false), 4, 3))
	near(t, "singular values", values(out[1]), c.get(t, "s", false), 1e-12)
}

// geqp3: A·P = Q·R with R's diagonal non-increasing in magnitude, Q from
// orgqr; a nonzero jpvt entry on input keeps that column first.
func TestLapackGeqp3Identity(t *testing.T) {
	a := loadNumpy(t)["det"].get(t, "a", false) // 4×4
	for _, first := range []int{-1, 2} {
		jp := make([]complex128, 4)
		if first >= 0 {
			jp[first] = 1
		}
		out := runLapack(t, lapackModule("lapack_dgeqp3_ffi", "", "(f64[4,4]{0,1}, s32[4]{0}, f64[4]{0})", "f64[4,4]{0,1}", "s32[4]{0}"),
			matLit(t, dtOf("f64"), a, 4, 4), matLit(t, dtOf("s32"), jp, 4))
		h, piv := values(out[0]), ints(out[1])
		if first >= 0 && piv[0] != int64(first+1) {
			t.Fatalf("pivots %v, want column %d first", piv, first+1)
		}
		q := values(runLapack(t, lapackModule("lapack_dorgqr_ffi", "", "f64[4,4]{0,1}", "f64[4,4]{0,1}", "f64[4]{0}"), out[0], out[2])[0])
		r := make([]complex128, 16)
		ap := make([]complex128, 16)
		for i := range 4 {
			for j := range 4 {
				if i <= j {
					r[i*4+j] = h[i*4+j]
				}
				ap[i*4+j] = a[i*4+int(piv[j]-1)]
			}
		}
		near(t, "Q·R = A·P", matmul(q, r, 4, 4, 4), ap, 1e-12)
		if first < 0 {
			for i := 1; i < 4; i++ {
				if cmplx.Abs(r[i*4+i]) > cmplx.Abs(r[(i-1)*4+i-1])*(1+1e-12) {
					t.Fatalf("R's diagonal grows: %v", r)
				}
			}
		}
	}
}

// ormqr multiplies by the Q orgqr forms: Qᵀ·C (left, transpose) and C·Q
// (right).
func TestLapackOrmqrIdentity(t *testing.T) {
	np := loadNumpy(t)
	a := np["det"].get(t, "a", false)   // 4×4 reflector source
	cm := np["gtsv"].get(t, "b", false) // 4×2
	qr := runLapack(t, lapackModule("lapack_dgeqrf_ffi", "", "(f64[4,4]{0,1}, f64[4]{0})", "f64[4,4]{0,1}"), matLit(t, dtOf("f64"), a, 4, 4))
	q := values(runLapack(t, lapackModule("lapack_dorgqr_ffi", "", "f64[4,4]{0,1}", "f64[4,4]{0,1}", "f64[4]{0}"), qr[0], qr[1])[0])
	left := runLapack(t, lapackModule("lapack_dormqr_ffi", "left = true, transpose = true", "f64[4,2]{0,1}", "f64[4,4]{0,1}", "f64[4]{0}", "f64[4,2]{0,1}"),
		qr[0], qr[1], matLit(t, dtOf("f64"), cm, 4, 2))
	near(t, "Qᵀ·C", values(left[0]), matmul(adjoint(q, 4, 4), cm, 4, 4, 2), 1e-12)
	ct := adjoint(cm, 4, 2) // 2×4
	right := runLapack(t, lapackModule("lapack_dormqr_ffi", "left = false, transpose = false", "f64[2,4]{0,1}", "f64[4,4]{0,1}", "f64[4]{0}", "f64[2,4]{0,1}"),
		qr[0], qr[1], matLit(t, dtOf("f64"), ct, 2, 4))
	near(t, "C·Q", values(right[0]), matmul(ct, q, 2, 4, 4), 1e-12)
}

// The pre-FFI complex heevd: (lower, b, n, a) → (v, w, info, work, rwork,
// iwork); NumPy's eigenvalues.
func TestLapackLegacyHeevd(t *testing.T) {
	c := loadNumpy(t)["heevd"]
	out := runLapack(t, `HloModule m
ENTRY e {
  a = c128[4,4]{0,1} parameter(0)
  one = s32[] constant(1)
  n = s32[] constant(4)
  ROOT c = (c128[4,4]{0,1}, f64[4]{0}, s32[], c128[40]{0}, f64[49]{0}, s32[23]{0}) custom-call(one, one, n, a), custom_call_target="lapack_zheevd"
}`, matLit(t, dtOf("c128"), c.get(t, "a", true), 4, 4))
	near(t, "legacy heevd", values(out[1]), c.get(t, "w", false), 1e-12)
	wantInts(t, "legacy heevd info", out[2], 0)
}

// Complex geev and gees: NumPy's eigenvalues, A·vr = λ·vr and
// vlᴴ·A = λ·vlᴴ with unit vectors whose largest component is real, and
// Z·T·Zᴴ = A with Z unitary and T upper triangular.
func TestLapackComplexGeevGees(t *testing.T) {
	c := loadNumpy(t)["geev_c"]
	a := c.get(t, "a", true)
	for _, dt := range []string{"c64", "c128"} {
		letter := map[string]string{"c64": "c", "c128": "z"}[dt]
		tol := map[string]float64{"c64": 1e-5, "c128": 1e-12}[dt]
		m, v := dt+"[4,4]{0,1}", dt+"[4]{0}"
		out := runLapack(t, lapackModule("lapack_"+letter+"geev_ffi", "compute_left = 86 : ui8, compute_right = 86 : ui8",
			"("+v+", "+m+", "+m+", s32[])", m), matLit(t, dtOf(dt), a, 4, 4))
		w, vl, vr := values(out[0]), values(out[1]), values(out[2])
		near(t, dt+" eigenvalues", sortEig(w), c.get(t, "w", true), 10*tol)
		av, lva := matmul(a, vr, 4, 4, 4), matmul(adjoint(vl, 4, 4), a, 4, 4, 4)
		for j := range 4 {
			big := 0
			for i := range 4 {
				if cmplx.Abs(av[i*4+j]-w[j]*vr[i*4+j]) > 100*tol || cmplx.Abs(lva[j*4+i]-w[j]*cmplx.Conj(vl[i*4+j])) > 100*tol {
					t.Fatalf("%s: eigenpair %d (%v) does not hold", dt, j, w[j])
				}
				if cmplx.Abs(vr[i*4+j]) > cmplx.Abs(vr[big*4+j]) {
					big = i
				}
			}
			if imag(vr[big*4+j]) != 0 {
				t.Fatalf("%s: eigenvector %d's largest component %v is not real", dt, j, vr[big*4+j])
			}
		}
		wantInts(t, dt+" geev info", out[3], 0)

		out = runLapack(t, lapackModule("lapack_"+letter+"gees_ffi", "mode = 86 : ui8, sort = 78 : ui8",
			"("+m+", "+m+", "+v+", s32[], s32[])", m), matLit(t, dtOf(dt), a, 4, 4))
		tm, z := values(out[0]), values(out[1])
		near(t, dt+" Z·T·Zᴴ", matmul(matmul(z, tm, 4, 4, 4), adjoint(z, 4, 4), 4, 4, 4), a, 100*tol)
		near(t, dt+" ZᴴZ", matmul(adjoint(z, 4, 4), z, 4, 4, 4), identity(4), 10*tol)
		for i := range 4 {
			for j := range i {
				if tm[i*4+j] != 0 {
					t.Fatalf("%s: T(%d,%d) = %v", dt, i, j, tm[i*4+j])
				}
			}
		}
		near(t, dt+" gees eigenvalues", sortEig(values(out[2])), c.get(t, "w", true), 10*tol)
		wantInts(t, dt+" gees info", out[4], 0)
	}
}

// Complex geqp3: A·P = Q·R with R's diagonal non-increasing in magnitude,
// Q from ungqr; a marked column stays first.
func TestLapackGeqp3Complex(t *testing.T) {
	a := loadNumpy(t)["geev_c"].get(t, "a", true) // 4×4
	for _, first := range []int{-1, 3} {
		jp := make([]complex128, 4)
		if first >= 0 {
			jp[first] = 1
		}
		out := runLapack(t, lapackModule("lapack_zgeqp3_ffi", "", "(c128[4,4]{0,1}, s32[4]{0}, c128[4]{0})", "c128[4,4]{0,1}", "s32[4]{0}"),
			matLit(t, dtOf("c128"), a, 4, 4), matLit(t, dtOf("s32"), jp, 4))
		h, piv := values(out[0]), ints(out[1])
		if first >= 0 && piv[0] != int64(first+1) {
			t.Fatalf("pivots %v, want column %d first", piv, first+1)
		}
		q := values(runLapack(t, lapackModule("lapack_zungqr_ffi", "", "c128[4,4]{0,1}", "c128[4,4]{0,1}", "c128[4]{0}"), out[0], out[2])[0])
		r, ap := make([]complex128, 16), make([]complex128, 16)
		for i := range 4 {
			for j := range 4 {
				if i <= j {
					r[i*4+j] = h[i*4+j]
				}
				ap[i*4+j] = a[i*4+int(piv[j]-1)]
			}
		}
		near(t, "Q·R = A·P", matmul(q, r, 4, 4, 4), ap, 1e-12)
		for i := 1; i < 4 && first < 0; i++ {
			if cmplx.Abs(r[i*4+i]) > cmplx.Abs(r[(i-1)*4+i-1])*(1+1e-12) {
				t.Fatalf("R's diagonal grows: %v", r)
			}
		}
	}
}
