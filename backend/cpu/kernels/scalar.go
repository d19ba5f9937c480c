package kernels

// The scalar rules of XLA's element operations that the compiled code
// shares: the tile programs, the lowered loops and the kernels' pure-Go
// fallbacks each call these, so that one place says what maximum or power
// means. The evaluator (package eval) keeps its own definitions on
// purpose: it is the oracle these are tested against.

// Integer is the integer element types, as Go stores them.
type Integer interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64
}

// NaNMax is XLA's maximum: NaN if either is (a's NaN if both are), else
// the larger, and a when they compare equal (so NaNMax(-0, +0) = -0).
// The AVX kernels order their operands to give these very bits.
func NaNMax[T float32 | float64](a, b T) T {
	switch {
	case a != a:
		return a
	case b != b || b > a:
		return b
	}
	return a
}

// NaNMin is XLA's minimum, NaNMax's mirror image.
func NaNMin[T float32 | float64](a, b T) T {
	switch {
	case a != a:
		return a
	case b != b || b < a:
		return b
	}
	return a
}

// IntPow is XLA's integer power x**y, wrapping around on overflow. A
// negative exponent gives 0, except for the bases whose powers stay
// integers: 1, and -1 for signed types (1 or -1 by the exponent's parity).
func IntPow[T Integer](x, y T) T {
	if y < 0 {
		switch {
		case x == 1:
			return 1
		case x == ^T(0) && Signed[T]():
			if y&1 != 0 {
				return x
			}
			return 1
		}
		return 0
	}
	r := T(1)
	for ; y != 0; y >>= 1 { // repeated squaring
		if y&1 != 0 {
			r *= x
		}
		x *= x
	}
	return r
}

// Signed reports whether T is a signed type (only then is ^0 negative).
func Signed[T Integer]() bool {
	var z T
	return ^z < z
}
