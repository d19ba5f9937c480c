package opt_test

import (
	"testing"

	"github.com/axle-ml/axle/opt"
)

func TestDCERemovesUnusedKeepsSideEffects(t *testing.T) {
	checkPass(t, opt.DCE, hloModule(`
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  unused = f32[4] add(p, q)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  ROOT m = f32[4] multiply(p, p)
}`), hloModule(`
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  ROOT m = f32[4] multiply(p, p)
}`))
}

func TestDCERemovesUncalledComputationAndDeadCallParameter(t *testing.T) {
	checkPass(t, opt.DCE, hloModule(`
never {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
callee {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] sine(y)
}
ENTRY e {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  pp = f32[] exponential(p)
  ROOT c = f32[] call(pp, q), to_apply=callee
}`), hloModule(`
callee {
  y = f32[] parameter(0)
  ROOT s = f32[] sine(y)
}
ENTRY e {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT c = f32[] call(q), to_apply=callee
}`))
}

// A while body's signature is fixed by the loop state: an unused element
// is loop state, not a removable parameter.
func TestDCEKeepsWhileSignature(t *testing.T) {
	checkPass(t, opt.DCE, hloModule(`
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(i, ten), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  f = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT t = (s32[], f32[]) tuple(n, f)
}
ENTRY e {
  p = (s32[], f32[]) parameter(0)
  ROOT w = (s32[], f32[]) while(p), condition=cond, body=body
}`), "")
}
