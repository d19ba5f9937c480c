package eval_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"slices"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// Expected values from NumPy (testdata/make_lapack.py writes them), and
// identities where a decomposition is not unique (A·v = λ·v, U·S·Vᵀ = A,
// Q·R = A with QᵀQ = I, Z·T·Zᵀ = A, ...).

type npCase map[string]json.RawMessage

func loadNumpy(t *testing.T) map[string]npCase {
	t.Helper()
	b, err := os.ReadFile("testdata/lapack_numpy.json")
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]npCase
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// get decodes field f: nested lists of numbers or of [re, im] pairs,
// flattened row-major; complex says which.
func (c npCase) get(t *testing.T, f string, complexValued bool) []complex128 {
	t.Helper()
	var v any
	if err := json.Unmarshal(c[f], &v); err != nil {
		t.Fatal(err)
	}
	var out []complex128
	var walk func(x any, depthLeft bool)
	walk = func(x any, _ bool) {
		switch x := x.(type) {
		case float64:
			out = append(out, complex(x, 0))
		case []any:
			if complexValued && len(x) == 2 {
				if re, ok := x[0].(float64); ok {
					out = append(out, complex(re, x[1].(float64)))
					return
				}
			}
			for _, e := range x {
				walk(e, false)
			}
		}
	}
	walk(v, false)
	return out
}

func identity(n int) []complex128 {
	out := make([]complex128, n*n)
	for i := range n {
		out[i*n+i] = 1
	}
	return out
}

func adjoint(a []complex128, m, n int) []complex128 {
	out := make([]complex128, m*n)
	for i := range m {
		for j := range n {
			out[j*m+i] = cmplx.Conj(a[i*n+j])
		}
	}
	return out
}

func TestLapackSyevdNumpy(t *testing.T) {
	c := loadNumpy(t)["syevd"]
	a := c.get(t, "a", false)
	for _, dt := range []string{"f32", "f64"} {
		letter := map[string]string{"f32": "s", "f64": "d"}[dt]
		for _, uplo := range "LU" {
			out := runLapack(t, lapackModule("lapack_"+letter+"syevd_ffi", fmt.Sprintf("mode = 86 : ui8, uplo = %d : ui8", uplo),
				"("+dt+"[4,4]{0,1}, "+dt+"[4]{0}, s32[])", dt+"[4,4]{0,1}"), matLit(t, dtOf(dt), a, 4, 4))
			tol := map[string]float64{"f32": 1e-5, "f64": 1e-12}[dt]
			w, v := values(out[1]), values(out[0])
			near(t, dt+" eigenvalues", w, c.get(t, "w", false), tol)
			// A·V = V·diag(w) and VᵀV = I.
			vw := make([]complex128, 16)
			for i := range 4 {
				for j := range 4 {
					vw[i*4+j] = v[i*4+j] * w[j]
				}
			}
			near(t, dt+" A·V", matmul(a, v, 4, 4, 4), vw, 10*tol)
			near(t, dt+" VᵀV", matmul(adjoint(v, 4, 4), v, 4, 4, 4), identity(4), 10*tol)
			wantInts(t, "info", out[2], 0)
		}
	}
}

func TestLapackGesddNumpy(t *testing.T) {
	np := loadNumpy(t)
	for _, name := range []string{"gesdd_tall", "gesdd_wide"} {
		c := np[name]
		a := c.get(t, "a", false)
		m, n := 4, 3
		if name == "gesdd_wide" {
			m, n = 3, 5
		}
		k := min(m, n)
		for _, mode := range "ASN" {
			uc, vr := m, n
			if mode == 'S' {
				uc, vr = k, k
			}
			res := fmt.Sprintf("(f64[%d,%d]{0,1}, f64[%d]{0}, f64[%d,%d]{0,1}, f64[%d,%d]{0,1}, s32[])", m, n, k, m, uc, vr, n)
			out := runLapack(t, lapackModule("lapack_dgesdd_ffi", fmt.Sprintf("mode = %d : ui8", mode), res, fmt.Sprintf("f64[%d,%d]{0,1}", m, n)),
				matLit(t, hlo.F64, a, int64(m), int64(n)))
			s := values(out[1])
			near(t, name+" singular values", s, c.get(t, "s", false), 1e-12)
			wantInts(t, "info", out[4], 0)
			if mode == 'N' {
				continue
			}
			u, vt := values(out[2]), values(out[3])
			us := slices.Clone(u)
			for i := range m {
				for j := range uc {
					if j < k {
						us[i*uc+j] *= s[j]
					} else {
						us[i*uc+j] = 0
					}
				}
			}
			// U·diag(s)·Vᵀ over the first k columns / rows.
			usk := make([]complex128, m*k)
			for i := range m {
				copy(usk[i*k:(i+1)*k], us[i*uc:i*uc+k])
			}
			near(t, fmt.Sprintf("%s mode %c U·S·Vᵀ", name, mode), matmul(usk, vt[:k*n], m, k, n), a, 1e-12)
			near(t, fmt.Sprintf("%s mode %c UᵀU", name, mode), matmul(adjoint(u, m, uc), u, uc, m, uc), identity(uc), 1e-12)
			near(t, fmt.Sprintf("%s mode %c VᵀV", name, mode), matmul(vt, adjoint(vt, vr, n), vr, n, vr), identity(vr), 1e-12)
		}
	}
}

func sortEig(w []complex128) []complex128 {
	w = slices.Clone(w)
	slices.SortFunc(w, func(a, b complex128) int {
		if real(a) != real(b) {
			if real(a) < real(b) {
				return -1
			}
			return 1
		}
		if imag(a) < imag(b) {
			return -1
		}
		return 1
	})
	return w
}

func TestLapackGeevNumpy(t *testing.T) {
	c := loadNumpy(t)["geev"]
	a := c.get(t, "a", false)
	for _, dt := range []string{"f32", "f64"} {
		letter, cdt := map[string]string{"f32": "s", "f64": "d"}[dt], map[string]string{"f32": "c64", "f64": "c128"}[dt]
		tol := map[string]float64{"f32": 1e-5, "f64": 1e-12}[dt]
		out := runLapack(t, lapackModule("lapack_"+letter+"geev_ffi", "compute_left = 86 : ui8, compute_right = 86 : ui8",
			"("+dt+"[4]{0}, "+dt+"[4]{0}, "+cdt+"[4,4]{0,1}, "+cdt+"[4,4]{0,1}, s32[])", dt+"[4,4]{0,1}"), matLit(t, dtOf(dt), a, 4, 4))
		wr, wi := values(out[0]), values(out[1])
		w := make([]complex128, 4)
		for i := range w {
			w[i] = complex(real(wr[i]), real(wi[i]))
		}
		near(t, dt+" eigenvalues", sortEig(w), c.get(t, "w", true), 10*tol)
		vl, vr := values(out[2]), values(out[3])
		// A·vr_j = w_j·vr_j and vl_jᴴ·A = w_j·vl_jᴴ, unit norms.
		av, lva := matmul(a, vr, 4, 4, 4), matmul(adjoint(vl, 4, 4), a, 4, 4, 4)
		for j := range 4 {
			var nr, nl float64
			for i := range 4 {
				if cmplx.Abs(av[i*4+j]-w[j]*vr[i*4+j]) > 100*tol || cmplx.Abs(lva[j*4+i]-w[j]*cmplx.Conj(vl[i*4+j])) > 100*tol {
					t.Fatalf("%s: eigenpair %d (%v) does not hold", dt, j, w[j])
				}
				nr += math.Pow(cmplx.Abs(vr[i*4+j]), 2)
				nl += math.Pow(cmplx.Abs(vl[i*4+j]), 2)
			}
			if math.Abs(nr-1) > 10*tol || math.Abs(nl-1) > 10*tol {
				t.Fatalf("%s: eigenvector %d norms %v, %v", dt, j, nr, nl)
			}
		}
		wantInts(t, "info", out[4], 0)
	}
}

// det(A) from getrf's factors: the product of U's diagonal, negated per
// row swap.
func TestLapackGetrfDeterminantNumpy(t *testing.T) {
	np := loadNumpy(t)
	for _, tc := range []struct{ name, dt, letter string }{{"det", "f64", "d"}, {"det", "f32", "s"}, {"det_c", "c128", "z"}, {"det_c", "c64", "c"}} {
		c := np[tc.name]
		cv := tc.dt[0] == 'c'
		a := c.get(t, "a", cv)
		n := int(math.Sqrt(float64(len(a))))
		out := runLapack(t, lapackModule("lapack_"+tc.letter+"getrf_ffi", "", fmt.Sprintf("(%s[%d,%d]{0,1}, s32[%d]{0}, s32[])", tc.dt, n, n, n),
			fmt.Sprintf("%s[%d,%d]{0,1}", tc.dt, n, n)), matLit(t, dtOf(tc.dt), a, int64(n), int64(n)))
		lu, piv := values(out[0]), ints(out[1])
		det := complex(1, 0)
		for i := range n {
			det *= lu[i*n+i]
			if piv[i] != int64(i+1) {
				det = -det
			}
		}
		tol := map[bool]float64{true: 1e-5, false: 1e-12}[tc.dt == "f32" || tc.dt == "c64"]
		near(t, tc.dt+" det", []complex128{det}, c.get(t, "det", cv), tol)
	}
}

func TestLapackPotrfNumpy(t *testing.T) {
	np := loadNumpy(t)
	for _, tc := range []struct{ name, dt, letter string }{{"potrf", "f64", "d"}, {"potrf_c", "c128", "z"}, {"potrf_c", "c64", "c"}} {
		c := np[tc.name]
		cv := tc.dt[0] == 'c'
		a, l := c.get(t, "a", cv), c.get(t, "l", cv)
		n := int(math.Sqrt(float64(len(a))))
		tol := map[bool]float64{true: 1e-5, false: 1e-12}[tc.dt == "c64"]
		for _, uplo := range "LU" {
			out := runLapack(t, lapackModule("lapack_"+tc.letter+"potrf_ffi", fmt.Sprintf("uplo = %d : ui8", uplo),
				fmt.Sprintf("(%s[%d,%d]{0,1}, s32[])", tc.dt, n, n), fmt.Sprintf("%s[%d,%d]{0,1}", tc.dt, n, n)),
				matLit(t, dtOf(tc.dt), a, int64(n), int64(n)))
			got := values(out[0])
			want := slices.Clone(a) // the other triangle is the input's
			for i := range n {
				for j := range n {
					if uplo == 'L' && i >= j {
						want[i*n+j] = l[i*n+j]
					}
					if uplo == 'U' && i <= j {
						want[i*n+j] = cmplx.Conj(l[j*n+i])
					}
				}
			}
			near(t, fmt.Sprintf("%s uplo %c", tc.name, uplo), got, want, tol)
		}
	}
}

// geqrf's output is LAPACK's own (numpy's qr mode="raw"); orgqr/ungqr then
// gives Q with Q·R = A and QᴴQ = I.
func TestLapackGeqrfOrgqrNumpy(t *testing.T) {
	np := loadNumpy(t)
	for _, tc := range []struct{ name, dt, qr, gq string }{{"geqrf", "f64", "lapack_dgeqrf_ffi", "lapack_dorgqr_ffi"},
		{"geqrf", "f32", "lapack_sgeqrf_ffi", "lapack_sorgqr_ffi"}, {"geqrf_c", "c128", "lapack_zgeqrf_ffi", "lapack_zungqr_ffi"}} {
		c := np[tc.name]
		cv := tc.dt[0] == 'c'
		a := c.get(t, "a", cv)
		m, n := 4, 3
		if cv {
			m = 3
		}
		k := min(m, n)
		tol := map[bool]float64{true: 1e-5, false: 1e-12}[tc.dt == "f32"]
		ms := fmt.Sprintf("%s[%d,%d]{0,1}", tc.dt, m, n)
		out := runLapack(t, lapackModule(tc.qr, "", fmt.Sprintf("(%s, %s[%d]{0})", ms, tc.dt, k), ms), matLit(t, dtOf(tc.dt), a, int64(m), int64(n)))
		h, tau := values(out[0]), values(out[1])
		near(t, tc.dt+" geqrf packed", h, c.get(t, "h", cv), tol)
		near(t, tc.dt+" geqrf tau", tau, c.get(t, "tau", cv), tol)
		q := values(runLapack(t, lapackModule(tc.gq, "", ms, ms, fmt.Sprintf("%s[%d]{0}", tc.dt, k)), out[0], out[1])[0])
		r := make([]complex128, k*n)
		for i := range k {
			for j := i; j < n; j++ {
				r[i*n+j] = h[i*n+j]
			}
		}
		near(t, tc.dt+" Q·R", matmul(q, r, m, k, n), a, 10*tol)
		near(t, tc.dt+" QᴴQ", matmul(adjoint(q, m, n), q, n, m, n), identity(n), 10*tol)
	}
}

func TestLapackGtsvNumpy(t *testing.T) {
	c := loadNumpy(t)["gtsv"]
	v := "f64[4]{0}"
	out := runLapack(t, lapackModule("lapack_dgtsv_ffi", "", "("+v+", "+v+", "+v+", f64[4,2]{0,1}, s32[])", v, v, v, "f64[4,2]{0,1}"),
		matLit(t, hlo.F64, c.get(t, "dl", false), 4), matLit(t, hlo.F64, c.get(t, "d", false), 4),
		matLit(t, hlo.F64, c.get(t, "du", false), 4), matLit(t, hlo.F64, c.get(t, "b", false), 4, 2))
	near(t, "gtsv", values(out[3]), c.get(t, "x", false), 1e-12)
	wantInts(t, "info", out[4], 0)
}

// The pre-FFI geev and gees: job characters as u8 scalar operands,
// workspace results; eigenvalues as NumPy's.
func TestLapackLegacyGeevGees(t *testing.T) {
	c := loadNumpy(t)["geev"]
	a := matLit(t, hlo.F64, c.get(t, "a", false), 4, 4)
	eig := func(wr, wi *hlo.Literal) []complex128 {
		w := make([]complex128, 4)
		for i := range w {
			w[i] = complex(wr.GetFloat64(i), wi.GetFloat64(i))
		}
		return sortEig(w)
	}
	out := runLapack(t, `HloModule m
ENTRY e {
  a = f64[4,4]{0,1} parameter(0)
  b = s32[] constant(1)
  n = s32[] constant(4)
  v = u8[] constant(86)
  ROOT c = (f64[4,4]{0,1}, f64[4,4]{0,1}, f64[4,4]{0,1}, f64[4]{0}, f64[4]{0}, c128[4,4]{0,1}, c128[4,4]{0,1}, s32[]) custom-call(b, n, v, v, a), custom_call_target="lapack_dgeev"
}`, a)
	near(t, "legacy geev", eig(out[3], out[4]), c.get(t, "w", true), 1e-12)
	wantInts(t, "legacy geev info", out[7], 0)
	out = runLapack(t, `HloModule m
ENTRY e {
  a = f64[4,4]{0,1} parameter(0)
  b = s32[] constant(1)
  n = s32[] constant(4)
  v = u8[] constant(86)
  s = u8[] constant(78)
  ROOT c = (f64[4,4]{0,1}, f64[4]{0}, f64[4]{0}, f64[4,4]{0,1}, s32[], s32[]) custom-call(b, n, v, s, a), custom_call_target="lapack_dgees"
}`, a)
	near(t, "legacy gees", eig(out[1], out[2]), c.get(t, "w", true), 1e-12)
	z, tm := values(out[3]), values(out[0])
	near(t, "legacy gees Z·T·Zᵀ", matmul(matmul(z, tm, 4, 4, 4), adjoint(z, 4, 4), 4, 4, 4), c.get(t, "a", false), 1e-12)
}
