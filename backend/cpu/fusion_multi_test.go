package cpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// adamText is an Adam step over f32[dims]: m', v' and W' all read the
// gradient g (and W' reads m' and v'), and all three are results.
func adamText(dims string) string {
	return strings.ReplaceAll(`HloModule adam
ENTRY e {
  w = f32[D] parameter(0)
  m = f32[D] parameter(1)
  v = f32[D] parameter(2)
  g = f32[D] parameter(3)
  lr = f32[] parameter(4)
  b1 = f32[] constant(0.9)
  c1 = f32[] constant(0.1)
  b2 = f32[] constant(0.999)
  c2 = f32[] constant(0.001)
  eps = f32[] constant(1e-07)
  b1b = f32[D] broadcast(b1), dimensions={}
  c1b = f32[D] broadcast(c1), dimensions={}
  b2b = f32[D] broadcast(b2), dimensions={}
  c2b = f32[D] broadcast(c2), dimensions={}
  epsb = f32[D] broadcast(eps), dimensions={}
  lrb = f32[D] broadcast(lr), dimensions={}
  bm = f32[D] multiply(b1b, m)
  cg = f32[D] multiply(c1b, g)
  m1 = f32[D] add(bm, cg)
  va = f32[D] abs(v)
  bv = f32[D] multiply(b2b, va)
  gg = f32[D] multiply(g, g)
  cgg = f32[D] multiply(c2b, gg)
  v1 = f32[D] add(bv, cgg)
  sq = f32[D] sqrt(v1)
  den = f32[D] add(sq, epsb)
  q = f32[D] divide(m1, den)
  st = f32[D] multiply(lrb, q)
  w1 = f32[D] subtract(w, st)
  ROOT t = (f32[D], f32[D], f32[D]) tuple(w1, m1, v1)
}`, "D", dims)
}

// checkCompiledModule checks that the compiled module is ordinary HLO:
// it verifies, prints and parses back to the same text, and the
// evaluator runs it to the original module's result.
func checkCompiledModule(t *testing.T, m *hlo.Module, x *Executable) {
	t.Helper()
	cm := x.Module()
	if err := hlo.Verify(cm); err != nil {
		t.Fatalf("compiled module does not verify: %v", err)
	}
	text := hlotext.Print(cm, hlotext.Default)
	back, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatalf("compiled module does not parse back: %v\n%s", err, text)
	}
	if again := hlotext.Print(back, hlotext.Default); again != text {
		t.Fatalf("compiled module does not print back the same:\n%s\n---\n%s", text, again)
	}
	evaluatesAlike(t, m, back, 5)
}

// evaluatesAlike checks that the evaluator gives back (a compiled or
// fused module read back from its text) the original m's result on
// m's seeded random arguments.
func evaluatesAlike(t *testing.T, m, back *hlo.Module, seed uint64) {
	t.Helper()
	args := eval.RandomArguments(m, seed)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval.Run(back, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) {
		t.Fatal("the evaluator computes the compiled module differently from the original")
	}
}

// Adam's three updates merge into one fusion with three outputs, written
// straight into the result buffers, and match the evaluator bit for bit
// on one to three threads (the 512×1024 size splits across threads).
func TestMultiOutputAdam(t *testing.T) {
	for _, dims := range []string{"1000", "512,1024"} {
		var first *hlo.Literal
		for threads := 1; threads <= 3; threads++ {
			m, x := compileText(t, adamText(dims), Options{Threads: threads, Poison: true})
			if x.Lowering["multi-output-fusion"] != 1 || loopFusions(x.Lowering) != 0 || x.Lowering["element-view"] != 3 {
				t.Fatalf("[%s] lowered as %v: want one multi-output fusion and three element views", dims, x.Lowering)
			}
			if threads == 1 {
				checkCompiledModule(t, m, x)
			}
			args := eval.RandomArguments(m, 11)
			got, want := evalAndRun(t, m, x, args)
			if !got.Equal(want) {
				t.Fatalf("[%s] threads %d: differs from the evaluator", dims, threads)
			}
			if first == nil {
				first = got
			} else if !got.Equal(first) {
				t.Fatalf("[%s] threads %d: differs from threads 1", dims, threads)
			}
			checkAgainstEvaluator(t, m, x, 2) // again, over recycled outputs
		}
	}
}

// The arguments donated to an Adam step hold its results: each output is
// written over the operand it replaces (m' over m, v' over v, W' over W),
// which the program no longer reads once that output's tile is written.
func TestMultiOutputDonation(t *testing.T) {
	m, x := compileText(t, adamText("4096"), Options{Threads: 2, Poison: true})
	args := eval.RandomArguments(m, 3)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	w, mom, vel := args[0], args[1], args[2]
	got, err := x.Run(args, []bool{true, true, true, false, false})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) {
		t.Fatal("with donation: differs from the evaluator")
	}
	for k, arg := range []*hlo.Literal{w, mom, vel} {
		if !sameStorage(got.Elements()[k], arg) {
			t.Errorf("output %d is not in its donated argument's storage", k)
		}
	}
}

// A sibling that is a result and one that is an intermediate: the
// intermediate's element buffer lives in the arena until its reader, the
// result's is the output.
func TestMultiOutputRootAndIntermediate(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  x = f32[64,128] parameter(0)
  y = f32[64,128] parameter(1)
  w = f32[128,8] parameter(2)
  a = f32[64,128] log(x)
  b = f32[64,128] multiply(x, y)
  r = f32[64,8] dot(b, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[64,128], f32[64,8]) tuple(a, r)
}`
	m, x := compileText(t, text, Options{Threads: 2, Poison: true})
	if x.Lowering["multi-output-fusion"] != 1 {
		t.Fatalf("lowered as %v: want one multi-output fusion", x.Lowering)
	}
	checkCompiledModule(t, m, x)
	args := eval.RandomArguments(m, 4)
	for range 2 {
		got, want := evalAndRun(t, m, x, args)
		if err := closeTo(got, want, 1e-4); err != nil {
			t.Fatal(err)
		}
		x.Recycle(got)
	}
	if got := x.Memory(); got.Peak != 64*128*4 || got.Outputs != 64*128*4+64*8*4 {
		t.Fatalf("memory %+v: want b alone in the arena", got)
	}
}

// addF32 is a reduction body, for texts to put before their entry.
const addF32 = `HloModule m
add_f32 {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
`

// closeTo compares with a tolerance (GEMMs and vector math round
// differently from the evaluator).
func closeTo(got, want *hlo.Literal, tol float64) error {
	return conformance.Compare(got, want, conformance.Tolerance{Atol: tol, Rtol: tol})
}

// A producer read by a consumer fusion and by something else merges with
// the consumer: the merged fusion outputs both, and the consumer reads the
// producer's tile instead of its stored value.
func TestMultiOutputProducerConsumer(t *testing.T) {
	const text = addF32 + `ENTRY e {
  x = f32[256,64] parameter(0)
  y = f32[256,64] parameter(1)
  p = f32[256,64] log(x)
  c = f32[256,64] multiply(p, y)
  z = f32[] constant(0)
  r = f32[256] reduce(p, z), dimensions={1}, to_apply=add_f32
  ROOT t = (f32[256,64], f32[256]) tuple(c, r)
}`
	m, x := compileText(t, text, Options{Threads: 2, Poison: true})
	if x.Lowering["multi-output-fusion"] != 1 || loopFusions(x.Lowering) != 0 {
		t.Fatalf("lowered as %v: want the producer and consumer in one multi-output fusion", x.Lowering)
	}
	checkCompiledModule(t, m, x)
	checkAgainstEvaluator(t, m, x, 2)
}

// Fusions that must not merge: b reaches a through a dot (merged, the
// fusion would be its own operand), and d reads c through a transpose
// (a tile of d needs c at other positions than its own).
func TestMultiOutputRefusesCycles(t *testing.T) {
	for name, text := range map[string]string{
		"path through a dot": `HloModule m
ENTRY e {
  x = f32[64,64] parameter(0)
  a = f32[64,64] log(x)
  d = f32[64,64] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT b = f32[64,64] multiply(x, d)
}`,
		"read through an index map": `HloModule m
ENTRY e {
  x = f32[64,64] parameter(0)
  c = f32[64,64] log(x)
  ct = f32[64,64] transpose(c), dimensions={1,0}
  d = f32[64,64] add(x, ct)
  ROOT t = (f32[64,64], f32[64,64]) tuple(c, d)
}`,
	} {
		// (Without output fusion, which would fold the dot into b.)
		m, x := compileText(t, text, Options{Poison: true, NoOutputFusion: true})
		if x.Lowering["multi-output-fusion"] != 0 || loopFusions(x.Lowering) != 2 {
			t.Fatalf("%s: lowered as %v: want two separate tile fusions", name, x.Lowering)
		}
		checkAgainstEvaluator(t, m, x, 2)
	}
}

// Siblings whose outputs are intermediates read by a GEMM: one output
// is computed over the dying operand (the first GEMM's result) and the
// other gets an arena buffer, so the arena holds two values at most.
func TestMultiOutputInPlace(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  a = f32[128,128] parameter(0)
  b = f32[128,128] parameter(1)
  e = f32[128,128] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  two = f32[] constant(2)
  twob = f32[128,128] broadcast(two), dimensions={}
  f1 = f32[128,128] multiply(e, twob)
  f2 = f32[128,128] exponential(e)
  ROOT r = f32[128,128] dot(f1, f2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`
	m, x := compileText(t, text, Options{Threads: 2, Poison: true})
	if x.Lowering["multi-output-fusion"] != 1 {
		t.Fatalf("lowered as %v: want one multi-output fusion", x.Lowering)
	}
	const size = 128 * 128 * 4
	if got := x.Memory(); got.InPlace != 1 || got.Peak != 2*size || got.Intermediates != 3*size {
		t.Fatalf("memory %+v: want f1 or f2 computed over e, two buffers live at most", got)
	}
	args := eval.RandomArguments(m, 4)
	for _, a := range args { // small products: the final GEMM cancels less
		for i, v := range a.Data().([]float32) {
			a.Data().([]float32)[i] = v / 8
		}
	}
	for range 2 {
		got, want := evalAndRun(t, m, x, args)
		if err := closeTo(got, want, 1e-4); err != nil {
			t.Fatal(err)
		}
		x.Recycle(got)
	}
}

// bf16 siblings, and an f32 output beside a bf16 one: narrow outputs are
// rounded per op and encoded per tile like a single-output program's.
func TestMultiOutputNarrow(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  x = bf16[300,70] parameter(0)
  g = bf16[300,70] parameter(1)
  s = bf16[300,70] add(x, g)
  p = bf16[300,70] multiply(x, g)
  gf = f32[300,70] convert(g)
  q = f32[300,70] multiply(gf, gf)
  ROOT t = (bf16[300,70], bf16[300,70], f32[300,70]) tuple(s, p, q)
}`
	for threads := 1; threads <= 3; threads++ {
		m, x := compileText(t, text, Options{Threads: threads, Poison: true})
		if x.Lowering["multi-output-fusion"] != 1 || loopFusions(x.Lowering) != 0 {
			t.Fatalf("lowered as %v: want one multi-output fusion", x.Lowering)
		}
		checkAgainstEvaluator(t, m, x, 2)
	}
}

// At most maxOutputs siblings merge into one fusion.
func TestMultiOutputBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("HloModule m\nENTRY e {\n  x = f32[1000] parameter(0)\n")
	ops := []string{"exponential", "log", "sine", "cosine", "tanh"}
	for _, op := range ops {
		b.WriteString("  " + op + " = f32[1000] " + op + "(x)\n")
	}
	b.WriteString("  ROOT t = (f32[1000], f32[1000], f32[1000], f32[1000], f32[1000]) tuple(" + strings.Join(ops, ", ") + ")\n}")
	m, x := compileText(t, b.String(), Options{Poison: true})
	if x.Lowering["multi-output-fusion"] != 1 || loopFusions(x.Lowering) != 1 || x.Lowering["element-view"] != maxOutputs {
		t.Fatalf("lowered as %v: want %d siblings merged and one left", x.Lowering, maxOutputs)
	}
	checkCompiledModule(t, m, x)
	args := eval.RandomArguments(m, 2)
	got, want := evalAndRun(t, m, x, args)
	if err := closeTo(got, want, 1e-5); err != nil {
		t.Fatal(err)
	}
}

// An output written halfway through a tile must not overwrite an operand
// a later slot still reads: a = 2x is computed before b = x + y reads x,
// so a donated x may hold b but not a.
func TestMultiOutputInPlaceOrder(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  x = f32[5000] parameter(0)
  y = f32[5000] parameter(1)
  two = f32[] constant(2)
  twob = f32[5000] broadcast(two), dimensions={}
  a = f32[5000] multiply(x, twob)
  b = f32[5000] add(x, y)
  ROOT t = (f32[5000], f32[5000]) tuple(a, b)
}`
	m, x := compileText(t, text, Options{Threads: 2, Poison: true})
	if x.Lowering["multi-output-fusion"] != 1 {
		t.Fatalf("lowered as %v: want one multi-output fusion", x.Lowering)
	}
	args := eval.RandomArguments(m, 6)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	xs := args[0]
	got, err := x.Run(args, []bool{true, false})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) {
		t.Fatal("with x donated: differs from the evaluator")
	}
	if sameStorage(got.Elements()[0], xs) || !sameStorage(got.Elements()[1], xs) {
		t.Fatal("want b, not a, in x's storage")
	}
}

// Adam steps in a while loop: the body's merged fusion writes the next
// state straight into the body's outputs, which the loop recycles into
// the next iteration's buffers.
func TestMultiOutputInWhileBody(t *testing.T) {
	const text = `HloModule m
cond {
  s = (s32[], f32[2000], f32[2000], f32[2000]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2000], f32[2000], f32[2000]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  w = f32[2000] get-tuple-element(s), index=1
  m = f32[2000] get-tuple-element(s), index=2
  g = f32[2000] get-tuple-element(s), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  b1 = f32[] constant(0.9)
  b1b = f32[2000] broadcast(b1), dimensions={}
  c1 = f32[] constant(0.1)
  c1b = f32[2000] broadcast(c1), dimensions={}
  m1 = f32[2000] add(f32[2000] multiply(b1b, m), f32[2000] multiply(c1b, g))
  w1 = f32[2000] subtract(w, f32[2000] multiply(c1b, g))
  g1 = f32[2000] multiply(g, b1b)
  ROOT t = (s32[], f32[2000], f32[2000], f32[2000]) tuple(i1, w1, m1, g1)
}
ENTRY e {
  w = f32[2000] parameter(0)
  m = f32[2000] parameter(1)
  g = f32[2000] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[2000], f32[2000], f32[2000]) tuple(zero, w, m, g)
  ROOT r = (s32[], f32[2000], f32[2000], f32[2000]) while(init), condition=cond, body=body
}`
	m, x := compileText(t, text, Options{Threads: 2, Poison: true})
	if x.Lowering["while"] != 1 {
		t.Fatalf("lowered as %v: want a compiled while loop", x.Lowering)
	}
	// The body is compiled when the loop is lowered: compile it alone to
	// see its fusions.
	body := m.Clone()
	for _, c := range body.Computations {
		if c.Name == "body" {
			body.Entry = c
		}
	}
	body.EntryLayout = nil
	bx, err := Compile(body, Options{NoOptimize: true})
	if err != nil {
		t.Fatal(err)
	}
	if bx.Lowering["multi-output-fusion"] != 1 || loopFusions(bx.Lowering) != 0 {
		t.Fatalf("body lowered as %v: want one multi-output fusion", bx.Lowering)
	}
	checkAgainstEvaluator(t, m, x, 3)
}

// BenchmarkAdamSiblings times an Adam step over f32[784,10] (the dense
// example's weights) with the updates as separate fusions and merged,
// with fresh outputs and with W, m and v donated and the results fed
// back, as the trainers do: `go test ./backend/cpu -run XXX -bench
// AdamSiblings -cpu 1`.
func BenchmarkAdamSiblings(b *testing.B) {
	m, err := hlotext.Parse(adamText("784,10"), hlotext.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, merged := range []bool{false, true} {
		multiOutput = merged
		x, err := Compile(m, Options{Threads: 1})
		multiOutput = true
		if err != nil {
			b.Fatal(err)
		}
		for _, donate := range []bool{false, true} {
			b.Run(fmt.Sprintf("merged=%v/donated=%v", merged, donate), func(b *testing.B) {
				args := eval.RandomArguments(m, 1)
				donated := []bool{donate, donate, donate, false, false}
				for b.Loop() {
					out, err := x.Run(args, donated)
					if err != nil {
						b.Fatal(err)
					}
					if !donate {
						x.Recycle(out)
						continue
					}
					e := out.Elements()
					args[0], args[1], args[2] = e[0], e[1], e[2]
				}
			})
		}
	}
}
