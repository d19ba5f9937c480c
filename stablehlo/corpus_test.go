package stablehlo

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/axle-ml/axle/backend/cpu/compiler"

	"github.com/axle-ml/axle/backend/cpu"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// corpusDir is the StableHLO corpus beside the repository.
const corpusDir = "../../shared/corpus/stablehlo"

// clientExecutor runs modules on a backend: "cpu" compiles them with
// backend/cpu, "interp" runs them on the reference evaluator, as the
// runtime's two clients do. (The runtime itself reads StableHLO through
// package load, so this package's tests cannot import it.)
func clientExecutor(t testing.TB, backend string) Executor {
	if backend != "cpu" && backend != "interp" {
		t.Fatalf("unknown backend %q", backend)
	}
	return func(m *hlo.Module, args []*hlo.Literal) ([]*hlo.Literal, error) {
		if err := hlo.Verify(m); err != nil {
			return nil, err
		}
		var out *hlo.Literal
		var err error
		if backend == "interp" {
			out, err = eval.Run(m.Clone(), args...)
		} else {
			var x *cpu.Executable
			if x, err = cpu.Compile(m, cpu.Options{}); err == nil {
				out, err = x.Execute(args...)
			}
		}
		if err != nil {
			return nil, err
		}
		if out.Shape().IsTuple() {
			return out.Elements(), nil
		}
		return []*hlo.Literal{out}, nil
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
	t.Logf("%s: %d passed, %d failed, %d unsupported, %d skipped",
		backend, counts["pass"], counts["fail"], counts["unsupported"], counts["skip"])
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

// TestCorpusPrintsAsHLO prints every converted corpus module as HLO text
// and parses it back: the converter builds instructions the text form
// (and so XLA) accepts, attributes included.
func TestCorpusPrintsAsHLO(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skip("corpus not present:", err)
	}
	cases, err := FindCases(filepath.Join(corpusDir, "testdata"), filepath.Join(corpusDir, "interpret"))
	if err != nil {
		t.Fatal(err)
	}
	printed := 0
	for _, c := range cases {
		if c.Skip != "" {
			continue
		}
		src, err := mlir.Parse(c.File, c.Src)
		if err != nil || !hasFunc(src) {
			continue
		}
		m, err := Convert(src, Options{ArgShapes: sampleArgShapes(src), Entry: firstEntry(src)})
		if err != nil {
			continue // counted by the corpus runs
		}
		text := hlotext.Print(m, hlotext.PrintOptions{})
		back, err := hlotext.Parse(text, hlotext.Options{})
		if err == nil {
			err = hlo.Verify(back)
		}
		if err != nil {
			t.Errorf("%s: printed module does not parse back: %v", c.Name, err)
			continue
		}
		printed++
	}
	t.Logf("%d modules printed and parsed back", printed)
}

// firstEntry is the first function entries would run.
func firstEntry(m *mlir.Module) string { return entries(m)[0] }
