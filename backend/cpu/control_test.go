package cpu

import (
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// A while loop adding 2i for i = 0..9 (hand-worked: 90), a conditional
// picking a branch by index (out of range: the last), and a call.
func TestCompiledControlFlow(t *testing.T) {
	text := controlFlow

	m, x := compileText(t, text, Options{NoOptimize: true, Poison: true}) // keep the call
	for _, op := range []string{"while", "conditional", "call"} {
		if x.Lowering[op] != 1 {
			t.Fatalf("lowering %v: want the %s compiled", x.Lowering, op)
		}
	}
	// x = {90, 91, 92, 93}; branch 0 negates, 1 doubles, 2 (and 7) squares;
	// the call negates.
	want := map[int32][]float32{
		0: {90, 91, 92, 93},
		1: {-180, -182, -184, -186},
		7: {-8100, -8281, -8464, -8649},
	}
	for k, w := range want {
		got, err := x.Execute(hlo.ScalarLiteral(k))
		if err != nil {
			t.Fatal(err)
		}
		gs := got.Data().([]float32)
		for i := range w {
			if gs[i] != w[i] {
				t.Fatalf("k=%d: got %v, want %v", k, gs, w)
			}
		}
		x.Recycle(got)
	}
	checkAgainstEvaluator(t, m, x, 2)
}

// A tuple holds its elements' storage: a buffer read only through a tuple
// must stay untouched until the tuple's last reader, even though the
// tuple instruction itself is its last direct use.
func TestTupleKeepsItsElementsAlive(t *testing.T) {
	const text = `HloModule keep
ENTRY main {
  x = s32[64,64] parameter(0)
  a = s32[64,64] transpose(x), dimensions={1,0}
  t = (s32[64,64]) tuple(a)
  b = s32[64,64] reverse(x), dimensions={0}
  c = s32[64,64] transpose(b), dimensions={1,0}
  g = s32[64,64] get-tuple-element(t), index=0
  ROOT s = s32[64,64] add(g, c)
}`
	m, x := compileText(t, text, Options{NoOptimize: true, Poison: true})
	checkAgainstEvaluator(t, m, x, 2)
}

const controlFlow = `HloModule loops
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  fi = f32[] convert(i)
  two = f32[] constant(2)
  d = f32[] multiply(fi, two)
  db = f32[4] broadcast(d), dimensions={}
  y = f32[4] add(x, db)
  ROOT r = (s32[], f32[4]) tuple(j, y)
}
neg {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
dbl {
  p = f32[4] parameter(0)
  ROOT d = f32[4] add(p, p)
}
sq {
  p = f32[4] parameter(0)
  ROOT d = f32[4] multiply(p, p)
}
ENTRY main {
  k = s32[] parameter(0)
  zero = s32[] constant(0)
  x0 = f32[4] constant({0, 1, 2, 3})
  init = (s32[], f32[4]) tuple(zero, x0)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  x = f32[4] get-tuple-element(w), index=1
  c = f32[4] conditional(k, x, x, x), branch_computations={neg, dbl, sq}
  ROOT r = f32[4] call(c), to_apply=neg
}`
