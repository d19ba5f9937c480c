package ddmath

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

const prec = 320

// ln2Digits is log(2) to 110 decimal places (OEIS A002162).
const ln2Digits = "0.69314718055994530941723212145817656807550013436025525412068000949339362196969471560586332699641868754200148102"

// bigExp is e^z by Taylor series on z/2^24 squared 24 times.
func bigExp(z *big.Float) *big.Float {
	r := new(big.Float).SetPrec(prec).SetMantExp(z, -24)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := int64(1); n < 40; n++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetInt64(n))
		sum.Add(sum, term)
	}
	for range 24 {
		sum.Mul(sum, sum)
	}
	return sum
}

// bigLog is log x by Newton's method on e^y = x from math.Log.
func bigLog(x float64) *big.Float {
	bx := new(big.Float).SetPrec(prec).SetFloat64(x)
	y := new(big.Float).SetPrec(prec).SetFloat64(math.Log(x))
	for range 4 {
		e := bigExp(y)
		d := new(big.Float).SetPrec(prec).Quo(bx, e)
		d.Sub(d, big.NewFloat(1))
		y.Add(y, d)
	}
	return y
}

// bigPow is x**y for x > 0 to about 250 bits.
func bigPow(x, y float64) *big.Float {
	l := bigLog(x)
	l.Mul(l, new(big.Float).SetPrec(prec).SetFloat64(y))
	return bigExp(l)
}

// ulpErr is |got − want| in ulps of want's float64 rounding.
func ulpErr(got float64, want *big.Float) float64 {
	w, _ := want.Float64()
	ulp := math.Nextafter(math.Abs(w), math.Inf(1)) - math.Abs(w)
	d := new(big.Float).SetPrec(prec).SetFloat64(got)
	d.Sub(d, want)
	df, _ := d.Float64()
	return math.Abs(df) / ulp
}

func TestLn2Constant(t *testing.T) {
	want, _, _ := big.ParseFloat(ln2Digits, 10, prec, big.ToNearestEven)
	got := new(big.Float).SetPrec(prec).SetFloat64(ln2[0])
	got.Add(got, new(big.Float).SetFloat64(ln2[1]))
	got.Add(got, new(big.Float).SetFloat64(ln2[2]))
	got.Sub(got, want)
	if f, _ := got.Float64(); math.Abs(f) > 0x1p-155 {
		t.Fatalf("ln2 table off by %g", f)
	}
	// The Taylor exp here must agree with the digits: e^ln2 = 2.
	e := bigExp(want)
	e.Sub(e, big.NewFloat(2))
	if f, _ := e.Float64(); math.Abs(f) > 1e-70 {
		t.Fatalf("bigExp(ln2) − 2 = %g", f)
	}
}

// TestPowCorrectlyRounded compares Pow with big.Float values: the result
// must be the float64 nearest the exact power (error ≤ 0.5 ulp, allowing
// 0.5+2^-30 for a near-midpoint).
func TestPowCorrectlyRounded(t *testing.T) {
	cases := [][2]float64{
		{0.8289169093637843, 40.71849477612213}, // the corpus's random_gamma sample
		{0.8289169093637843, 40}, {1.0000001, 1e9}, {0.9999999, 3e9},
		{2.5, -300.25}, {1e-300, 0.99}, {1.5, 1700}, {0.3, 600.5},
		{7, 0.5}, {1e10, -30.3}, {123.456, 1.0 / 3},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 400 {
		x := math.Exp(rng.NormFloat64() * 3)
		y := rng.NormFloat64() * 30
		cases = append(cases, [2]float64{x, y})
	}
	for range 100 { // near 1 with large exponents: where math.Pow is worst
		x := 1 + rng.NormFloat64()*1e-3
		cases = append(cases, [2]float64{x, rng.NormFloat64() * 1e5})
	}
	worstGo, worst := 0.0, 0.0
	for _, c := range cases {
		want := bigPow(c[0], c[1])
		if w, _ := want.Float64(); w == 0 || math.IsInf(w, 0) || math.Abs(w) < 0x1p-1022 {
			continue
		}
		e := ulpErr(Pow(c[0], c[1]), want)
		worst = max(worst, e)
		worstGo = max(worstGo, ulpErr(math.Pow(c[0], c[1]), want))
		if e > 0.5+0x1p-30 {
			t.Errorf("Pow(%v, %v) = %v, %.3f ulp from %s", c[0], c[1], Pow(c[0], c[1]), e, want.Text('g', 25))
		}
	}
	t.Logf("%d cases: worst %.4f ulp (math.Pow: %.2f)", len(cases), worst, worstGo)
}

// TestPowExactAndSpecial checks hand-worked values: exact powers and the
// IEEE 754 special cases Go's math.Pow documents.
func TestPowExactAndSpecial(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct{ x, y, want float64 }{
		{2, 10, 1024}, {3, 2, 9}, {10, -2, 0.01}, {-2, 3, -8}, {-2, 2, 4}, {-3, -1, -1.0 / 3},
		{0.5, 1074, 0x1p-1074}, {2, -1074, 0x1p-1074}, {2, 1023, 0x1p1023}, {2, 1024, inf},
		{4, 0.5, 2}, {9, 1.5, 27}, {0.25, -0.5, 2}, {2, -1, 0.5}, {0.5, 1075, 0},
		{nan, 0, 1}, {1, nan, 1}, {-1, inf, 1}, {0, -1, inf}, {math.Copysign(0, -1), 3, math.Copysign(0, -1)},
		{-2, 0.5, nan}, {0.5, inf, 0}, {2, inf, inf}, {2, -inf, 0}, {-inf, 3, -inf}, {-inf, -3, math.Copysign(0, -1)},
		{-1, 1e300, 1}, {-0.5, 1e20, 0}, {2, nan, nan},
	} {
		got := Pow(c.x, c.y)
		if math.Float64bits(got) != math.Float64bits(c.want) && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("Pow(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
}

func BenchmarkPow(b *testing.B) {
	x, y := 0.8289169093637843, 40.71849477612213
	b.Run("ddmath", func(b *testing.B) {
		for range b.N {
			x = Pow(x, y)*1e-300 + 0.8289169093637843
		}
	})
	b.Run("math", func(b *testing.B) {
		for range b.N {
			x = math.Pow(x, y)*1e-300 + 0.8289169093637843
		}
	})
}

// TestPow32CorrectlyRounded compares Pow32 with the float32 nearest the
// big.Float power (one rounding from 320 bits), on random operands and on
// operands near 1 with large exponents.
func TestPow32CorrectlyRounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	bad := 0
	for i := range 3000 {
		x := float32(math.Exp(rng.NormFloat64() * 2))
		y := float32(rng.NormFloat64() * 20)
		if i%3 == 0 {
			x = float32(1 + rng.NormFloat64()*1e-3)
			y = float32(rng.NormFloat64() * 3e4)
		}
		want, _ := bigPow(float64(x), float64(y)).Float32()
		if got := Pow32(x, y); got != want && !(math.IsInf(float64(want), 1) && math.IsInf(float64(got), 1)) {
			bad++
			if bad < 5 {
				t.Errorf("Pow32(%v, %v) = %v, want %v", x, y, got, want)
			}
		}
	}
	for _, c := range [][3]float32{{2, 10, 1024}, {-2, 3, -8}, {0, -1, float32(math.Inf(1))}, {4, 0.5, 2}, {-8, 1.0 / 3, float32(math.NaN())}} {
		if got := Pow32(c[0], c[1]); got != c[2] && !(got != got && c[2] != c[2]) {
			t.Errorf("Pow32(%v, %v) = %v, want %v", c[0], c[1], got, c[2])
		}
	}
}

func BenchmarkPow32(b *testing.B) {
	x, y := float32(0.82891694), float32(40.718494)
	for range b.N {
		x = Pow32(x, y)*1e-30 + 0.82891694
	}
}

// TestPow32SmallIntegers compares squares, cubes and fourth powers, and
// integer powers of negative bases, with the exact power rounded once
// (big.Float's product is exact at this precision): random operands of
// every magnitude, both signs, and cubes and fourth powers that land
// exactly on a float32 tie (321³ = 33076161, odd with 25 bits).
func TestPow32SmallIntegers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	check := func(x, y float32) {
		t.Helper()
		want := new(big.Float).SetPrec(prec).SetInt64(1)
		bx := new(big.Float).SetPrec(prec).SetFloat64(float64(x))
		for range int(y) {
			want.Mul(want, bx)
		}
		w, _ := want.Float32()
		if got := Pow32(x, y); math.Float32bits(got) != math.Float32bits(w) {
			t.Fatalf("Pow32(%v, %v) = %v, want %v", x, y, got, w)
		}
	}
	for i := range 200000 {
		x := float32(math.Ldexp(rng.Float64()+0.5, rng.IntN(300)-150))
		if i%2 == 0 {
			x = -x
		}
		if i%3 == 0 { // few significant bits: exact results and ties
			x = float32(rng.IntN(2048)-1024) * float32(math.Ldexp(1, rng.IntN(40)-20))
		}
		check(x, float32(2+i%3))
		if i%10 == 0 {
			check(x, float32(5+i%4))
		}
	}
	for _, x := range []float32{321, -321, 0, float32(math.Copysign(0, -1)), math.MaxFloat32, -math.SmallestNonzeroFloat32, 1 << 20} {
		for y := float32(2); y <= 4; y++ {
			check(x, y)
		}
	}
}

// TestRound32 puts hi exactly on a float32 tie with the exact value just
// off it: the single rounding goes the residual's way, not to even.
func TestRound32(t *testing.T) {
	tie := 1 + 0x1p-24 // halfway between 1 and 1+2^-23
	for _, c := range []struct {
		hi, lo float64
		want   float32
	}{
		{tie, 0x1p-80, 1 + 0x1p-23},
		{tie, -0x1p-80, 1},
		{tie, 0, 1}, // an exact tie: to even
		{-tie, -0x1p-80, -(1 + 0x1p-23)},
		{1 + 3*0x1p-24, -0x1p-80, 1 + 0x1p-23},
		{1 + 3*0x1p-24, 0, 1 + 2*0x1p-23},
	} {
		if got := round32(c.hi, c.lo); got != c.want {
			t.Errorf("round32(%v, %v) = %v, want %v", c.hi, c.lo, got, c.want)
		}
	}
}
