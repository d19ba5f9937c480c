package cpu

import (
	"testing"
)

// TestRngStateCompiled: rng-get-and-update-state runs as a kernel (not
// on the evaluator) and returns the evaluator's state sequence: the
// second instruction sees the first one's delta.
func TestRngStateCompiled(t *testing.T) {
	m, x := compileText(t, `HloModule state
ENTRY main {
  a = u64[2] rng-get-and-update-state(), delta=5
  b = u64[2] rng-get-and-update-state(), delta=7
  ROOT t = (u64[2], u64[2]) tuple(a, b)
}`, Options{Threads: 2, Poison: true})
	if len(x.Fallbacks) != 0 || x.Lowering["rng-get-and-update-state"] != 2 {
		t.Fatalf("lowering %v, fallbacks %v", x.Lowering, x.Fallbacks)
	}
	got, want := evalAndRun(t, m, x, nil)
	if !got.Equal(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	a, b := got.Elements()[0], got.Elements()[1]
	if b.GetUint64(0)-a.GetUint64(0) != 5 && a.GetUint64(0)-b.GetUint64(0) != 7 {
		t.Fatalf("states %v and %v are not one delta apart", a, b)
	}
}
