package tile

import (
	"slices"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// A loop fusion's generated code prefetches the operands it reads in
// place, not those gathered through an index map (their buffer is
// filled chunk by chunk, in cache).
func TestJITPrefetchesInPlaceInputs(t *testing.T) {
	if !jit.Available {
		t.Skip("no generated code here")
	}
	m, err := hlotext.Parse(`HloModule prefetch
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
}`, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Loop(m.Entry.Root)
	if err != nil {
		t.Fatal(err)
	}
	j := p.jit
	if j == nil {
		t.Fatal("no generated code for the fusion")
	}
	var inPlace []int
	for k, in := range j.inputs {
		if in.gather < 0 {
			inPlace = append(inPlace, k)
		}
	}
	if len(inPlace) != 1 || len(j.inputs) != 2 {
		t.Fatalf("inputs %+v: want a in place and b's transpose gathered", j.inputs)
	}
	if !slices.Equal(j.prog.PrefetchInputs, inPlace) || j.prog.PrefetchAhead != jitPrefetchAhead {
		t.Fatalf("prefetches inputs %v, %d ahead; want %v, %d", j.prog.PrefetchInputs, j.prog.PrefetchAhead, inPlace, jitPrefetchAhead)
	}
	args := eval.RandomArguments(m, 5)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	got := hlo.NewLiteral(m.Entry.Root.Shape)
	if err := p.Run(args, got, 1); err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) {
		t.Fatalf("%v, the evaluator gives %v", got, want)
	}
}
