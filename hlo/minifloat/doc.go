// Package minifloat converts between float64 and the narrow floating-point
// formats XLA supports, each held as a raw bit pattern: f16 (IEEE half),
// bf16, the eight f8 formats and f4e2m1fn.
//
// One parametric converter serves every format. A Format is described by
// its exponent and mantissa widths, exponent bias, whether it has a sign
// bit, how it encodes NaN (IEEE-style, "fn" all-ones, "fnuz" negative zero,
// or not at all) and whether the all-zero pattern is zero. Everything else
// (largest finite value, what overflow becomes) follows from that
// description.
//
// The semantics are those of the C++ types XLA uses (Eigen::half,
// Eigen::bfloat16 and ml_dtypes' float8/float4 types):
//
//   - Conversion from float64 rounds once, to nearest with ties to even.
//     (Eigen's half and bfloat16 constructors from double first round to
//     float32; callers that must reproduce that double rounding convert
//     with FromFloat32(float32(x)).)
//   - A value whose rounded magnitude exceeds the largest finite value
//     becomes infinity in formats that have one, NaN in the finite-only
//     formats (fn, fnuz, e8m0fnu), and saturates to the largest finite value
//     in f4e2m1fn, which has neither.
//   - NaN converts to the format's quiet NaN carrying the input's sign where
//     the format can; fnuz formats have a single NaN (0x80), e8m0fnu has
//     0xff, and f4e2m1fn, which has no NaN, yields ml_dtypes' "quiet NaN"
//     pattern 0b1000 (negative zero) for +NaN and 0b0000 for -NaN.
//   - fnuz formats have no negative zero: a negative value that rounds to
//     zero becomes +0.
//   - e8m0fnu is unsigned and has no zero: zero and negative inputs become
//     NaN, and positive values below its smallest value 2^-127 round on the
//     grid of multiples of 2^-126, as ml_dtypes does, so (0, 2^-127] gives
//     2^-127 and (2^-127, 2^-126) gives 2^-126. Values from 1.5*2^128 up
//     become NaN like every other overflow; ml_dtypes' 8-bit arithmetic
//     wraps them to 2^-127, a slip not reproduced here (float32 cannot
//     reach it, only float64 can).
package minifloat
