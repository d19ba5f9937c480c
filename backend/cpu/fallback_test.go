package cpu

import (
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// TestConformanceCompiles compiles every module of the shared
// conformance suites (and the computations they call) and fails on any
// instruction left to the evaluator: every op the suites use has a
// kernel.
func TestConformanceCompiles(t *testing.T) {
	files, err := conformance.FindCases("/work/shared/conformance/cases", "/work/shared/conformance/xla-tests")
	if err != nil {
		t.Skipf("no shared cases: %v", err)
	}
	seen := map[string]bool{}
	compiled := 0
	for _, f := range files {
		c, err := conformance.LoadCase(f)
		if err != nil {
			continue
		}
		m, err := hlotext.Parse(c.HLO, hlotext.Options{})
		if err != nil || hlo.Verify(m) != nil {
			continue
		}
		x, err := Compile(m, Options{Threads: 2})
		if err != nil {
			continue // the cases that expect a compile error
		}
		compiled++
		for _, fb := range x.Fallbacks {
			if !seen[fb] {
				t.Errorf("%s: %s runs on the evaluator", c.Path, fb)
			}
			seen[fb] = true
		}
	}
	if compiled < 1000 {
		t.Fatalf("only %d modules compiled", compiled)
	}
	t.Logf("%d modules compiled", compiled)
}
