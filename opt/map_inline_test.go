package opt_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/opt"
	"github.com/axle-ml/axle/pass"
)

const conformanceDir = "../../shared/conformance"

func TestMapInlinerBinaryWithConstant(t *testing.T) {
	checkPass(t, opt.MapInliner, hloModule(`
mul_add_one {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  one = f32[] constant(1)
  m = f32[] multiply(x, y)
  ROOT a = f32[] add(m, one)
}
ENTRY e {
  p = f32[2,3] parameter(0)
  q = f32[2,3] parameter(1)
  ROOT map = f32[2,3] map(p, q), dimensions={0,1}, to_apply=mul_add_one
}`), hloModule(`
ENTRY e {
  p = f32[2,3] parameter(0)
  q = f32[2,3] parameter(1)
  one = f32[] constant(1)
  b = f32[2,3] broadcast(one), dimensions={}
  m = f32[2,3] multiply(p, q)
  ROOT a = f32[2,3] add(m, b)
}`))
}

// Each op keeps its own element type: compare yields pred, convert s32.
func TestMapInlinerMixedTypes(t *testing.T) {
	checkPass(t, opt.MapInliner, hloModule(`
f {
  x = f32[] parameter(0)
  q = pred[] parameter(1)
  zero = f32[] constant(0)
  gt = pred[] compare(x, zero), direction=GT
  both = pred[] and(gt, q)
  n = f32[] negate(x)
  s = f32[] select(both, x, n)
  ROOT c = s32[] convert(s)
}
ENTRY e {
  p = f32[4] parameter(0)
  b = pred[4] parameter(1)
  ROOT map = s32[4] map(p, b), dimensions={0}, to_apply=f
}`), hloModule(`
ENTRY e {
  p = f32[4] parameter(0)
  b = pred[4] parameter(1)
  zero = f32[] constant(0)
  zb = f32[4] broadcast(zero), dimensions={}
  gt = pred[4] compare(p, zb), direction=GT
  both = pred[4] and(gt, b)
  n = f32[4] negate(p)
  s = f32[4] select(both, p, n)
  ROOT c = s32[4] convert(s)
}`))
}

// An identity body leaves the operand itself; a constant body a broadcast.
func TestMapInlinerIdentityAndConstantBodies(t *testing.T) {
	checkPass(t, opt.MapInliner, hloModule(`
id {
  x = f32[] parameter(0)
  ROOT y = f32[] parameter(1)
}
k {
  x = f32[] parameter(0)
  ROOT seven = f32[] constant(7)
}
ENTRY e {
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  m1 = f32[3] map(p, q), dimensions={0}, to_apply=id
  m2 = f32[3] map(p), dimensions={0}, to_apply=k
  ROOT t = (f32[3], f32[3]) tuple(m1, m2)
}`), hloModule(`
ENTRY e {
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  seven = f32[] constant(7)
  b = f32[3] broadcast(seven), dimensions={}
  ROOT t = (f32[3], f32[3]) tuple(q, b)
}`))
}

// A scalar map becomes the body itself, constants unbroadcast.
func TestMapInlinerScalarMapInWhileBody(t *testing.T) {
	checkPass(t, opt.MapInliner, hloModule(`
inc {
  x = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT a = s32[] add(x, one)
}
cond {
  s = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(s, ten), direction=LT
}
body {
  s = s32[] parameter(0)
  ROOT n = s32[] map(s), dimensions={}, to_apply=inc
}
ENTRY e {
  p = s32[] parameter(0)
  ROOT w = s32[] while(p), condition=cond, body=body
}`), hloModule(`
cond {
  s = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(s, ten), direction=LT
}
body {
  s = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT a = s32[] add(s, one)
}
ENTRY e {
  p = s32[] parameter(0)
  ROOT w = s32[] while(p), condition=cond, body=body
}`))
}

func TestMapInlinerScalarBitcastConvert(t *testing.T) {
	checkPass(t, opt.MapInliner, hloModule(`
bits {
  in = f32[] parameter(0)
  ROOT bc = s32[] bitcast-convert(in)
}
ENTRY e {
  a = f32[2] parameter(0)
  ROOT map = s32[2] map(a), dimensions={0}, to_apply=bits
}`), hloModule(`
ENTRY e {
  a = f32[2] parameter(0)
  ROOT bc = s32[2] bitcast-convert(a)
}`))
}

// The inliner declines bodies that are not scalar elementwise code.
func TestMapInlinerDeclines(t *testing.T) {
	for name, text := range map[string]string{
		"call": `
neg {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
f {
  x = f32[] parameter(0)
  ROOT c = f32[] call(x), to_apply=neg
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT map = f32[4] map(p), dimensions={0}, to_apply=f
}`,
		"non-scalar intermediate and reduce": `
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  x = f32[] parameter(0)
  v = f32[3] broadcast(x), dimensions={}
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(v, zero), dimensions={0}, to_apply=add
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT map = f32[4] map(p), dimensions={0}, to_apply=f
}`,
		"side effect": `
f {
  x = f32[] parameter(0)
  lo = f32[] constant(0)
  ROOT r = f32[] rng(lo, x), distribution=rng_uniform
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT map = f32[4] map(p), dimensions={0}, to_apply=f
}`,
		"scalar operand of an array map": `
f {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  s = f32[] parameter(1)
  ROOT map = f32[4] map(p, s), dimensions={0}, to_apply=f
}`,
		"operand type differs from parameter": `
f {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
ENTRY e {
  p = f64[4] parameter(0)
  ROOT map = f32[4] map(p), dimensions={0}, to_apply=f
}`,
	} {
		t.Run(name, func(t *testing.T) {
			m, err := hlotext.Parse(hloModule(text), hlotext.Options{File: t.Name()})
			if err != nil {
				t.Fatal(err)
			}
			if err := hlo.Verify(m); err != nil {
				t.Skipf("the verifier rejects the module: %v", err)
			}
			checkPass(t, opt.MapInliner, hloModule(text), "")
		})
	}
}

// checkSameValues runs p (under every pipeline check) on text and
// evaluates the module before and after on the same random arguments; it
// returns whether p fired.
func checkSameValues(t *testing.T, p pass.Pass, text string, seed uint64, tol conformance.Tolerance) bool {
	t.Helper()
	orig, err := hlotext.Parse(text, hlotext.Options{File: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := hlotext.Parse(text, hlotext.Options{File: t.Name()})
	args := eval.RandomArguments(orig, seed)
	eval.RandomArguments(m, seed) // the same elided constants
	pl := &pass.Pipeline{Label: "test", Passes: []pass.Pass{p}}
	changed, err := pl.RunWith(m, pass.Options{Verify: true, CheckUnchanged: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := eval.Run(orig, args...)
	if err != nil {
		t.Fatalf("before %s: %v", p.Name(), err)
	}
	got, err := eval.Run(m, args...)
	if err != nil {
		t.Fatalf("after %s: %v\n%s", p.Name(), err, hlotext.Print(m, hlotext.PrintOptions{}))
	}
	if err := conformance.Compare(got, want, tol); err != nil {
		t.Errorf("%s changed the values: %v\n%s", p.Name(), err, text)
	}
	return changed
}

// runConformance runs each shared case whose HLO contains marker through
// the evaluator after p, checks the case's expected value and that p
// fired on it; it returns how many cases ran.
func runConformance(t *testing.T, p pass.Pass, marker string, dirs ...string) int {
	t.Helper()
	var paths []string
	for _, d := range dirs {
		paths = append(paths, filepath.Join(conformanceDir, d))
	}
	files, err := conformance.FindCases(paths...)
	if err != nil {
		t.Skipf("conformance cases not found: %v", err)
	}
	n := 0
	for _, f := range files {
		c, err := conformance.LoadCase(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(c.HLO, marker) {
			continue
		}
		n++
		fired := false
		r := conformance.Runner{Backend: evaluator{}, Prepare: func(m *hlo.Module) error {
			pl := &pass.Pipeline{Label: "test", Passes: []pass.Pass{p}}
			changed, err := pl.RunWith(m, pass.Options{Verify: true, CheckUnchanged: true})
			fired = changed
			return err
		}}
		if err := r.RunCase(c); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		if !fired {
			t.Errorf("%s: %s did not fire", c.Name, p.Name())
		}
	}
	return n
}

type evaluator struct{}

func (evaluator) Name() string { return "evaluator" }
func (evaluator) Run(m *hlo.Module, args []*hlo.Literal) (*hlo.Literal, error) {
	return eval.Run(m, args...)
}

// The shared map cases, inlined, still give their expected values.
func TestMapInlinerConformance(t *testing.T) {
	if n := runConformance(t, opt.MapInliner, " map(", "cases/map", "xla-tests"); n < 4 {
		t.Errorf("ran %d map cases, want at least 4", n)
	}
}

// Inlined bodies compute exactly what the per-element calls computed.
func TestMapInlinerSameValues(t *testing.T) {
	text := hloModule(`
f {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  e = f32[] exponential(x)
  t = f32[] tanh(y)
  d = f32[] divide(e, t)
  half = f32[] constant(0.5)
  ROOT r = f32[] power(d, half)
}
g {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  two = s32[] constant(2)
  s = s32[] shift-left(a, two)
  ROOT x = s32[] xor(s, b)
}
ENTRY e {
  p = f32[5,7]{0,1} parameter(0)
  q = f32[5,7] parameter(1)
  i = s32[5,7] parameter(2)
  j = s32[5,7] parameter(3)
  m1 = f32[5,7] map(p, q), dimensions={0,1}, to_apply=f
  m2 = s32[5,7] map(i, j), dimensions={0,1}, to_apply=g
  ROOT t = (f32[5,7], s32[5,7]) tuple(m1, m2)
}`)
	for seed := uint64(1); seed <= 3; seed++ {
		if !checkSameValues(t, opt.MapInliner, text, seed, conformance.Tolerance{}) {
			t.Fatal("map-inliner did not fire")
		}
	}
}

// In the standard pipeline a call in a map body is inlined first, so the
// map itself can be.
func TestStandardPipelineInlinesMapThroughCall(t *testing.T) {
	m, err := hlotext.Parse(hloModule(`
neg {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
f {
  x = f32[] parameter(0)
  c = f32[] call(x), to_apply=neg
  ROOT e = f32[] exponential(c)
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT map = f32[4] map(p), dimensions={0}, to_apply=f
}`), hlotext.Options{File: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := opt.Standard().RunWith(m, pass.Options{Verify: true, CheckUnchanged: true}); err != nil {
		t.Fatal(err)
	}
	got := hlotext.Print(m, hlotext.Short)
	if strings.Contains(got, " map(") || !strings.Contains(got, "f32[4]{0} exponential(") {
		t.Errorf("the map was not inlined:\n%s", got)
	}
}
