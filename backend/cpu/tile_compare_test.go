package cpu

import (
	"testing"

	"github.com/axle-ml/axle/eval"
)

// Compares, logical ops on their predicates and selects fuse into one
// tile program (ReLU's balanced gradient, as autodiff builds it, and
// then some), with NaNs among the inputs, and match the evaluator
// exactly on any thread count.
func TestFusedPredicates(t *testing.T) {
	const text = `HloModule preds
ENTRY e {
  x = f32[300,70] parameter(0)
  g = f32[300,70] parameter(1)
  y = f32[300,70] parameter(2)
  z = f32[] constant(0)
  zb = f32[300,70] broadcast(z), dimensions={}
  m = f32[300,70] maximum(x, zb)
  xw = pred[300,70] compare(x, m), direction=EQ
  yw = pred[300,70] compare(zb, m), direction=EQ
  tie = pred[300,70] and(xw, yw)
  half = f32[] constant(0.5)
  one = f32[] constant(1)
  hb = f32[300,70] broadcast(half), dimensions={}
  ob = f32[300,70] broadcast(one), dimensions={}
  share = f32[300,70] select(tie, hb, ob)
  gs = f32[300,70] multiply(g, share)
  lt = pred[300,70] compare(x, y), direction=LT
  ne = pred[300,70] compare(y, g), direction=NE
  either = pred[300,70] or(lt, ne)
  odd = pred[300,70] xor(either, xw)
  notodd = pred[300,70] not(odd)
  pick = pred[300,70] and(notodd, xw)
  ROOT r = f32[300,70] select(pick, gs, y)
}`
	for _, threads := range []int{1, 2} {
		m, x := compileText(t, text, Options{Poison: true, Threads: threads})
		if x.Lowering["tile-fusion"]+x.Lowering["jit-fusion"] != 1 || len(x.Lowering) > 2 {
			t.Fatalf("lowered as %v: want everything in one tile fusion", x.Lowering)
		}
		args := eval.RandomArguments(m, 3)
		// Zeros (ties for max), NaNs and equal values between y and g.
		xs, ys, gs := args[0].Data().([]float32), args[2].Data().([]float32), args[1].Data().([]float32)
		for i := 0; i < len(xs); i += 7 {
			xs[i] = 0
		}
		for i := 3; i < len(xs); i += 11 {
			xs[i] = float32(nan())
		}
		for i := 5; i < len(ys); i += 13 {
			ys[i] = gs[i]
		}
		got, want := evalAndRun(t, m, x, args)
		if !got.Equal(want) {
			t.Fatalf("threads %d: fused predicates differ from the evaluator", threads)
		}
	}
}

func nan() float64 {
	var z float64
	return z / z
}
