package cpu

import (
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
)

// A reshape that merges transposed dimensions (a pixel shuffle) or a
// broadcast dimension with its neighbour (nearest-neighbour upsampling)
// is no affine view of what the transpose or broadcast reads, so the
// fuser leaves those views out of the reshape's fusion: every fusion
// gets a tile program (none runs instruction by instruction as a
// fusion body), and the values are the evaluator's.
func TestFusionReshapeOfViews(t *testing.T) {
	m, x := compileText(t, `HloModule shuffle
ENTRY main {
  a = f32[1,36,16] parameter(0)
  b = f32[1,6,6,4] parameter(1)
  s = f32[1,6,6,4] parameter(2)
  e = f32[1,36,16] exponential(a)
  r = f32[1,6,6,4,2,2] reshape(e)
  t = f32[1,6,2,6,2,4] transpose(r), dimensions={0,1,4,2,5,3}
  q = f32[1,12,12,4] reshape(t)
  c = f32[] constant(0)
  z = f32[1,12,12,4] broadcast(c), dimensions={}
  m = f32[1,12,12,4] maximum(q, z)
  u = f32[1,6,2,6,4] broadcast(b), dimensions={0,1,3,4}
  v = f32[1,12,6,4] reshape(u)
  w = f32[1,12,6,2,4] broadcast(v), dimensions={0,1,2,4}
  y = f32[1,12,12,4] reshape(w)
  ROOT o = f32[1,12,12,4] add(m, y)
}`, Options{Threads: 2, Poison: true})
	if len(x.Fallbacks) != 0 || x.Lowering["fusion-body"] != 0 {
		t.Fatalf("lowering %v, fallbacks %v", x.Lowering, x.Fallbacks)
	}
	args := eval.RandomArguments(m, 5)
	got, want := evalAndRun(t, m, x, args)
	if err := conformance.Compare(got, want, conformance.Tolerance{Rtol: 1e-6, Atol: 1e-6}); err != nil {
		t.Fatal(err)
	}
}
