package collective_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// reductionModule is a two-replica all-reduce of T[n] with to_apply
// op(a, b), or op(b, a) when swapped.
func reductionModule(t hlo.DType, op string, n int, swapped bool) string {
	args := "a, b"
	if swapped {
		args = "b, a"
	}
	return fmt.Sprintf(`HloModule m, replica_count=2
r {
  a = %[1]s[] parameter(0)
  b = %[1]s[] parameter(1)
  ROOT o = %[1]s[] %[2]s(%[3]s)
}
ENTRY e {
  p = %[1]s[%[4]d] parameter(0)
  ROOT ar = %[1]s[%[4]d] all-reduce(p), replica_groups={}, to_apply=r
}
`, t, op, args, n)
}

// specials are the values every pair of which is folded.
var specials = []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), 1, -1, 1.5, -2.75, 65504, 3e38, 1e-40}

// operandPair returns the two devices' operands of type t: first every
// pair of specials (for float types), then random bit patterns.
func operandPair(t hlo.DType, n int, rng *rand.Rand) (a, b *hlo.Literal) {
	a, b = hlo.NewLiteral(hlo.ArrayShape(t, int64(n))), hlo.NewLiteral(hlo.ArrayShape(t, int64(n)))
	for _, l := range []*hlo.Literal{a, b} {
		raw := l.RawBytes()
		for i := range raw {
			raw[i] = byte(rng.Uint32())
		}
		sanitize(l)
	}
	if !t.IsFloat() && !t.IsComplex() {
		return a, b
	}
	m := len(specials)
	for i := range m * m {
		x, y := specials[i%m], specials[i/m]
		if t.IsComplex() {
			a.SetComplex128(i, complex(x, y))
			b.SetComplex128(i, complex(y, -x))
			continue
		}
		a.SetFloat64(i, x)
		b.SetFloat64(i, y)
	}
	return a, b
}

// sanitize keeps random storage valid: pred 0/1, narrow integers
// sign-extended or masked, sub-byte floats in their low bits.
func sanitize(l *hlo.Literal) {
	t, raw := l.DType(), l.RawBytes()
	bits := t.Bits()
	for i := range raw {
		switch {
		case t == hlo.Pred:
			raw[i] &= 1
		case bits < 8 && t.IsSigned():
			s := 8 - bits
			raw[i] = byte(int8(raw[i]<<s) >> s)
		case bits < 8:
			raw[i] &= 1<<bits - 1
		}
	}
}

// Every typed fold gives what the evaluator gives for the same to_apply
// computation on each pair of elements, bit for bit (NaNs: any NaN,
// for add and multiply, whose NaN payload the hardware picks).
func TestFoldsMatchEvaluator(t *testing.T) {
	intOps := []string{"add", "multiply", "minimum", "maximum", "and", "or", "xor"}
	floatOps := []string{"add", "multiply", "minimum", "maximum"}
	types := map[hlo.DType][]string{
		hlo.Pred: intOps, hlo.S2: intOps, hlo.S4: intOps, hlo.S8: intOps, hlo.S16: intOps, hlo.S32: intOps, hlo.S64: intOps,
		hlo.U2: intOps, hlo.U4: intOps, hlo.U8: intOps, hlo.U16: intOps, hlo.U32: intOps, hlo.U64: intOps,
		hlo.F16: floatOps, hlo.BF16: floatOps, hlo.F32: floatOps, hlo.F64: floatOps,
		hlo.F8E4M3FN: floatOps, hlo.F8E5M2: floatOps, hlo.F8E4M3FNUZ: floatOps, hlo.F8E5M2FNUZ: floatOps,
		hlo.F8E4M3B11FNUZ: floatOps, hlo.F8E3M4: floatOps, hlo.F8E4M3: floatOps, hlo.F4E2M1FN: floatOps,
		hlo.C64: {"add", "multiply"}, hlo.C128: {"add", "multiply"},
	}
	const n = 400
	rng := rand.New(rand.NewPCG(1, 2))
	for dt, ops := range types {
		for _, op := range ops {
			for _, swapped := range []bool{false, true} {
				a, b := operandPair(dt, n, rng)
				text := reductionModule(dt, op, n, swapped)
				outs := launch{replicas: 2, partitions: 1, name: "ar", text: text,
					inputs: func(d, _, _ int) []*hlo.Literal { return []*hlo.Literal{[]*hlo.Literal{a, b}[d]} },
				}.mustRun(t)
				comp := instruction(t, text, "ar").Computation("to_apply")
				checkAgainstEval(t, fmt.Sprintf("%s %s swapped=%v", dt, op, swapped), comp, a, b, outs, op)
			}
		}
	}
}

func checkAgainstEval(t *testing.T, what string, comp *hlo.Computation, a, b *hlo.Literal, outs []*hlo.Literal, op string) {
	t.Helper()
	dt := a.DType()
	es := len(a.RawBytes()) / a.Len()
	fails := 0
	for i := range a.Len() {
		x, y := scalarAt(a, i), scalarAt(b, i)
		var e eval.Evaluator
		want, err := e.Computation(comp, x, y)
		if err != nil {
			t.Fatalf("%s: eval: %v", what, err)
		}
		for d, o := range outs {
			got := o.RawBytes()[i*es : (i+1)*es]
			if string(got) == string(want.RawBytes()) || (op == "add" || op == "multiply") && bothNaN(dt, got, want) {
				continue
			}
			if fails++; fails < 5 {
				t.Errorf("%s: device %d element %d: fold(%v, %v) = %x, eval %x (%v)", what, d, i, x, y, got, want.RawBytes(), want)
			}
		}
	}
}

func scalarAt(l *hlo.Literal, i int) *hlo.Literal {
	s := hlo.NewLiteral(hlo.ScalarShape(l.DType()))
	es := len(s.RawBytes())
	copy(s.RawBytes(), l.RawBytes()[i*es:(i+1)*es])
	return s
}

// bothNaN reports whether got and want are NaN in every part.
func bothNaN(t hlo.DType, got []byte, want *hlo.Literal) bool {
	g := hlo.NewLiteral(hlo.ScalarShape(t))
	copy(g.RawBytes(), got)
	if t.IsComplex() {
		gc, wc := g.GetComplex128(0), want.GetComplex128(0)
		return sameNaNs(real(gc), real(wc)) && sameNaNs(imag(gc), imag(wc))
	}
	return math.IsNaN(g.GetFloat64(0)) && math.IsNaN(want.GetFloat64(0))
}

// sameNaNs: equal, or both NaN.
func sameNaNs(x, y float64) bool {
	return x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y)
}

// The slow path: to_apply a*2+b is no fold the fast path knows, so each
// element goes through apply (package eval here), still left to right:
// with 3 devices holding 1, 10, 100 the result is (1*2+10)*2+100 = 124.
func TestSlowPathFoldsInOrder(t *testing.T) {
	text := `HloModule m, replica_count=3
r {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  two = s32[] constant(2)
  m = s32[] multiply(a, two)
  ROOT s = s32[] add(m, b)
}
ENTRY e {
  p = s32[2] parameter(0)
  ROOT ar = s32[2] all-reduce(p), replica_groups={}, to_apply=r
}
`
	outs := launch{replicas: 3, partitions: 1, name: "ar", text: text, apply: evalApply,
		inputs: func(d, _, _ int) []*hlo.Literal {
			v := []int32{1, 10, 100}[d]
			return []*hlo.Literal{s32s(t, []int32{v, -v}, 2)}
		},
	}.mustRun(t)
	for _, o := range outs {
		wantData(t, "a*2+b", o, []int32{124, -124})
	}
	// Without an evaluator the computation is refused.
	_, errs := launch{replicas: 3, partitions: 1, name: "ar", text: text,
		inputs: func(d, _, _ int) []*hlo.Literal { return []*hlo.Literal{s32s(t, []int32{1, 2}, 2)} },
	}.run(t)
	for d, err := range errs {
		if err == nil {
			t.Errorf("device %d: no error without an evaluator", d)
		}
	}
}
