package xlamath_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/internal/xlamath"
)

// FMA32 rounds a*b + c once. With a = 24929·2^-12 and b = 673·2^-12 the
// product is exactly 16777217·2^-24 = 1+2^-24, and c = 2^-80: the exact
// sum lies just above the float32 tie between 1 and 1+2^-23, so it rounds
// up. Rounding to float64 first would drop the 2^-80 and make a false tie,
// which rounds to even, 1.
func TestFMA32RoundsOnce(t *testing.T) {
	a, b, c := float32(24929.0/4096), float32(673.0/4096), float32(math.Ldexp(1, -80))
	if got, want := xlamath.FMA32(a, b, c), math.Nextafter32(1, 2); got != want {
		t.Errorf("FMA32 = %v, want %v", got, want)
	}
	// and below the tie, it rounds down
	if got, want := xlamath.FMA32(a, b, -c), float32(1); got != want {
		t.Errorf("FMA32 with -c = %v, want %v", got, want)
	}
	// +0 + -0 is +0; infinities and NaN pass through
	if got := xlamath.FMA32(1, 0, float32(math.Copysign(0, -1))); math.Signbit(float64(got)) {
		t.Errorf("FMA32(1, 0, -0) = -0, want +0")
	}
	if got := xlamath.FMA32(float32(math.Inf(1)), 2, 1); !math.IsInf(float64(got), 1) {
		t.Errorf("FMA32(inf, 2, 1) = %v", got)
	}
}

// FMA32 against a*b + c computed exactly in big.Float and rounded once
// to nearest even, on random operands and on ones built so the float64
// sum lands on or next to a float32 tie (c tiny against a*b).
func TestFMA32MatchesExactRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rnd := func() float32 {
		return float32(math.Ldexp(r.Float64()*2-1, r.IntN(60)-30))
	}
	for i := range 200000 {
		a, b, c := rnd(), rnd(), rnd()
		if i%2 == 1 {
			// a·b an odd integer in [2^24, 2^25), a float32 tie,
			// nudged by c, tiny against it, or not at all
			p := int64(2*r.IntN(1<<11) + 3)
			q := ((1<<24+r.Int64N(1<<24))/p | 1)
			for p*q < 1<<24 {
				q += 2
			}
			if p*q >= 1<<25 {
				continue
			}
			a, b = float32(p), float32(q)
			c = float32(math.Ldexp(float64(r.IntN(3)-1), -r.IntN(80)))
		}
		x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
		want, _ := x.Float32()
		if got := xlamath.FMA32(a, b, c); got != want && !(got == 0 && want == 0) {
			t.Fatalf("FMA32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
}
