package axle

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// chain is a module of n computations, each calling the next twice: a
// fingerprint that walks call sites rather than computations visits 2^n
// bodies.
func chain(t *testing.T, n int) *hlo.Module {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "HloModule chain\n\nc%d {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n", n-1)
	for i := n - 2; i >= 0; i-- {
		fmt.Fprintf(&b, "\nc%d {\n  p = f32[] parameter(0)\n  a = f32[] call(p), to_apply=c%d\n  b = f32[] call(a), to_apply=c%d\n  ROOT s = f32[] add(a, b)\n}\n", i, i+1, i+1)
	}
	b.WriteString("\nENTRY main {\n  x = f32[] parameter(0)\n  ROOT r = f32[] call(x), to_apply=c0\n}\n")
	m, err := hlotext.Parse(b.String(), hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFingerprintSharedCallees: 30 computations each calling the next
// twice hash in well under a second (each body once), and the hash still
// sees a change deep in the chain.
func TestFingerprintSharedCallees(t *testing.T) {
	m := chain(t, 30)
	start := time.Now()
	a := fingerprint(m)
	if d := time.Since(start); d > time.Second {
		t.Fatalf("fingerprint of a 30-deep shared call chain took %v", d)
	}
	leaf := m.Computations[0].Root // c29's negate
	if leaf.Opcode != hlo.OpNegate {
		t.Fatalf("leaf is %s", leaf.Opcode)
	}
	leaf.Opcode = hlo.OpAbs
	if fingerprint(m) == a {
		t.Error("changing the deepest callee left the fingerprint unchanged")
	}
}

// TestFingerprintCycle: a module whose computations call each other in a
// cycle (invalid, but the fingerprint must not rely on the verifier)
// hashes in finite time, and differently from the acyclic one.
func TestFingerprintCycle(t *testing.T) {
	m := chain(t, 4)
	before := fingerprint(m)
	var c1 *hlo.Computation
	for _, c := range m.Computations {
		if c.Name == "c1" {
			c1 = c
		}
	}
	for _, in := range c1.Instructions {
		for i, a := range in.Attrs {
			if a.Name == "to_apply" {
				in.Attrs[i].Value = c1 // c1 calls itself
			}
		}
	}
	done := make(chan [32]byte)
	go func() { done <- fingerprint(m) }()
	select {
	case after := <-done:
		if after == before {
			t.Error("the cyclic module hashes as the acyclic one")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("fingerprint of a cyclic module did not return")
	}
}

// TestFingerprintNames: instruction names other than the entry's
// parameters' do not change the fingerprint; operand order, parameter
// numbers and called computations' bodies do.
func TestFingerprintNames(t *testing.T) {
	const text = `HloModule f
sq {
  v = f32[] parameter(0)
  ROOT m = f32[] multiply(v, v)
}
ENTRY main {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  d = f32[] subtract(x, y)
  ROOT c = f32[] call(d), to_apply=sq
}`
	sum := func(text string) [32]byte {
		m, err := hlotext.Parse(text, hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return fingerprint(m)
	}
	base := sum(text)
	renamed := strings.NewReplacer("d = ", "diff = ", "(d)", "(diff)", "m = ", "sq2 = ", "(v, v)", "(w, w)", "v = ", "w = ").Replace(text)
	if sum(renamed) != base {
		t.Error("renaming instructions changed the fingerprint")
	}
	for _, changed := range []string{
		strings.Replace(text, "subtract(x, y)", "subtract(y, x)", 1),
		strings.Replace(text, "multiply(v, v)", "add(v, v)", 1),
		strings.Replace(strings.Replace(text, "parameter(0)\n  y", "parameter(1)\n  y", 1), "y = f32[] parameter(1)", "y = f32[] parameter(0)", 1),
	} {
		if changed == text {
			t.Fatal("the edit did not apply")
		}
		if sum(changed) == base {
			t.Errorf("a different module hashes the same:\n%s", changed)
		}
	}
}

// TestFingerprintBulkConstants: constants past bulkBytes hash as digests
// of their pieces, computed over the threads ahead of the walk. Each byte
// still counts (a change in the first, a middle or the last piece changes
// the fingerprint), equal weights in two
// modules give one fingerprint, and the walk's digest of a literal the
// parallel pass did not see (bulkDigest) is the same as the pass's.
func TestFingerprintBulkConstants(t *testing.T) {
	const n = bulkBytes/4*3 + 7 // three pieces and a few floats
	build := func() (*hlo.Module, []float32) {
		t.Helper()
		m, err := hlotext.Parse(fmt.Sprintf(`HloModule big
ENTRY e {
  x = f32[%d] parameter(0)
  w = f32[%d] constant({...})
  ROOT s = f32[%d] add(x, w)
}
`, n, n, n), hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var w *hlo.Instruction
		for _, in := range m.Entry.Instructions {
			if in.Opcode == hlo.OpConstant {
				w = in
			}
		}
		data := make([]float32, n)
		for i := range data {
			data[i] = float32(i%1000) * 0.25
		}
		lit, err := hlo.NewLiteralFromData(w.Shape, data)
		if err != nil {
			t.Fatal(err)
		}
		w.Literal = lit
		return m, data
	}
	m, data := build()
	base := fingerprint(m)
	other, _ := build()
	if fingerprint(other) != base {
		t.Fatal("two modules with equal weights fingerprint differently")
	}
	for _, i := range []int{0, n / 2, n - 1} {
		old := data[i]
		data[i] += 1
		if fingerprint(m) == base {
			t.Errorf("changing weight %d of %d left the fingerprint unchanged", i, n)
		}
		data[i] = old
	}
	if fingerprint(m) != base {
		t.Fatal("restoring the weights did not restore the fingerprint")
	}
	var lit *hlo.Literal
	for _, in := range m.Entry.Instructions {
		if in.Opcode == hlo.OpConstant {
			lit = in.Literal
		}
	}
	if got, want := bulkDigests(m)[lit], bulkDigest(lit.RawBytes()); got != want {
		t.Errorf("the parallel digest %x differs from the serial one %x", got[:8], want[:8])
	}
}
