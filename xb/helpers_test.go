package xb_test

import (
	"math"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/xb"
)

// build finishes b with root, failing the test on an error, and checks
// that the module verifies.
func build(t *testing.T, b *xb.Builder, root *xb.Op) *hlo.Module {
	t.Helper()
	m, err := b.Build(root)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if err := hlo.Verify(m); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	roundTrip(t, m)
	return m
}

// roundTrip checks that m prints, parses back to a verified module and
// prints the same: every module the tests build goes through it.
func roundTrip(t *testing.T, m *hlo.Module) *hlo.Module {
	t.Helper()
	text := hlotext.Print(m, hlotext.Default)
	back, err := hlotext.Parse(text, hlotext.Options{File: m.Name + ".hlo"})
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	if err := hlo.Verify(back); err != nil {
		t.Fatalf("verify parsed: %v\n%s", err, text)
	}
	if again := hlotext.Print(back, hlotext.Default); again != text {
		t.Fatalf("round trip changed the text:\n%s\n----\n%s", text, again)
	}
	return back
}

// run evaluates m on args with the reference evaluator.
func run(t *testing.T, m *hlo.Module, args ...*hlo.Literal) *hlo.Literal {
	t.Helper()
	out, err := eval.Run(m, args...)
	if err != nil {
		t.Fatalf("eval.Run: %v", err)
	}
	return out
}

func lit[T hlo.Native](t *testing.T, data []T, dims ...int64) *hlo.Literal {
	t.Helper()
	l, err := hlo.LiteralFromSlice(data, dims...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func values[T hlo.Native](t *testing.T, l *hlo.Literal) []T {
	t.Helper()
	v, err := hlo.LiteralToSlice[T](l)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// near compares float32 results with hand-worked values.
func near(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values %v, want %d %v", what, len(got), got, len(want), want)
	}
	for i := range got {
		if !(math.Abs(float64(got[i])-want[i]) <= tol) {
			t.Fatalf("%s: element %d is %v, want %v (all: %v)", what, i, got[i], want[i], got)
		}
	}
}

func equal[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}
