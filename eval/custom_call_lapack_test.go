package eval_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// lapackModule writes one custom call as JAX's CPU lowering emits it in
// HLO text: typed FFI, the attributes in backend_config, the operands'
// layouts in operand_layout_constraints and the results' in the shape.
func lapackModule(target, config, result string, params ...string) string {
	var b strings.Builder
	b.WriteString("HloModule m\nENTRY e {\n")
	var names []string
	for i, p := range params {
		fmt.Fprintf(&b, "  p%d = %s parameter(%d)\n", i, p, i)
		names = append(names, fmt.Sprintf("p%d", i))
	}
	fmt.Fprintf(&b, "  ROOT c = %s custom-call(%s), custom_call_target=%q, operand_layout_constraints={%s}, api_version=API_VERSION_TYPED_FFI, backend_config={%s}\n}\n",
		result, strings.Join(names, ", "), target, strings.Join(params, ", "), config)
	return b.String()
}

// runLapack runs text on the evaluator and returns the result's tuple
// elements (or the result itself).
func runLapack(t *testing.T, text string, args ...*hlo.Literal) []*hlo.Literal {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	if got.Shape().IsTuple() {
		return got.Elements()
	}
	return []*hlo.Literal{got}
}

// matLit makes a literal of dtype dt holding the rows (complex dtypes get
// zero imaginary parts), with any leading batch dimensions.
func matLit(t *testing.T, dt hlo.DType, vals []complex128, dims ...int64) *hlo.Literal {
	t.Helper()
	l := hlo.NewLiteral(hlo.ArrayShape(dt, dims...))
	if l.Len() != len(vals) {
		t.Fatalf("%d values for %v", len(vals), dims)
	}
	for i, v := range vals {
		if dt.IsComplex() {
			l.SetComplex128(i, v)
		} else {
			l.SetFloat64(i, real(v))
		}
	}
	return l
}

func reals(v ...float64) []complex128 {
	out := make([]complex128, len(v))
	for i, x := range v {
		out[i] = complex(x, 0)
	}
	return out
}

func values(l *hlo.Literal) []complex128 {
	out := make([]complex128, l.Len())
	for i := range out {
		out[i] = l.GetComplex128(i)
	}
	return out
}

func ints(l *hlo.Literal) []int64 {
	out := make([]int64, l.Len())
	for i := range out {
		out[i] = l.GetInt64(i)
	}
	return out
}

func near(t *testing.T, what string, got, want []complex128, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values %v, want %d %v", what, len(got), got, len(want), want)
	}
	for i := range got {
		if cmplx.Abs(got[i]-want[i]) > tol*(1+cmplx.Abs(want[i])) {
			t.Fatalf("%s: element %d is %v, want %v\ngot  %v\nwant %v", what, i, got[i], want[i], got, want)
		}
	}
}

func wantInts(t *testing.T, what string, got *hlo.Literal, want ...int64) {
	t.Helper()
	if g := ints(got); fmt.Sprint(g) != fmt.Sprint(want) {
		t.Fatalf("%s: got %v, want %v", what, g, want)
	}
}

// LU of [[1,2],[3,4]] by hand: row 2 is the pivot (ipiv 2, 2 in LAPACK's
// 1-based numbering), L21 = 1/3, U = [[3,4],[0,2-4/3]].
func TestLapackGetrfHandWorked(t *testing.T) {
	for _, dt := range []string{"f32", "f64", "c64", "c128"} {
		letter := map[string]string{"f32": "s", "f64": "d", "c64": "c", "c128": "z"}[dt]
		text := lapackModule("lapack_"+letter+"getrf_ffi", "", "("+dt+"[2,2]{0,1}, s32[2]{0}, s32[])", dt+"[2,2]{0,1}")
		out := runLapack(t, text, matLit(t, dtOf(dt), reals(1, 2, 3, 4), 2, 2))
		near(t, dt+" LU", values(out[0]), reals(3, 4, 1.0/3, 2-4.0/3), 1e-6)
		wantInts(t, dt+" ipiv", out[1], 2, 2)
		wantInts(t, dt+" info", out[2], 0)
	}
	// A singular matrix: U(2,2) is exactly 0, info names it.
	out := runLapack(t, lapackModule("lapack_dgetrf_ffi", "", "(f64[2,2]{0,1}, s32[2]{0}, s32[])", "f64[2,2]{0,1}"),
		matLit(t, hlo.F64, reals(1, 2, 2, 4), 2, 2))
	wantInts(t, "singular info", out[2], 2)
}

func dtOf(s string) hlo.DType {
	return map[string]hlo.DType{"f32": hlo.F32, "f64": hlo.F64, "c64": hlo.C64, "c128": hlo.C128, "s32": hlo.S32}[s]
}

// With row-major layouts LAPACK reads the transpose: getrf factors
// [[1,3],[2,4]] (pivot row 2, L21 = 1/2, U = [[2,4],[0,1]]) and the packed
// result, written back row-major, reads transposed.
func TestLapackHonorsLayouts(t *testing.T) {
	text := lapackModule("lapack_sgetrf_ffi", "", "(f32[2,2]{1,0}, s32[2]{0}, s32[])", "f32[2,2]{1,0}")
	out := runLapack(t, text, matLit(t, hlo.F32, reals(1, 2, 3, 4), 2, 2))
	near(t, "LU", values(out[0]), reals(2, 0.5, 4, 1), 1e-6)
	wantInts(t, "ipiv", out[1], 2, 2)
}

// Cholesky of [[4,2],[2,3]] by hand: L = [[2,0],[1,√2]]; the triangle not
// named by uplo keeps the input's values. [[1,2],[2,1]] fails at order 2.
func TestLapackPotrfHandWorked(t *testing.T) {
	for _, dt := range []string{"f32", "f64", "c64", "c128"} {
		letter := map[string]string{"f32": "s", "f64": "d", "c64": "c", "c128": "z"}[dt]
		run := func(uplo byte, a ...float64) []*hlo.Literal {
			return runLapack(t, lapackModule("lapack_"+letter+"potrf_ffi", fmt.Sprintf("uplo = %d : ui8", uplo),
				"("+dt+"[2,2]{0,1}, s32[])", dt+"[2,2]{0,1}"), matLit(t, dtOf(dt), reals(a...), 2, 2))
		}
		out := run('L', 4, 2, 2, 3)
		near(t, dt+" lower", values(out[0]), reals(2, 2, 1, math.Sqrt2), 1e-6)
		wantInts(t, dt+" info", out[1], 0)
		out = run('U', 4, 2, 2, 3)
		near(t, dt+" upper", values(out[0]), reals(2, 1, 2, math.Sqrt2), 1e-6)
		out = run('L', 1, 2, 2, 1)
		wantInts(t, dt+" not positive definite", out[1], 2)
	}
}

// A batch of two 2×2 matrices in JAX's batched layout {1,2,0}: each is
// factored on its own.
func TestLapackBatched(t *testing.T) {
	text := lapackModule("lapack_dpotrf_ffi", "uplo = 76 : ui8", "(f64[2,2,2]{1,2,0}, s32[2]{0})", "f64[2,2,2]{1,2,0}")
	out := runLapack(t, text, matLit(t, hlo.F64, reals(4, 2, 2, 3, 9, 0, 0, -1), 2, 2, 2))
	near(t, "factors", values(out[0])[:4], reals(2, 2, 1, math.Sqrt2), 1e-12)
	near(t, "second factor's diagonal", values(out[0])[4:5], reals(3), 1e-12)
	wantInts(t, "info", out[1], 0, 2)
}

// triangle extracts op(a) (k×k, row-major) as trsm reads it.
func triangle(a []complex128, k int, uplo, trans, diag byte) []complex128 {
	t := make([]complex128, k*k)
	for i := range k {
		for j := range k {
			keep := i == j || (uplo == 'L') == (i > j)
			v := a[i*k+j]
			if !keep {
				v = 0
			}
			if i == j && diag == 'U' {
				v = 1
			}
			switch trans {
			case 'N':
				t[i*k+j] = v
			case 'T':
				t[j*k+i] = v
			default:
				t[j*k+i] = cmplx.Conj(v)
			}
		}
	}
	return t
}

func matmul(a, b []complex128, m, k, n int) []complex128 {
	out := make([]complex128, m*n)
	for i := range m {
		for j := range n {
			for l := range k {
				out[i*n+j] += a[i*k+l] * b[l*n+j]
			}
		}
	}
	return out
}

// Every side/uplo/trans/diag of trsm, real and complex: op(A)·X = B or
// X·op(A) = B holds for the triangle trsm reads (the other triangle holds
// garbage it must ignore).
func TestLapackTrsmIdentity(t *testing.T) {
	a := []complex128{3 + 1i, 7, -5, 0.5 - 1i, 2 + 0.5i, 9, 0.25, -1 + 2i, 4 - 1i}
	b := []complex128{1, 2 - 1i, 3, -1i, 0.5, 2, 1 + 1i, -2, 0, 1, 4i, -3}
	for _, dt := range []string{"f64", "c128"} {
		letter := map[string]string{"f64": "d", "c128": "z"}[dt]
		for _, side := range "LR" {
			for _, uplo := range "LU" {
				for _, trans := range "NTC" {
					for _, diag := range "NU" {
						m, n := 3, 4
						bd := "[3,4]{0,1}"
						if side == 'R' {
							m, n, bd = 4, 3, "[4,3]{0,1}"
						}
						cfg := fmt.Sprintf("diag = %d : ui8, side = %d : ui8, trans_x = %d : ui8, uplo = %d : ui8", diag, side, trans, uplo)
						aa, bb := a, b
						if dt == "f64" {
							aa, bb = realPart(a), realPart(b)
						}
						out := runLapack(t, lapackModule("lapack_"+letter+"trsm_ffi", cfg, dt+bd, dt+"[3,3]{0,1}", dt+bd),
							matLit(t, dtOf(dt), aa, 3, 3), matLit(t, dtOf(dt), bb, int64(m), int64(n)))
						x := values(out[0])
						op := triangle(aa, 3, byte(uplo), byte(trans), byte(diag))
						var got []complex128
						if side == 'L' {
							got = matmul(op, x, 3, 3, n)
						} else {
							got = matmul(x, op, m, 3, 3)
						}
						near(t, fmt.Sprintf("%s side %c uplo %c trans %c diag %c", dt, side, uplo, trans, diag), got, bb, 1e-12)
					}
				}
			}
		}
	}
}

func realPart(v []complex128) []complex128 {
	out := make([]complex128, len(v))
	for i, x := range v {
		out[i] = complex(real(x), 0)
	}
	return out
}

// The pre-FFI forms: flags and sizes as leading scalar operands,
// workspace results. blas_dtrsm's alpha scales the right-hand side.
func TestLapackLegacyForms(t *testing.T) {
	out := runLapack(t, `HloModule m
ENTRY e {
  a = f32[2,2]{0,1} parameter(0)
  lower = s32[] constant(1)
  b = s32[] constant(1)
  n = s32[] constant(2)
  ROOT c = (f32[2,2]{0,1}, s32[]) custom-call(lower, b, n, a), custom_call_target="lapack_spotrf", operand_layout_constraints={s32[], s32[], s32[], f32[2,2]{0,1}}, api_version=API_VERSION_STATUS_RETURNING
}`, matLit(t, hlo.F32, reals(4, 2, 2, 3), 2, 2))
	near(t, "legacy potrf", values(out[0]), reals(2, 2, 1, math.Sqrt2), 1e-6)
	wantInts(t, "legacy potrf info", out[1], 0)

	out = runLapack(t, `HloModule m
ENTRY e {
  a = f64[2,2]{0,1} parameter(0)
  x = f64[2,1]{0,1} parameter(1)
  one = s32[] constant(1)
  zero = s32[] constant(0)
  two = s32[] constant(2)
  alpha = f64[] constant(2)
  ROOT c = f64[2,1]{0,1} custom-call(one, one, zero, zero, two, one, one, alpha, a, x), custom_call_target="blas_dtrsm", operand_layout_constraints={s32[], s32[], s32[], s32[], s32[], s32[], s32[], f64[], f64[2,2]{0,1}, f64[2,1]{0,1}}
}`, matLit(t, hlo.F64, reals(2, 99, 1, 1), 2, 2), matLit(t, hlo.F64, reals(1, 1.5), 2, 1))
	// [[2,0],[1,1]]·x = 2·[1,1.5] → x = [1, 2].
	near(t, "legacy trsm", values(out[0]), reals(1, 2), 1e-12)

	out = runLapack(t, `HloModule m
ENTRY e {
  a = f32[2,2]{0,1} parameter(0)
  one = s32[] constant(1)
  two = s32[] constant(2)
  lwork = s32[] constant(64)
  ROOT c = (f32[2,2]{0,1}, f32[2]{0}, s32[], f32[64]{0}) custom-call(one, two, two, lwork, a), custom_call_target="lapack_sgeqrf"
}`, matLit(t, hlo.F32, reals(3, 1, 4, 2), 2, 2))
	// Hand-worked Householder QR of [[3,1],[4,2]]: beta = -5, tau = 8/5,
	// v = (1, 4/(3+5)); R = [[-5, -11/5], [0, 2/5]].
	near(t, "legacy geqrf", values(out[0]), reals(-5, -2.2, 0.5, 0.4), 1e-6)
	near(t, "legacy geqrf tau", values(out[1]), reals(1.6, 0), 1e-6)
	wantInts(t, "legacy geqrf info", out[2], 0)
}

// Wrong operands, results or attributes are errors naming the
// instruction, not panics.
func TestLapackBadInput(t *testing.T) {
	cases := map[string]string{
		"operand count": lapackModule("lapack_spotrf_ffi", "", "(f32[2,2]{0,1}, s32[])", "f32[2,2]{0,1}", "f32[2,2]{0,1}"),
		"dtype":         lapackModule("lapack_dpotrf_ffi", "", "(f32[2,2]{0,1}, s32[])", "f32[2,2]{0,1}"),
		"not square":    lapackModule("lapack_spotrf_ffi", "", "(f32[2,3]{0,1}, s32[])", "f32[2,3]{0,1}"),
		"rank":          lapackModule("lapack_sgetrf_ffi", "", "(f32[2]{0}, s32[1]{0}, s32[])", "f32[2]{0}"),
		"result shape":  lapackModule("lapack_sgetrf_ffi", "", "(f32[2,2]{0,1}, s32[3]{0}, s32[])", "f32[2,2]{0,1}"),
		"result count":  lapackModule("lapack_sgetrf_ffi", "", "(f32[2,2]{0,1}, s32[2]{0})", "f32[2,2]{0,1}"),
		"attribute":     lapackModule("lapack_spotrf_ffi", "uplo = 88 : ui8", "(f32[2,2]{0,1}, s32[])", "f32[2,2]{0,1}"),
		"config":        lapackModule("lapack_spotrf_ffi", "uplo = x", "(f32[2,2]{0,1}, s32[])", "f32[2,2]{0,1}"),
		"trsm fit":      lapackModule("lapack_strsm_ffi", "", "f32[3,2]{0,1}", "f32[2,2]{0,1}", "f32[3,2]{0,1}"),
		"gees sort":     lapackModule("lapack_sgees_ffi", "mode = 86 : ui8, sort = 83 : ui8", "(f32[2,2]{0,1}, f32[2,2]{0,1}, f32[2]{0}, f32[2]{0}, s32[], s32[])", "f32[2,2]{0,1}"),
		"legacy scalars": `HloModule m
ENTRY e {
  a = f32[2,2]{0,1} parameter(0)
  ROOT c = (f32[2,2]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_spotrf"
}`,
	}
	for name, text := range cases {
		m, err := hlotext.Parse(text, hlotext.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var args []*hlo.Literal
		for _, p := range m.Entry.Params {
			args = append(args, hlo.NewLiteral(p.Shape))
		}
		_, err = eval.Run(m, args...)
		if err == nil || !strings.Contains(err.Error(), "instruction c") || !strings.Contains(err.Error(), "lapack_") {
			t.Errorf("%s: got error %v, want one naming instruction c and the target", name, err)
		}
	}
}

// Empty matrices and 1×1 ones run without error and give LAPACK's
// trivial answers (info 0).
func TestLapackEdgeSizes(t *testing.T) {
	cases := []struct{ target, config, result string }{
		{"lapack_spotrf_ffi", "", "(f32[N,N]{0,1}, s32[])"},
		{"lapack_zpotrf_ffi", "", "(c128[N,N]{0,1}, s32[])"},
		{"lapack_dgetrf_ffi", "", "(f64[N,N]{0,1}, s32[N]{0}, s32[])"},
		{"lapack_cgetrf_ffi", "", "(c64[N,N]{0,1}, s32[N]{0}, s32[])"},
		{"lapack_dgeqrf_ffi", "", "(f64[N,N]{0,1}, f64[N]{0})"},
		{"lapack_zgeqrf_ffi", "", "(c128[N,N]{0,1}, c128[N]{0})"},
		{"lapack_dsyevd_ffi", "", "(f64[N,N]{0,1}, f64[N]{0}, s32[])"},
		{"lapack_zheevd_ffi", "", "(c128[N,N]{0,1}, f64[N]{0}, s32[])"},
		{"lapack_dgesdd_ffi", "", "(f64[N,N]{0,1}, f64[N]{0}, f64[N,N]{0,1}, f64[N,N]{0,1}, s32[])"},
		{"lapack_zgesdd_ffi", "", "(c128[N,N]{0,1}, f64[N]{0}, c128[N,N]{0,1}, c128[N,N]{0,1}, s32[])"},
		{"lapack_dgeev_ffi", "", "(f64[N]{0}, f64[N]{0}, c128[N,N]{0,1}, c128[N,N]{0,1}, s32[])"},
		{"lapack_zgeev_ffi", "", "(c128[N]{0}, c128[N,N]{0,1}, c128[N,N]{0,1}, s32[])"},
		{"lapack_dgees_ffi", "", "(f64[N,N]{0,1}, f64[N,N]{0,1}, f64[N]{0}, f64[N]{0}, s32[], s32[])"},
		{"lapack_zgees_ffi", "", "(c128[N,N]{0,1}, c128[N,N]{0,1}, c128[N]{0}, s32[], s32[])"},
		{"lapack_dgehrd_ffi", "", "(f64[N,N]{0,1}, f64[M]{0}, s32[])"},
		{"lapack_zgehrd_ffi", "", "(c128[N,N]{0,1}, c128[M]{0}, s32[])"},
		{"lapack_dsytrd_ffi", "", "(f64[N,N]{0,1}, f64[N]{0}, f64[M]{0}, f64[M]{0}, s32[])"},
		{"lapack_zhetrd_ffi", "", "(c128[N,N]{0,1}, f64[N]{0}, f64[M]{0}, c128[M]{0}, s32[])"},
	}
	for _, n := range []int{0, 1} {
		for _, c := range cases {
			dt := strings.SplitN(strings.TrimPrefix(c.result, "("), "[", 2)[0]
			r := strings.NewReplacer("N", fmt.Sprint(n), "M", fmt.Sprint(max(0, n-1))).Replace(c.result)
			text := lapackModule(c.target, c.config, r, fmt.Sprintf("%s[%d,%d]{0,1}", dt, n, n))
			m, err := hlotext.Parse(text, hlotext.Options{})
			if err != nil {
				t.Fatal(err)
			}
			arg := matLit(t, dtOf(dt), reals(make([]float64, n*n)...), int64(n), int64(n))
			if n == 1 {
				arg = matLit(t, dtOf(dt), reals(4), 1, 1)
			}
			if _, err := eval.Run(m, arg); err != nil {
				t.Errorf("%s %d×%d: %v", c.target, n, n, err)
			}
		}
	}
}

// Rectangular shapes with an empty side, and an empty batch.
func TestLapackEmptySides(t *testing.T) {
	for _, tc := range []struct{ target, result, param string }{
		{"lapack_dgetrf_ffi", "(f64[3,0]{0,1}, s32[0]{0}, s32[])", "f64[3,0]{0,1}"},
		{"lapack_zgetrf_ffi", "(c128[0,3]{0,1}, s32[0]{0}, s32[])", "c128[0,3]{0,1}"},
		{"lapack_sgeqrf_ffi", "(f32[0,3]{0,1}, f32[0]{0})", "f32[0,3]{0,1}"},
		{"lapack_dgesdd_ffi", "(f64[3,0]{0,1}, f64[0]{0}, f64[3,3]{0,1}, f64[0,0]{0,1}, s32[])", "f64[3,0]{0,1}"},
		{"lapack_zgesdd_ffi", "(c128[0,2]{0,1}, f64[0]{0}, c128[0,0]{0,1}, c128[2,2]{0,1}, s32[])", "c128[0,2]{0,1}"},
		{"lapack_dpotrf_ffi", "(f64[0,2,2]{1,2,0}, s32[0]{0})", "f64[0,2,2]{1,2,0}"},
		{"lapack_dtrsm_ffi", "f64[2,0]{0,1}", "f64[2,2]{0,1}, f64[2,0]{0,1}"},
	} {
		m, err := hlotext.Parse(lapackModule(tc.target, "", tc.result, strings.Split(tc.param, ", ")...), hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var args []*hlo.Literal
		for _, p := range m.Entry.Params {
			args = append(args, hlo.NewLiteral(p.Shape))
		}
		if _, err := eval.Run(m, args...); err != nil {
			t.Errorf("%s %s: %v", tc.target, tc.param, err)
		}
	}
}

// backend_config may also arrive as a quoted string (XLA prints it so when
// it does not lex as a dictionary); the attributes are the same.
func TestLapackQuotedBackendConfig(t *testing.T) {
	out := runLapack(t, `HloModule m
ENTRY e {
  a = f64[2,2]{0,1} parameter(0)
  ROOT c = (f64[2,2]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_dpotrf_ffi", operand_layout_constraints={f64[2,2]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config="{uplo = 85 : ui8}"
}`, matLit(t, hlo.F64, reals(4, 2, 2, 3), 2, 2))
	near(t, "upper", values(out[0]), reals(2, 1, 2, math.Sqrt2), 1e-12)
}
