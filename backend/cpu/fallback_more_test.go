package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// TestRngStateCompiled: rng-get-and-update-state runs as a kernel (not
// on the evaluator) and returns the evaluator's state sequence: the
// second instruction sees the first one's delta.
func TestRngStateCompiled(t *testing.T) {
	m, x := compileText(t, `HloModule state
ENTRY main {
  a = u64[2] rng-get-and-update-state(), delta=5
  b = u64[2] rng-get-and-update-state(), delta=7
  ROOT t = (u64[2], u64[2]) tuple(a, b)
}`, Options{Threads: 2, Poison: true})
	if len(x.Fallbacks) != 0 || x.Lowering["rng-get-and-update-state"] != 2 {
		t.Fatalf("lowering %v, fallbacks %v", x.Lowering, x.Fallbacks)
	}
	got, want := evalAndRun(t, m, x, nil)
	if !got.Equal(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	a, b := got.Elements()[0], got.Elements()[1]
	if b.GetUint64(0)-a.GetUint64(0) != 5 && a.GetUint64(0)-b.GetUint64(0) != 7 {
		t.Fatalf("states %v and %v are not one delta apart", a, b)
	}
}

// TestFusionBody: a fusion no fused kernel takes (XLA's GPU pipeline
// puts dots and concatenates in loop fusions) runs its fused computation
// with a kernel per instruction, not on the evaluator.
func TestFusionBody(t *testing.T) {
	m, x := compileText(t, `HloModule prefused
fused {
  a = f32[16,8] parameter(0)
  b = f32[8,4] parameter(1)
  d = f32[16,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[16,8] concatenate(d, d), dimensions={1}
  i = s32[16,8] iota(), iota_dimension=1
  f = f32[16,8] convert(i)
  ROOT r = f32[16,8] add(c, f)
}
ENTRY main {
  a = f32[16,8] parameter(0)
  b = f32[8,4] parameter(1)
  ROOT f = f32[16,8] fusion(a, b), kind=kLoop, calls=fused
}`, Options{Threads: 2, Poison: true})
	if len(x.Fallbacks) != 0 || x.Lowering["fusion-body"] != 1 {
		t.Fatalf("lowering %v, fallbacks %v", x.Lowering, x.Fallbacks)
	}
	args := eval.RandomArguments(m, 3)
	for range 2 {
		got, want := evalAndRun(t, m, x, args)
		if err := conformance.Compare(got, want, conformance.Tolerance{Rtol: 1e-5, Atol: 1e-5}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConvertAny converts between sub-byte integers, f4 and f8 and the
// common types with the literal library's conversion: the evaluator's
// bits.
func TestConvertAny(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	types := []hlo.DType{hlo.S2, hlo.S4, hlo.U4, hlo.F4E2M1FN, hlo.F8E4M3FN, hlo.F8E5M2, hlo.S8, hlo.S32, hlo.F32, hlo.BF16}
	for _, from := range types {
		for _, to := range types {
			in := parseRoot(t, module([]string{shapeText(from, []int64{3, 17})}, shapeText(to, []int64{3, 17})+" convert(p0)"))
			for range 3 {
				runWhole(t, intoWhole(func(in *hlo.Instruction, _ int) (kernelFunc, bool) { return lowerConvertAny(in) }),
					in, randomOperands(in, rng), 1)
			}
		}
	}
}

// TestBitcastRelayout: bitcasts whose layouts are not both row-major
// reinterpret the physical order, as the evaluator does.
func TestBitcastRelayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	for _, c := range [][2]string{
		{"f32[4,6]{0,1}", "f32[6,4]{1,0}"},
		{"f16[512,12]{0,1}", "f16[12,512]{1,0}"},
		{"s8[2,3,5]{0,2,1}", "s8[30]{0}"},
		{"f64[3,4]{1,0}", "f64[2,6]{0,1}"},
		{"bf16[2,3,4]{1,0,2}", "bf16[4,6]{0,1}"},
	} {
		in := parseRoot(t, module([]string{c[0]}, c[1]+" bitcast(p0)"))
		for range 3 {
			runWhole(t, intoWhole(movementOrElementwise), in, randomOperands(in, rng), 2)
		}
	}
}

// TestLoweringPassesWithoutOptimize: with NoOptimize, map and
// batch-norm are still expanded into ops with kernels.
func TestLoweringPassesWithoutOptimize(t *testing.T) {
	m, x := compileText(t, `HloModule bn
sq {
  a = f32[] parameter(0)
  ROOT m = f32[] multiply(a, a)
}
ENTRY main {
  x = f32[4,3,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  bn = (f32[4,3,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=2
  y = f32[4,3,2] get-tuple-element(bn), index=0
  ROOT z = f32[4,3,2] map(y), dimensions={0,1,2}, to_apply=sq
}`, Options{Threads: 2, NoOptimize: true})
	if len(x.Fallbacks) != 0 {
		t.Fatalf("fallbacks %v", x.Fallbacks)
	}
	got, want := evalAndRun(t, m, x, eval.RandomArguments(m, 9))
	if err := conformance.Compare(got, want, conformance.Tolerance{Rtol: 1e-4, Atol: 1e-5}); err != nil {
		t.Fatal(err)
	}
}
