package ddmath

import "math"

// Pow returns x**y as C's pow does, with the special cases of math.Pow
// (IEEE 754's pow: Pow(x, ±0) = 1, Pow(1, y) = 1, NaN and infinity rules,
// negative bases with integer exponents) and, for finite nonzero
// operands, an error below about 2^-40 ulp before the final rounding, so
// the result is correctly rounded except on the rare near-midpoints.
func Pow(x, y float64) float64 {
	switch {
	case y == 0 || x == 1:
		return 1
	case x == 0 || math.IsInf(x, 0) || math.IsNaN(x) || math.IsInf(y, 0) || math.IsNaN(y):
		return math.Pow(x, y)
	}
	neg := false
	if x < 0 {
		yi, yf := math.Modf(y)
		if yf != 0 {
			return math.NaN()
		}
		// Odd only if y is an integer below 2^53 with its low bit set.
		neg = math.Abs(yi) < 1<<53 && int64(yi)&1 == 1
		x = -x
	}
	r := powPositive(x, y)
	if neg {
		return -r
	}
	return r
}

// powPositive is e^(y·log x) for finite x > 0 and finite y ≠ 0.
func powPositive(x, y float64) float64 {
	l := logDD(x)
	t := mulF(l, y)
	switch {
	case t.hi > 710:
		return math.Inf(1)
	case t.hi < -746:
		return 0
	}
	m, k := expDD(t)
	v := m.hi + m.lo
	if k > -1022 && k < 1024 {
		return math.Ldexp(v, k)
	}
	// Scale in two steps so a result near the ends of the range is
	// rounded once, by the last multiplication.
	h := k / 2
	return math.Ldexp(v, h) * math.Ldexp(1, k-h)
}

// Pow32 is Pow for float32 operands, rounded to float32. Most results
// need no double-double arithmetic: exp(y·log x) in float64 is within
// (|y·log x| + 4)·2^-50 of the exact power (log and exp within an ulp
// each, the product's rounding scaled by the exponent), and when both ends
// of that interval round to the same float32 so does the exact value.
// Only the rest, about one input in 2^20 for moderate exponents, takes
// Pow's slower path.
//
// Squares, cubes and fourth powers (GELU's tanh form cubes every
// activation; variances square) are exact products instead.
func Pow32(x, y float32) float32 {
	xf, yf := float64(x), float64(y)
	finite := !math.IsInf(xf, 0) && xf == xf
	if finite && (yf == 2 || yf == 3 || yf == 4) {
		return powSmall32(xf, int(yf))
	}
	if xf != 0 && xf != 1 && yf != 0 && finite && !math.IsInf(yf, 0) && yf == yf {
		// A negative base takes |x|'s power, negated for an odd integer
		// exponent (a non-integer one is NaN, for Pow to say).
		neg := false
		if xf < 0 {
			if yf != math.Trunc(yf) {
				return float32(Pow(xf, yf))
			}
			neg, xf = math.Mod(yf, 2) != 0, -xf
		}
		t := yf * math.Log(xf)
		v := math.Exp(t)
		b := (math.Abs(t) + 4) * 0x1p-50
		if lo, hi := float32(v*(1-b)), float32(v*(1+b)); lo == hi {
			if neg {
				return -lo
			}
			return lo
		}
		if neg {
			xf = -xf
		}
	}
	return float32(Pow(xf, yf))
}

// powSmall32 is x**n for a finite float32 x and n in 2..4, correctly
// rounded: x² is exact in float64 (48 bits), x³ and x⁴ are exact as a
// product and its FMA residual (72 and 96 bits), and rounding that pair
// to odd in float64 first makes the float32 rounding after it exact
// (53 ≥ 24 + 2). No float64 overflow or underflow is possible: |x|⁴ of
// a float32 lies within 2^±600.
func powSmall32(x float64, n int) float32 {
	x2 := x * x
	var a, b float64 // the exact power is the product a·b
	switch n {
	case 2:
		return float32(x2)
	case 3:
		a, b = x2, x
	default:
		a, b = x2, x2
	}
	hi := a * b
	return round32(hi, math.FMA(a, b, -hi))
}

// round32 rounds the exact value hi + lo (hi the float64 nearest it) to
// float32 once: rounding to odd in float64 first — of hi and its
// neighbour toward the exact value, the one with an odd last bit — keeps
// a value just off a float32 tie from landing on it.
func round32(hi, lo float64) float32 {
	if lo != 0 && math.Float64bits(hi)&1 == 0 {
		hi = math.Nextafter(hi, math.Copysign(math.Inf(1), lo))
	}
	return float32(hi)
}
