package spmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/spmd"
)

// Control flow runs on shards: each case is checked against the
// evaluator for 2, 3 and 4 devices with $D, the sharded size, even (8)
// and uneven (7: the last tiles padded; their padding holds NaN in the
// harness), must take no fallback, and must not contain the absent ops
// anywhere (in particular not in a loop body, where they would run every
// iteration).
var controlCases = []struct {
	name   string
	text   string
	absent []string
}{
	// jax.lax.fori_loop(0, 3, lambda i, acc: acc + x @ w, zeros): the
	// accumulator starts replicated (a broadcast zero) and the body makes
	// it batch-sharded, so the loop state takes the batch tiling.
	{name: "fori-matmul", absent: []string{"all-gather", "all-reduce"}, text: `HloModule fori, num_partitions=$N
cond {
  s = (s32[], f32[$D,4], f32[$D,6], f32[6,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[$D,4], f32[$D,6], f32[6,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[$D,4] get-tuple-element(s), index=1
  x = f32[$D,6] get-tuple-element(s), index=2
  w = f32[6,4] get-tuple-element(s), index=3
  one = s32[] constant(1)
  j = s32[] add(i, one)
  xw = f32[$D,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  a = f32[$D,4] add(acc, xw)
  h = f32[] constant(0.5)
  hb = f32[$D,6] broadcast(h), dimensions={}
  x2 = f32[$D,6] multiply(x, hb)
  ROOT r = (s32[], f32[$D,4], f32[$D,6], f32[6,4]) tuple(j, a, x2, w)
}
ENTRY main {
  x = f32[$D,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  w = f32[6,4] parameter(1), sharding={replicated}
  zero = s32[] constant(0)
  z = f32[] constant(0)
  acc = f32[$D,4] broadcast(z), dimensions={}
  init = (s32[], f32[$D,4], f32[$D,6], f32[6,4]) tuple(zero, acc, x, w)
  loop = (s32[], f32[$D,4], f32[$D,6], f32[6,4]) while(init), condition=cond, body=body
  ROOT out = f32[$D,4] get-tuple-element(loop), index=1, sharding={devices=[$N,1]<=[$N]}
}`},
	// A scan carrying a sharded vector and a running sum of it: the
	// body's reduce all-reduces a scalar, the vector never moves.
	{name: "scan-reduce", absent: []string{"all-gather"}, text: `HloModule scan, num_partitions=$N
` + addComp + `
cond {
  s = (s32[], f32[$D], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[$D], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[$D] get-tuple-element(s), index=1
  t = f32[] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  e = f32[$D] exponential(v)
  z = f32[] constant(0)
  r = f32[] reduce(e, z), dimensions={0}, to_apply=add
  t2 = f32[] add(t, r)
  c = f32[] constant(0.75)
  cb = f32[$D] broadcast(c), dimensions={}
  v2 = f32[$D] multiply(v, cb)
  ROOT o = (s32[], f32[$D], f32[]) tuple(j, v2, t2)
}
ENTRY main {
  v = f32[$D] parameter(0), sharding={devices=[$N]<=[$N]}
  zero = s32[] constant(0)
  z = f32[] constant(0)
  init = (s32[], f32[$D], f32[]) tuple(zero, v, z)
  loop = (s32[], f32[$D], f32[]) while(init), condition=cond, body=body
  vs = f32[$D] get-tuple-element(loop), index=1
  ts = f32[] get-tuple-element(loop), index=2
  ROOT out = (f32[$D], f32[]) tuple(vs, ts), sharding={{devices=[$N]<=[$N]}, {replicated}}
}`},
	// The condition reads sharded data: loop while max(v) < 2.5 (at most
	// 20 times). The max all-reduces a scalar; the padding of uneven
	// tiles is filled with -inf first. The while's annotation places the
	// state.
	{name: "cond-max", absent: []string{"all-gather"}, text: `HloModule condmax, num_partitions=$N
` + maxComp + `
cond {
  s = (s32[], f32[$D,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[$D,3] get-tuple-element(s), index=1
  ninf = f32[] constant(-inf)
  m = f32[] reduce(v, ninf), dimensions={0,1}, to_apply=max
  bound = f32[] constant(2.5)
  small = pred[] compare(m, bound), direction=LT
  n = s32[] constant(20)
  few = pred[] compare(i, n), direction=LT
  ROOT go = pred[] and(small, few)
}
body {
  s = (s32[], f32[$D,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[$D,3] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  c = f32[] constant(0.4)
  cb = f32[$D,3] broadcast(c), dimensions={}
  v2 = f32[$D,3] add(v, cb)
  ROOT o = (s32[], f32[$D,3]) tuple(j, v2)
}
ENTRY main {
  v = f32[$D,3] parameter(0), sharding={devices=[$N,1]<=[$N]}
  zero = s32[] constant(0)
  init = (s32[], f32[$D,3]) tuple(zero, v)
  ROOT loop = (s32[], f32[$D,3]) while(init), condition=cond, body=body, sharding={{replicated}, {devices=[$N,1]<=[$N]}}
}`},
	// A call (a jitted function inside another) on batch-sharded data.
	{name: "call", absent: []string{"all-gather", "all-reduce"}, text: `HloModule call, num_partitions=$N
layer {
  x = f32[$D,6] parameter(0)
  w = f32[6,4] parameter(1)
  d = f32[$D,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[$D,4] tanh(d)
}
ENTRY main {
  x = f32[$D,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  w = f32[6,4] parameter(1), sharding={replicated}
  y = f32[$D,4] call(x, w), to_apply=layer
  ROOT o = f32[$D,4] negate(y), sharding={devices=[$N,1]<=[$N]}
}`},
	// A conditional on a sharded value: the predicate is a sum over it
	// (an all-reduce of a scalar); each branch runs on its operand's
	// shards, the second's result placed like the first's.
	{name: "conditional", absent: []string{"all-gather"}, text: `HloModule cnd, num_partitions=$N
` + addComp + `
pos {
  x = f32[$D,3] parameter(0)
  ROOT e = f32[$D,3] exponential(x)
}
neg {
  x = f32[$D,3] parameter(0)
  ROOT n = f32[$D,3] negate(x)
}
ENTRY main {
  x = f32[$D,3] parameter(0), sharding={devices=[$N,1]<=[$N]}
  y = f32[$D,3] parameter(1), sharding={devices=[$N,1]<=[$N]}
  z = f32[] constant(0)
  s = f32[] reduce(x, z), dimensions={0,1}, to_apply=add
  p = pred[] compare(s, z), direction=GT
  c = f32[$D,3] conditional(p, x, y), true_computation=pos, false_computation=neg
  ROOT o = f32[$D,3] add(c, x), sharding={devices=[$N,1]<=[$N]}
}`},
	// An s32 branch index and three branches, one of which produces
	// another placement (its result is resharded to branch 0's).
	{name: "conditional-index", text: `HloModule cndi, num_partitions=$N
b0 {
  x = f32[$D,3] parameter(0)
  ROOT e = f32[$D,3] exponential(x)
}
b1 {
  x = f32[$D,3] parameter(0)
  ROOT n = f32[$D,3] negate(x)
}
b2 {
  x = f32[$D,3] parameter(0)
  ROOT c = f32[$D,3] sine(x), sharding={replicated}
}
ENTRY main {
  i = s32[] parameter(0)
  x = f32[$D,3] parameter(1), sharding={devices=[$N,1]<=[$N]}
  c = f32[$D,3] conditional(i, x, x, x), branch_computations={b0, b1, b2}
  ROOT o = f32[$D,3] add(c, x), sharding={devices=[$N,1]<=[$N]}
}`},
	// One body for two loops: rows tiled in one, columns in the other.
	// Each gets its own copy.
	{name: "shared-body", absent: []string{"all-gather"}, text: `HloModule shared, num_partitions=$N
cond {
  s = (s32[], f32[$D,$D]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[$D,$D]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[$D,$D] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  e = f32[$D,$D] sine(v)
  ROOT o = (s32[], f32[$D,$D]) tuple(j, e)
}
ENTRY main {
  x = f32[$D,$D] parameter(0), sharding={devices=[$N,1]<=[$N]}
  y = f32[$D,$D] parameter(1), sharding={devices=[1,$N]<=[$N]}
  zero = s32[] constant(0)
  a = (s32[], f32[$D,$D]) tuple(zero, x)
  b = (s32[], f32[$D,$D]) tuple(zero, y)
  la = (s32[], f32[$D,$D]) while(a), condition=cond, body=body
  lb = (s32[], f32[$D,$D]) while(b), condition=cond, body=body
  ra = f32[$D,$D] get-tuple-element(la), index=1
  rb = f32[$D,$D] get-tuple-element(lb), index=1
  ROOT o = (f32[$D,$D], f32[$D,$D]) tuple(ra, rb), sharding={{devices=[$N,1]<=[$N]}, {devices=[1,$N]<=[$N]}}
}`},
	// Loops nested in loops, the inner state annotated as JAX writes it.
	{name: "nested", absent: []string{"all-gather"}, text: `HloModule nested, num_partitions=$N
` + addComp + `
icond {
  s = (s32[], f32[$D,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ibody {
  s = (s32[], f32[$D,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[$D,4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  c = f32[$D,4] cosine(v)
  ROOT o = (s32[], f32[$D,4]) tuple(j, c)
}
ocond {
  s = (s32[], f32[$D,4], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
obody {
  s = (s32[], f32[$D,4], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[$D,4] get-tuple-element(s), index=1
  t = f32[] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  zero = s32[] constant(0)
  it = (s32[], f32[$D,4]) tuple(zero, v)
  il = (s32[], f32[$D,4]) while(it), condition=icond, body=ibody, sharding={{replicated}, {devices=[$N,1]<=[$N]}}
  w = f32[$D,4] get-tuple-element(il), index=1
  z = f32[] constant(0)
  r = f32[] reduce(w, z), dimensions={0,1}, to_apply=add
  t2 = f32[] add(t, r)
  ROOT o = (s32[], f32[$D,4], f32[]) tuple(j, w, t2)
}
ENTRY main {
  v = f32[$D,4] parameter(0), sharding={devices=[$N,1]<=[$N]}
  zero = s32[] constant(0)
  z = f32[] constant(0)
  init = (s32[], f32[$D,4], f32[]) tuple(zero, v, z)
  loop = (s32[], f32[$D,4], f32[]) while(init), condition=ocond, body=obody
  lv = f32[$D,4] get-tuple-element(loop), index=1
  lt = f32[] get-tuple-element(loop), index=2
  ROOT out = (f32[$D,4], f32[]) tuple(lv, lt), sharding={{devices=[$N,1]<=[$N]}, {replicated}}
}`},
}

func TestControlFlowMatchesEvaluator(t *testing.T) {
	for _, c := range controlCases {
		for _, d := range []string{"8", "7"} {
			for _, n := range []int{2, 3, 4} {
				t.Run(fmt.Sprintf("%s/%s/%d", c.name, d, n), func(t *testing.T) {
					text := strings.ReplaceAll(c.text, "$D", d)
					out := checkPartitioned(t, text, n)
					for _, op := range c.absent {
						if strings.Contains(out, " "+op+"(") {
							t.Errorf("contains %s:\n%s", op, out)
						}
					}
					_, st, err := spmd.PartitionWithStats(parseCase(t, text, n))
					if err != nil {
						t.Fatal(err)
					}
					if len(st.Fallbacks) > 0 {
						t.Errorf("fallbacks %v", st.Fallbacks)
					}
				})
			}
		}
	}
}

// One body called with two placements is copied twice (and so is the
// condition); called twice with one placement, once. The copies'
// instruction names are unique (the module verifies) and no source
// computation is left behind.
func TestControlFlowCopies(t *testing.T) {
	for _, c := range []struct {
		second string // the second loop's placement
		comps  int
	}{{"{devices=[1,$N]<=[$N]}", 5}, {"{devices=[$N,1]<=[$N]}", 3}} {
		text := strings.ReplaceAll(controlText(t, "shared-body"), "$D", "8")
		text = strings.ReplaceAll(text, "sharding={devices=[1,$N]<=[$N]}", "sharding="+c.second)
		text = strings.ReplaceAll(text, "{devices=[1,$N]<=[$N]}}", c.second+"}")
		checkPartitioned(t, text, 2)
		pm, err := spmd.Partition(parseCase(t, text, 2))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, comp := range pm.Computations {
			names = append(names, comp.Name)
		}
		if len(names) != c.comps {
			t.Errorf("second loop %s: computations %v, want %d", c.second, names, c.comps)
		}
	}
}

// controlText is the text of the control case named name.
func controlText(t *testing.T, name string) string {
	t.Helper()
	for _, c := range controlCases {
		if c.name == name {
			return c.text
		}
	}
	t.Fatalf("no case %s", name)
	return ""
}

// An instruction with no rule inside a loop body takes the fallback
// there (named body/instruction); the loop itself does not.
func TestControlFlowFallbackInBody(t *testing.T) {
	text := `HloModule srt, num_partitions=2
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
cond {
  s = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8,4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  srt = f32[8,4] sort(v), dimensions={0}, to_apply=lt
  ROOT o = (s32[], f32[8,4]) tuple(j, srt)
}
ENTRY main {
  v = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}
  zero = s32[] constant(0)
  init = (s32[], f32[8,4]) tuple(zero, v)
  loop = (s32[], f32[8,4]) while(init), condition=cond, body=body
  ROOT out = f32[8,4] get-tuple-element(loop), index=1, sharding={devices=[2,1]<=[2]}
}`
	checkPartitioned(t, text, 2)
	_, st, err := spmd.PartitionWithStats(parseCase(t, text, 2))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(st.Fallbacks) != "[body/srt]" {
		t.Errorf("fallbacks %v, want [body/srt]", st.Fallbacks)
	}
}
