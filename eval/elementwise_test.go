package eval_test

import (
	"math"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// Hand-worked checks of the elementwise semantics that are easy to get
// wrong. Each names the statement it pins: from openxla/xla
// docs/operation_semantics.md, or, where that leaves a value to the
// implementation, from XLA's elemental IR emitter as tabulated in
// shared/conformance/README.md.

func ewModule(body string) string {
	return "HloModule m\nENTRY e {\n" + body + "\n}"
}

// "Integer division overflow (signed/unsigned division/remainder by zero
// or signed division/remainder of INT_SMIN with -1) produces an
// implementation defined value": XLA's emitter gives x/0 = -1, x%0 = x,
// INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0, and truncates toward zero.
func TestIntegerDivisionEdgeCases(t *testing.T) {
	x := `  a = s32[4] constant({7, -2147483648, -7, -2147483648})
  b = s32[4] constant({0, -1, 2, 0})`
	got := laRunHLO(t, ewModule(x+"\n  ROOT d = s32[4] divide(a, b)"))
	laWant(t, got, int32(-1), math.MinInt32, -3, -1)
	got = laRunHLO(t, ewModule(x+"\n  ROOT r = s32[4] remainder(a, b)"))
	laWant(t, got, int32(7), 0, -1, math.MinInt32)
	got = laRunHLO(t, ewModule(`  a = u8[2] constant({200, 7})
  b = u8[2] constant({0, 2})
  ROOT d = u8[2] divide(a, b)`))
	laWant(t, got, uint8(255), 3)
}

// XLA's emitter: shift amounts at or above the bit width, compared as
// unsigned (so negative amounts too), give 0 for shift-left and
// shift-right-logical and the sign fill for shift-right-arithmetic.
func TestShiftsByWidthOrMore(t *testing.T) {
	x := `  a = s32[4] constant({1, -8, -8, 5})
  b = s32[4] constant({32, -1, 40, 2})`
	laWant(t, laRunHLO(t, ewModule(x+"\n  ROOT s = s32[4] shift-left(a, b)")), int32(0), 0, 0, 20)
	laWant(t, laRunHLO(t, ewModule(x+"\n  ROOT s = s32[4] shift-right-arithmetic(a, b)")), int32(0), -1, -1, 1)
	laWant(t, laRunHLO(t, ewModule(x+"\n  ROOT s = s32[4] shift-right-logical(a, b)")), int32(0), 0, 0, 1)
	// -8 >>> 1 as 32 bits: 0xFFFFFFF8 >> 1 = 0x7FFFFFFC.
	laWant(t, laRunHLO(t, ewModule(`  a = s32[] constant(-8)
  b = s32[] constant(1)
  ROOT s = s32[] shift-right-logical(a, b)`)), int32(0x7FFFFFFC))
}

// Integer arithmetic wraps around in the element type's own width, s4
// included: 7 + 1 = -8.
func TestNarrowIntegerWraps(t *testing.T) {
	got := laRunHLO(t, ewModule(`  a = s4[2] constant({7, -8})
  b = s4[2] constant({1, -1})
  ROOT s = s4[2] add(a, b)`))
	laWant(t, got, int8(-8), 7)
	got = laRunHLO(t, ewModule(`  a = u4[1] constant({15})
  b = u4[1] constant({3})
  ROOT s = u4[1] multiply(a, b)`))
	laWant(t, got, uint8(13)) // 45 mod 16
}

// ConvertElementType: "conversion from floating point to integer ...
// truncates toward zero"; XLA saturates out-of-range values (infinities
// included) and maps NaN to 0.
func TestConvertFloatToIntSaturates(t *testing.T) {
	got := laRunHLO(t, ewModule(`  a = f32[5] constant({3e9, -inf, nan, -2.7, 2.7})
  ROOT c = s32[5] convert(a)`))
	laWant(t, got, int32(math.MaxInt32), math.MinInt32, 0, -2, 2)
	got = laRunHLO(t, ewModule(`  a = f32[3] constant({-1, 300, 255.9})
  ROOT c = u8[3] convert(a)`))
	laWant(t, got, uint8(0), 255, 255)
}

// Compare: "type=TOTALORDER" orders -NaN < -inf < -0 < +0 < +inf < NaN,
// while the default IEEE comparison makes any NaN unordered (NE is the only
// true direction).
func TestCompareTotalOrderAndNaN(t *testing.T) {
	x := `  a = f32[4] constant({-nan, -0, 1, nan})
  b = f32[4] constant({-inf, 0, nan, nan})`
	got := laRunHLO(t, ewModule(x+"\n  ROOT c = pred[4] compare(a, b), direction=LT, type=TOTALORDER"))
	laWant(t, got, true, true, true, false)
	got = laRunHLO(t, ewModule(x+"\n  ROOT c = pred[4] compare(a, b), direction=EQ, type=TOTALORDER"))
	laWant(t, got, false, false, false, true)
	got = laRunHLO(t, ewModule(x+"\n  ROOT c = pred[4] compare(a, b), direction=NE"))
	laWant(t, got, true, false, true, true)
	got = laRunHLO(t, ewModule(x+"\n  ROOT c = pred[4] compare(a, b), direction=GE"))
	laWant(t, got, false, true, false, false)
}

// Max/Min on floats propagate NaN (the documented choice since XLA
// switched to IEEE-754 maximum semantics).
func TestMaxMinPropagateNaN(t *testing.T) {
	x := `  a = f32[3] constant({nan, 1, 2})
  b = f32[3] constant({1, nan, 3})`
	got := laRunHLO(t, ewModule(x+"\n  ROOT m = f32[3] maximum(a, b)"))
	g, _ := hlo.LiteralToSlice[float32](got)
	if !math.IsNaN(float64(g[0])) || !math.IsNaN(float64(g[1])) || g[2] != 3 {
		t.Fatalf("maximum = %v, want [NaN NaN 3]", g)
	}
	got = laRunHLO(t, ewModule(x+"\n  ROOT m = f32[3] minimum(a, b)"))
	g, _ = hlo.LiteralToSlice[float32](got)
	if !math.IsNaN(float64(g[0])) || !math.IsNaN(float64(g[1])) || g[2] != 2 {
		t.Fatalf("minimum = %v, want [NaN NaN 2]", g)
	}
}

// BitcastConvertType: "bitcast from a wider to a narrower type adds a
// minor dimension" holding the little-endian parts: 1.0f is 0x3F800000,
// so the u16 pieces are {0x0000, 0x3F80}.
func TestBitcastConvertSplitsLittleEndian(t *testing.T) {
	got := laRunHLO(t, ewModule(`  a = f32[2] constant({1, -2})
  ROOT b = u16[2,2] bitcast-convert(a)`))
	laWant(t, got, uint16(0), 0x3F80, 0, 0xC000)
	got = laRunHLO(t, ewModule(`  a = u8[4] constant({0, 0, 128, 63})
  ROOT b = f32[] bitcast-convert(a)`))
	laWant(t, got, float32(1))
}

// ReducePrecision: the mantissa is rounded to nearest even, exponents too
// large for the new width overflow to infinity, too small ones flush to
// zero. With 7 mantissa bits (bf16) the ulp at 1 is 2^-7: 1+2^-8 is a tie
// rounding down to 1, 1+3*2^-8 a tie rounding up to 1+2^-6.
func TestReducePrecisionRounding(t *testing.T) {
	got := laRunHLO(t, ewModule(`  a = f32[5] constant({1.00390625, 1.01171875, 131072, 1e-10, -3})
  ROOT r = f32[5] reduce-precision(a), exponent_bits=5, mantissa_bits=7`))
	laWant(t, got, float32(1), 1.015625, float32(math.Inf(1)), 0, -3)
}

// RoundNearestEven rounds ties to even, RoundNearestAfz away from zero;
// Sign keeps signed zeros.
func TestRoundingAndSign(t *testing.T) {
	x := "  a = f32[4] constant({2.5, -2.5, 0.5, -0})\n"
	laWant(t, laRunHLO(t, ewModule(x+"  ROOT r = f32[4] round-nearest-even(a)")), float32(2), -2, 0, 0)
	laWant(t, laRunHLO(t, ewModule(x+"  ROOT r = f32[4] round-nearest-afz(a)")), float32(3), -3, 1, 0)
	got := laRunHLO(t, ewModule(x+"  ROOT r = f32[4] sign(a)"))
	g, _ := hlo.LiteralToSlice[float32](got)
	if g[0] != 1 || g[1] != -1 || g[2] != 1 || g[3] != 0 || !math.Signbit(float64(g[3])) {
		t.Fatalf("sign = %v, want [1 -1 1 -0]", g)
	}
}

// f16 arithmetic rounds the exact result once to f16: above 2048 the f16
// spacing is 2, so 2048+1 ties to the even 2048 and 2048+3 to 2052.
func TestHalfPrecisionRoundsOnce(t *testing.T) {
	got := laRunHLO(t, ewModule(`  a = f16[2] constant({2048, 2048})
  b = f16[2] constant({1, 3})
  ROOT s = f32[2] convert(f16[2] add(a, b))`))
	laWant(t, got, float32(2048), 2052)
}

// CountLeadingZeros and PopulationCount count bits of the element type's
// own width.
func TestBitCounts(t *testing.T) {
	laWant(t, laRunHLO(t, ewModule(`  a = s32[3] constant({1, 0, -1})
  ROOT c = s32[3] count-leading-zeros(a)`)), int32(31), 32, 0)
	laWant(t, laRunHLO(t, ewModule(`  a = s8[2] constant({-1, 6})
  ROOT c = s8[2] popcnt(a)`)), int8(8), 2)
}

// Go's cmplx.Pow panics on a zero base with an exponent of NaN real part
// and infinite imaginary part; the evaluator returns NaN there, as it
// does for the other NaN exponents of a zero base, and an error-free run.
func TestComplexPowerZeroBaseNaNExponent(t *testing.T) {
	base := laLit(t, []complex128{0, 0, 2}, 3)
	exp := laLit(t, []complex128{complex(math.NaN(), math.Inf(1)), complex(math.NaN(), 0), 2}, 3)
	got := laRunHLO(t, ewModule(`  a = c128[3] parameter(0)
  b = c128[3] parameter(1)
  ROOT p = c128[3] power(a, b)`), base, exp)
	for i := range 2 {
		if z := got.GetComplex128(i); real(z) == real(z) || imag(z) == imag(z) {
			t.Errorf("0**%v = %v, want NaN", exp.GetComplex128(i), z)
		}
	}
	if z := got.GetComplex128(2); z != 4 {
		t.Errorf("2**2 = %v, want 4", z)
	}
}
