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
func Pow32(x, y float32) float32 {
	xf, yf := float64(x), float64(y)
	if xf > 0 && xf != 1 && yf != 0 && !math.IsInf(xf, 0) && !math.IsInf(yf, 0) && yf == yf {
		t := yf * math.Log(xf)
		v := math.Exp(t)
		b := (math.Abs(t) + 4) * 0x1p-50
		if lo, hi := float32(v*(1-b)), float32(v*(1+b)); lo == hi {
			return lo
		}
	}
	return float32(Pow(xf, yf))
}
