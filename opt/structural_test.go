package opt_test

import (
	"fmt"
	"testing"

	"github.com/axle-ml/axle/opt"
)

func TestTransposeFoldingIntoDot(t *testing.T) {
	checkPass(t, opt.TransposeFolding, hloModule(`
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[4,5] parameter(1)
  at = f32[3,4] transpose(a), dimensions={1,0}
  ROOT d = f32[3,5] dot(at, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`), hloModule(`
ENTRY e {
  a = f32[4,3] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT d = f32[3,5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}`))
}

// Must not fire: the transpose reorders the free dimensions, which are
// the result's dimensions.
func TestTransposeFoldingKeepsFreeDimensionOrder(t *testing.T) {
	checkPass(t, opt.TransposeFolding, hloModule(`
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[4,5] parameter(1)
  at = f32[3,2,4] transpose(a), dimensions={1,0,2}
  ROOT d = f32[3,2,5] dot(at, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
}`), "")
}

func TestTransposeFoldingIntoConvolutionKernel(t *testing.T) {
	checkPass(t, opt.TransposeFolding, hloModule(`
ENTRY e {
  x = f32[1,5,5,2] parameter(0)
  k = f32[3,3,2,4] parameter(1)
  kt = f32[4,2,3,3] transpose(k), dimensions={3,2,0,1}
  ROOT c = f32[1,3,3,4] convolution(x, kt), window={size=3x3}, dim_labels=b01f_oi01->b01f
}`), hloModule(`
ENTRY e {
  x = f32[1,5,5,2] parameter(0)
  k = f32[3,3,2,4] parameter(1)
  ROOT c = f32[1,3,3,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f
}`))
}

func TestCallInliner(t *testing.T) {
	checkPass(t, opt.CallInliner, hloModule(`
inner {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
outer {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT c = f32[] call(s), to_apply=inner
}
ENTRY e {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT c = f32[] call(p, q), to_apply=outer
}`), hloModule(`
ENTRY e {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  s = f32[] add(p, q)
  ROOT n = f32[] negate(s)
}`))
}

func TestTupleSimplifier(t *testing.T) {
	checkPass(t, opt.TupleSimplifier, hloModule(`
ENTRY e {
  p = (f32[], s32[]) parameter(0)
  a = f32[] get-tuple-element(p), index=0
  b = s32[] get-tuple-element(p), index=1
  t = (f32[], s32[]) tuple(a, b)
  x = f32[] get-tuple-element(t), index=0
  ROOT r = (f32[], (f32[], s32[])) tuple(x, t)
}`), hloModule(`
ENTRY e {
  p = (f32[], s32[]) parameter(0)
  a = f32[] get-tuple-element(p), index=0
  ROOT r = (f32[], (f32[], s32[])) tuple(a, p)
}`))
}

// Must not fire: the elements are swapped.
func TestTupleSimplifierKeepsReorderedTuple(t *testing.T) {
	checkPass(t, opt.TupleSimplifier, hloModule(`
ENTRY e {
  p = (f32[], f32[]) parameter(0)
  a = f32[] get-tuple-element(p), index=0
  b = f32[] get-tuple-element(p), index=1
  ROOT t = (f32[], f32[]) tuple(b, a)
}`), "")
}

func TestZeroSizedElimination(t *testing.T) {
	checkPass(t, opt.ZeroSizedElimination, hloModule(`
ENTRY e {
  p = f32[0,3] parameter(0)
  n = f32[0,3] negate(p)
  ROOT e = f32[0,3] exponential(n)
}`), hloModule(`
ENTRY e {
  p = f32[0,3] parameter(0)
  ROOT e = f32[0,3] constant({})
}`))
}

const branches = `
neg {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
ex {
  x = f32[] parameter(0)
  ROOT n = f32[] exponential(x)
}
`

func TestConditionalSimplifierConstantIndex(t *testing.T) {
	// Index 7 is out of range: the last branch runs.
	checkPass(t, opt.ConditionalSimplifier, hloModule(branches, `
ENTRY e {
  i = s32[] constant(7)
  p = f32[] parameter(0)
  ROOT c = f32[] conditional(i, p, p), branch_computations={neg, ex}
}`), hloModule(`
ex {
  x = f32[] parameter(0)
  ROOT n = f32[] exponential(x)
}
ENTRY e {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=ex
}`))
}

func TestConditionalSimplifierUnknownPredicate(t *testing.T) {
	checkPass(t, opt.ConditionalSimplifier, hloModule(branches, `
ENTRY e {
  b = pred[] parameter(1)
  p = f32[] parameter(0)
  ROOT c = f32[] conditional(b, p, p), true_computation=neg, false_computation=ex
}`), "")
}

const loop = `
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(%d)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  f = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  f1 = f32[] sine(f)
  ROOT t = (s32[], f32[]) tuple(i1, f1)
}
ENTRY e {
  z = s32[] constant(0)
  p = f32[] parameter(0)
  init = (s32[], f32[]) tuple(z, p)
  ROOT w = (s32[], f32[]) while(init), condition=cond, body=body
}`

func TestWhileSimplifierTripCounts(t *testing.T) {
	checkPass(t, opt.WhileSimplifier, hloModule(sprintf(loop, 0)), hloModule(`
ENTRY e {
  z = s32[] constant(0)
  p = f32[] parameter(0)
  ROOT init = (s32[], f32[]) tuple(z, p)
}`))
	checkPass(t, opt.WhileSimplifier, hloModule(sprintf(loop, 1)), hloModule(`
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  f = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  f1 = f32[] sine(f)
  ROOT t = (s32[], f32[]) tuple(i1, f1)
}
ENTRY e {
  z = s32[] constant(0)
  p = f32[] parameter(0)
  init = (s32[], f32[]) tuple(z, p)
  ROOT w = (s32[], f32[]) call(init), to_apply=body
}`))
	checkPass(t, opt.WhileSimplifier, hloModule(sprintf(loop, 2)), "")
}

var sprintf = fmt.Sprintf

// exp(x) of the pass-through element x moves before the loop and rides
// along as a third state element; the counter and accumulator stay.
func TestLoopInvariantCodeMotion(t *testing.T) {
	const before = `
cond {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  acc = f32[4] get-tuple-element(s), index=2
  e = f32[4] exponential(x)
  acc1 = f32[4] add(acc, e)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i1, x, acc1)
}
ENTRY e {
  z = s32[] constant(0)
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  init = (s32[], f32[4], f32[4]) tuple(z, p, q)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
}`
	const after = `
cond {
  s = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x = f32[4] get-tuple-element(s), index=1
  acc = f32[4] get-tuple-element(s), index=2
  e = f32[4] get-tuple-element(s), index=3
  acc1 = f32[4] add(acc, e)
  ROOT t = (s32[], f32[4], f32[4], f32[4]) tuple(i1, x, acc1, e)
}
ENTRY e {
  z = s32[] constant(0)
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  init = (s32[], f32[4], f32[4]) tuple(z, p, q)
  g0 = s32[] get-tuple-element(init), index=0
  g1 = f32[4] get-tuple-element(init), index=1
  g2 = f32[4] get-tuple-element(init), index=2
  ex = f32[4] exponential(g1)
  init2 = (s32[], f32[4], f32[4], f32[4]) tuple(g0, g1, g2, ex)
  w = (s32[], f32[4], f32[4], f32[4]) while(init2), condition=cond, body=body
  o0 = s32[] get-tuple-element(w), index=0
  o1 = f32[4] get-tuple-element(w), index=1
  o2 = f32[4] get-tuple-element(w), index=2
  ROOT r = (s32[], f32[4], f32[4]) tuple(o0, o1, o2)
}`
	checkPass(t, opt.LoopInvariantCodeMotion, hloModule(before), hloModule(after))
	// Nothing left to hoist the second time.
	got, _ := runPass(t, opt.LoopInvariantCodeMotion, hloModule(after))
	if got != normalize(t, hloModule(after)) {
		t.Fatal("second run changed the module")
	}
}

// One run sinks the reshapes below the add; the multiply, whose operand
// is the new reshape, moves on the pipeline's next round.
func TestReshapeMoverSinksMatchingReshapes(t *testing.T) {
	checkPass(t, opt.ReshapeMover, hloModule(`
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  two = f32[] constant(2)
  c = f32[6] broadcast(two), dimensions={}
  s = f32[6] add(ra, rb)
  ROOT m = f32[6] multiply(s, c)
}`), hloModule(`
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  s = f32[2,3] add(a, b)
  rs = f32[6] reshape(s)
  two = f32[] constant(2)
  c = f32[6] broadcast(two), dimensions={}
  ROOT m = f32[6] multiply(rs, c)
}`))
}

// Must not fire: the reshapes come from different shapes, and a transpose
// with another user would be duplicated.
func TestReshapeMoverLeavesMismatches(t *testing.T) {
	checkPass(t, opt.ReshapeMover, hloModule(`
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  s = f32[6] add(ra, rb)
  c = f32[3,2] parameter(2)
  tc = f32[2,3] transpose(c), dimensions={1,0}
  n = f32[2,3] negate(tc)
  ROOT t = (f32[6], f32[2,3], f32[2,3]) tuple(s, n, tc)
}`), "")
}

// The comparator reads only the keys; the second sorted operand is never
// read, so it goes, and the sort of the keys alone returns an array.
func TestSortSimplifierDropsUnreadOperand(t *testing.T) {
	checkPass(t, opt.SortSimplifier, hloModule(`
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = f32[8] parameter(0)
  v = s32[8] parameter(1)
  s = (f32[8], s32[8]) sort(k, v), dimensions={0}, to_apply=cmp
  ROOT g = f32[8] get-tuple-element(s), index=0
}`), hloModule(`
cmp.1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = f32[8] parameter(0)
  v = s32[8] parameter(1)
  ROOT s = f32[8] sort(k), dimensions={0}, to_apply=cmp.1
}`))
}

// Must not fire: the values are read (argsort-style).
func TestSortSimplifierKeepsReadOperand(t *testing.T) {
	checkPass(t, opt.SortSimplifier, hloModule(`
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = f32[8] parameter(0)
  v = s32[8] parameter(1)
  s = (f32[8], s32[8]) sort(k, v), dimensions={0}, to_apply=cmp
  ROOT g = s32[8] get-tuple-element(s), index=1
}`), "")
}

// Element 2 (a running product nobody reads) is dead; element 1 is read
// after the loop and stays.
func TestWhileDeadState(t *testing.T) {
	checkPass(t, opt.WhileDeadState, hloModule(`
cond {
  s = (s32[], f32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  f = f32[] get-tuple-element(s), index=1
  g = f32[] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  f1 = f32[] sine(f)
  g1 = f32[] multiply(g, f)
  ROOT t = (s32[], f32[], f32[]) tuple(i1, f1, g1)
}
ENTRY e {
  z = s32[] constant(0)
  p = f32[] parameter(0)
  init = (s32[], f32[], f32[]) tuple(z, p, p)
  w = (s32[], f32[], f32[]) while(init), condition=cond, body=body
  ROOT r = f32[] get-tuple-element(w), index=1
}`), hloModule(`
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  f = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  f1 = f32[] sine(f)
  ROOT t = (s32[], f32[]) tuple(i1, f1)
}
ENTRY e {
  z = s32[] constant(0)
  p = f32[] parameter(0)
  init = (s32[], f32[]) tuple(z, p)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT r = f32[] get-tuple-element(w), index=1
}`))
}

// Must not fire: element 2 feeds element 1's next value.
func TestWhileDeadStateKeepsFeedingElement(t *testing.T) {
	checkPass(t, opt.WhileDeadState, hloModule(`
cond {
  s = (s32[], f32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  f = f32[] get-tuple-element(s), index=1
  g = f32[] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  f1 = f32[] add(f, g)
  ROOT t = (s32[], f32[], f32[]) tuple(i1, f1, g)
}
ENTRY e {
  z = s32[] constant(0)
  p = f32[] parameter(0)
  init = (s32[], f32[], f32[]) tuple(z, p, p)
  w = (s32[], f32[], f32[]) while(init), condition=cond, body=body
  ROOT r = f32[] get-tuple-element(w), index=1
}`), "")
}
