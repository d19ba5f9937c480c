package eval_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

var refusal = regexp.MustCompile(`is not defined on element type|compare only for EQ and NE|converting from type C(64|128) to type [A-Z0-9]+ is not implemented`)

// TestElementwiseSweep runs every elementwise op the verifier accepts on
// every element type, on seeded random values: nothing may panic, and an
// accepted module may only fail with ErrUnimplemented-free errors for the
// few combinations the op does not define.
func TestElementwiseSweep(t *testing.T) {
	types := []string{"pred", "s4", "s8", "s16", "s32", "s64", "u4", "u8", "u16", "u32", "u64",
		"f16", "bf16", "f32", "f64", "f8e4m3fn", "f8e5m2", "c64", "c128"}
	unary := []string{"abs", "negate", "not", "sign", "floor", "ceil", "round-nearest-afz", "round-nearest-even",
		"exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt", "rsqrt", "cbrt", "tanh", "sine", "cosine",
		"tan", "logistic", "is-finite", "popcnt", "count-leading-zeros", "real", "imag", "erf"}
	binary := []string{"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2",
		"and", "or", "xor", "shift-left", "shift-right-logical", "shift-right-arithmetic"}
	rng := rand.New(rand.NewPCG(1, 2))
	run := func(t *testing.T, text string, params ...hlo.Shape) {
		m, err := hlotext.Parse(text, hlotext.Options{})
		if err != nil {
			return // not a valid combination (the parser infers and rejects)
		}
		if hlo.Verify(m) != nil {
			return
		}
		args := make([]*hlo.Literal, len(params))
		for i, s := range params {
			args[i] = eval.RandomLiteral(s, rng)
		}
		// Combinations the verifier lets through but the op leaves
		// undefined (shifts of floats, ordering complex numbers, complex to
		// real converts, as in XLA) must be refused by name, not panic.
		if _, err := eval.Run(m, args...); err != nil && !refusal.MatchString(err.Error()) {
			t.Errorf("%v\n%s", err, text)
		}
	}
	for _, ty := range types {
		s, err := hlotext.ParseShape(ty + "[5]")
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range unary {
			for _, out := range []string{ty, "pred", map[string]string{"c64": "f32", "c128": "f64"}[ty]} {
				if out == "" {
					continue
				}
				run(t, fmt.Sprintf("HloModule m\nENTRY e {\n  p = %s[5] parameter(0)\n  ROOT r = %s[5] %s(p)\n}", ty, out, op), s)
			}
		}
		for _, op := range binary {
			run(t, fmt.Sprintf("HloModule m\nENTRY e {\n  p = %s[5] parameter(0)\n  q = %s[5] parameter(1)\n  ROOT r = %s[5] %s(p, q)\n}", ty, ty, ty, op), s, s)
		}
		for _, dir := range []string{"EQ", "LT"} {
			run(t, fmt.Sprintf("HloModule m\nENTRY e {\n  p = %s[5] parameter(0)\n  q = %s[5] parameter(1)\n  ROOT r = pred[5] compare(p, q), direction=%s\n}", ty, ty, dir), s, s)
		}
		for _, to := range types {
			run(t, fmt.Sprintf("HloModule m\nENTRY e {\n  p = %s[5] parameter(0)\n  ROOT r = %s[5] convert(p)\n}", ty, to), s)
		}
		run(t, fmt.Sprintf("HloModule m\nENTRY e {\n  c = pred[5] parameter(0)\n  p = %s[5] parameter(1)\n  q = %s[5] parameter(2)\n  ROOT r = %s[5] select(c, p, q)\n}", ty, ty, ty),
			hlo.ArrayShape(hlo.Pred, 5), s, s)
		run(t, fmt.Sprintf("HloModule m\nENTRY e {\n  lo = %s[] parameter(0)\n  p = %s[5] parameter(1)\n  hi = %s[] parameter(2)\n  ROOT r = %s[5] clamp(lo, p, hi)\n}", ty, ty, ty, ty),
			hlo.ArrayShape(s.DType), s, hlo.ArrayShape(s.DType))
	}
}
