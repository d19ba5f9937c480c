package aot_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/axle-ml/axle/aot"
	"github.com/axle-ml/axle/aot/gen"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// A dense layer with a softmax (a dot with an epilogue, a row program)
// and a while loop (a computation the plan's entry calls).
const layer = `HloModule layer
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
cond {
  s = (s32[], f32[8,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8,16] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  h = f32[] constant(0.5)
  hb = f32[8,16] broadcast(h), dimensions={}
  y = f32[8,16] multiply(x, hb)
  ROOT t = (s32[], f32[8,16]) tuple(j, y)
}
ENTRY e {
  x = f32[8,32] parameter(0)
  w = f32[32,16] parameter(1)
  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ninf = f32[] constant(-inf)
  mx = f32[8] reduce(d, ninf), dimensions={1}, to_apply=max
  mb = f32[8,16] broadcast(mx), dimensions={0}
  sh = f32[8,16] subtract(d, mb)
  ex = f32[8,16] exponential(sh)
  z = f32[] constant(0)
  sm = f32[8] reduce(ex, z), dimensions={1}, to_apply=add
  sb = f32[8,16] broadcast(sm), dimensions={0}
  p = f32[8,16] divide(ex, sb)
  zero = s32[] constant(0)
  t0 = (s32[], f32[8,16]) tuple(zero, p)
  w0 = (s32[], f32[8,16]) while(t0), condition=cond, body=body
  r = f32[8,16] get-tuple-element(w0), index=1
  ROOT out = (f32[8,16], f32[8]) tuple(r, sm)
}`

// plan generates layer's package into a temporary folder and returns
// its plan file's contents (the generator loads it back first).
func plan(t testing.TB) []byte {
	t.Helper()
	m, err := hlotext.Parse(layer, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r, err := gen.Generate(m, gen.Options{Package: "layer", Dir: dir, ImportPath: "example.com/layer"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Files {
		if strings.HasSuffix(f, ".axleplan") {
			return readFile(t, f)
		}
	}
	t.Fatal("no plan file written")
	return nil
}

// TestRunMatchesEvaluator: the loaded plan computes what the evaluator
// computes from the original module (within the kernels' f32 rounding:
// the GEMM and exp differ from the evaluator's float64 in the last bits).
func TestRunMatchesEvaluator(t *testing.T) {
	p, err := aot.Load(plan(t), aot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := hlotext.Parse(layer, hlotext.Options{})
	args := eval.RandomArguments(m, 5)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Run(context.Background(), args...)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(p.Results()) != 2 || len(p.Params()) != 2 || p.Params()[1].Name != "w" {
		t.Fatalf("results %d, shapes %v, params %v", len(got), p.Results(), p.Params())
	}
	for k, w := range want.Elements() {
		for i := range w.Len() {
			if g, e := got[k].GetFloat64(i), w.GetFloat64(i); g-e > 1e-5 || e-g > 1e-5 {
				t.Fatalf("result %d element %d: %v, evaluator %v", k, i, g, e)
			}
		}
	}
}

// TestBadPlans: what is not a plan, or a damaged one, is an error.
func TestBadPlans(t *testing.T) {
	good := plan(t)
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"empty", nil}, {"text", []byte("HloModule m")}, {"truncated", good[:len(good)/2]},
		{"trailing", append(append([]byte(nil), good...), 0)},
	} {
		if _, err := aot.Load(c.data, aot.Options{}); err == nil {
			t.Errorf("%s: loaded", c.name)
		}
	}
}

// TestArgumentsChecked: a wrong argument is an error naming the
// parameter, and the program still runs right afterwards.
func TestArgumentsChecked(t *testing.T) {
	p, err := aot.Load(plan(t), aot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 8, 32))
	bad := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 16, 32))
	if _, err := p.Run(context.Background(), x, bad); err == nil || !strings.Contains(err.Error(), "parameter w") {
		t.Errorf("wrong shape: %v", err)
	}
	if _, err := p.Run(context.Background(), x); err == nil {
		t.Error("one argument of two: no error")
	}
	if _, err := aot.Arg(p, 0, []float64{1}); err == nil || !strings.Contains(err.Error(), "parameter 0 (x") {
		t.Errorf("wrong type: %v", err)
	}
	w := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 32, 16))
	if _, err := p.Run(context.Background(), x, w); err != nil {
		t.Errorf("after bad calls: %v", err)
	}
}

// TestCancelled: a done context stops the run with its error.
func TestCancelled(t *testing.T) {
	p, err := aot.Load(plan(t), aot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 8, 32))
	w := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 32, 16))
	if _, err := p.Run(ctx, x, w); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestConcurrentRuns: many goroutines share one program; each gets its
// own arguments' results, and donated arguments give the same ones.
func TestConcurrentRuns(t *testing.T) {
	p, err := aot.Load(plan(t), aot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := hlotext.Parse(layer, hlotext.Options{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := eval.RandomArguments(m, uint64(g))
			want, err := p.Run(context.Background(), args...)
			if err != nil {
				t.Error(err)
				return
			}
			for range 20 {
				own := []*hlo.Literal{args[0].Clone(), args[1].Clone()}
				got, err := p.RunDonated(context.Background(), own, []bool{true, true})
				if err != nil || !got[0].Equal(want[0]) || !got[1].Equal(want[1]) {
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// FuzzLoad: no input makes loading panic.
func FuzzLoad(f *testing.F) {
	good := plan(f)
	f.Add(good)
	f.Add(good[:len(good)-9])
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := aot.Load(data, aot.Options{Threads: 1})
		if err == nil {
			x := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 8, 32))
			p.Run(context.Background(), x)
		}
	})
}

// TestOtherVersion: a plan of another format version is refused saying
// so, not misread.
func TestOtherVersion(t *testing.T) {
	good := plan(t)
	old := append([]byte("AXLEAOT1"), good[8:]...)
	if _, err := aot.Load(old, aot.Options{}); err == nil || !strings.Contains(err.Error(), "regenerate") {
		t.Errorf("format 1: %v", err)
	}
}

// TestEvaluatorOnlyRefused: a module with an instruction only the
// evaluator runs (a LAPACK custom call, as JAX's CPU lowering writes)
// cannot become a package, which links no evaluator: the generator says
// so, naming it, instead of writing a plan that fails in a user's binary.
func TestEvaluatorOnlyRefused(t *testing.T) {
	m, err := hlotext.Parse(`HloModule lu
ENTRY main {
  a = f32[2,2]{0,1} parameter(0)
  lu = (f32[2,2]{0,1}, s32[2]{0}, s32[]) custom-call(a), custom_call_target="lapack_sgetrf_ffi", operand_layout_constraints={f32[2,2]{0,1}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={}
  ROOT f = f32[2,2]{0,1} get-tuple-element(lu), index=0
}`, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = gen.Generate(m, gen.Options{Package: "lu", Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "custom-call") {
		t.Errorf("evaluator-only module: %v", err)
	}
}
