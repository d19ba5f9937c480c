package minifloat

import "math"

// IEEE half precision by bit arithmetic on the f32 pattern. f16 is the one
// narrow format models compute in end to end (fp16 exports), and a fused
// f16 loop rounds after every op: the general FromFloat64 (frexp, a
// float64 round trip) cost ~40 ns a value there, most of such a loop's
// time. These give the same bits as FromFloat64 and ToFloat64 for every
// input; the tests compare them on every f16 pattern and on f32 patterns
// at each rounding boundary.

// f32ToF16 rounds x to the nearest f16, ties to even: overflow to ±inf
// (from 65520 up, halfway past the largest finite 65504), f16 subnormals
// exactly, a NaN as the canonical quiet NaN with x's sign (NaNBits).
func f32ToF16(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	b &= 0x7fffffff
	switch {
	case b > 0x7f800000:
		return sign | 0x7e00
	case b >= 0x477ff000: // 65520 and up, and infinity
		return sign | 0x7c00
	case b >= 0x38800000: // 2^-14 and up: a normal f16
		// Rebias the exponent (127 → 15) and round away the 13 extra
		// mantissa bits; a carry moves into the exponent as it should.
		m := b - (127-15)<<23
		m += 0xfff + (m>>13)&1
		return sign | uint16(m>>13)
	case b >= 0x33000000: // 2^-25 and up: an f16 subnormal (or 2^-14)
		// x = mant·2^(e-150); in units of the subnormal spacing 2^-24
		// that is mant / 2^(126-e), rounded to nearest even.
		e := b >> 23
		mant := b&0x7fffff | 0x800000
		s := 126 - e // 14..24
		n := mant >> s
		rem, half := mant&(1<<s-1), uint32(1)<<(s-1)
		if rem > half || rem == half && n&1 == 1 {
			n++
		}
		return sign | uint16(n)
	}
	return sign // below half the smallest subnormal: ±0
}

// f16ToF32 widens the f16 pattern h exactly; a NaN keeps its payload in
// the top mantissa bits and is quiet, as hardware widening (and
// ToFloat64's float64 narrowed to f32) gives it.
func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	e := uint32(h>>10) & 0x1f
	m := uint32(h & 0x3ff)
	switch {
	case e == 0x1f && m != 0:
		return math.Float32frombits(sign | 0x7fc00000 | m<<13)
	case e == 0x1f:
		return math.Float32frombits(sign | 0x7f800000)
	case e == 0:
		v := float32(m) * (1.0 / (1 << 24)) // exact: m < 2^10
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (e+127-15)<<23 | m<<13)
}

// RoundF16 returns x rounded to f16 precision, as an f32: what an f16 op
// computed in f32 holds once stored.
func RoundF16(x float32) float32 { return f16ToF32(f32ToF16(x)) }
