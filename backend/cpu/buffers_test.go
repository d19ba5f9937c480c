package cpu

import (
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

func compileText(t testing.TB, text string, opts Options) (*hlo.Module, *Executable) {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Compile(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m, x
}

// A hand-worked assignment (s32, so nothing fuses). Every value is
// 64 KiB. a = transpose(x) is read by b and c, so b needs a buffer of its
// own; c = a + b computes over a (both die there), and d = -c over c; d is
// the result, so the buffer a, c and d share is the output and only b's is
// in the arena.
func TestAssignmentHandWorked(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  x = s32[128,128] parameter(0)
  a = s32[128,128] transpose(x), dimensions={1,0}
  b = s32[128,128] reverse(a), dimensions={0}
  c = s32[128,128] add(a, b)
  ROOT d = s32[128,128] negate(c)
}`
	m, x := compileText(t, text, Options{NoOptimize: true, Poison: true})
	got := x.Memory()
	want := MemoryStats{Peak: 65536, Intermediates: 3 * 65536, Outputs: 65536, Buffers: 1, InPlace: 2}
	if got != want {
		t.Fatalf("memory %+v, want %+v", got, want)
	}
	checkAgainstEvaluator(t, m, x, 2)
}

// evalAndRun evaluates m on args with the evaluator (want) and runs x on
// them (got).
func evalAndRun(t *testing.T, m *hlo.Module, x *Executable, args []*hlo.Literal) (got, want *hlo.Literal) {
	t.Helper()
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err = x.Execute(args...)
	if err != nil {
		t.Fatal(err)
	}
	return got, want
}

// checkAgainstEvaluator runs x a few times (reusing its arena and, once
// recycled, its outputs) and compares with the evaluator.
func checkAgainstEvaluator(t *testing.T, m *hlo.Module, x *Executable, runs int) {
	t.Helper()
	args := eval.RandomArguments(m, 7)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	for run := range runs {
		got, err := x.Execute(args...)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Fatalf("run %d: got %v, want %v", run, got, want)
		}
		x.Recycle(got)
	}
}

// Values that die make room: in a chain of n big intermediates only two
// are ever alive, whatever n.
func TestAssignmentReusesDeadBuffers(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  x = f32[64,64] parameter(0)
  a = f32[64,64] transpose(x), dimensions={1,0}
  b = f32[64,64] reverse(a), dimensions={0}
  c = f32[64,64] transpose(b), dimensions={1,0}
  d = f32[64,64] reverse(c), dimensions={1}
  e = f32[64,64] transpose(d), dimensions={1,0}
  ROOT f = f32[64,64] reverse(e), dimensions={0}
}`
	m, x := compileText(t, text, Options{NoOptimize: true, Poison: true})
	got := x.Memory()
	if got.Intermediates != 5*16384 || got.Peak != 2*16384 {
		t.Fatalf("memory %+v: want 5 intermediates of 16 KiB in an arena of two", got)
	}
	checkAgainstEvaluator(t, m, x, 3)
}

// A donated argument holds the output computed over it; without
// donation the output is fresh storage.
func TestDonation(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  w = f32[1000] parameter(0)
  g = f32[1000] parameter(1)
  lr = f32[] constant(0.5)
  lrb = f32[1000] broadcast(lr), dimensions={}
  s = f32[1000] multiply(g, lrb)
  ROOT n = f32[1000] subtract(w, s)
}`
	m, x := compileText(t, text, Options{Poison: true})
	args := eval.RandomArguments(m, 3)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Run(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) || sameStorage(got, args[0]) {
		t.Fatalf("without donation: equal %v, shares w's storage %v", got.Equal(want), sameStorage(got, args[0]))
	}
	w := args[0]
	got, err = x.Run(args, []bool{true, false})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) || !sameStorage(got, w) {
		t.Fatalf("with w donated: equal %v, shares w's storage %v", got.Equal(want), sameStorage(got, w))
	}
}

// Recycled outputs are reused by the next execution.
func TestRecycle(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  x = f32[4096] parameter(0)
  ROOT y = f32[4096] negate(x)
}`
	m, x := compileText(t, text, Options{})
	args := eval.RandomArguments(m, 1)
	first, err := x.Execute(args...)
	if err != nil {
		t.Fatal(err)
	}
	mem := bytesOf(first)
	x.Recycle(first)
	second, err := x.Execute(args...)
	if err != nil {
		t.Fatal(err)
	}
	if &bytesOf(second)[0] != &mem[0] {
		t.Fatal("the recycled output's storage was not reused")
	}
	third, _ := x.Execute(args...)
	if &bytesOf(third)[0] == &bytesOf(second)[0] {
		t.Fatal("an output still held by the caller was reused")
	}
}

// Outputs of one size but different shapes share a pool slot: a recycled
// output taken for the other shape must come back as that shape, and a
// tuple's recycled elements must each be reused once, never twice.
func TestRecycleSameSizeShapes(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  n = f32[2,3] negate(x)
  t = f32[3,2] transpose(x), dimensions={1,0}
  ROOT r = (f32[2,3], f32[3,2]) tuple(n, t)
}`
	m, x := compileText(t, text, Options{})
	args := eval.RandomArguments(m, 1)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		got, err := x.Execute(args...)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Fatalf("run %d: got %v, want %v", i, got, want)
		}
		e := got.Elements()
		if sameStorage(e[0], e[1]) {
			t.Fatalf("run %d: both outputs share storage", i)
		}
		if i%2 == 0 { // alternate the order the elements come back in
			x.Recycle(got)
		} else {
			x.Recycle(e[1])
			x.Recycle(e[0])
		}
	}
}

// Big arena buffers alive at the same time start at different offsets
// modulo 4 KiB (colorBuffers), none overlapping another it lives with;
// the same module without coloring packs them a multiple of 4 KiB apart
// (the case the coloring is for), and both compute the evaluator's
// results (to the products' rounding).
func TestAssignmentColorsBigBuffers(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  x = f32[256,256] parameter(0)
  a = f32[256,256] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[256,256] dot(a, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[256,256] dot(b, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT d = f32[256,256] dot(c, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`
	offsets := func(x *Executable) (big []buffer) {
		for _, b := range x.asg.bufs {
			if b.kind == bufArena && b.bytes >= colorMinBytes {
				big = append(big, b)
			}
		}
		return big
	}
	defer func() { colorBuffers = true }()
	for _, color := range []bool{false, true} {
		colorBuffers = color
		m, x := compileText(t, text, Options{NoOptimize: true, Poison: true})
		big := offsets(x)
		if len(big) < 2 {
			t.Fatalf("%d big arena buffers, want several", len(big))
		}
		apart := 0 // pairs alive together a multiple of 4 KiB apart
		for i, p := range big {
			for _, q := range big[i+1:] {
				if p.first > q.last || q.first > p.last {
					continue
				}
				if p.offset < q.offset+q.bytes && q.offset < p.offset+p.bytes {
					t.Fatalf("color %v: live buffers overlap: [%d, +%d) and [%d, +%d)", color, p.offset, p.bytes, q.offset, q.bytes)
				}
				if (p.offset-q.offset)%colorPeriod == 0 {
					apart++
				}
			}
		}
		if color && apart > 0 {
			t.Errorf("colored: %d pairs of live buffers a multiple of 4 KiB apart", apart)
		}
		if !color && apart == 0 {
			t.Errorf("uncolored: no live pair a multiple of 4 KiB apart: the test no longer shows the case")
		}
		args := eval.RandomArguments(m, 7)
		want, err := eval.Run(m, args...)
		if err != nil {
			t.Fatal(err)
		}
		for run := range 2 { // (the products' sums may round otherwise than the evaluator's)
			got, err := x.Execute(args...)
			if err != nil {
				t.Fatal(err)
			}
			if msg := closeEnough(got, want); msg != "" {
				t.Fatalf("color %v, run %d: %s", color, run, msg)
			}
			x.Recycle(got)
		}
	}
}
