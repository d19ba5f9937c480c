package opt_test

import (
	"fmt"
	"strings"
	"testing"

	_ "github.com/axle-ml/axle/backend/cpu/compiler"

	"github.com/axle-ml/axle/backend/cpu"
	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/opt"
	"github.com/axle-ml/axle/pass"
)

func TestBatchNormExpanderInference(t *testing.T) {
	checkPass(t, opt.BatchNormExpander, hloModule(`
ENTRY e {
  x = f32[2,3] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  mean = f32[3] parameter(3)
  var = f32[3] parameter(4)
  ROOT bn = f32[2,3] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.001, feature_index=1
}`), hloModule(`
ENTRY e {
  x = f32[2,3] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  mean = f32[3] parameter(3)
  var = f32[3] parameter(4)
  mb = f32[2,3] broadcast(mean), dimensions={1}
  centred = f32[2,3] subtract(x, mb)
  eps = f32[] constant(0.001)
  epsb = f32[3] broadcast(eps), dimensions={}
  ve = f32[3] add(var, epsb)
  inv = f32[3] rsqrt(ve)
  factor = f32[3] multiply(scale, inv)
  fb = f32[2,3] broadcast(factor), dimensions={1}
  scaled = f32[2,3] multiply(centred, fb)
  ob = f32[2,3] broadcast(offset), dimensions={1}
  ROOT y = f32[2,3] add(scaled, ob)
}`))
}

// Training: the mean, then the variance from the centred values (two
// reductions over every dimension but the feature one, each by an add
// computation), all in f32 for an f16 operand, rounded once at the end.
func TestBatchNormExpanderTrainingF16(t *testing.T) {
	checkPass(t, opt.BatchNormExpander, hloModule(`
ENTRY e {
  x = f16[4,3,5] parameter(0)
  scale = f16[3] parameter(1)
  offset = f16[3] parameter(2)
  ROOT bn = (f16[4,3,5], f16[3], f16[3]) batch-norm-training(x, scale, offset), epsilon=0.5, feature_index=1
}`), hloModule(`
add_f32 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT add = f32[] add(lhs, rhs)
}
ENTRY e {
  x = f16[4,3,5] parameter(0)
  scale = f16[3] parameter(1)
  offset = f16[3] parameter(2)
  xf = f32[4,3,5] convert(x)
  sf = f32[3] convert(scale)
  of = f32[3] convert(offset)
  zero = f32[] constant(0)
  sum = f32[3] reduce(xf, zero), dimensions={0,2}, to_apply=add_f32
  twenty = f32[] constant(20)
  n = f32[3] broadcast(twenty), dimensions={}
  mean = f32[3] divide(sum, n)
  mb = f32[4,3,5] broadcast(mean), dimensions={1}
  centred = f32[4,3,5] subtract(xf, mb)
  sq = f32[4,3,5] multiply(centred, centred)
  zero2 = f32[] constant(0)
  sumsq = f32[3] reduce(sq, zero2), dimensions={0,2}, to_apply=add_f32
  var = f32[3] divide(sumsq, n)
  eps = f32[] constant(0.5)
  epsb = f32[3] broadcast(eps), dimensions={}
  ve = f32[3] add(var, epsb)
  inv = f32[3] rsqrt(ve)
  factor = f32[3] multiply(sf, inv)
  fb = f32[4,3,5] broadcast(factor), dimensions={1}
  scaled = f32[4,3,5] multiply(centred, fb)
  ob = f32[4,3,5] broadcast(of), dimensions={1}
  y = f32[4,3,5] add(scaled, ob)
  yh = f16[4,3,5] convert(y)
  meanh = f16[3] convert(mean)
  varh = f16[3] convert(var)
  ROOT t = (f16[4,3,5], f16[3], f16[3]) tuple(yh, meanh, varh)
}`))
}

// get-tuple-element users of the expanded ops read the new tuple; the
// grad's three results come from two reductions.
func TestBatchNormExpanderGradShape(t *testing.T) {
	text := hloModule(`
ENTRY e {
  x = f64[8,2] parameter(0)
  scale = f64[8] parameter(1)
  mean = f64[8] parameter(2)
  var = f64[8] parameter(3)
  g = f64[8,2] parameter(4)
  bn = (f64[8,2], f64[8], f64[8]) batch-norm-grad(x, scale, mean, var, g), epsilon=0.001, feature_index=0
  gx = f64[8,2] get-tuple-element(bn), index=0
  gs = f64[8] get-tuple-element(bn), index=1
  ROOT t = (f64[8,2], f64[8]) tuple(gx, gs)
}`)
	m, err := hlotext.Parse(text, hlotext.Options{File: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	pl := &pass.Pipeline{Label: "test", Passes: []pass.Pass{opt.BatchNormExpander}}
	if changed, err := pl.RunWith(m, pass.Options{Verify: true, CheckUnchanged: true}); err != nil || !changed {
		t.Fatalf("batch-norm-expander: changed %v, %v", changed, err)
	}
	got := hlotext.Print(m, hlotext.Short)
	for op, want := range map[string]int{"batch-norm": 0, " reduce(": 2, " tuple(": 2, "dimensions={1}, to_apply=add_f64": 2, " convert(": 0} {
		if n := strings.Count(got, op); n != want {
			t.Errorf("%d instructions match %q, want %d:\n%s", n, op, want, got)
		}
	}
}

// The expander leaves batch-norms it cannot move (ordered by control
// edges) and modules without batch-norm alone.
func TestBatchNormExpanderDeclines(t *testing.T) {
	checkPass(t, opt.BatchNormExpander, hloModule(`
ENTRY e {
  x = f32[2,3] parameter(0)
  s = f32[3] parameter(1)
  n = f32[2,3] negate(x)
  ROOT bn = f32[2,3] batch-norm-inference(x, s, s, s, s), epsilon=0.001, feature_index=1, control-predecessors={n}
}`), "")
	checkPass(t, opt.BatchNormExpander, hloModule(`
ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT n = f32[2,3] negate(x)
}`), "")
}

// bnTolerance bounds the expansion's difference from the evaluator, which
// computes in float64 and rounds once. In f32 the sums are sequential f32
// additions over N terms (N <= 448 here) of magnitude <= 4, whose rounding
// error is at most N·2⁻²⁴ relative to the sum of magnitudes and in practice
// about sqrt(N)·2⁻²⁴; the tests see at most ~1e-6 relative, so 2e-5 leaves
// a margin of 20. f64 has 29 more bits (seen: below 1e-15). Narrow types
// are computed in f32 and rounded once, so where the f32 result lies
// within f32 error of a rounding boundary they differ from the evaluator's
// single rounding by one unit in the last place (seen for f16): the
// tolerance is one ulp at 1 (2⁻¹⁰ for f16, 2⁻⁷ for bf16).
func bnTolerance(t hlo.DType) conformance.Tolerance {
	switch t {
	case hlo.F64:
		return conformance.Tolerance{Atol: 1e-12, Rtol: 1e-12}
	case hlo.F16:
		return conformance.Tolerance{Atol: 1e-3, Rtol: 1.0 / 1024}
	case hlo.BF16:
		return conformance.Tolerance{Atol: 1e-2, Rtol: 1.0 / 128}
	}
	return conformance.Tolerance{Atol: 2e-5, Rtol: 2e-5}
}

// bnModule builds a module with one batch-norm op over the given dims.
// Inputs are uniform in [-1, 1); the operand is shifted by 3 so the
// variance is small against the mean (where E[x²]-E[x]² would lose
// digits), and variances are made positive.
func bnModule(op string, dt hlo.DType, dims []int64, fi int, layout string) string {
	s := func(d ...int64) string {
		parts := make([]string, len(d))
		for i, v := range d {
			parts[i] = fmt.Sprint(v)
		}
		return fmt.Sprintf("%s[%s]", dt, strings.Join(parts, ","))
	}
	x, v := s(dims...), s(dims[fi])
	all := make([]string, len(dims))
	for i := range all {
		all[i] = fmt.Sprint(i)
	}
	head := fmt.Sprintf(`
ENTRY e {
  p = %s%s parameter(0)
  three = %s[] constant(3)
  three.b = %s broadcast(three), dimensions={}
  x = %s add(p, three.b)
  a = %s parameter(1)
  b = %s parameter(2)
  c = %s parameter(3)
  d = %s parameter(4)
  va = %s abs(c)
`, x, layout, dt, x, x, v, v, v, v, v)
	attrs := fmt.Sprintf("epsilon=0.001, feature_index=%d", fi)
	switch op {
	case "training":
		return hloModule(head + fmt.Sprintf("  ROOT bn = (%s, %s, %s) batch-norm-training(x, a, b), %s\n}", x, v, v, attrs))
	case "inference":
		return hloModule(head + fmt.Sprintf("  ROOT bn = %s batch-norm-inference(x, a, b, d, va), %s\n}", x, attrs))
	}
	return hloModule(head + fmt.Sprintf("  g = %s parameter(5)\n  ROOT bn = (%s, %s, %s) batch-norm-grad(x, a, d, va, g), %s\n}", x, x, v, v, attrs))
}

// The expansion matches the evaluator's batch-norm within bnTolerance for
// each op, several shapes and feature indices, and each float type.
func TestBatchNormExpanderSameValues(t *testing.T) {
	shapes := []struct {
		dims []int64
		fi   int
	}{
		{[]int64{7}, 0},
		{[]int64{5, 3}, 0},
		{[]int64{5, 3}, 1},
		{[]int64{2, 3, 4, 5}, 0},
		{[]int64{2, 3, 4, 5}, 2},
		{[]int64{4, 6, 6, 8}, 3},
		{[]int64{16, 9, 7, 4}, 1},
	}
	for _, op := range []string{"training", "inference", "grad"} {
		for _, dt := range []hlo.DType{hlo.F32, hlo.F64, hlo.F16, hlo.BF16} {
			for i, s := range shapes {
				name := fmt.Sprintf("%s/%s/%v/fi%d", op, dt, s.dims, s.fi)
				t.Run(name, func(t *testing.T) {
					if !checkSameValues(t, opt.BatchNormExpander, bnModule(op, dt, s.dims, s.fi, ""), uint64(i+1), bnTolerance(dt)) {
						t.Fatal("batch-norm-expander did not fire")
					}
				})
			}
		}
	}
}

// A non-default operand layout changes nothing: the expansion works on
// logical indices.
func TestBatchNormExpanderOperandLayout(t *testing.T) {
	for _, op := range []string{"training", "inference", "grad"} {
		for _, layout := range []string{"{0,1,2}", "{1,2,0}"} {
			t.Run(op+layout, func(t *testing.T) {
				text := bnModule(op, hlo.F32, []int64{6, 5, 4}, 1, layout)
				if !checkSameValues(t, opt.BatchNormExpander, text, 7, bnTolerance(hlo.F32)) {
					t.Fatal("batch-norm-expander did not fire")
				}
			})
		}
	}
}

// Mixed precision: an f16 operand with f32 scale and offset, and an f32
// operand with f64 statistics (computed in f64).
func TestBatchNormExpanderMixedTypes(t *testing.T) {
	for _, text := range []string{`
ENTRY e {
  x = f16[6,4] parameter(0)
  s = f32[4] parameter(1)
  o = f32[4] parameter(2)
  ROOT bn = (f16[6,4], f16[4], f16[4]) batch-norm-training(x, s, o), epsilon=0.01, feature_index=1
}`, `
ENTRY e {
  x = f32[6,4] parameter(0)
  s = f64[4] parameter(1)
  o = f64[4] parameter(2)
  m = f64[4] parameter(3)
  v = f64[4] parameter(4)
  va = f64[4] abs(v)
  ROOT bn = f32[6,4] batch-norm-inference(x, s, o, m, va), epsilon=0.01, feature_index=1
}`} {
		if !checkSameValues(t, opt.BatchNormExpander, hloModule(text), 3, bnTolerance(hlo.F16)) {
			t.Fatal("batch-norm-expander did not fire")
		}
	}
}

// The shared batch-norm cases, expanded, still give their expected values.
func TestBatchNormExpanderConformance(t *testing.T) {
	if n := runConformance(t, opt.BatchNormExpander, " batch-norm-", "xla-tests/batch_normalization_test", "cases"); n < 4 {
		t.Errorf("ran %d batch-norm cases, want at least 4", n)
	}
}

// bnMapModule is a training batch-norm feeding a mapped activation, the
// pattern the expanders exist for.
func bnMapModule(dims string) string {
	return hloModule(fmt.Sprintf(`
relu_scale {
  x = f32[] parameter(0)
  zero = f32[] constant(0)
  r = f32[] maximum(x, zero)
  k = f32[] constant(1.5)
  ROOT m = f32[] multiply(r, k)
}
ENTRY main {
  x = f32[%[1]s] parameter(0)
  scale = f32[64] parameter(1)
  offset = f32[64] parameter(2)
  bn = (f32[%[1]s], f32[64], f32[64]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=3
  y = f32[%[1]s] get-tuple-element(bn), index=0
  mean = f32[64] get-tuple-element(bn), index=1
  var = f32[64] get-tuple-element(bn), index=2
  act = f32[%[1]s] map(y), dimensions={0,1,2,3}, to_apply=relu_scale
  ROOT t = (f32[%[1]s], f32[64], f32[64]) tuple(act, mean, var)
}`, dims))
}

// With the expanders in the standard pipeline the cpu backend compiles
// batch-norm and map to kernels (none runs on the evaluator) and matches
// the evaluator.
func TestCPUCompilesExpandedBatchNormAndMap(t *testing.T) {
	m, err := hlotext.Parse(bnMapModule("4,6,5,64"), hlotext.Options{File: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	args := eval.RandomArguments(m, 1)
	x, err := cpu.Compile(m, cpu.Options{Poison: true})
	if err != nil {
		t.Fatal(err)
	}
	if x.Engine != "compiled" || x.Lowering["evaluator"] != 0 {
		t.Errorf("engine %s, lowering %v: want every instruction compiled", x.Engine, x.Lowering)
	}
	got, err := x.Execute(args...)
	if err != nil {
		t.Fatal(err)
	}
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	if err := conformance.Compare(got, want, bnTolerance(hlo.F32)); err != nil {
		t.Error(err)
	}
}

// BenchmarkBatchNormAndMap: the expanded ops compiled by the cpu backend
// against the evaluator running the original ops, at a ResNet-like size.
func BenchmarkBatchNormAndMap(b *testing.B) {
	m, err := hlotext.Parse(bnMapModule("8,28,28,64"), hlotext.Options{})
	if err != nil {
		b.Fatal(err)
	}
	args := eval.RandomArguments(m, 1)
	b.Run("cpu", func(b *testing.B) {
		x, err := cpu.Compile(m, cpu.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := x.Execute(args...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("evaluator", func(b *testing.B) {
		for b.Loop() {
			if _, err := eval.Run(m, args...); err != nil {
				b.Fatal(err)
			}
		}
	})
}
