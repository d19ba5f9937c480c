package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// bf16 products, whatever their layout, agree with the evaluator within
// kernels.GemmNarrowF32's documented bound (the evaluator's sum and the
// kernel's each within k·2⁻²³·Σ|ab| + k·2⁻¹²⁵ of the exact one; a bf16
// result one rounding more), and run on the bf16 GEMM ("gemm-bf16")
// exactly where kernels.BF16Direct holds (the widening GEMM elsewhere).
// Σ|ab| is the evaluator's product of the operands' magnitudes.
func TestDotBF16(t *testing.T) {
	for _, c := range []struct {
		name, lhs, rhs, out, dims string
		k                         int
	}{
		{"odd sizes", "bf16[37,45]", "bf16[45,29]", "f32[37,29]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 45},
		{"past a block of k", "bf16[13,1031]", "bf16[1031,40]", "f32[13,40]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 1031},
		{"bf16 result", "bf16[24,64]", "bf16[64,48]", "bf16[24,48]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}", 64},
		{"A transposed", "bf16[33,20]", "bf16[33,50]", "f32[20,50]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}", 33},
		{"B transposed (a Linear's weights)", "bf16[30,17]", "bf16[70,17]", "f32[30,70]", "lhs_contracting_dims={1}, rhs_contracting_dims={1}", 17},
		{"batched", "bf16[3,18,9]", "bf16[3,9,35]", "f32[3,18,35]",
			"lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}", 9},
		{"dense layer over a sequence", "bf16[2,16,33]", "bf16[33,40]", "bf16[2,16,40]", "lhs_contracting_dims={2}, rhs_contracting_dims={0}", 33},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := fmt.Sprintf("HloModule d\nENTRY e {\n  a = %s parameter(0)\n  b = %s parameter(1)\n  ROOT d = %s dot(a, b), %s\n}\n", c.lhs, c.rhs, c.out, c.dims)
			want := "gemm"
			if kernels.BF16Direct() {
				want = "gemm-bf16"
			}
			checkBF16(t, text, want, c.k, c.out[:4] == "bf16")
		})
	}
}

// checkBF16 compiles text, a module of two bf16 parameters and one
// product of them over k values, checks it lowered as want, and compares
// its result with the evaluator's within the bf16 GEMM's bound (each
// within k·2⁻²³·Σ|ab| + k·2⁻¹²⁵ of the exact sum; a bf16 result one
// rounding more), Σ|ab| from the evaluator on the operands' magnitudes.
func checkBF16(t *testing.T, text, want string, k int, bf16Out bool) {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Compile(m, Options{NoOptimize: true, Poison: true, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if x.Lowering[want] != 1 {
		t.Fatalf("lowered as %v, want %s", x.Lowering, want)
	}
	args := eval.RandomArguments(m, 11)
	got, exp := evalAndRun(t, m, x, args)
	mags, err := eval.Run(m, magnitudes(t, args[0]), magnitudes(t, args[1]))
	if err != nil {
		t.Fatal(err)
	}
	kf := float64(k)
	for i := range exp.Len() {
		g, w := got.GetFloat64(i), exp.GetFloat64(i)
		bound := 2 * (kf*0x1p-23*mags.GetFloat64(i) + kf*0x1p-125)
		if bf16Out {
			bound += 0x1p-7 * math.Max(math.Abs(w), math.Abs(g))
		}
		if !(math.Abs(g-w) <= bound) {
			t.Fatalf("element %d: got %g, evaluator %g: %g apart, bound %g", i, g, w, math.Abs(g-w), bound)
		}
	}
}

// magnitudes is the bf16 literal l with every sign bit cleared.
func magnitudes(t *testing.T, l *hlo.Literal) *hlo.Literal {
	t.Helper()
	bits := append([]uint16(nil), l.Data().([]uint16)...)
	for i := range bits {
		bits[i] &= 0x7FFF
	}
	out, err := hlo.NewLiteralFromData(l.Shape(), bits)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
