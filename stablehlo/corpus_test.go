package stablehlo

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
)

// corpusDir is the StableHLO corpus beside the repository.
const corpusDir = "../../shared/corpus/stablehlo"

// clientExecutor runs modules on an axle client of the given backend.
func clientExecutor(t testing.TB, backend string) Executor {
	c, err := axle.NewClient(axle.ClientOptions{Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	return func(m *hlo.Module) ([]*hlo.Literal, error) {
		x, err := c.Compile(m, axle.CompileOptions{})
		if err != nil {
			return nil, err
		}
		return x.ExecuteLiterals()
	}
}

// runCorpus runs every case under the corpus folders on one backend: a
// case may pass, be skipped (RUN-DISABLED, serialized checks) or be
// unsupported (an ErrUnsupported conversion error, counted by reason);
// anything else fails the test. Expected values are the corpus's own
// checks.
func runCorpus(t *testing.T, backend string, filter func(Case) bool) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skip("corpus not present:", err)
	}
	cases, err := FindCases(filepath.Join(corpusDir, "testdata"), filepath.Join(corpusDir, "interpret"))
	if err != nil {
		t.Fatal(err)
	}
	exec := clientExecutor(t, backend)
	counts := map[string]int{}
	reasons := map[string]int{}
	for _, c := range cases {
		if filter != nil && !filter(c) {
			continue
		}
		o := RunCase(c, exec)
		counts[o.Status]++
		switch o.Status {
		case "fail":
			t.Errorf("%s: %s", c.Name, o.Reason)
		case "unsupported":
			reasons[o.Reason]++
		}
	}
	t.Logf("%s: %d passed, %d failed, %d unsupported, %d skipped", backend, counts["pass"], counts["fail"], counts["unsupported"], counts["skip"])
	t.Log(topReasons(reasons, 25))
}

// topReasons formats the most frequent unsupported reasons.
func topReasons(reasons map[string]int, n int) string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range reasons {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	var b strings.Builder
	b.WriteString("unsupported by reason:")
	for i, e := range all {
		if i == n {
			break
		}
		fmt.Fprintf(&b, "\n  %4d %s", e.v, e.k)
	}
	return b.String()
}

func TestCorpusInterp(t *testing.T) { runCorpus(t, "interp", nil) }

// TestCorpusCPU compiles every program for the cpu backend (about 20 s
// on one core, so -short skips it).
func TestCorpusCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	runCorpus(t, "cpu", nil)
}
