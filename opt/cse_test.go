package opt_test

import (
	"testing"

	"github.com/axle-ml/axle/opt"
)

func TestCSEMergesEqualInstructions(t *testing.T) {
	checkPass(t, opt.CSE, hloModule(`
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] add(p, p)
  b = f32[4] add(p, p)
  c1 = f32[] constant(2)
  c2 = f32[] constant(2)
  ROOT t = (f32[4], f32[4], f32[], f32[]) tuple(a, b, c1, c2)
}`), hloModule(`
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] add(p, p)
  c1 = f32[] constant(2)
  ROOT t = (f32[4], f32[4], f32[], f32[]) tuple(a, a, c1, c1)
}`))
}

// Equal called computations make equal instructions even when the
// computations are distinct objects with different names.
func TestCSEComparesCalledComputationBodies(t *testing.T) {
	checkPass(t, opt.CSE, hloModule(`
add1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add2 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=add1
  r2 = f32[] reduce(p, z), dimensions={0}, to_apply=add2
  ROOT m = f32[] multiply(r1, r2)
}`), hloModule(`
add1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add2 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=add1
  ROOT m = f32[] multiply(r1, r1)
}`))
}

// Must not fire: rng is side-effecting, constants differ, attributes
// differ, operands differ.
func TestCSEDoesNotMergeDifferentOrEffectful(t *testing.T) {
	checkPass(t, opt.CSE, hloModule(`
ENTRY e {
  p = f32[2,2] parameter(0)
  q = f32[2,2] parameter(1)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r1 = f32[2,2] rng(lo, hi), distribution=rng_uniform
  r2 = f32[2,2] rng(lo, hi), distribution=rng_uniform
  t1 = f32[2,2] transpose(p), dimensions={1,0}
  t2 = f32[2,2] transpose(p), dimensions={0,1}
  a1 = f32[2,2] add(p, q)
  a2 = f32[2,2] add(q, p)
  ROOT t = (f32[2,2], f32[2,2], f32[2,2], f32[2,2], f32[2,2], f32[2,2]) tuple(r1, r2, t1, t2, a1, a2)
}`), "")
}
