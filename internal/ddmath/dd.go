package ddmath

import "math"

// dd is hi + lo with |lo| ≤ ulp(hi)/2.
type dd struct{ hi, lo float64 }

// twoSum returns a+b exactly as a normalized pair (Knuth).
func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

// quickTwoSum is twoSum for |a| ≥ |b|.
func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

// twoProd returns a·b exactly; math.FMA is exact-then-rounded on every
// platform Go supports (software where there is no instruction).
func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func add(x, y dd) dd {
	s := twoSum(x.hi, y.hi)
	t := twoSum(x.lo, y.lo)
	s.lo += t.hi
	s = quickTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return quickTwoSum(s.hi, s.lo)
}

func mul(x, y dd) dd {
	p := twoProd(x.hi, y.hi)
	p.lo += x.hi*y.lo + x.lo*y.hi
	return quickTwoSum(p.hi, p.lo)
}

func mulF(x dd, f float64) dd {
	p := twoProd(x.hi, f)
	p.lo += x.lo * f
	return quickTwoSum(p.hi, p.lo)
}

// ln2 to about 160 bits as three float64s.
var ln2 = [3]float64{
	6.93147180559945286227e-01,
	2.31904681384629955842e-17,
	5.70770843841621207138e-34,
}

// expDD returns e^x for |x.hi| ≤ 746 with a relative error near 2^-96:
// x = k·ln2 + r, |r| ≤ ln2/2; e^(r/1024) by its Taylor series; squared ten
// times; scaled by 2^k.
func expDD(x dd) (m dd, k int) {
	kf := math.Round(x.hi / ln2[0])
	r := add(x, twoProd(-kf, ln2[0]))
	r = add(r, twoProd(-kf, ln2[1]))
	r = add(r, dd{-kf * ln2[2], 0})
	r = dd{r.hi / 1024, r.lo / 1024} // exact: a power of two
	// |r| < 3.4e-4: eleven terms leave a remainder below 2^-130.
	term, sum := r, add(dd{1, 0}, r)
	for n := 2.0; n <= 11; n++ {
		term = mul(term, r)
		term = divF(term, n)
		sum = add(sum, term)
	}
	for range 10 {
		sum = mul(sum, sum)
	}
	return sum, int(kf)
}

// divF divides by a small integer with a double-double correction.
func divF(x dd, f float64) dd {
	q := x.hi / f
	p := twoProd(q, f)
	rem := (x.hi - p.hi - p.lo + x.lo) / f
	return quickTwoSum(q, rem)
}

// logDD returns log(x) for a finite x > 0 with an absolute error near
// 2^-100·max(1, |log x|): one Newton step from math.Log,
// log x = l + log(x·e^-l), where x·e^-l − 1 is of the order of 2^-52 and
// its own log is that minus a square below 2^-104.
func logDD(x float64) dd {
	l := math.Log(x)
	m, k := expDD(dd{-l, 0})
	// x·m·2^k − 1, with x scaled first so nothing under- or overflows.
	frac, e := math.Frexp(x)
	m = mulF(m, frac)
	s := k + e
	m = dd{math.Ldexp(m.hi, s), math.Ldexp(m.lo, s)}
	d := add(m, dd{-1, 0})
	d = add(d, dd{-0.5 * d.hi * d.hi, 0})
	return add(dd{l, 0}, d)
}
