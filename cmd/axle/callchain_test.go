package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeChain writes Axle issue 43's module: c0 negating and 30 levels
// each calling the one below twice (2^30 calls inlined whole).
func writeChain(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("HloModule chain\n\nc0 {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n")
	for k := 1; k <= 30; k++ {
		fmt.Fprintf(&b, "\nc%d {\n  p = f32[] parameter(0)\n  a = f32[] call(p), to_apply=c%d\n", k, k-1)
		fmt.Fprintf(&b, "  b = f32[] call(a), to_apply=c%d\n  ROOT s = f32[] add(a, b)\n}\n", k-1)
	}
	b.WriteString("\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c30\n}\n")
	path := filepath.Join(t.TempDir(), "chain30.hlo")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// `axle opt` finishes on it, keeping the calls past the inliner's budget.
func TestOptCallChain(t *testing.T) {
	out, errs, code := runAxle("opt", writeChain(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `inlineable="false"`) {
		t.Errorf("no call kept past the budget in:\n%.2000s", out)
	}
}

// `axle run --timeout` covers compiling: the cpu backend's compilation
// (--repeat 1000: the cost model compiles) is cancelled at the deadline.
func TestRunTimeoutCoversCompiling(t *testing.T) {
	start := time.Now()
	_, errs, code := runAxle("run", "--backend", "cpu", "--repeat", "1000", "--timeout", "20ms", writeChain(t))
	if code != 1 || !strings.Contains(errs, "deadline exceeded") {
		t.Fatalf("exit %d, %q: want the deadline's error", code, errs)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("returned after %v", d)
	}
}
