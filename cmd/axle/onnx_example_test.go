package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/npy"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxtest"
)

// TestONNXSoftPlacementExample runs README's "From ONNX" example as a user
// would: a classifier whose NonZero the compiled device refuses. With soft
// placement (the default) the placement log shows the two clusters around
// the NonZero running op by op on the evaluator device, and the outputs
// equal ONNX Runtime's (test_data_set_0, written by make_example.py); with
// it off the load fails naming the node, its op and why.
func TestONNXSoftPlacementExample(t *testing.T) {
	const ex = "../../examples/onnx"
	model := filepath.Join(ex, "scores_nonzero", "model.onnx")
	out := filepath.Join(t.TempDir(), "out.npz")
	stdout, stderr, code := runAxle("run", "--backend", "cpu", "--log-placement", "--inputs", filepath.Join(ex, "scores_nonzero_in.npz"),
		"--save-outputs", out, model)
	if code != 0 {
		t.Fatalf("axle run: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		`node "softmax" (Softmax): cpu:0, cluster_0`,
		`node "nonzero" (NonZero): eval:0, op by op (soft placement: cpu:0: NonZero has no HLO lowering`,
		`node "pairs" (Transpose): cpu:0, cluster_2`,
		"cluster_0 on cpu:0: 5 nodes, 1 inputs (0 by value), 2 outputs",
		"result s64[7,2] checksum",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("placement log lacks %q:\n%s", want, stdout)
		}
	}
	got, err := npy.ReadNPZ(out)
	if err != nil {
		t.Fatal(err)
	}
	for k, name := range []string{"probs", "hits"} {
		want, err := onnx.ReadValueFile(filepath.Join(ex, "scores_nonzero", "test_data_set_0", "output_"+string(rune('0'+k))+".pb"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got[k].Name != name {
			t.Fatalf("output %d is %q, want %q", k, got[k].Name, name)
		}
		if err := onnxtest.Compare(onnx.LiteralValue(got[k].Lit), want, onnxtest.DefaultTolerance); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, stderr, code = runAxle("run", "--no-soft-placement", model)
	if code == 0 || !strings.Contains(stderr, `node "nonzero" (NonZero) cannot run on cpu:0: NonZero has no HLO lowering`) {
		t.Errorf("--no-soft-placement: exit %d, stderr %q", code, stderr)
	}
}

// --cpuprofile works for an ONNX model as for HLO: a pprof profile
// (gzip-compressed protobuf) of the timed runs; an unwritable path fails
// naming the flag.
func TestONNXCPUProfile(t *testing.T) {
	model := filepath.Join("../../examples/onnx", "scores_nonzero", "model.onnx")
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	if _, errs, code := runAxle("run", "--backend", "cpu", "--warmup", "1", "--repeat", "3", "--cpuprofile", prof, model); code != 0 {
		t.Fatalf("--cpuprofile: exit %d: %s", code, errs)
	}
	if b, err := os.ReadFile(prof); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("--cpuprofile wrote %d bytes (%v), not a gzip stream", len(b), err)
	}
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "p")
	if _, errs, code := runAxle("run", "--cpuprofile", bad, model); code == 0 || !strings.Contains(errs, "--cpuprofile") {
		t.Errorf("unwritable --cpuprofile: exit %d, %q", code, errs)
	}
}
