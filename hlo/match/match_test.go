package match_test

import (
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/hlo/match"
)

func entry(t *testing.T, body string) *hlo.Computation {
	t.Helper()
	m, err := hlotext.Parse("HloModule m\nENTRY e {\n"+body+"\n}", hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m.Entry
}

func TestOperandsCapturesAndOrder(t *testing.T) {
	c := entry(t, `  p = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT a = f32[4] add(zb, p)`)
	var x, zero *hlo.Instruction
	inOrder := match.Op(hlo.OpAdd, match.Any().Capture(&x), match.ScalarConstant(0).Capture(&zero))
	if inOrder.Match(c.Root) {
		t.Fatal("matched with operands swapped without AnyOrder")
	}
	if x != nil || zero != nil {
		t.Fatal("a failed match wrote captures")
	}
	if !inOrder.AnyOrder().Match(c.Root) {
		t.Fatal("AnyOrder did not try the swapped order")
	}
	if x == nil || x.Name != "p" || zero == nil || zero.Name != "zb" {
		t.Fatalf("captures x=%v zero=%v", x, zero)
	}
}

func TestScalarConstantLooksThroughBroadcast(t *testing.T) {
	c := entry(t, `  one = s32[] constant(1)
  b = s32[2,3] broadcast(one), dimensions={}
  k = s32[3] constant({1, 1, 1})
  k2 = s32[3] constant({1, 2, 1})
  n = f32[] constant(nan)
  ROOT t = (s32[2,3], s32[3], s32[3], f32[]) tuple(b, k, k2, n)`)
	ops := c.Root.Operands
	one := match.ScalarConstant(1)
	if !one.Match(ops[0]) || !one.Match(ops[1]) {
		t.Error("broadcast of 1 or all-ones array not matched")
	}
	if one.Match(ops[2]) {
		t.Error("array with a 2 matched as constant 1")
	}
	if match.ScalarConstant(0).Match(ops[3]) || match.AnyScalarConstant().Match(ops[3]) != true {
		t.Error("NaN must not equal 0 but is a scalar constant")
	}
}

func TestExplainSaysWhy(t *testing.T) {
	c := entry(t, `  p = f32[4] parameter(0)
  ROOT m = f32[4] multiply(p, p)`)
	p := match.Op(hlo.OpMultiply, match.Any(), match.ScalarConstant(1))
	why := p.Explain(c.Root)
	if !strings.Contains(why, "operand 1 of m") || !strings.Contains(why, "constant 1") {
		t.Fatalf("explanation %q does not name the operand and the requirement", why)
	}
	if w := match.Op(hlo.OpAdd).Explain(c.Root); !strings.Contains(w, "m is multiply, want add") {
		t.Fatalf("explanation %q", w)
	}
	if w := match.Op(hlo.OpMultiply).Rank(1).Float().Explain(c.Root); w != "" {
		t.Fatalf("matching pattern explained as %q", w)
	}
}

func TestNestedBacktrackingResetsCaptures(t *testing.T) {
	c := entry(t, `  p = f32[] parameter(0)
  q = f32[] parameter(1)
  n = f32[] negate(q)
  ROOT s = f32[] subtract(p, n)`)
	var inner *hlo.Instruction
	// First order: operand 0 must be a negate (p is not): fails after
	// nothing captured; second order binds inner to q.
	pat := match.Op(hlo.OpSubtract, match.Op(hlo.OpNegate, match.Any().Capture(&inner)), match.Any()).AnyOrder()
	if !pat.Match(c.Root) || inner == nil || inner.Name != "q" {
		t.Fatalf("inner = %v", inner)
	}
}
