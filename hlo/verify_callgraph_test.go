package hlo_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// TestVerifyRejectsCallGraphCycles: HLO computations cannot recurse; every
// way of calling (call, while body and condition, conditional branches,
// fusion, map, a reducer), mutual recursion and an entry that calls itself
// is a verifier error naming the computations on the cycle (Axle issue
// 43: they verified, and evaluating them never ended).
func TestVerifyRejectsCallGraphCycles(t *testing.T) {
	const scalarF = `
f {
  x = f32[] parameter(0)
  ROOT c = f32[] %s
}
`
	selfCall := func(instr string) string { return fmt.Sprintf(scalarF, instr) }
	cases := []struct{ name, hlo, comp, cycle string }{
		{"call", module(selfCall("call(x), to_apply=f"), `
  x = f32[] parameter(0)
  ROOT c = f32[] call(x), to_apply=f`), "f", "f -> f"},
		{"map", module(selfCall("map(x), dimensions={}, to_apply=f"), `
  x = f32[] parameter(0)
  ROOT c = f32[] call(x), to_apply=f`), "f", "f -> f"},
		{"fusion", module(selfCall("fusion(x), kind=kLoop, calls=f"), `
  x = f32[] parameter(0)
  ROOT c = f32[] fusion(x), kind=kLoop, calls=f`), "f", "f -> f"},
		{"reducer", module(`
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  r = f32[] reduce(a, b), dimensions={}, to_apply=add
  ROOT s = f32[] add(r, b)
}
`, `
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add`), "add", "add -> add"},
		{"while body", module(`
cond {
  s = s32[] parameter(0)
  z = s32[] constant(3)
  ROOT lt = pred[] compare(s, z), direction=LT
}
body {
  s = s32[] parameter(0)
  ROOT w = s32[] while(s), condition=cond, body=body
}
`, `
  s = s32[] parameter(0)
  ROOT w = s32[] while(s), condition=cond, body=body`), "body", "body -> body"},
		{"while condition", module(`
cond {
  s = s32[] parameter(0)
  w = s32[] while(s), condition=cond, body=body
  z = s32[] constant(3)
  ROOT lt = pred[] compare(w, z), direction=LT
}
body {
  s = s32[] parameter(0)
  ROOT n = s32[] negate(s)
}
`, `
  s = s32[] parameter(0)
  ROOT w = s32[] while(s), condition=cond, body=body`), "cond", "cond -> cond"},
		{"conditional branch", module(`
b0 {
  x = f32[] parameter(0)
  p = pred[] constant(true)
  ROOT c = f32[] conditional(p, x, x), true_computation=b0, false_computation=b1
}
b1 {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
`, `
  p = pred[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(p, x, x), true_computation=b0, false_computation=b1`), "b0", "b0 -> b0"},
		{"mutual", module(`
g {
  x = f32[] parameter(0)
  ROOT c = f32[] call(x), to_apply=h
}
h {
  x = f32[] parameter(0)
  ROOT c = f32[] call(x), to_apply=g
}
`, `
  x = f32[] parameter(0)
  ROOT c = f32[] call(x), to_apply=g`), "g", "g -> h -> g"},
		{"entry", module("", `
  x = f32[] parameter(0)
  ROOT c = f32[] call(x), to_apply=e`), "e", "e -> e"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantProblem(t, hlo.Verify(mustParse(t, c.hlo)), c.comp, "", "the call graph has a cycle: "+c.cycle)
		})
	}
}

// sharedCallChain is a module of n+1 computations where c_i calls c_{i-1}
// twice: 2^n calls if walked as a tree, n+1 computations as a graph.
func sharedCallChain(n int) string {
	var b strings.Builder
	b.WriteString("HloModule chain\nc0 {\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x)\n}\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "c%d {\n  x = f32[] parameter(0)\n  a = f32[] call(x), to_apply=c%d\n  ROOT b = f32[] call(a), to_apply=c%d\n}\n", i, i-1, i-1)
	}
	fmt.Fprintf(&b, "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT a = f32[] call(x), to_apply=c%d\n}\n", n)
	return b.String()
}

// TestSharedCalleesAreLinear: a 4 KB module of 30 computations, each
// calling the next twice, parses, verifies, prints, clones and prunes as a
// graph; a walk that recursed per call site would take 2^30 steps and
// this test would not finish.
func TestSharedCalleesAreLinear(t *testing.T) {
	text := sharedCallChain(30)
	if len(text) > 4096 {
		t.Fatalf("the module is %d bytes, want it under 4 KB", len(text))
	}
	m := mustParse(t, text)
	if err := hlo.Verify(m); err != nil {
		t.Fatal(err)
	}
	printed := hlotext.Print(m, hlotext.PrintOptions{})
	if got := strings.Count(printed, "call("); got != 61 {
		t.Fatalf("printed %d calls, want 61 (two in each of 30 computations, one in the entry)", got)
	}
	c := m.Clone()
	if err := hlo.Verify(c); err != nil {
		t.Fatal(err)
	}
	if c.RemoveUnreachableComputations() || len(c.Computations) != 32 {
		t.Fatalf("pruning removed computations: %d left, want 32", len(c.Computations))
	}
}
