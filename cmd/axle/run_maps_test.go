package main

import (
	"strings"
	"testing"
)

// A scikit-learn classifier as skl2onnx converts it by default (labels,
// and a ZipMap's sequence of maps from class to probability): axle run
// prints the labels with their checksum and the maps' sequence by its
// length and types, and --save-outputs refuses the maps, naming them.
func TestRunPrintsMapOutputs(t *testing.T) {
	const model = "../../onnx/onnxtest/testdata/ml/test_ml_skl2onnx_logreg_zipmap/model.onnx"
	stdout, stderr, code := runAxle("run", "--backend", "cpu", model)
	if code != 0 {
		t.Fatalf("axle run: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"result s64[1] checksum", "result seq(1 × map(int64[3]→float[])) (output_probability)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	_, stderr, code = runAxle("run", "--backend", "cpu", "--save-outputs", t.TempDir()+"/o.npz", model)
	if code == 0 || !strings.Contains(stderr, `output "output_probability" is seq(`) {
		t.Errorf("--save-outputs of a map output: exit %d, %s", code, stderr)
	}
}
