package cpu

import (
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// Compiling leaves in the pools the storage the first execution takes: a
// frame and each output's buffer, which that execution then draws
// instead of fresh memory (the frame it takes is the warmed one, and the
// output's storage is the buffer put aside). A module whose storage is
// past warmPoolBytes gets nothing ahead.
func TestWarmPools(t *testing.T) {
	const small = `HloModule w
ENTRY e {
  a = f32[64,64] parameter(0)
  b = f32[64,64] parameter(1)
  d = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[64,64] exponential(d)
  ROOT t = (f32[64,64], f32[64,64]) tuple(d, e)
}`
	m, err := hlotext.Parse(small, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Compile(m, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	f := x.frames.one.Load()
	if f == nil {
		t.Fatal("no frame warmed at compile time")
	}
	x.outs.mu.Lock()
	warm := map[*byte]bool{}
	for _, bs := range x.outs.free {
		for _, b := range bs {
			warm[&b.mem[0]] = true
		}
	}
	x.outs.mu.Unlock()
	if len(warm) != 2 {
		t.Fatalf("%d output buffers warmed, want 2", len(warm))
	}
	args := eval.RandomArguments(m, 3)
	got, err := x.Execute(args...)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range got.Elements() {
		if !warm[&o.RawBytes()[0]] {
			t.Errorf("output %d is not in a warmed buffer", i)
		}
	}
	if g := x.frames.one.Load(); g != f {
		t.Errorf("the first execution's frame is not the warmed one")
	}
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	if msg := closeEnough(got, want); msg != "" {
		t.Fatal(msg)
	}

	big, err := hlotext.Parse(`HloModule big
ENTRY e {
  a = f32[4096,4097] parameter(0)
  ROOT n = f32[4096,4097] negate(a)
}`, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	xb, err := Compile(big, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if xb.Interpreted() {
		t.Fatal("the big module went to the evaluator: the bound is not tested")
	}
	if xb.frames.one.Load() != nil || len(xb.outs.free) != 0 {
		t.Errorf("a module with %d bytes of outputs was warmed (bound %d)", 4096*4097*4, warmPoolBytes)
	}
}
