package opt_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/opt"
	"github.com/axle-ml/axle/pass"
)

const modelDir = "../../shared/corpus/hlo/xla/backends/cpu/benchmarks/hlo"

func loadModel(t testing.TB, path string) *hlo.Module {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("corpus not found (%v): clone with ../shared beside the repository", err)
	}
	m, err := hlotext.Parse(string(text), hlotext.Options{File: path})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func countInstructions(m *hlo.Module) int {
	n := 0
	for _, c := range m.Computations {
		n += len(c.Instructions)
	}
	return n
}

// TestStandardPipelineOnModels: on every real model the pipeline runs with
// every check on, shrinks the module, and the result evaluates to the same
// values as the original on the same seeded inputs.
func TestStandardPipelineOnModels(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(modelDir, "*.hlo"))
	if len(files) == 0 {
		t.Skip("no corpus models found")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			orig := loadModel(t, f)
			args := eval.RandomArguments(orig, 1)
			m := loadModel(t, f)
			eval.RandomArguments(m, 1) // the same constants
			before := countInstructions(m)
			if _, err := opt.Standard().RunWith(m, pass.Options{Verify: true, CheckUnchanged: true}); err != nil {
				t.Fatal(err)
			}
			after := countInstructions(m)
			t.Logf("%d instructions before, %d after", before, after)
			if after >= before {
				t.Errorf("pipeline did not shrink the module: %d -> %d", before, after)
			}
			if testing.Short() {
				return
			}
			want, err := eval.Run(orig, args...)
			if err != nil {
				t.Fatalf("original: %v", err)
			}
			got, err := eval.Run(m, args...)
			if err != nil {
				t.Fatalf("optimized: %v", err)
			}
			if err := conformance.Compare(got, want, conformance.Tolerance{Atol: 1e-2, Rtol: 1e-2}); err != nil {
				t.Fatalf("optimized module computes differently: %v", err)
			}
		})
	}
}

// BenchmarkStandardPipeline times the whole pipeline on the largest corpus
// model (parsing excluded).
func BenchmarkStandardPipeline(b *testing.B) {
	path := filepath.Join(modelDir, "ssd_mobilenet_tf.hlo")
	text, err := os.ReadFile(path)
	if err != nil {
		b.Skipf("corpus not found: %v", err)
	}
	for b.Loop() {
		b.StopTimer()
		m, err := hlotext.Parse(string(text), hlotext.Options{File: path})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := opt.Standard().Run(m); err != nil {
			b.Fatal(err)
		}
	}
}
