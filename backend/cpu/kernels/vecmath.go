package kernels

//go:generate sh -c "cd _asm && go run ./vecmath -out ../vecmath_amd64.s -stubs ../vecmath_stub_amd64.go -pkg kernels"

// Vector math over float32 slices. Each function sets dst[i] = f(x[i])
// for i < len(x); dst must be at least as long as x and may be x itself
// (but not partly overlap it).
//
// Exp, Tanh and Logistic have AVX2+FMA kernels (vecmath_amd64.s, 8 lanes,
// 4 vectors per loop iteration) and pure-Go twins doing the same
// arithmetic in float32 with fused multiply-adds. From 2M elements on the
// kernels store non-temporally (see ntMin). Sqrt and Rsqrt have the AVX
// kernels of elementwise.go. The others are pure Go on every platform:
// they evaluate the float64 function from package math and round, which
// is accurate but not fast.
//
// Maximum error in float32 ULPs against the float64 function of package
// math rounded to float32, measured by TestVecMathULP over every 2^9-th
// bit pattern with varied low bits (8M inputs, every binade of both
// signs) plus edge values (±0, ±Inf, NaN, subnormals, the overflow and
// underflow thresholds), and once over every 2^7-th (32M inputs) with the
// same results; "bound" is what the test asserts. The float64-based
// functions are their own reference, so they measure 0; their real error
// is that of package math (under a float64 ULP) plus the final rounding,
// so at most 1 float32 ULP (Sqrt: correctly rounded).
//
//	function   asm   Go    bound  implementation
//	Exp        1     1     2      AVX2+FMA asm / Go twin: degree-6 polynomial
//	Tanh       2     2     2      AVX2+FMA asm / Go twin: N = 1-e^-2|x|, N/(2-N)
//	Logistic   2     2     2      AVX2+FMA asm / Go twin: e^-|x| and one division
//	Log        -     0     1      pure Go via float64
//	Log1p      -     0     1      pure Go via float64
//	Expm1      -     0     1      pure Go via float64
//	Erf        -     1     2      Go: x·P(x²) below 1, 1 - e^-x²·P(|x|) above
//	Sin, Cos   -     0     1      pure Go via float64
//	Sqrt       0     0     0      AVX VSQRTPS / Go via float64, same bits
//	Rsqrt      0     0     1      AVX via float64 / Go via float64, same bits
//	Pow        -     0     1      pure Go, ddmath.Pow32 (TestPowULP)
//
// The assembly and Go twins gave bit-identical results on all 262K
// inputs of TestVecMathAsmMatchesGo. Tanh was also run over every
// non-negative float32 (it is odd by construction): 2 ULP on 0.15% of
// them, 1 on 3.3%; Logistic over every x in [-3, -2^-12], where it uses
// E - E·q with E near 1: 2 ULP on 0.003%.

import (
	"math"

	"github.com/axle-ml/axle/internal/ddmath"
)

// The constants of the exp, tanh and logistic kernels; the generator
// _asm/vecmath has the same values and says why each is what it is.
const (
	log2e    = 1.44269504088896340736
	ln2Hi    = float32(0.693145751953125 + 1.4286068203094173e-06)
	ln2Lo    = float32(math.Ln2 - float64(ln2Hi))
	expRound = 12582912.0 // 1.5·2^23
	expHi    = 88.76
	expLo    = -104.0
	tanhBig  = 10.0
)

var (
	expPoly = [...]float32{1, 1, 0.5, 0.166664049, 0.0416663401, 0.00837596785, 0.00139421597}
	// expm1Poly is Taylor's 1/k! for k = 2..8: its truncation error,
	// under r^9/9! ≈ 2e-10 relative, is far below a ULP; a polynomial
	// fitted for e^r (expPoly) is not accurate relative to e^r - 1 near 0.
	expm1Poly = [...]float32{1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320}
)

// The erf polynomials (erf32), fitted by weighted least squares
// (Lawson's iteration towards minimax) in float64: erfSmall is
// q(s) = (erf(x) - x)/x in s = x² for |x| < erfSplit (error 1.2e-9, a
// fiftieth of a ULP of the result), erfLarge is the scaled complement
// erfc(a)·e^(a²) in u = a - erfMid for a = |x| in [erfSplit, erfBig]
// (weighted by erfc(a): the result's absolute error is under 0.06 ULP).
// In float32 erf(x) rounds to 1 from 3.92 on, so a is capped at erfBig.
const (
	erfSplit = 1.0
	erfMid   = 2.5
	erfBig   = 4.0
)

var (
	erfSmall = [...]float32{0.12837917, -0.37612626, 0.112836, -0.026854448, 0.0051895413, -0.00080208876, 7.8892605e-05}
	erfLarge = [...]float32{0.21081056, -0.07427492, 0.025162522, -0.008001326, 0.001502085, -0.002418349, -0.001010888, -0.00042646023}
)

// MathConstants are the exp, tanh, logistic and erf kernels' constants,
// for code generators that must compute the same bits (package jit).
var MathConstants = struct {
	Log2e, Ln2Hi, Ln2Lo, Round, ExpHi, ExpLo, TanhBig float32
	ExpPoly, Expm1Poly                                [7]float32
	ErfSplit, ErfMid, ErfBig                          float32
	ErfSmall                                          [7]float32
	ErfLarge                                          [8]float32
}{log2e, ln2Hi, ln2Lo, expRound, expHi, expLo, tanhBig, expPoly, expm1Poly,
	erfSplit, erfMid, erfBig, erfSmall, erfLarge}

// ExpF32 sets dst[i] = e^x[i].
func ExpF32(dst, x []float32) { expF32(dst[:len(x)], x) }

// StreamMin is the output size (in floats) from which kernels store
// non-temporally: far beyond the caches, so whoever reads it next will
// find it in memory anyway, and skipping the read of dst's lines before
// they are overwritten saves a third of a streaming pass's traffic.
const StreamMin = 1 << 21

// TanhF32 sets dst[i] = tanh(x[i]).
func TanhF32(dst, x []float32) { tanhF32(dst[:len(x)], x) }

// LogisticF32 sets dst[i] = 1/(1+e^-x[i]).
func LogisticF32(dst, x []float32) { logisticF32(dst[:len(x)], x) }

// LogF32 sets dst[i] = ln x[i].
func LogF32(dst, x []float32) { map64(dst, x, math.Log) }

// Log1pF32 sets dst[i] = ln(1+x[i]).
func Log1pF32(dst, x []float32) { map64(dst, x, math.Log1p) }

// Expm1F32 sets dst[i] = e^x[i] - 1.
func Expm1F32(dst, x []float32) { map64(dst, x, math.Expm1) }

// ErfF32 sets dst[i] = erf(x[i]) (erf32; package jit generates the same
// arithmetic, so a fused erf gives these bits).
func ErfF32(dst, x []float32) { mapGo(dst[:len(x)], x, erf32) }

// SinF32 sets dst[i] = sin(x[i]).
func SinF32(dst, x []float32) { map64(dst, x, math.Sin) }

// CosF32 sets dst[i] = cos(x[i]).
func CosF32(dst, x []float32) { map64(dst, x, math.Cos) }

// SqrtF32 sets dst[i] = √x[i], correctly rounded (float64's square root
// has more than twice float32's precision, so rounding twice is exact):
// VSQRTPS on amd64, the bits of the Go loop sqrtGo.
func SqrtF32(dst, x []float32) { sqrtF32(dst[:len(x)], x) }

// RsqrtF32 sets dst[i] = 1/√x[i], computed in float64 and rounded once
// (on amd64 four lanes at a time, the bits of the Go loop rsqrtGo; in
// float32, √ then 1/ would round twice and differ on about a quarter of
// all inputs).
func RsqrtF32(dst, x []float32) { rsqrtF32(dst[:len(x)], x) }

func rsqrt64(x float64) float64 { return 1 / math.Sqrt(x) }

// PowF32 sets dst[i] = x[i]^y[i], correctly rounded but for rare
// near-midpoints (ddmath.Pow32, as the evaluator); y must be at least as
// long as x.
func PowF32(dst, x, y []float32) {
	dst, y = dst[:len(x)], y[:len(x)]
	for i, v := range x {
		dst[i] = ddmath.Pow32(v, y[i])
	}
}

// map64 applies a float64 function elementwise.
func map64(dst, x []float32, f func(float64) float64) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = float32(f(float64(v)))
	}
}

// mapGo applies a float32 function elementwise (the pure-Go kernels).
func mapGo(dst, x []float32, f func(float32) float32) {
	for i, v := range x {
		dst[i] = f(v)
	}
}

// fma32 is a·b+c rounded once to float32 but for rare double-rounding
// ties (the product is exact in float64), like the kernels' VFMADD.
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// clamp32 limits x to [lo, hi] and leaves NaN alone, like the kernels'
// MAXPS/MINPS with x as the NaN-returning operand.
func clamp32(x, lo, hi float32) float32 {
	if x < lo {
		return lo
	}
	if x > hi {
		return hi
	}
	return x
}

// expPoly32 evaluates expPoly at r in the kernels' (Estrin's) order:
// 1 + ((r + r²·(c2 + c3·r)) + r⁴·((c4 + c5·r) + r²·c6)), the 1 last so
// that only one rounding happens at the result's scale.
func expPoly32(r float32) float32 {
	c := &expPoly
	r2 := r * r
	r4 := r2 * r2
	a := fma32(r2, fma32(c[3], r, c[2]), r)
	b := fma32(c[6], r2, fma32(c[5], r, c[4]))
	return 1 + fma32(r4, b, a)
}

// expm1Poly32 evaluates e^r - 1 = r + r²·p(r) for |r| ≤ ln2/2, p from
// expm1Poly, in the tanh kernel's (Estrin's) order:
// r + r²·(((p0 + p1·r) + r²·(p2 + p3·r)) + r⁴·((p4 + p5·r) + r²·p6)).
func expm1Poly32(r float32) float32 {
	c := &expm1Poly
	r2 := r * r
	r4 := r2 * r2
	a := fma32(r2, fma32(c[3], r, c[2]), fma32(c[1], r, c[0]))
	b := fma32(c[6], r2, fma32(c[5], r, c[4]))
	return fma32(r2, fma32(r4, b, a), r)
}

// expReduce32 returns t = expRound + n and r with x = n·ln2 + r,
// n = round(x·log2e), |r| ≤ ln2/2, as the kernels' expReduce; without
// lo, r is x - n·ln2Hi (tanh's reduction).
func expReduce32(x float32, lo bool) (t, r float32) {
	t = fma32(x, log2e, expRound)
	nf := t - expRound
	r = fma32(-nf, ln2Hi, x)
	if lo {
		r = fma32(-nf, ln2Lo, r)
	}
	return t, r
}

// expN is n from expReduce32's t.
func expN(t float32) int32 { return int32(math.Float32bits(t) - math.Float32bits(expRound)) }

// expCore32 is e^x for x in [expLo, expHi] or NaN: e^r by polynomial,
// then scaled by 2^(n>>1) and 2^(n-n>>1), two normal powers of two, so
// overflow to +Inf and subnormal results come out right without a
// special case.
func expCore32(x float32) float32 {
	t, r := expReduce32(x, true)
	p := expPoly32(r)
	n := expN(t)
	n1 := n >> 1
	return p * pow2(n1) * pow2(n-n1)
}

// pow2 is 2^n for a normal exponent n.
func pow2(n int32) float32 { return math.Float32frombits(uint32(n+127) << 23) }

func exp32(x float32) float32 { return expCore32(clamp32(x, expLo, expHi)) }

// tanh32 computes N = 1 - e^-2|x| ∈ [0, 1) and returns N/(2-N) with
// x's sign. N comes from the exp reduction -2|x| = n·ln2 + r as
// (1 - 2^n) - 2^n·(e^r - 1), one fused multiply-add of the e^r - 1
// polynomial and the exact 1 - 2^n, so N keeps its relative accuracy
// even near 0, where 1 - e^-2|x| would cancel: one formula for every x,
// no polynomial in x² for small ones and no blend. The reduction skips
// ln2Lo: its error, n·ln2Lo, is scaled by 2^n. |x| is capped at tanhBig
// (tanh is ±1 in float32 from about 9.01) so 2^n stays normal.
func tanh32(x float32) float32 {
	b := math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
	if b > tanhBig {
		b = tanhBig
	}
	t, r := expReduce32(-2*b, false)
	q := expm1Poly32(r)
	s := pow2(expN(t))
	nm := fma32(-s, q, 1-s)
	v := nm / (2 - nm)
	return math.Float32frombits(math.Float32bits(v) ^ math.Float32bits(x)&(1<<31))
}

// logistic32 computes E = e^-|x| ≤ 1, which cannot overflow, and
// returns 1/(1+E) for x ≥ 0 and E/(1+E) for x < 0: one division, and
// tiny results for very negative x come out as about E itself.
func logistic32(x float32) float32 {
	bits := math.Float32bits(x)
	e := exp32(math.Float32frombits(bits | 1<<31))
	if bits>>31 == 0 {
		return 1 / (1 + e)
	}
	// E - E·q: the rounding of 1+E (up to half a ULP of q) then
	// enters only through E·q, E times the result.
	q := e / (1 + e)
	return fma32(-e, q, e)
}

// erf32 computes erf(x) in float32 (at most 2 ULP, TestVecMathULP).
// Below erfSplit it is x + x·q(x²), the x added last so that the one
// rounding at the result's scale is the final fused multiply-add's.
// From there on it is 1 - e^-a²·g(a) for a = |x| capped at erfBig, with
// x's sign: a² = hi + lo exactly (lo from a fused multiply-add), and
// e^-a² = e^-hi·(1 - lo), so the rounding of a², up to 2^-20 at a = 4,
// does not enter e^-a² (e^-hi alone would be off by that relatively).
// The generated code computes both branches and blends them by a <
// erfSplit, in this order of operations, and then a NaN x in as x + x.
func erf32(x float32) float32 {
	if x != x {
		return x + x // x quieted, as the generated code's blend
	}
	a := math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
	if a < erfSplit {
		s := x * x
		q := erfSmall[len(erfSmall)-1]
		for k := len(erfSmall) - 2; k >= 0; k-- {
			q = fma32(q, s, erfSmall[k])
		}
		return fma32(x, q, x)
	}
	if a > erfBig { // NaN stays NaN
		a = erfBig
	}
	hi := a * a
	lo := fma32(a, a, -hi)
	e := expCore32(-hi)
	e = fma32(-e, lo, e)
	u := a - erfMid
	g := erfLarge[len(erfLarge)-1]
	for k := len(erfLarge) - 2; k >= 0; k-- {
		g = fma32(g, u, erfLarge[k])
	}
	r := fma32(-e, g, 1)
	return math.Float32frombits(math.Float32bits(r) ^ math.Float32bits(x)&(1<<31))
}
