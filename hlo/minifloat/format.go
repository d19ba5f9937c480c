package minifloat

import "math"

// nanStyle is how a format encodes NaN (and whether it has infinities).
type nanStyle uint8

const (
	// nanIEEE: exponent all ones with a non-zero mantissa is NaN, with a
	// zero mantissa infinity. Payloads exist.
	nanIEEE nanStyle = iota
	// nanAllOnes ("fn"): only the all-ones magnitude is NaN; no infinities.
	nanAllOnes
	// nanNegZero ("fnuz"): only the negative-zero pattern is NaN; no
	// infinities and no negative zero.
	nanNegZero
	// nanNone: neither NaN nor infinities (f4e2m1fn).
	nanNone
)

// Format describes one narrow floating-point format. The zero Format is
// not usable; use the package variables.
type Format struct {
	name     string
	exp      int // exponent field width
	mant     int // mantissa field width
	bias     int
	unsigned bool // no sign bit
	nan      nanStyle
	noZero   bool // the all-zero pattern is the smallest normal value, not zero
}

// The formats XLA supports, named as in HLO text.
var (
	F16           = Format{name: "f16", exp: 5, mant: 10, bias: 15}
	BF16          = Format{name: "bf16", exp: 8, mant: 7, bias: 127}
	F8E4M3FN      = Format{name: "f8e4m3fn", exp: 4, mant: 3, bias: 7, nan: nanAllOnes}
	F8E5M2        = Format{name: "f8e5m2", exp: 5, mant: 2, bias: 15}
	F8E4M3FNUZ    = Format{name: "f8e4m3fnuz", exp: 4, mant: 3, bias: 8, nan: nanNegZero}
	F8E5M2FNUZ    = Format{name: "f8e5m2fnuz", exp: 5, mant: 2, bias: 16, nan: nanNegZero}
	F8E4M3B11FNUZ = Format{name: "f8e4m3b11fnuz", exp: 4, mant: 3, bias: 11, nan: nanNegZero}
	F8E3M4        = Format{name: "f8e3m4", exp: 3, mant: 4, bias: 3}
	F8E4M3        = Format{name: "f8e4m3", exp: 4, mant: 3, bias: 7}
	F8E8M0FNU     = Format{name: "f8e8m0fnu", exp: 8, mant: 0, bias: 127, unsigned: true, nan: nanAllOnes, noZero: true}
	F4E2M1FN      = Format{name: "f4e2m1fn", exp: 2, mant: 1, bias: 1, nan: nanNone}
	F6E2M3FN      = Format{name: "f6e2m3fn", exp: 2, mant: 3, bias: 1, nan: nanNone}
	F6E3M2FN      = Format{name: "f6e3m2fn", exp: 3, mant: 2, bias: 3, nan: nanNone}
)

// All lists every format, for tests and lookups.
var All = []Format{F16, BF16, F8E4M3FN, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ,
	F8E4M3B11FNUZ, F8E3M4, F8E4M3, F8E8M0FNU, F4E2M1FN, F6E2M3FN, F6E3M2FN}

// ByName returns the format spelled name in HLO text ("bf16", "f8e5m2", ...).
func ByName(name string) (Format, bool) {
	if f := Find(name); f != nil {
		return *f, true
	}
	return Format{}, false
}

// Find is ByName's format as the element of All itself (nil if none):
// a reference for values copied often, where a Format would be six words.
func Find(name string) *Format {
	for i := range All {
		if All[i].name == name {
			return &All[i]
		}
	}
	return nil
}

// Name is the format's HLO text name.
func (f Format) Name() string { return f.name }

// Bits is the storage width of one value.
func (f Format) Bits() int {
	if f.unsigned {
		return f.exp + f.mant
	}
	return f.exp + f.mant + 1
}

// MantissaBits is the width of the stored mantissa (fraction) field.
func (f Format) MantissaBits() int { return f.mant }

// HasInf reports whether the format has infinities.
func (f Format) HasInf() bool { return f.nan == nanIEEE }

// HasNaN reports whether the format has a NaN encoding.
func (f Format) HasNaN() bool { return f.nan != nanNone }

// NaNPayloadBits is the number of mantissa bits a NaN can carry, including
// the quiet bit: the mantissa width for IEEE-style formats, 0 for formats
// with a single NaN pattern. (XLA's NanPayloadBits.)
func (f Format) NaNPayloadBits() int {
	if f.nan == nanIEEE {
		return f.mant
	}
	return 0
}

// MaxDigits10 is the number of significant decimal digits that always
// round-trip a value (std::numeric_limits<T>::max_digits10 of the C++ type):
// ceil(1 + p*log10(2)) for p significant bits.
func (f Format) MaxDigits10() int {
	return int(math.Ceil(1 + float64(f.mant+1)*math.Log10(2)))
}

func (f Format) signBit() uint16 {
	if f.unsigned {
		return 0
	}
	return 1 << (f.exp + f.mant)
}

func (f Format) magMask() uint16  { return 1<<(f.exp+f.mant) - 1 }
func (f Format) mantMask() uint16 { return 1<<f.mant - 1 }
func (f Format) expField(b uint16) int {
	return int((b & f.magMask()) >> f.mant)
}

// emin is the unbiased exponent of the smallest normal value; subnormals
// are multiples of 2^(emin-mant).
func (f Format) emin() int { return 1 - f.bias }

// maxMag is the magnitude pattern of the largest finite value.
func (f Format) maxMag() uint16 {
	switch f.nan {
	case nanIEEE:
		return (1<<f.exp-2)<<f.mant | f.mantMask()
	case nanAllOnes:
		return f.magMask() - 1
	}
	return f.magMask()
}

// MaxBits is the bit pattern of the largest finite value.
func (f Format) MaxBits() uint16 { return f.maxMag() }

// LowestBits is the bit pattern of the most negative finite value (the
// smallest value, 2^-127, for the unsigned e8m0fnu).
func (f Format) LowestBits() uint16 {
	if f.unsigned {
		return 0
	}
	return f.signBit() | f.maxMag()
}

// NaNBits is the format's quiet NaN with the given sign, as the C++ types
// produce it when converting a NaN. For f4e2m1fn, which has no NaN, it is
// the pattern ml_dtypes uses instead (0b1000, or 0b0000 when negative).
func (f Format) NaNBits(negative bool) uint16 {
	var q uint16
	switch f.nan {
	case nanIEEE:
		q = (1<<f.exp-1)<<f.mant | 1<<(f.mant-1)
	case nanAllOnes:
		q = f.magMask()
	case nanNegZero, nanNone:
		q = f.signBit()
	}
	if negative {
		return f.Neg(q)
	}
	return q
}

// overflowBits is what a too-large positive value becomes: infinity, the
// NaN of a finite-only format, or the largest value when there is no NaN.
func (f Format) overflowBits() uint16 {
	switch f.nan {
	case nanIEEE:
		return (1<<f.exp - 1) << f.mant
	case nanNone:
		return f.maxMag()
	}
	return f.NaNBits(false)
}

// Neg negates a value as the C++ types do: the sign bit flips, except that
// a fnuz zero or NaN stays as it is and e8m0fnu, having no negative values,
// gives NaN.
func (f Format) Neg(b uint16) uint16 {
	switch {
	case f.unsigned:
		return f.magMask()
	case f.nan == nanNegZero && b&f.magMask() == 0:
		return b
	}
	return b ^ f.signBit()
}

// IsNaN reports whether b is a NaN of the format.
func (f Format) IsNaN(b uint16) bool {
	switch f.nan {
	case nanIEEE:
		return f.expField(b) == 1<<f.exp-1 && b&f.mantMask() != 0
	case nanAllOnes:
		return b&f.magMask() == f.magMask()
	case nanNegZero:
		return b&(f.signBit()|f.magMask()) == f.signBit()
	}
	return false
}

// IsInf reports whether b is an infinity of the format.
func (f Format) IsInf(b uint16) bool {
	return f.nan == nanIEEE && f.expField(b) == 1<<f.exp-1 && b&f.mantMask() == 0
}

// ToFloat64 returns the value of the bit pattern b (bits above the
// format's width are ignored). Every value is exact in float64. A NaN keeps
// its sign, and an IEEE-style NaN its payload in the top mantissa bits, as
// hardware widening does; fnuz's NaN (0x80) is negative, as ml_dtypes makes
// it.
func (f Format) ToFloat64(b uint16) float64 {
	b &= 1<<f.Bits() - 1
	neg := b&f.signBit() != 0
	if f.IsNaN(b) {
		bits := uint64(0x7ff8) << 48
		if f.nan == nanIEEE {
			bits = uint64(0x7ff)<<52 | uint64(b&f.mantMask())<<(52-f.mant)
		}
		if neg {
			bits |= 1 << 63
		}
		return math.Float64frombits(bits)
	}
	var v float64
	e, m := f.expField(b), int64(b&f.mantMask())
	switch {
	case f.IsInf(b):
		v = math.Inf(1)
	case e == 0 && !f.noZero:
		v = math.Ldexp(float64(m), f.emin()-f.mant)
	default:
		v = math.Ldexp(float64(m|1<<f.mant), e-f.bias-f.mant)
	}
	if neg {
		return -v
	}
	return v
}

// ToFloat32 returns the value of b as a float32, which holds every value of
// every format exactly.
func (f Format) ToFloat32(b uint16) float32 {
	if f == F16 {
		return f16ToF32(b)
	}
	return float32(f.ToFloat64(b))
}

// FromFloat32 converts x, rounding to nearest even. It is FromFloat64 of the
// exactly widened value.
func (f Format) FromFloat32(x float32) uint16 {
	if f.name == "bf16" && x == x {
		// bf16 is f32's top half: round the low 16 bits to nearest even
		// (this carries into the exponent exactly as rounding should, and
		// takes the largest finite values to infinity).
		b := math.Float32bits(x)
		return uint16((b + 0x7fff + (b>>16)&1) >> 16)
	}
	if f == F16 {
		return f32ToF16(x)
	}
	return f.FromFloat64(float64(x))
}

// FromFloat64 converts x to the format with a single rounding to nearest,
// ties to even; see the package documentation for overflow, NaN and zero.
func (f Format) FromFloat64(x float64) uint16 {
	neg := math.Signbit(x)
	switch {
	case math.IsNaN(x):
		return f.NaNBits(neg)
	case math.IsInf(x, 0):
		return f.withSign(f.overflowBits(), neg)
	case x == 0:
		if f.noZero {
			return f.NaNBits(false)
		}
		return f.withSign(0, neg)
	case neg && f.unsigned:
		return f.NaNBits(false)
	}
	frac, fe := math.Frexp(math.Abs(x)) // |x| = frac * 2^fe, frac in [0.5, 1)
	e := fe - 1                         // 2^e <= |x| < 2^(e+1)
	m := uint64(frac * (1 << 53))       // exact: |x| = m * 2^(fe-53)
	// The target's spacing near |x| is 2^q: that of |x|'s binade, or of the
	// subnormals below the smallest normal.
	q := max(e, f.emin()) - f.mant
	n := roundShift(m, q-(fe-53)) // |x| / 2^q rounded; the shift is > 0
	var mag uint64
	if e < f.emin() {
		mag = n // a subnormal; n == 2^mant is the smallest normal
	} else {
		// n is in [2^mant, 2^(mant+1)]: its implicit bit adds one to the
		// exponent field, and a carry from rounding adds one more.
		mag = uint64(e-f.emin())<<f.mant + n
	}
	if mag > uint64(f.maxMag()) {
		return f.withSign(f.overflowBits(), neg)
	}
	return f.withSign(uint16(mag), neg)
}

func (f Format) withSign(b uint16, neg bool) uint16 {
	if neg {
		return f.Neg(b)
	}
	return b
}

// roundShift returns m / 2^s rounded to nearest, ties to even, for s >= 1.
func roundShift(m uint64, s int) uint64 {
	if s > 60 {
		return 0 // m < 2^53, so the quotient is below one half
	}
	n := m >> s
	rem := m & (1<<s - 1)
	half := uint64(1) << (s - 1)
	if rem > half || rem == half && n&1 == 1 {
		n++
	}
	return n
}
