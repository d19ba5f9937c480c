package cpu

import (
	"strings"
	"testing"
)

// A scalar add run once is not worth compiling; run many times, or a
// large computation run once, is.
func TestCostModel(t *testing.T) {
	const tiny = `HloModule tiny
ENTRY e {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}`
	const big = `HloModule big
ENTRY e {
  x = f32[1024,1024] parameter(0)
  e = f32[1024,1024] exponential(x)
  ROOT s = f32[1024,1024] add(e, x)
}`
	for _, c := range []struct {
		name, text string
		runs       int
		engine     string
	}{
		{"tiny once", tiny, 1, "evaluator"},
		{"tiny many", tiny, 100000, "compiled"},
		{"tiny unknown", tiny, 0, "compiled"},
		{"big once", big, 1, "compiled"},
	} {
		m, x := compileText(t, c.text, Options{ExpectedRuns: c.runs})
		if !strings.HasPrefix(x.Engine, c.engine) {
			t.Errorf("%s: engine %q, want %s", c.name, x.Engine, c.engine)
		}
		if c.name != "big once" { // exp's kernel differs from the evaluator by ulps
			checkAgainstEvaluator(t, m, x, 2)
		}
	}
}
