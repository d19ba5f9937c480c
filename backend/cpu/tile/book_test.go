package tile

import (
	"fmt"
	"math"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// bookFusions are fusions of each kind of program with generated code:
// a loop fusion whole (reading an operand through a transpose, in place
// through its displaced slices, with exp and tanh, which are wide where
// the machine has AVX-512), its result stored as integers, a row program
// in segments (softmax, its sums folded), a reduction's body, and a
// multi-output fusion.
var bookFusions = map[string]string{
	"transpose": `
fused {
  p0 = f32[64,48] parameter(0)
  p1 = f32[48,64] parameter(1)
  bt = f32[64,48] transpose(p1), dimensions={1,0}
  s = f32[64,48] add(p0, bt)
  ROOT m = f32[64,48] multiply(s, p0)
}
ENTRY e {
  a = f32[64,48] parameter(0)
  b = f32[48,64] parameter(1)
  ROOT f = f32[64,48] fusion(a, b), kind=kLoop, calls=fused
}`,
	"gelu": `
fused {
  x = f32[3000] parameter(0)
  c = f32[] parameter(1)
  cb = f32[3000] broadcast(c), dimensions={}
  y = f32[3000] multiply(x, cb)
  t = f32[3000] tanh(y)
  e = f32[3000] exponential(x)
  ROOT r = f32[3000] add(t, e)
}
ENTRY e {
  a = f32[3000] parameter(0)
  c = f32[] parameter(1)
  ROOT f = f32[3000] fusion(a, c), kind=kLoop, calls=fused
}`,
	"gates": `
fused {
  x = f32[8,256] parameter(0)
  g0 = f32[8,64] slice(x), slice={[0:8], [0:64]}
  g1 = f32[8,64] slice(x), slice={[0:8], [64:128]}
  g2 = f32[8,64] slice(x), slice={[0:8], [128:192]}
  s = f32[8,64] logistic(g0)
  t = f32[8,64] tanh(g1)
  m = f32[8,64] multiply(s, t)
  ROOT r = f32[8,64] add(m, g2)
}
ENTRY e {
  a = f32[8,256] parameter(0)
  ROOT f = f32[8,64] fusion(a), kind=kLoop, calls=fused
}`,
	"quantize": `
fused {
  x = f32[1000] parameter(0)
  k = f32[] constant(40)
  kb = f32[1000] broadcast(k), dimensions={}
  y = f32[1000] multiply(x, kb)
  r = f32[1000] round-nearest-even(y)
  ROOT q = s8[1000] convert(r)
}
ENTRY e {
  a = f32[1000] parameter(0)
  ROOT f = s8[1000] fusion(a), kind=kLoop, calls=fused
}`,
	"softmax": `
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(y, x)
}
fused {
  a = f32[16,1000] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[16] reduce(a, ninf), dimensions={1}, to_apply=max
  mb = f32[16,1000] broadcast(m), dimensions={0}
  d = f32[16,1000] subtract(a, mb)
  e = f32[16,1000] exponential(d)
  zero = f32[] constant(0)
  s = f32[16] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[16,1000] broadcast(s), dimensions={0}
  ROOT p = f32[16,1000] divide(e, sb)
}
ENTRY e {
  a = f32[16,1000] parameter(0)
  ROOT f = f32[16,1000] fusion(a), kind=kLoop, calls=fused
}`,
	"sum-of-squares": `
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  a = f32[12,700] parameter(0)
  b = f32[12,700] parameter(1)
  d = f32[12,700] subtract(a, b)
  q = f32[12,700] multiply(d, d)
  l = f32[12,700] logistic(q)
  zero = f32[] constant(0)
  ROOT s = f32[12] reduce(l, zero), dimensions={1}, to_apply=add
}
ENTRY e {
  a = f32[12,700] parameter(0)
  b = f32[12,700] parameter(1)
  ROOT f = f32[12] fusion(a, b), kind=kLoop, calls=fused
}`,
	"two-outputs": `
fused {
  x = f32[2000] parameter(0)
  y = f32[2000] parameter(1)
  s = f32[2000] add(x, y)
  e = f32[2000] exponential(s)
  m = f32[2000] multiply(e, y)
  ROOT t = (f32[2000], f32[2000]) tuple(e, m)
}
ENTRY e {
  a = f32[2000] parameter(0)
  b = f32[2000] parameter(1)
  ROOT f = (f32[2000], f32[2000]) fusion(a, b), kind=kLoop, calls=fused
}`,
}

// bookRun is a fusion compiled and run: what code its program got and
// what it computed.
type bookRun struct {
	code string
	outs []*hlo.Literal
}

// codeOf describes the generated code a program has.
func codeOf(p *Prog) string {
	return fmt.Sprintf("whole %v, %d segments, piped %v", p.jit != nil, len(p.segs), p.pipe != nil)
}

// runFusion compiles the fusion of module text as the backend's lowering
// does (Loop, Reduce or Multi) and runs it on two threads.
func runFusion(t *testing.T, name, text string) bookRun {
	t.Helper()
	m, err := hlotext.Parse("HloModule "+name+"\n"+text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := m.Entry.Root
	args := eval.RandomArguments(m, 7)
	var r bookRun
	switch root.Computation("calls").Root.Opcode {
	case hlo.OpReduce:
		var p *ReduceProg
		if p, err = Reduce(root); err == nil {
			r.code, r.outs = codeOf(p.Body()), []*hlo.Literal{hlo.NewLiteral(root.Shape)}
			err = p.Run(args, r.outs[0], 2)
		}
	case hlo.OpTuple:
		var p *Prog
		if p, err = Multi(root); err == nil {
			r.code = codeOf(p)
			for _, s := range root.Shape.Tuple {
				r.outs = append(r.outs, hlo.NewLiteral(s))
			}
			err = p.RunMulti(args, r.outs, 2)
		}
	default:
		var p *Prog
		if p, err = Loop(root); err == nil {
			r.code, r.outs = codeOf(p), []*hlo.Literal{hlo.NewLiteral(root.Shape)}
			err = p.Run(args, r.outs[0], 2)
		}
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// foldsRows names the bookFusions whose generated code folds row sums.
var foldsRows = map[string]bool{"softmax": true}

// nearOutputs checks two runs' f32 outputs within rel of each other.
func nearOutputs(t *testing.T, what string, got, want bookRun, rel float64) {
	t.Helper()
	for k := range want.outs {
		g, w := got.outs[k], want.outs[k]
		if g.Len() != w.Len() {
			t.Fatalf("%s: output %d: %d elements, want %d", what, k, g.Len(), w.Len())
		}
		for i := range w.Len() {
			x, y := g.GetFloat64(i), w.GetFloat64(i)
			if math.Abs(x-y) > rel*math.Abs(y) {
				t.Fatalf("%s: output %d, element %d: %g, the generator's code %g", what, k, i, x, y)
			}
		}
	}
}

// sameOutputs checks two runs' outputs bit for bit.
func sameOutputs(t *testing.T, what string, got, want bookRun) {
	t.Helper()
	for k := range want.outs {
		if !got.outs[k].Equal(want.outs[k]) {
			t.Fatalf("%s: output %d: other bits than the generator's code", what, k)
		}
	}
}

// TestBookCompilesAheadOfTime compiles and runs fusions while the code
// book records, then, with the generator removed and the recorded book
// loaded from its bytes, compiles and runs them again, as a package
// compiled ahead of time does: every program gets the same generated
// code, all of it from the book (hits, no misses), and gives the same
// bits. With an empty book as well, the programs are tile programs only,
// and still give those bits.
func TestBookCompilesAheadOfTime(t *testing.T) {
	if !jit.Available {
		t.Skip("no generated code here")
	}
	jit.ClearBook()
	t.Cleanup(func() {
		jit.Record(false)
		jit.ClearBook()
		jit.InstallGenerator()
	})
	jit.Record(true)
	want := map[string]bookRun{}
	tileOnly := codeOf(&Prog{})
	for name, text := range bookFusions {
		want[name] = runFusion(t, name, text)
		if want[name].code == tileOnly {
			t.Fatalf("%s: no generated code", name)
		}
		t.Logf("%s: %s", name, want[name].code)
	}
	jit.Record(false)
	data := jit.Recorded().Marshal()

	jit.ClearBook()
	jit.RemoveGenerator()
	if err := jit.LoadBook(data); err != nil {
		t.Fatal(err)
	}
	hits, misses := jit.BookHits(), jit.BookMisses()
	for name, text := range bookFusions {
		got := runFusion(t, name, text)
		if got.code != want[name].code {
			t.Errorf("%s from the book: %s; with the generator: %s", name, got.code, want[name].code)
		}
		sameOutputs(t, name+" from the book", got, want[name])
	}
	if m := jit.BookMisses() - misses; m != 0 || jit.BookHits() == hits {
		t.Fatalf("programs from the book: %d hits, %d misses", jit.BookHits()-hits, m)
	}

	jit.ClearBook()
	for name, text := range bookFusions {
		got := runFusion(t, name, text)
		if got.code != tileOnly {
			t.Errorf("%s with no book and no generator: %s", name, got.code)
		}
		if foldsRows[name] && !jit.WideCode() {
			// The 8-lane code's folds sum in another order than the
			// row kernels (jit.WideCode): the same values, not bits.
			nearOutputs(t, name+" as tile programs", got, want[name], 1e-6)
			continue
		}
		sameOutputs(t, name+" as tile programs", got, want[name])
	}
}
