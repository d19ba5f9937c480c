package axle_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

func newClient(t testing.TB, backend string) *axle.Client {
	t.Helper()
	c, err := axle.NewClient(axle.ClientOptions{Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func compile(t testing.TB, c *axle.Client, text string) *axle.Executable {
	t.Helper()
	x, err := c.CompileText(text, axle.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func buffer(t testing.TB, c *axle.Client, data []float32, dims ...int64) *axle.Buffer {
	t.Helper()
	b, err := axle.BufferFromSlice(c, data, dims...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func floats(t testing.TB, b *axle.Buffer) []float32 {
	t.Helper()
	v, err := axle.ToSlice[float32](b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// modules the evaluator checks the backends on: elementwise with a
// broadcast, a dot, a reduction and a tuple of two results.
var evalModules = map[string]string{
	"scale": `HloModule scale
ENTRY main {
  x = f32[2,3] parameter(0)
  s = f32[] parameter(1)
  b = f32[2,3] broadcast(s), dimensions={}
  m = f32[2,3] multiply(x, b)
  ROOT t = f32[2,3] tanh(m)
}`,
	"dot": `HloModule dot
ENTRY main {
  a = f32[4,3] parameter(0)
  b = f32[3,5] parameter(1)
  ROOT d = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`,
	"reduce": `HloModule reduce
add {
  l = f32[] parameter(0)
  r = f32[] parameter(1)
  ROOT s = f32[] add(l, r)
}
ENTRY main {
  x = f32[8,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(x, z), dimensions={1}, to_apply=add
}`,
	"tuple": `HloModule tuple
ENTRY main {
  x = f32[5] parameter(0)
  y = f32[5] parameter(1)
  s = f32[5] subtract(x, y)
  e = f32[5] exponential(x)
  ROOT t = (f32[5], f32[5]) tuple(s, e)
}`,
}

// TestMatchesEvaluator: both backends, through buffers, give what the
// evaluator gives on the same seeded arguments.
func TestMatchesEvaluator(t *testing.T) {
	for _, backend := range []string{"cpu", "interp"} {
		c := newClient(t, backend)
		for name, text := range evalModules {
			m, err := hlotext.Parse(text, hlotext.Options{})
			if err != nil {
				t.Fatal(err)
			}
			args := eval.RandomArguments(m, 7)
			want, err := eval.Run(m, args...)
			if err != nil {
				t.Fatal(err)
			}
			got := executeLiterals(t, c, m, args)
			if err := conformance.Compare(got, want, conformance.Tolerance{Atol: 1e-5, Rtol: 1e-5}); err != nil {
				t.Errorf("%s on %s: %v", name, backend, err)
			}
		}
	}
}

// executeLiterals runs m through buffers and returns the result retupled.
func executeLiterals(t *testing.T, c *axle.Client, m *hlo.Module, args []*hlo.Literal) *hlo.Literal {
	t.Helper()
	x, err := c.Compile(m, axle.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bufs := make([]*axle.Buffer, len(args))
	for i, a := range args {
		if bufs[i], err = c.BufferFromLiteral(a); err != nil {
			t.Fatal(err)
		}
	}
	outs, err := x.Execute(bufs...)
	if err != nil {
		t.Fatal(err)
	}
	lits := make([]*hlo.Literal, len(outs))
	for i, o := range outs {
		if lits[i], err = o.ToLiteral(); err != nil {
			t.Fatal(err)
		}
		o.Release()
	}
	if m.Entry.ResultShape().IsTuple() {
		return hlo.MakeTupleLiteral(lits...)
	}
	return lits[0]
}

// TestTupleResult: a tuple result comes back as one buffer per element.
func TestTupleResult(t *testing.T) {
	const text = `HloModule t
ENTRY main {
  p = f32[2] parameter(0)
  q = f32[2] parameter(1)
  s = f32[2] add(p, q)
  m = f32[2] multiply(p, q)
  ROOT t = (f32[2], f32[2]) tuple(s, m)
}`
	for _, backend := range []string{"cpu", "interp"} {
		c := newClient(t, backend)
		x := compile(t, c, text)
		outs, err := x.Execute(buffer(t, c, []float32{1, 2}), buffer(t, c, []float32{3, -4}))
		if err != nil {
			t.Fatal(err)
		}
		if len(outs) != 2 {
			t.Fatalf("%s: %d outputs, want 2", backend, len(outs))
		}
		if s, m := floats(t, outs[0]), floats(t, outs[1]); fmt.Sprint(s, m) != "[4 -2] [3 -8]" {
			t.Errorf("%s: outputs %v %v, want [4 -2] [3 -8]", backend, s, m)
		}
		if got := outs[1].Shape().HumanString(); got != "f32[2]" || outs[1].DType() != hlo.F32 {
			t.Errorf("%s: output shape %s", backend, got)
		}
	}
}

// TestAliasedResults: results that are arguments, or the same value twice,
// stay correct after their buffers are released and the executable runs
// again (releasing must not recycle storage another buffer shows).
func TestAliasedResults(t *testing.T) {
	const text = `HloModule alias
ENTRY main {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(p, n, n, p)
}`
	c := newClient(t, "cpu")
	x := compile(t, c, text)
	in := buffer(t, c, []float32{1, 2, 3, 4})
	for range 3 {
		outs, err := x.Execute(in)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(floats(t, outs[0]), floats(t, outs[1]), floats(t, outs[2]), floats(t, outs[3]))
		if want := "[1 2 3 4] [-1 -2 -3 -4] [-1 -2 -3 -4] [1 2 3 4]"; got != want {
			t.Fatalf("outputs %s, want %s", got, want)
		}
		outs[0].Release()
		outs[1].Release()
		if v := floats(t, outs[2]); fmt.Sprint(v) != "[-1 -2 -3 -4]" {
			t.Fatalf("after releasing its twin, output 2 is %v", v)
		}
		outs[2].Release()
		outs[3].Release()
	}
	if v := floats(t, in); fmt.Sprint(v) != "[1 2 3 4]" {
		t.Errorf("argument changed to %v", v)
	}
}

const twoParams = `HloModule two
ENTRY main {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  ROOT s = f32[2] add(x, y)
}`

// TestArgumentErrors: every bad argument is an error naming the parameter.
func TestArgumentErrors(t *testing.T) {
	c := newClient(t, "cpu")
	other := newClient(t, "cpu")
	x := compile(t, c, twoParams)
	good := buffer(t, c, []float32{1, 2})
	long := buffer(t, c, []float32{1, 2, 3})
	ints, _ := axle.BufferFromSlice(c, []int32{1, 2})
	foreign := buffer(t, other, []float32{1, 2})
	released := buffer(t, c, []float32{1, 2})
	released.Release()
	cases := []struct {
		args []*axle.Buffer
		want string
	}{
		{[]*axle.Buffer{good}, "axle: main expects 2 arguments (x, y), got 1"},
		{[]*axle.Buffer{good, good, good}, "axle: main expects 2 arguments (x, y), got 3"},
		{[]*axle.Buffer{good, long}, "axle: argument 1 (parameter y): f32[3] does not match the parameter's f32[2]"},
		{[]*axle.Buffer{ints, good}, "axle: argument 0 (parameter x): s32[2] does not match the parameter's f32[2]"},
		{[]*axle.Buffer{good, nil}, "axle: argument 1 (parameter y) is nil"},
		{[]*axle.Buffer{foreign, good}, "axle: argument 0 (parameter x) is a buffer of another client"},
		{[]*axle.Buffer{good, released}, "axle: argument 1 (parameter y): buffer was released"},
	}
	for _, tc := range cases {
		_, err := x.Execute(tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("got error %v, want %q", err, tc.want)
		}
	}
	if _, err := x.Execute(good, released); !errors.Is(err, axle.ErrReleased) {
		t.Errorf("released argument: %v is not ErrReleased", err)
	}
	if _, err := x.ExecuteWith(axle.ExecuteOptions{Donate: []int{2}}, good, good); err == nil || !strings.Contains(err.Error(), "donated argument 2 out of range") {
		t.Errorf("donating a missing argument: %v", err)
	}
	// A failed call leaves its good arguments usable.
	if v := floats(t, good); fmt.Sprint(v) != "[1 2]" {
		t.Errorf("good argument reads %v", v)
	}
}

// TestLiteralArgumentErrors: ExecuteLiterals checks as Execute does.
func TestLiteralArgumentErrors(t *testing.T) {
	x := compile(t, newClient(t, "interp"), twoParams)
	a, _ := hlo.LiteralFromSlice([]float32{1, 2})
	b, _ := hlo.LiteralFromSlice([]float32{1, 2, 3})
	_, err := x.ExecuteLiterals(a, b)
	if want := "axle: argument 1 (parameter y): f32[3] does not match the parameter's f32[2]"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	elided := hlo.NewElidedLiteral(hlo.ArrayShape(hlo.F32, 2))
	if _, err := x.ExecuteLiterals(a, elided); err == nil || !strings.HasPrefix(err.Error(), "axle: argument 1 (parameter y): literal of shape f32[2] is elided") {
		t.Errorf("elided argument: %v", err)
	}
	outs, err := x.ExecuteLiterals(a, a)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := hlo.LiteralToSlice[float32](outs[0]); fmt.Sprint(v) != "[2 4]" {
		t.Errorf("result %v, want [2 4]", v)
	}
}

// TestDonation: a donated buffer is unusable after the call; donating a
// buffer that is also passed undonated fails and takes nothing.
func TestDonation(t *testing.T) {
	c := newClient(t, "cpu")
	x := compile(t, c, twoParams)
	a := buffer(t, c, []float32{1, 2})
	b := buffer(t, c, []float32{10, 20})
	_, err := x.ExecuteWith(axle.ExecuteOptions{Donate: []int{0}}, a, a)
	if want := "axle: argument 0 (parameter x): buffer is in use and cannot be donated"; err == nil || err.Error() != want {
		t.Fatalf("donating a repeated argument: %v, want %q", err, want)
	}
	if v := floats(t, a); fmt.Sprint(v) != "[1 2]" {
		t.Fatalf("after the failed call a reads %v", v)
	}
	outs, err := x.ExecuteWith(axle.ExecuteOptions{Donate: []int{0, 1}}, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if v := floats(t, outs[0]); fmt.Sprint(v) != "[11 22]" {
		t.Errorf("sum %v, want [11 22]", v)
	}
	for _, d := range []*axle.Buffer{a, b} {
		if _, err := d.ToLiteral(); !errors.Is(err, axle.ErrDonated) || !d.IsReleased() {
			t.Errorf("donated buffer: %v", err)
		}
		d.Release() // does nothing
	}
	if _, err := x.Execute(outs[0], b); err == nil || !strings.Contains(err.Error(), "argument 1 (parameter y): buffer was donated") {
		t.Errorf("reusing a donated buffer: %v", err)
	}
}

// TestRelease: a released buffer refuses reads and executions; releasing
// twice does nothing; outputs released each iteration keep later
// outputs right.
func TestRelease(t *testing.T) {
	c := newClient(t, "cpu")
	x := compile(t, c, twoParams)
	a := buffer(t, c, []float32{1, 2})
	for i := range 5 {
		outs, err := x.Execute(a, a)
		if err != nil {
			t.Fatal(err)
		}
		if v := floats(t, outs[0]); fmt.Sprint(v) != "[2 4]" {
			t.Fatalf("run %d: %v", i, v)
		}
		outs[0].Release()
		outs[0].Release()
		if _, err := axle.ToSlice[float32](outs[0]); err == nil || err.Error() != "axle: buffer was released" {
			t.Fatalf("reading a released buffer: %v", err)
		}
		if got := outs[0].Shape().HumanString(); got != "f32[2]" {
			t.Errorf("released buffer's shape %s", got)
		}
	}
	if _, err := axle.ToSlice[int32](a); err == nil {
		t.Error("ToSlice[int32] of an f32 buffer did not fail")
	}
}

// TestConcurrentExecute: 16 goroutines run one executable at once on
// their own arguments, releasing the outputs as they go.
func TestConcurrentExecute(t *testing.T) {
	const text = `HloModule fma
ENTRY main {
  x = f32[1024] parameter(0)
  y = f32[1024] parameter(1)
  m = f32[1024] multiply(x, y)
  ROOT t = (f32[1024], f32[1024]) tuple(m, x)
}`
	for _, backend := range []string{"cpu", "interp"} {
		c := newClient(t, backend)
		x := compile(t, c, text)
		shared := buffer(t, c, fill(1024, func(i int) float32 { return 2 }))
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for g := range 16 {
			wg.Go(func() {
				errs <- worker(c, x, shared, g)
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("%s: %v", backend, err)
			}
		}
	}
}

func worker(c *axle.Client, x *axle.Executable, shared *axle.Buffer, g int) error {
	for it := range 20 {
		v := float32(g*100 + it)
		in, err := axle.BufferFromSlice(c, fill(1024, func(i int) float32 { return v + float32(i) }))
		if err != nil {
			return err
		}
		outs, err := x.Execute(in, shared)
		if err != nil {
			return err
		}
		prod, _ := axle.ToSlice[float32](outs[0])
		same, _ := axle.ToSlice[float32](outs[1])
		for i := range prod {
			if want := 2 * (v + float32(i)); prod[i] != want || same[i] != v+float32(i) {
				return fmt.Errorf("goroutine %d run %d element %d: %v, %v; want %v, %v", g, it, i, prod[i], same[i], want, v+float32(i))
			}
		}
		outs[0].Release()
		outs[1].Release()
		in.Release()
	}
	return nil
}

func fill(n int, f func(int) float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = f(i)
	}
	return s
}

// TestCache: the same module text (a new parse of it) hits; other text,
// other parameter names or other options miss; failures are not cached.
func TestCache(t *testing.T) {
	c := newClient(t, "cpu")
	x1 := compile(t, c, twoParams)
	m, _ := hlotext.Parse(twoParams, hlotext.Options{})
	x2, err := c.Compile(m, axle.CompileOptions{})
	if err != nil || x2 != x1 {
		t.Fatalf("recompiling the same text: %v, same executable %v", err, x2 == x1)
	}
	renamed := strings.ReplaceAll(twoParams, "y", "w")
	if x3 := compile(t, c, renamed); x3 == x1 {
		t.Error("renamed parameter: cache hit gives an executable naming the old parameter")
	}
	if _, err := c.CompileText("HloModule bad\nENTRY main {\n  ROOT x = f32[2] parameter(0)\n  junk\n}", axle.CompileOptions{}); err == nil {
		t.Error("bad text compiled")
	}
	if got := c.CacheStats(); got.Hits != 1 || got.Misses != 2 || got.Entries != 2 {
		t.Errorf("stats %+v, want 1 hit, 2 misses, 2 entries", got)
	}
}

// Modules differing only in one element of a large constant (hashed as
// bytes, not printed) are different cache entries.
func TestCacheLargeConstants(t *testing.T) {
	c := newClient(t, "cpu")
	const text = `HloModule k
ENTRY main {
  x = f32[12] parameter(0)
  k = f32[12] constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, %s})
  ROOT y = f32[12] add(x, k)
}`
	a := compile(t, c, fmt.Sprintf(text, "12"))
	b := compile(t, c, fmt.Sprintf(text, "13"))
	if a == b {
		t.Fatal("modules with different constants share an executable")
	}
	if again := compile(t, c, fmt.Sprintf(text, "12")); again != a {
		t.Fatal("the same module compiled twice")
	}
}

// TestConcurrentCompile: many goroutines compiling one module compile it
// once and share the executable.
func TestConcurrentCompile(t *testing.T) {
	c := newClient(t, "cpu")
	xs := make([]*axle.Executable, 16)
	var wg sync.WaitGroup
	for i := range xs {
		wg.Go(func() { xs[i], _ = c.CompileText(evalModules["dot"], axle.CompileOptions{}) })
	}
	wg.Wait()
	for _, x := range xs {
		if x == nil || x != xs[0] {
			t.Fatal("goroutines got different executables")
		}
	}
	if got := c.CacheStats(); got.Misses != 1 || got.Hits != 15 {
		t.Errorf("stats %+v, want 1 miss, 15 hits", got)
	}
}

// TestCacheEviction: a cache of two keeps the two most recently used.
func TestCacheEviction(t *testing.T) {
	c, err := axle.NewClient(axle.ClientOptions{CacheSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	compile(t, c, evalModules["scale"])
	compile(t, c, evalModules["dot"])
	compile(t, c, evalModules["scale"]) // hit; dot is now the oldest
	compile(t, c, evalModules["reduce"])
	compile(t, c, evalModules["dot"]) // evicted: miss
	if got := c.CacheStats(); got.Hits != 1 || got.Misses != 4 || got.Entries != 2 {
		t.Errorf("stats %+v, want 1 hit, 4 misses, 2 entries", got)
	}
}

// TestClient: backends, devices and bad options.
func TestClient(t *testing.T) {
	if _, err := axle.NewClient(axle.ClientOptions{Backend: "gpu"}); err == nil || !strings.Contains(err.Error(), `unknown backend "gpu"`) {
		t.Errorf("unknown backend: %v", err)
	}
	c, err := axle.NewClient(axle.ClientOptions{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	d := c.Devices()
	if c.Platform() != "cpu" || len(d) != 1 || d[0].Threads != 3 || d[0].String() != "cpu:0" {
		t.Errorf("platform %s devices %v", c.Platform(), d)
	}
	if p := newClient(t, "interp").Platform(); p != "interp" {
		t.Errorf("interp client's platform %q", p)
	}
	if _, err := c.Compile(nil, axle.CompileOptions{}); err == nil {
		t.Error("nil module compiled")
	}
	if _, err := c.BufferFromLiteral(hlo.NewElidedLiteral(hlo.ArrayShape(hlo.F32, 2))); err == nil {
		t.Error("elided literal became a buffer")
	}
	if _, err := axle.BufferFromSlice(c, []float32{1, 2, 3}, 2, 2); err == nil {
		t.Error("3 values for a 2x2 buffer")
	}
}

// TestAccessors: what the cpu backend reports passes through; the
// evaluator has none of it.
func TestAccessors(t *testing.T) {
	c := newClient(t, "cpu")
	x, err := c.CompileText(evalModules["dot"], axle.CompileOptions{Profile: true})
	if err != nil {
		t.Fatal(err)
	}
	if x.Lowering()["gemm"] != 1 {
		t.Errorf("lowering %v, want one gemm", x.Lowering())
	}
	a := buffer(t, c, fill(12, func(i int) float32 { return 1 }), 4, 3)
	b := buffer(t, c, fill(15, func(i int) float32 { return 1 }), 3, 5)
	outs, err := x.Execute(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if v := floats(t, outs[0]); len(v) != 20 || v[0] != 3 || v[19] != 3 {
		t.Errorf("ones(4,3)·ones(3,5) = %v, want all 3", v)
	}
	if len(x.Profile()) == 0 || !strings.Contains(x.ProfileTable(5), "gemm") {
		t.Errorf("profile table lacks the gemm:\n%s", x.ProfileTable(5))
	}
	if x.Module() == nil || len(x.ParameterShapes()) != 2 || x.Client() != c {
		t.Error("module, parameter shapes or client missing")
	}
	y := compile(t, newClient(t, "interp"), evalModules["dot"])
	if y.Lowering() != nil || y.Profile() != nil || y.Memory() != (axle.MemoryStats{}) {
		t.Error("the interp backend reports lowering, profile or memory")
	}
}

// TestModuleRunner: the conformance runner's adapter retuples results.
func TestModuleRunner(t *testing.T) {
	m, _ := hlotext.Parse(evalModules["tuple"], hlotext.Options{})
	args := eval.RandomArguments(m, 3)
	want, _ := eval.Run(m, args...)
	r := &axle.ModuleRunner{Client: newClient(t, "cpu")}
	got, err := r.Run(m, args)
	if err != nil {
		t.Fatal(err)
	}
	if err := conformance.Compare(got, want, conformance.Tolerance{Atol: 1e-5, Rtol: 1e-5}); err != nil || r.Name() != "cpu" {
		t.Errorf("%s: %v", r.Name(), err)
	}
}

// TestReleaseWhileInUse: releasing an output that running executions are
// reading recycles it only when the last of them ends: every execution
// either sees its value or fails with ErrReleased, never a reused buffer.
func TestReleaseWhileInUse(t *testing.T) {
	c := newClient(t, "cpu")
	x := compile(t, c, twoParams)
	a := buffer(t, c, []float32{1, 2})
	outs, err := x.Execute(a, a)
	if err != nil {
		t.Fatal(err)
	}
	shared := outs[0] // [2 4], storage from the executable's pool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 50 {
				outs, err := x.Execute(shared, a)
				if errors.Is(err, axle.ErrReleased) {
					errs <- nil
					return
				}
				if err != nil {
					errs <- err
					return
				}
				v, _ := axle.ToSlice[float32](outs[0])
				outs[0].Release()
				if fmt.Sprint(v) != "[3 6]" {
					errs <- fmt.Errorf("[2 4]+[1 2] = %v", v)
					return
				}
			}
			errs <- nil
		})
	}
	shared.Release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// A released slice buffer's storage serves the next buffer of its shape,
// with the new contents; a buffer still in use is never handed out.
func TestHostStorageReused(t *testing.T) {
	c, err := axle.NewClient(axle.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := axle.BufferFromSlice(c, []float32{1, 2, 3, 4}, 2, 2)
	held, _ := axle.BufferFromSlice(c, []float32{9, 9, 9, 9}, 2, 2)
	a.Release()
	b, _ := axle.BufferFromSlice(c, []float32{5, 6, 7, 8}, 2, 2)
	other, _ := axle.BufferFromSlice(c, []float32{0, 0, 0, 0}, 4) // another shape: fresh
	for _, tc := range []struct {
		buf  *axle.Buffer
		want []float32
	}{{b, []float32{5, 6, 7, 8}}, {held, []float32{9, 9, 9, 9}}, {other, []float32{0, 0, 0, 0}}} {
		got, err := axle.ToSlice[float32](tc.buf)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Fatalf("got %v (%v), want %v", got, err, tc.want)
		}
	}
	if _, err := axle.ToSlice[float32](a); !errors.Is(err, axle.ErrReleased) {
		t.Fatalf("the released buffer reads: %v", err)
	}
	// In a loop the 64 KiB of storage are reused, not allocated again.
	data := make([]float32, 16384)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		buf, _ := axle.BufferFromSlice(c, data, 128, 128)
		buf.Release()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 100; per > 4096 && !raceEnabled {
		t.Errorf("BufferFromSlice+Release allocates %d bytes per call; the 64 KiB of storage should be reused", per)
	}
}

// A step whose donated state cannot all be overwritten in place (both
// new values read both old ones) gives the untaken storage back: a loop
// of such steps, like a training loop, allocates no new state per step.
func TestUntakenDonationRecycled(t *testing.T) {
	c := newClient(t, "cpu")
	x := compile(t, c, `HloModule step
ENTRY main {
  m = f32[4096] parameter(0)
  v = f32[4096] parameter(1)
  s = f32[4096] add(m, v)
  p = f32[4096] multiply(m, v)
  ROOT t = (f32[4096], f32[4096]) tuple(s, p)
}`)
	ones := make([]float32, 4096)
	for i := range ones {
		ones[i] = 1
	}
	state := []*axle.Buffer{buffer(t, c, ones, 4096), buffer(t, c, ones, 4096)}
	step := func() {
		outs, err := x.ExecuteWith(axle.ExecuteOptions{Donate: []int{0, 1}}, state...)
		if err != nil {
			t.Fatal(err)
		}
		state = outs
	}
	for range 3 {
		step()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		step()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 100; per > 4096 && !raceEnabled {
		t.Errorf("a donated step allocates %d bytes per call; the 16 KiB state buffers should be reused", per)
	}
	// (m, v) = (1, 1), (2, 1), (3, 2), (5, 6), ...: check the values stayed right.
	m, v := float32(1), float32(1)
	for range 103 {
		m, v = m+v, m*v
	}
	if got := floats(t, state[0]); got[0] != m || got[4095] != m {
		t.Errorf("m = %v…%v, want %v", got[0], got[4095], m)
	}
	if got := floats(t, state[1]); got[0] != v {
		t.Errorf("v = %v, want %v", got[0], v)
	}
}
