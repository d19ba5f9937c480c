package opt_test

import (
	"slices"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/opt"
)

// simplifyCase is one rule test: entry body before and after ("" = the
// simplifier must not fire).
type simplifyCase struct {
	name, rule    string
	before, after string
}

// Reducer computations the cases refer to.
const reducers = `
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
`

var simplifyCases = []simplifyCase{
	{"add zero either side", "add-zero", `
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT a = f32[4] add(zb, p)`, `
  ROOT p = f32[4] parameter(0)`},
	{"add non-zero constant", "", `
  p = f32[4] parameter(0)
  z = f32[] constant(1)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT a = f32[4] add(p, zb)`, ""},
	{"subtract zero only on the right", "", `
  p = s32[4] parameter(0)
  z = s32[4] constant({0, 0, 0, 0})
  ROOT s = s32[4] subtract(z, p)`, ""},
	{"subtract zero", "subtract-zero", `
  p = s32[4] parameter(0)
  z = s32[4] constant({0, 0, 0, 0})
  ROOT s = s32[4] subtract(p, z)`, `
  ROOT p = s32[4] parameter(0)`},
	{"multiply one", "multiply-one", `
  p = f32[2] parameter(0)
  c = f32[2] constant({1, 1})
  ROOT m = f32[2] multiply(c, p)`, `
  ROOT p = f32[2] parameter(0)`},
	{"float multiply by zero stays (NaN*0)", "", `
  p = f32[2] parameter(0)
  c = f32[2] constant({0, 0})
  ROOT m = f32[2] multiply(p, c)`, ""},
	{"integer multiply by zero", "multiply-zero-integer", `
  p = s32[2] parameter(0)
  c = s32[] constant(0)
  b = s32[2] broadcast(c), dimensions={}
  ROOT m = s32[2] multiply(p, b)`, `
  p = s32[2] parameter(0)
  c = s32[] constant(0)
  ROOT b = s32[2] broadcast(c), dimensions={}`},
	{"integer x-x", "subtract-self-integer", `
  p = s32[2] parameter(0)
  ROOT s = s32[2] subtract(p, p)`, `
  p = s32[2] parameter(0)
  c = s32[] constant(0)
  ROOT b = s32[2] broadcast(c), dimensions={}`},
	{"float x-x stays (inf-inf)", "", `
  p = f32[2] parameter(0)
  ROOT s = f32[2] subtract(p, p)`, ""},
	{"max self", "idempotent-self", `
  p = f32[2] parameter(0)
  ROOT s = f32[2] maximum(p, p)`, `
  ROOT p = f32[2] parameter(0)`},
	{"divide by one", "divide-one", `
  p = f32[2] parameter(0)
  c = f32[] constant(1)
  b = f32[2] broadcast(c), dimensions={}
  ROOT d = f32[2] divide(p, b)`, `
  ROOT p = f32[2] parameter(0)`},
	{"divide one by x stays", "", `
  p = f32[2] parameter(0)
  c = f32[] constant(1)
  b = f32[2] broadcast(c), dimensions={}
  ROOT d = f32[2] divide(b, p)`, ""},
	{"select with equal branches", "select-same-branches", `
  c = pred[2] parameter(0)
  p = f32[2] parameter(1)
  ROOT s = f32[2] select(c, p, p)`, `
  c = pred[2] parameter(0)
  ROOT p = f32[2] parameter(1)`},
	{"double negate", "double-negate", `
  p = f32[2] parameter(0)
  n = f32[2] negate(p)
  ROOT nn = f32[2] negate(n)`, `
  ROOT p = f32[2] parameter(0)`},
	{"divide by 4", "divide-power-of-two", `
  p = f32[2] parameter(0)
  c = f32[] constant(4)
  b = f32[2] broadcast(c), dimensions={}
  ROOT d = f32[2] divide(p, b)`, `
  p = f32[2] parameter(0)
  c = f32[] constant(0.25)
  b = f32[2] broadcast(c), dimensions={}
  ROOT m = f32[2] multiply(p, b)`},
	{"divide by 3 stays (1/3 inexact)", "", `
  p = f32[2] parameter(0)
  c = f32[] constant(3)
  b = f32[2] broadcast(c), dimensions={}
  ROOT d = f32[2] divide(p, b)`, ""},
	{"power 2", "power-constant", `
  p = f32[2] parameter(0)
  c = f32[2] constant({2, 2})
  ROOT w = f32[2] power(p, c)`, `
  p = f32[2] parameter(0)
  ROOT m = f32[2] multiply(p, p)`},
	{"power -1", "power-constant", `
  p = f32[] parameter(0)
  c = f32[] constant(-1)
  ROOT w = f32[] power(p, c)`, `
  p = f32[] parameter(0)
  one = f32[] constant(1)
  ROOT d = f32[] divide(one, p)`},
	{"convert of broadcast", "unary-of-broadcast", `
  p = f16[3] parameter(0)
  b = f16[2,3] broadcast(p), dimensions={1}
  ROOT c = f32[2,3] convert(b)`, `
  p = f16[3] parameter(0)
  c = f32[3] convert(p)
  ROOT b = f32[2,3] broadcast(c), dimensions={1}`},
	{"negate of scalar broadcast", "unary-of-broadcast", `
  p = f32[] parameter(0)
  b = f32[4] broadcast(p), dimensions={}
  ROOT n = f32[4] negate(b)`, `
  p = f32[] parameter(0)
  n = f32[] negate(p)
  ROOT b = f32[4] broadcast(n), dimensions={}`},
	{"transpose moving unit dims", "transpose-unit-dims", `
  p = f32[5,1,3] parameter(0)
  ROOT t = f32[1,5,3] transpose(p), dimensions={1,0,2}`, `
  p = f32[5,1,3] parameter(0)
  ROOT r = f32[1,5,3] reshape(p)`},
	{"transpose swapping real dims stays", "", `
  p = f32[5,1,3] parameter(0)
  ROOT t = f32[3,1,5] transpose(p), dimensions={2,1,0}`, ""},
	{"power 0.5 stays (-0, -inf)", "", `
  p = f32[] parameter(0)
  c = f32[] constant(0.5)
  ROOT w = f32[] power(p, c)`, ""},
	{"integer compare self", "compare-self-integer", `
  p = s32[3] parameter(0)
  ROOT c = pred[3] compare(p, p), direction=LE`, `
  p = s32[3] parameter(0)
  t = pred[] constant(true)
  ROOT b = pred[3] broadcast(t), dimensions={}`},
	{"float compare self stays (NaN)", "", `
  p = f32[3] parameter(0)
  ROOT c = pred[3] compare(p, p), direction=EQ`, ""},
	{"select constant predicate", "select-constant-predicate", `
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  f = pred[] constant(false)
  fb = pred[3] broadcast(f), dimensions={}
  ROOT s = f32[3] select(fb, p, q)`, `
  p = f32[3] parameter(0)
  ROOT q = f32[3] parameter(1)`},
	{"no-op reshape, transpose, broadcast, convert, slice", "noop-*", `
  p = f32[2,3] parameter(0)
  r = f32[2,3] reshape(p)
  t = f32[2,3] transpose(r), dimensions={0,1}
  b = f32[2,3] broadcast(t), dimensions={0,1}
  c = f32[2,3] convert(b)
  ROOT s = f32[2,3] slice(c), slice={[0:2], [0:3]}`, `
  ROOT p = f32[2,3] parameter(0)`},
	{"reshape of reshape", "reshape-of-reshape", `
  p = f32[2,3] parameter(0)
  r = f32[6] reshape(p)
  ROOT r2 = f32[3,2] reshape(r)`, `
  p = f32[2,3] parameter(0)
  ROOT r = f32[3,2] reshape(p)`},
	{"transpose of transpose composes", "transpose-of-transpose", `
  p = f32[2,3,4] parameter(0)
  t = f32[3,4,2] transpose(p), dimensions={1,2,0}
  ROOT t2 = f32[4,3,2] transpose(t), dimensions={1,0,2}`, `
  p = f32[2,3,4] parameter(0)
  ROOT t = f32[4,3,2] transpose(p), dimensions={2,1,0}`},
	{"broadcast of broadcast", "broadcast-of-broadcast", `
  p = f32[3] parameter(0)
  b = f32[2,3] broadcast(p), dimensions={1}
  ROOT b2 = f32[2,5,3] broadcast(b), dimensions={0,2}`, `
  p = f32[3] parameter(0)
  ROOT b = f32[2,5,3] broadcast(p), dimensions={2}`},
	{"slice of strided slice", "slice-of-slice", `
  p = f32[20] parameter(0)
  s = f32[9] slice(p), slice={[2:19:2]}
  ROOT s2 = f32[3] slice(s), slice={[1:8:3]}`, `
  p = f32[20] parameter(0)
  ROOT s = f32[3] slice(p), slice={[4:17:6]}`},
	{"concatenate of adjacent slices", "concatenate-adjacent-slices", `
  p = f32[4,10] parameter(0)
  a = f32[4,3] slice(p), slice={[0:4], [1:4]}
  b = f32[4,5] slice(p), slice={[0:4], [4:9]}
  ROOT c = f32[4,8] concatenate(a, b), dimensions={1}`, `
  p = f32[4,10] parameter(0)
  ROOT s = f32[4,8] slice(p), slice={[0:4], [1:9]}`},
	{"concatenate of non-adjacent slices stays", "", `
  p = f32[10] parameter(0)
  a = f32[3] slice(p), slice={[1:4]}
  b = f32[5] slice(p), slice={[5:10]}
  ROOT c = f32[8] concatenate(a, b), dimensions={0}`, ""},
	{"reduce of reduce", "reduce-of-reduce", `
  p = f32[2,3,4] parameter(0)
  z = f32[] constant(0)
  r = f32[2,4] reduce(p, z), dimensions={1}, to_apply=add
  ROOT r2 = f32[4] reduce(r, z), dimensions={0}, to_apply=add`, `
  p = f32[2,3,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p, z), dimensions={0,1}, to_apply=add`},
	{"reduce of reduce with non-identity init stays", "", `
  p = f32[2,3] parameter(0)
  z = f32[] constant(1)
  r = f32[2] reduce(p, z), dimensions={1}, to_apply=add
  ROOT r2 = f32[] reduce(r, z), dimensions={0}, to_apply=add`, ""},
	{"max-reduce of broadcast", "reduce-of-broadcast", `
  p = f32[3] parameter(0)
  b = f32[5,3] broadcast(p), dimensions={1}
  m = f32[] constant(-inf)
  ROOT r = f32[3] reduce(b, m), dimensions={0}, to_apply=max`, `
  ROOT p = f32[3] parameter(0)`},
	{"add-reduce of broadcast", "reduce-of-broadcast", `
  p = f32[3] parameter(0)
  b = f32[3,4] broadcast(p), dimensions={0}
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(b, z), dimensions={1}, to_apply=add`, `
  p = f32[3] parameter(0)
  n = f32[] constant(4)
  nb = f32[3] broadcast(n), dimensions={}
  ROOT m = f32[3] multiply(p, nb)`},
	{"dot with contracting size 1", "dot-to-multiply", `
  a = f32[3,1] parameter(0)
  b = f32[1,4] parameter(1)
  ROOT d = f32[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}`, `
  a = f32[3,1] parameter(0)
  ra = f32[3] reshape(a)
  ba = f32[3,4] broadcast(ra), dimensions={0}
  b = f32[1,4] parameter(1)
  rb = f32[4] reshape(b)
  bb = f32[3,4] broadcast(rb), dimensions={1}
  ROOT m = f32[3,4] multiply(ba, bb)`},
	{"dot with contracting size 2 stays", "", `
  a = f32[3,2] parameter(0)
  b = f32[2,4] parameter(1)
  ROOT d = f32[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}`, ""},
}

func TestSimplifierRules(t *testing.T) {
	for _, c := range simplifyCases {
		t.Run(c.name, func(t *testing.T) {
			before := hloModule(reducers, "ENTRY e {"+c.before+"\n}")
			after := ""
			if c.after != "" {
				after = hloModule(reducers, "ENTRY e {"+c.after+"\n}")
			}
			var fired []string
			s := &opt.Simplifier{Trace: func(rule string, _ *hlo.Instruction) { fired = append(fired, rule) }}
			checkPass(t, s, before, after)
			if c.rule != "" && c.rule != "noop-*" && !slices.Contains(fired, c.rule) {
				t.Errorf("rules fired %v, want %s among them", fired, c.rule)
			}
		})
	}
}

// Every rule in the table has a test case above.
func TestEveryRuleTested(t *testing.T) {
	tested := map[string]bool{}
	for _, c := range simplifyCases {
		tested[c.rule] = true
	}
	for _, r := range opt.Rules() {
		if !tested[r] && !(len(r) > 5 && r[:5] == "noop-") {
			t.Errorf("rule %s has no test case", r)
		}
	}
}
