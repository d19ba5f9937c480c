package opt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// chain is depth+1 computations, c0 computing 3x+1 on s32 and each c(k)
// computing f(x) + f(f(x)) with f = c(k-1): fully inlined, 2^depth copies
// of c0.
func chain(t *testing.T, depth int) *hlo.Module {
	t.Helper()
	var b strings.Builder
	b.WriteString("HloModule chain\n\nc0 {\n  p = s32[] parameter(0)\n  three = s32[] constant(3)\n  one = s32[] constant(1)\n" +
		"  m = s32[] multiply(p, three)\n  ROOT n = s32[] add(m, one)\n}\n")
	for k := 1; k <= depth; k++ {
		fmt.Fprintf(&b, "\nc%d {\n  p = s32[] parameter(0)\n  a = s32[] call(p), to_apply=c%d\n", k, k-1)
		fmt.Fprintf(&b, "  b = s32[] call(a), to_apply=c%d\n  ROOT s = s32[] add(a, b)\n}\n", k-1)
	}
	fmt.Fprintf(&b, "\nENTRY e {\n  p = s32[] parameter(0)\n  ROOT r = s32[] call(p), to_apply=c%d\n}\n", depth)
	m, err := hlotext.Parse(b.String(), hlotext.Options{File: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func size(m *hlo.Module) int {
	n := 0
	for _, c := range m.Computations {
		n += len(c.Instructions)
	}
	return n
}

// calls counts the call instructions left, and how many of them are marked
// inlineable="false".
func calls(m *hlo.Module) (n, marked int) {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Opcode == hlo.OpCall {
				n++
				if !inlineable(in) {
					marked++
				}
			}
		}
	}
	return n, marked
}

// Issue 43's module: 2^30 copies if inlined whole. The pass stops at its
// budget, keeps (and marks) the other calls, and a second run, as the
// pipeline's fix-call-inliner makes, changes nothing.
func TestCallInlinerBudgetDepth30(t *testing.T) {
	m := chain(t, 30)
	if !inlineCalls(m, minInlineBudget) {
		t.Fatal("nothing inlined")
	}
	if err := hlo.Verify(m); err != nil {
		t.Fatal(err)
	}
	if n := size(m); n > minInlineBudget {
		t.Errorf("%d instructions after inlining, want at most the budget %d", n, minInlineBudget)
	}
	n, marked := calls(m)
	if n == 0 || marked != n {
		t.Errorf("%d calls left, %d marked: want calls kept, all marked", n, marked)
	}
	if inlineCalls(m, minInlineBudget) {
		t.Error("second run changed the module: its decisions must stick")
	}
}

// A small floor makes the budget bite at depth 8 (4 × 46 instructions):
// partly inlined, the module computes what it did, by the evaluator.
func TestCallInlinerPartialAgreesWithEvaluator(t *testing.T) {
	orig := chain(t, 8)
	m := chain(t, 8)
	inlineCalls(m, 0)
	if err := hlo.Verify(m); err != nil {
		t.Fatal(err)
	}
	if n, _ := calls(m); n == 0 {
		t.Fatal("every call inlined: want the budget to keep some")
	}
	if n := size(m); n > 4*size(orig) {
		t.Errorf("%d instructions, want at most 4 × %d", n, size(orig))
	}
	for _, v := range []int32{0, 1, -5, 99991} {
		want, err := eval.Run(orig, hlo.ScalarLiteral(v))
		if err != nil {
			t.Fatal(err)
		}
		got, err := eval.Run(m, hlo.ScalarLiteral(v))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Errorf("c8(%d): inlined %v, original %v", v, got, want)
		}
	}
}

// A callee with a single call site always inlines, however large: the
// copy replaces it, and the module does not grow.
func TestCallInlinerSingleSiteIgnoresBudget(t *testing.T) {
	m := chain(t, 0) // e calls c0 once
	if !inlineCalls(m, 0) {
		t.Fatal("nothing inlined")
	}
	if n, _ := calls(m); n != 0 || len(m.Computations) != 1 {
		t.Errorf("%d calls, %d computations left: want one flat entry", n, len(m.Computations))
	}
}

// CSE keys called bodies by digest: on the depth-30 chain (which it used
// to print 2^30 bodies deep for) it finishes, and merges nothing wrongly.
func TestCSEDepth30(t *testing.T) {
	m := chain(t, 30)
	if _, err := runCSE(m); err != nil {
		t.Fatal(err)
	}
	if err := hlo.Verify(m); err != nil {
		t.Fatal(err)
	}
}

func TestFrontendEntries(t *testing.T) {
	got := frontendEntries(`{a="x,y",b={n = 1 : i32, t = dense<1>},inlineable="false"}`)
	want := []frontendEntry{{"a", `"x,y"`}, {"b", `{n = 1 : i32, t = dense<1>}`}, {"inlineable", `"false"`}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A call the frontend marked inlineable="false" stays, as in XLA.
func TestCallInlinerKeepsCallsMarkedNotInlineable(t *testing.T) {
	m, err := hlotext.Parse(`HloModule m
f {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
ENTRY e {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=f, frontend_attributes={_xla_stream="1",inlineable="false"}
}`, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if inlineCalls(m, minInlineBudget) {
		t.Errorf("inlined a call marked inlineable=\"false\":\n%s", hlotext.Print(m, hlotext.Short))
	}
}
