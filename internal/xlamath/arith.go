// Package xlamath is arithmetic as XLA's CPU backend computes it, shared
// by the reference evaluator and the compiled kernels so that both give
// the same bits: complex products with fused multiply-adds, an f32 FMA,
// complex powers and elementary functions, and the conversion of a
// product's operands to its accumulation type.
package xlamath

import "math"

// XLA's CPU backend multiplies complex numbers as its elemental IR
// emitter writes them, (ac - bd) + (ad + bc)i, and compiles with LLVM
// allowed to fuse a multiply into the add that consumes it: the real part
// is fma(a, c, -(b*d)) and the imaginary part fma(a, d, b*c), two
// roundings each. On ../shared/corpus/stablehlo/testdata/
// integer_pow_complex64_20_30.mlir (x^4 as two multiplies, expected
// values from JAX on XLA's CPU) this form matches all 600 results bit for
// bit; four separately rounded products match 300, and Go's complex64
// multiply (done in float64, rounded once) 313.

// ComplexMul64 is a c64 product as XLA's CPU backend computes it.
func ComplexMul64(x, y complex64) complex64 {
	a, b, c, d := real(x), imag(x), real(y), imag(y)
	bd, bc := float32(b*d), float32(b*c)
	// FMA32 inlined: a·c and a·d are exact in float64, so re and im are
	// the fused sums rounded once, safe to round again off a float32 tie.
	re := float64(a)*float64(c) - float64(bd)
	im := float64(a)*float64(d) + float64(bc)
	if offTie(re) && offTie(im) {
		return complex(float32(re), float32(im))
	}
	return complex(FMA32(a, c, -bd), FMA32(a, d, bc))
}

// offTie reports whether rounding the float64 s to float32 rounds the
// value s was rounded from the same way: s is not exactly halfway between
// two float32s and is in float32's normal range (or beyond it).
func offTie(s float64) bool {
	bits := math.Float64bits(s)
	return bits&(1<<29-1) != 1<<28 && bits>>52&0x7ff >= 897 // 897: 2^-126
}

// ComplexMul128 is a c128 product as XLA's CPU backend computes it.
func ComplexMul128(x, y complex128) complex128 {
	a, b, c, d := real(x), imag(x), real(y), imag(y)
	return complex(math.FMA(a, c, -float64(b*d)), math.FMA(a, d, float64(b*c)))
}

// FMA32 is a*b + c rounded once to float32, as a hardware f32 FMA gives
// it. The float64 product of two float32s is exact, so the float64 sum s
// is the exact sum rounded once; rounding s again to float32 is correct
// unless s landed exactly on a float32 tie (its 29 low bits 1000...0, in
// the normal range), where the exact sum may lie on either side of it.
func FMA32(a, b, c float32) float32 {
	if s := float64(a)*float64(b) + float64(c); offTie(s) {
		return float32(s)
	}
	return fma32Slow(a, b, c)
}

// fma32Slow makes the float64 sum round-to-odd (its last bit set when
// inexact), which makes the rounding to float32 correct, float64 having
// more than 24+2 significand bits.
func fma32Slow(a, b, c float32) float32 {
	p, z := float64(a)*float64(b), float64(c)
	s := p + z
	if s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	t := s - p
	e := (p - (s - t)) + (z - t) // s + e == p + z exactly (TwoSum)
	if bits := math.Float64bits(s); e != 0 && bits&1 == 0 {
		if (e > 0) == (s > 0) {
			bits++ // the exact sum is further from zero than s
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}
