package kernels

import (
	"math"
	"math/bits"
)

// Subnormal operands. Every FMA that meets a subnormal value takes a
// microcode assist on Intel cores (a hundred cycles or more), and a
// classifier's weight gradient xᵀ·g meets them all the time: the
// softmax's gradient holds the probabilities of classes it has ruled
// out, far below 1e-38. The dense example's gradient product took 101 µs
// of its 230 µs step on them, 27 µs on random inputs.
//
// Flushing them (AXLE_DENORMALS=flush) changes the results. Scaling does
// not, where it applies: the small operand is copied multiplied by
// 2^subnormalShift (exact, as the copy stays far below overflow), which
// makes every value normal, and the product is multiplied back by
// 2^-subnormalShift as it is turned around into C. Multiplying by a
// power of two commutes with rounding, so wherever the unscaled sums
// stayed normal (the assembly kernels' FMAs round only the sum, not the
// subnormal product inside it) the result is the same bits; where they
// underflowed, it is the more accurate one. A product whose scaled sums overflow (C not
// all finite) is computed again unscaled, so Inf and NaN come out as
// before.

// subnormalShift lifts the smallest subnormal, 2^-149, to 2^-125.
const subnormalShift = 24

// subnormalMaxExp bounds the operand scaled: its largest magnitude below
// 2^64, 2^88 once scaled, leaves the product room for factors up to
// 2^40 before it overflows (and falls back).
const subnormalMaxExp = 127 + 64

// subnormalScaling lets tests compute the unscaled product.
var subnormalScaling = true

// scaleSubnormals returns B (k×n) as a row-major copy scaled by
// 2^subnormalShift when it holds a subnormal value, no Inf or NaN, and
// nothing of magnitude 2^64 or more; nil otherwise (and when the GEMM
// flushes subnormals anyway). The caller returns the copy with putBuf.
func scaleSubnormals(b Strided[float32], k, n int) []float32 {
	if !subnormalScaling || FlushDenormals() {
		return nil
	}
	found := false
	for p := range k {
		for j := range n {
			bits := math.Float32bits(b.at(p, j)) &^ (1 << 31)
			if bits>>23 >= subnormalMaxExp {
				return nil
			}
			if bits != 0 && bits < 1<<23 {
				found = true
			}
		}
	}
	if !found {
		return nil
	}
	dst := getBuf[float32](k * n)
	for p := range k {
		for j := range n {
			dst[p*n+j] = upscale(b.at(p, j))
		}
	}
	return dst
}

// upscale returns v·2^subnormalShift for |v| < 2^64, exactly, without
// floating-point arithmetic: multiplying a subnormal takes an assist.
func upscale(v float32) float32 {
	u := math.Float32bits(v)
	mag := u &^ (1 << 31)
	switch {
	case mag >= 1<<23: // normal: raise the exponent
		return math.Float32frombits(u + subnormalShift<<23)
	case mag == 0:
		return v
	}
	// mag·2^-149 becomes mag·2^-125, normal: its leading bit, at
	// position l-1, becomes the implicit one of exponent l-1-125.
	l := uint32(bits.Len32(mag))
	return math.Float32frombits(u&(1<<31) | (l+1)<<23 | mag<<(24-l)&(1<<23-1))
}

// allFinite reports whether x holds no Inf or NaN.
func allFinite(x []float32) bool {
	for _, v := range x {
		if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
			return false
		}
	}
	return true
}

// unscale multiplies x by 2^-subnormalShift, rounding to nearest even.
// A float32 multiply that produces a subnormal takes the same assist as
// one that reads one, and a column of C whose every gradient was
// subnormal comes out subnormal; float64 holds the product exactly and
// the conversion rounds it once, with no assist on this host (7,000
// subnormal results: 5.8 µs, against 22 µs in integer arithmetic).
func unscale(x []float32) {
	for i, v := range x {
		x[i] = float32(float64(v) / (1 << subnormalShift))
	}
}
