package kernels

import (
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
)

// ulps is the distance between a and b in float32 steps (±0 equal, NaN
// only equal to NaN, an infinity only to itself).
func ulps(a, b float32) float64 {
	an, bn := a != a, b != b
	if an || bn {
		if an && bn {
			return 0
		}
		return math.Inf(1)
	}
	if a == b {
		return 0
	}
	if math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) {
		return math.Inf(1)
	}
	return math.Abs(float64(ordered(a) - ordered(b)))
}

// ordered maps float32 bit patterns onto integers in the order of their
// values, with +0 and -0 both 0.
func ordered(f float32) int64 {
	b := math.Float32bits(f)
	if b>>31 != 0 {
		return -int64(b &^ (1 << 31))
	}
	return int64(b)
}

// edgeValues are the inputs every function must get right.
var edgeValues = []float32{
	0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
	math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 0x1p-127, -0x1p-127, 0x1p-126, -0x1p-126,
	math.MaxFloat32, -math.MaxFloat32, 1, -1, 0.5, -0.5, 2, -2,
	88.7228, 88.72283, 88.72284, 88.7229, 88.76, 89, -87.33655, -87.3366, -103.27893, -103.97, -103.98, -104, -105,
	0.625, -0.625, 0.62499994, -0.62499994, 9.01, -9.01, 10, -10, 1e-4, -1e-4, 1e-20, -1e-20,
	math.Ln2 / 2, -math.Ln2 / 2, 1e10, -1e10,
}

// sweep returns every 2^shift-th float32 bit pattern, with the skipped
// low bits varied, so that every binade of both signs is sampled densely,
// followed by edgeValues.
func sweep(shift uint) []float32 {
	n := 1 << (32 - shift)
	x := make([]float32, 0, n+len(edgeValues))
	for i := range n {
		low := uint32(i) * 2654435761 >> (32 - shift)
		x = append(x, math.Float32frombits(uint32(i)<<shift|low))
	}
	return append(x, edgeValues...)
}

func logistic64(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

var vecMathCases = []struct {
	name  string
	f     func(dst, x []float32)
	ref   func(float64) float64
	bound float64
}{
	{"Exp", ExpF32, math.Exp, 2},
	{"Tanh", TanhF32, math.Tanh, 2},
	{"Logistic", LogisticF32, logistic64, 2},
	{"Log", LogF32, math.Log, 1},
	{"Log1p", Log1pF32, math.Log1p, 1},
	{"Expm1", Expm1F32, math.Expm1, 1},
	{"Erf", ErfF32, math.Erf, 2},
	{"Sin", SinF32, math.Sin, 1},
	{"Cos", CosF32, math.Cos, 1},
	{"Sqrt", SqrtF32, math.Sqrt, 0},
	{"Rsqrt", RsqrtF32, rsqrt64, 1},
}

// The float64 functions of package math rounded to float32 are the
// reference: their error is far below a float32 ULP. The kernels run
// with the assembly and the pure-Go twins; the float64-based functions
// have one implementation, so they run once.
func TestVecMathULP(t *testing.T) {
	shift := uint(9)
	if testing.Short() {
		shift = 12
	}
	x := sweep(shift)
	got := make([]float32, len(x))
	withKernels(t, func(t *testing.T) {
		for _, c := range vecMathCases[:3] {
			checkULP(t, c.name, c.f, c.ref, c.bound, x, got)
		}
	})
	for _, c := range vecMathCases[3:] {
		checkULP(t, c.name, c.f, c.ref, c.bound, x, got)
	}
}

func checkULP(t *testing.T, name string, f func(dst, x []float32), ref func(float64) float64, bound float64, x, got []float32) {
	t.Helper()
	worst, at := 0.0, 0
	f(got, x)
	for i, v := range x {
		if d := ulps(got[i], float32(ref(float64(v)))); d > worst {
			worst, at = d, i
		}
	}
	want := float32(ref(float64(x[at])))
	t.Logf("%-8s max %v ULP at %v", name, worst, x[at])
	if worst > bound {
		t.Errorf("%s: %v ULP at x=%v (%#x): got %v, want %v", name, worst, x[at], math.Float32bits(x[at]), got[at], want)
	}
}

// avo allocates from all 32 vector registers, but Y16-Y31 (and X16-X31)
// exist only with AVX-512, and the AVX2 kernels must run on AVX2
// machines: only a function that requires AVX512F may use them (or Z
// registers).
func TestVecMathAsmRegisters(t *testing.T) {
	for _, f := range []string{"vecmath_amd64.s", "gemm_amd64.s"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		funcs := regexp.MustCompile(`(?m)^// func `).Split(string(src), -1)
		avx512 := 0
		for _, fn := range funcs[1:] {
			if regexp.MustCompile(`(?m)^// Requires:.*\bAVX512`).MatchString(fn) {
				avx512++
				continue
			}
			if m := regexp.MustCompile(`\b[XYZ](1[6-9]|2[0-9]|3[01])\b|\bZ\d+\b`).FindString(fn); m != "" {
				t.Errorf("%s: %s uses %s, an AVX-512 register, without requiring AVX512F: avo's allocator ran out of the 16 AVX2 ones",
					f, strings.Fields(fn)[0], m)
			}
		}
		if len(funcs) < 2 {
			t.Errorf("%s: no functions found", f)
		}
		t.Logf("%s: %d functions, %d of them AVX-512", f, len(funcs)-1, avx512)
	}
}

func TestPowULP(t *testing.T) {
	var x, y []float32
	for _, xb := range sweep(20) {
		for _, yv := range []float32{0, 1, -1, 2, 0.5, -0.5, 3, 2.5, -7.25, 1e-3, 100, float32(math.Inf(1)), float32(math.NaN())} {
			x, y = append(x, xb), append(y, yv)
		}
	}
	got := make([]float32, len(x))
	PowF32(got, x, y)
	for i := range x {
		want := float32(math.Pow(float64(x[i]), float64(y[i])))
		if d := ulps(got[i], want); d > 1 {
			t.Fatalf("Pow(%v, %v) = %v, want %v", x[i], y[i], got[i], want)
		}
	}
}

// Every length 0..40 (whole vectors, the partial tail, both) and
// in-place use give the same result as one element at a time.
func TestVecMathLengthsAndAliasing(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		for _, c := range vecMathCases[:3] {
			src := make([]float32, 40)
			for i := range src {
				src[i] = float32(i)*0.37 - 7
			}
			want := make([]float32, len(src))
			for i := range src {
				c.f(want[i:i+1], src[i:i+1])
			}
			for n := range len(src) + 1 {
				dst := make([]float32, n+1)
				dst[n] = 42
				c.f(dst, src[:n])
				in := append([]float32(nil), src[:n]...)
				c.f(in, in)
				for i := range n {
					if dst[i] != want[i] || in[i] != want[i] {
						t.Fatalf("%s n=%d: [%d] = %v (in place %v), want %v", c.name, n, i, dst[i], in[i], want[i])
					}
				}
				if dst[n] != 42 {
					t.Fatalf("%s n=%d wrote past len(x)", c.name, n)
				}
			}
		}
	})
}

// The assembly and the pure-Go twin do the same float32 arithmetic; they
// may differ only where math.FMA's float64 result rounds differently to
// float32 than a float32 FMA would (rare ties).
func TestVecMathAsmMatchesGo(t *testing.T) {
	if useAsmVar == nil || !*useAsmVar {
		t.Skip("no assembly")
	}
	x := sweep(14)
	for _, c := range []struct {
		name string
		asm  func(dst, x []float32)
		gof  func(float32) float32
	}{{"Exp", ExpF32, exp32}, {"Tanh", TanhF32, tanh32}, {"Logistic", LogisticF32, logistic32}} {
		got := make([]float32, len(x))
		c.asm(got, x)
		diff := 0
		for i, v := range x {
			if g := c.gof(v); ulps(got[i], g) != 0 {
				diff++
				if ulps(got[i], g) > 1 {
					t.Errorf("%s(%v): asm %v, Go %v", c.name, v, got[i], g)
				}
			}
		}
		t.Logf("%s: %d of %d differ by 1 ULP", c.name, diff, len(x))
	}
}

// Long inputs take the non-temporal path (on amd64) with a head before
// dst's 32-byte boundary; results must match short calls exactly.
func TestVecMathLongMisaligned(t *testing.T) {
	n := 1<<21 + 13
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%2000)*0.013 - 13
	}
	for _, c := range vecMathCases[:3] {
		want := make([]float32, n)
		for i := 0; i < n; i += 1000 {
			c.f(want[i:min(i+1000, n)], x[i:min(i+1000, n)])
		}
		for _, off := range []int{0, 3} {
			got := make([]float32, n+off)[off:]
			c.f(got, x)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s offset %d: [%d] = %v, want %v", c.name, off, i, got[i], want[i])
				}
			}
		}
	}
}

// The ULP test counts ±0 as equal; tanh must keep the zero's sign, and
// saturate to ±1 at the infinities.
func TestTanhSigns(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		x := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), 20, -20, 1e-30, -1e-30}
		want := []uint32{0, 1 << 31, 0x3f800000, 0xbf800000, 0x3f800000, 0xbf800000, math.Float32bits(1e-30), math.Float32bits(-1e-30)}
		got := make([]float32, len(x))
		TanhF32(got, x)
		for i := range x {
			if math.Float32bits(got[i]) != want[i] {
				t.Errorf("tanh(%v) = %#x, want %#x", x[i], math.Float32bits(got[i]), want[i])
			}
		}
	})
}

// TestVecMathShortcutExact checks that the assembly's shortcut for
// vectors inside its window (exp and logistic add 2^n into the exponent
// field instead of multiplying) gives the bits of the full body: each
// group of eight values runs once as is and once beside a NaN, which
// sends its vector down the full body. The values cover both sides of
// the window's edges (|x| ≈ 44) and the whole range in between.
func TestVecMathShortcutExact(t *testing.T) {
	var xs []float32
	for x := float32(-50); x <= 50; x += 0.0037 {
		xs = append(xs, x)
	}
	for _, v := range sweep(12) {
		if !math.IsNaN(float64(v)) {
			xs = append(xs, v)
		}
	}
	for _, c := range vecMathCases[:3] {
		var fast, full [16]float32
		for i := 0; i+7 <= len(xs); i += 7 {
			var a, b [16]float32
			copy(a[:7], xs[i:i+7])
			copy(b[:7], xs[i:i+7])
			a[7] = 0.5
			b[7] = float32(math.NaN())
			copy(a[8:], a[:8])
			copy(b[8:], b[:8])
			c.f(fast[:], a[:])
			c.f(full[:], b[:])
			for j := range 7 {
				if math.Float32bits(fast[j]) != math.Float32bits(full[j]) {
					t.Fatalf("%s(%v) = %v alone, %v beside a NaN", c.name, a[j], fast[j], full[j])
				}
			}
		}
	}
}

// The AVX-512 kernels give the AVX2 kernels' bits: over every float32
// exponent and sign (sweep) with the edge values, at lengths around the
// 16-lane vectors, and for an array long enough to store non-temporally,
// starting off a 64-byte boundary.
func TestVecMathWideMatchesAVX2(t *testing.T) {
	if useAVX512Var == nil || !*useAVX512Var {
		t.Skip("no AVX-512 kernels on this machine")
	}
	long := sweep(10)[:StreamMin+37]
	for _, c := range []struct {
		name string
		f    func(dst, x []float32)
	}{{"Exp", ExpF32}, {"Tanh", TanhF32}, {"Logistic", LogisticF32}} {
		for _, x := range [][]float32{sweep(12), sweep(12)[:15], sweep(12)[:17], sweep(12)[:40], long[3:]} {
			got, want := make([]float32, len(x)+1), make([]float32, len(x)+1)
			c.f(got[1:], x)
			*useAVX512Var = false
			c.f(want[1:], x)
			*useAVX512Var = true
			for i := range x {
				if g, w := got[1+i], want[1+i]; math.Float32bits(g) != math.Float32bits(w) {
					t.Fatalf("%s(%v) over %d: %v (%#x) with AVX-512, %v (%#x) with AVX2", c.name, x[i], len(x), g, math.Float32bits(g), w, math.Float32bits(w))
				}
			}
		}
	}
}
