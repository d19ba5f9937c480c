package tile

import (
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// hotFusions are fusions between the hot and the cold split thresholds
// (kernels.RunsAlone): a squeeze-and-excitation scale (a per-channel
// value broadcast over pixels, through hard-sigmoid), and a multi-output
// fusion.
var hotFusions = []struct{ name, text string }{
	{"scale", `HloModule scale
fused {
  x = f32[1,24,24,48] parameter(0)
  s = f32[48] parameter(1)
  sb = f32[1,24,24,48] broadcast(s), dimensions={3}
  z = f32[] constant(0)
  zero = f32[1,24,24,48] broadcast(z), dimensions={}
  s6 = f32[] constant(6)
  six = f32[1,24,24,48] broadcast(s6), dimensions={}
  sx = f32[1,24,24,48] add(sb, x)
  c = f32[1,24,24,48] clamp(zero, sx, six)
  ROOT m = f32[1,24,24,48] multiply(x, c)
}
ENTRY e {
  x = f32[1,24,24,48] parameter(0)
  s = f32[48] parameter(1)
  ROOT f = f32[1,24,24,48] fusion(x, s), kind=kLoop, calls=fused
}`},
	{"multi", `HloModule multi
fused {
  x = f32[96,160] parameter(0)
  y = f32[96,160] parameter(1)
  a = f32[96,160] add(x, y)
  t = f32[96,160] tanh(a)
  m = f32[96,160] multiply(x, y)
  ROOT r = (f32[96,160], f32[96,160]) tuple(t, m)
}
ENTRY e {
  x = f32[96,160] parameter(0)
  y = f32[96,160] parameter(1)
  ROOT f = (f32[96,160], f32[96,160]) fusion(x, y), kind=kLoop, calls=fused
}`},
}

// TestHotPoolSplitsFusions: while an execution keeps the pool hot
// (kernels.Busy), fusions the cold threshold keeps on one thread split
// across two, with the same bits.
func TestHotPoolSplitsFusions(t *testing.T) {
	for _, c := range hotFusions {
		m, err := hlotext.Parse(c.text, hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		root := m.Entry.Root
		args := eval.RandomArguments(m, 5)
		p, err := compileFusion(root)
		if err != nil {
			t.Fatal(err)
		}
		before := kernels.Dispatched()
		cold := runFusionInto(t, p, root, args, 2)
		if kernels.Dispatched() != before {
			t.Errorf("%s: split outside an execution", c.name)
		}
		done := kernels.Busy()
		before = kernels.Dispatched()
		hot := runFusionInto(t, p, root, args, 2)
		split := kernels.Dispatched() != before
		done()
		if !split {
			t.Errorf("%s: not split while the pool is hot", c.name)
		}
		sameLiterals(t, c.name+" split", hot, cold)
	}
}

// TestHotPoolKeepsSmallFusions: under hotSplitWork a fusion stays on the
// calling goroutine even while the pool is hot (a sum of two arrays of
// 8,192 elements took 2.5 µs split against 1.3 on one thread), where a
// costly op of the same size splits.
func TestHotPoolKeepsSmallFusions(t *testing.T) {
	for _, c := range []struct {
		name, op string
		split    bool
	}{{"add", "add(x, y)", false}, {"tanh", "tanh(x)", true}} {
		m, err := hlotext.Parse(`HloModule small
fused {
  x = f32[8192] parameter(0)
  y = f32[8192] parameter(1)
  ROOT r = f32[8192] `+c.op+`
}
ENTRY e {
  x = f32[8192] parameter(0)
  y = f32[8192] parameter(1)
  ROOT f = f32[8192] fusion(x, y), kind=kLoop, calls=fused
}`, hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		root := m.Entry.Root
		p, err := compileFusion(root)
		if err != nil {
			t.Fatal(err)
		}
		done := kernels.Busy()
		before := kernels.Dispatched()
		runFusionInto(t, p, root, eval.RandomArguments(m, 5), 2)
		split := kernels.Dispatched() != before
		done()
		if split != c.split {
			t.Errorf("%s: split %v while the pool is hot, want %v", c.name, split, c.split)
		}
	}
}
