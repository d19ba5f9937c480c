package cpu

import (
	"strings"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// stillOnEvaluator lists the instructions, as "opcode shape" prefixes,
// that may still fall back to the evaluator in the shared cases; every
// other instruction must compile to a kernel.
var stillOnEvaluator = []string{
	"convolution pred[",
}

// TestConformanceCompiles compiles every module of the shared
// conformance suites (and the computations they call) and fails on any
// instruction left to the evaluator that is not listed above.
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
			if allowedFallback(fb) {
				continue
			}
			if !seen[fb] {
				t.Errorf("%s: %s runs on the evaluator", c.Path, fb)
			}
			seen[fb] = true
		}
	}
	t.Logf("%d modules compiled", compiled)
}

func allowedFallback(fb string) bool {
	for _, p := range stillOnEvaluator {
		if strings.HasPrefix(fb, p) {
			return true
		}
	}
	return false
}
