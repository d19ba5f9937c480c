package onnxtest_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/onnx/graph"
	"github.com/axle-ml/axle/onnx/onnxtest"
)

// knownFailures reads testdata/known_failures.txt: "test_name<TAB>reason"
// lines of corpus tests that do not pass yet, each with its reason.
func knownFailures(t *testing.T) map[string]string {
	f, err := os.Open("testdata/known_failures.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, "\t")
		out[name] = reason
	}
	return out
}

// TestCorpus runs every ONNX backend test of ../shared/corpus/onnx and
// every model of ../shared/corpus/onnx-models on the compiled backend:
// each must pass (outputs from ONNX's reference and ONNX Runtime), but for
// the known failures listed with their reasons.
func TestCorpus(t *testing.T) {
	roots := []string{"../../../shared/corpus/onnx", "../../../shared/corpus/onnx-models", "testdata/models", "testdata/ml", "testdata/ortopt"}
	if _, err := os.Stat(roots[0]); err != nil {
		t.Skip("../shared/corpus/onnx is not there (a clone without the shared corpus)")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	known := knownFailures(t)
	dirs, err := onnxtest.Find(roots...)
	if err != nil {
		t.Fatal(err)
	}
	tols := onnxtest.Manifest(roots...)
	passed, failed := 0, 0
	for _, d := range dirs {
		name := filepath.Base(d)
		tol, ok := tols[name]
		if !ok {
			tol = onnxtest.DefaultTolerance
		}
		r := onnxtest.Run(context.Background(), d, tol, graph.Options{Backend: "cpu"})
		switch {
		case r.Status == onnxtest.Pass:
			passed++
			if _, listed := known[name]; listed {
				t.Logf("%s passes now: take it off testdata/known_failures.txt", name)
			}
		case known[name] != "":
			failed++
		default:
			failed++
			t.Errorf("%s %s: %s", r.Status, name, r.Reason)
		}
	}
	t.Logf("%d passed, %d failed (%d known)", passed, failed, len(known))
}
