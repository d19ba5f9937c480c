package cpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// chainModule is a module of depth+1 computations, c0 the base and each
// c(k) computing f(x) + f(f(x)) with f = c(k-1): 2^depth calls of c0
// when run, each computation called twice by the next.
func chainModule(t *testing.T, dtype string, base []string, depth int) *hlo.Module {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "HloModule chain\n\nc0 {\n  p = %s[] parameter(0)\n", dtype)
	for _, l := range base {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	b.WriteString("}\n")
	for k := 1; k <= depth; k++ {
		fmt.Fprintf(&b, "\nc%d {\n  p = %[2]s[] parameter(0)\n  a = %[2]s[] call(p), to_apply=c%[3]d\n", k, dtype, k-1)
		fmt.Fprintf(&b, "  b = %s[] call(a), to_apply=c%d\n  ROOT s = %[1]s[] add(a, b)\n}\n", dtype, k-1)
	}
	fmt.Fprintf(&b, "\nENTRY e {\n  p = %s[] parameter(0)\n  ROOT r = %[1]s[] call(p), to_apply=c%d\n}\n", dtype, depth)
	m, err := hlotext.Parse(b.String(), hlotext.Options{File: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Hand-worked, depth 3. With f = negate, c1(x) = -x + x = 0, and so is
// every level above. With f(x) = x + 1: c1(x) = 2x + 3, c2(x) = c1(x) +
// c1(c1(x)) = 6x + 12, c3(x) = c2(x) + c2(c2(x)) = 42x + 96: 138 at 1.
// Both with the calls kept (no optimization) and inlined.
func TestCallChainHandWorked(t *testing.T) {
	cases := []struct {
		base []string
		x    float32
		want float32
	}{
		{[]string{"ROOT n = f32[] negate(p)"}, 1.5, 0},
		{[]string{"one = f32[] constant(1)", "ROOT n = f32[] add(p, one)"}, 1, 138},
	}
	for _, c := range cases {
		for _, noOpt := range []bool{true, false} {
			x, err := Compile(chainModule(t, "f32", c.base, 3), Options{NoOptimize: noOpt, Poison: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := x.Execute(hlo.ScalarLiteral(c.x))
			if err != nil {
				t.Fatal(err)
			}
			if g := got.GetFloat64(0); g != float64(c.want) {
				t.Errorf("%v, NoOptimize %v: c3(%v) = %v, want %v", c.base, noOpt, c.x, g, c.want)
			}
		}
	}
}

// Deep enough that the inliner's budget keeps calls, and the compiled
// code shares one executable per called computation: the result agrees
// with the evaluator (s32 wraps, so both must agree exactly).
func TestCallChainSharedAgainstEvaluator(t *testing.T) {
	m := chainModule(t, "s32", []string{"three = s32[] constant(3)", "one = s32[] constant(1)",
		"m = s32[] multiply(p, three)", "ROOT n = s32[] add(m, one)"}, 14)
	x, err := Compile(m, Options{Poison: true})
	if err != nil {
		t.Fatal(err)
	}
	if x.Lowering["call"] == 0 {
		t.Fatalf("lowering %v: want calls kept", x.Lowering)
	}
	if n, comps := distinctSubs(x), len(x.Module().Computations); n > comps {
		t.Errorf("%d executables compiled for %d computations: want each compiled once", n, comps)
	}
	for _, v := range []int32{0, 1, -7, 123456} {
		want, err := eval.Run(m, hlo.ScalarLiteral(v))
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Execute(hlo.ScalarLiteral(v))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Errorf("c14(%d) = %v, evaluator %v", v, got, want)
		}
	}
}

// distinctSubs counts the executables x's control flow runs, at any depth.
func distinctSubs(x *Executable) int {
	seen := map[*Executable]bool{}
	var walk func(x *Executable)
	walk = func(x *Executable) {
		for _, s := range x.subs {
			if !seen[s] {
				seen[s] = true
				walk(s)
			}
		}
	}
	walk(x)
	return len(seen)
}

// Without the optimizer every call stays a call: 2^20 call sites on the
// paths of a depth-20 chain, yet one compiled executable per computation
// (compiling per site would not finish). f = negate: 0, hand-worked above.
func TestCallChainCompilesEachComputationOnce(t *testing.T) {
	const depth = 20
	x, err := Compile(chainModule(t, "f32", []string{"ROOT n = f32[] negate(p)"}, depth), Options{NoOptimize: true, Poison: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := distinctSubs(x); n != depth+1 {
		t.Errorf("%d executables compiled, want %d: one per called computation", n, depth+1)
	}
	got, err := x.Execute(hlo.ScalarLiteral(float32(2.5)))
	if err != nil {
		t.Fatal(err)
	}
	if g := got.GetFloat64(0); g != 0 {
		t.Errorf("c%d(2.5) = %v, want 0", depth, g)
	}
}
