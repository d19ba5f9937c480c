package main

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/axle-ml/axle/npy"
)

// TestQuantizedLayerExample runs examples/onnx/qlinear (make_qlinear.py):
// the dense layer as ONNX Runtime's dynamic quantization writes it gives
// the same bits on the cpu backend as on the evaluator, and stays within
// the quantization's error of the f32 layer.
func TestQuantizedLayerExample(t *testing.T) {
	const ex = "../../examples/onnx/qlinear"
	in := filepath.Join(ex, "in.npz")
	run := func(backend, model string) []float32 {
		out := filepath.Join(t.TempDir(), "out.npz")
		if _, stderr, code := runAxle("run", "--backend", backend, "--inputs", in, "--save-outputs", out, filepath.Join(ex, model)); code != 0 {
			t.Fatalf("axle run --backend %s %s: exit %d: %s", backend, model, code, stderr)
		}
		got, err := npy.ReadNPZ(out)
		if err != nil {
			t.Fatal(err)
		}
		return got[0].Lit.Data().([]float32)
	}
	q, qi, f := run("cpu", "quant.onnx"), run("interp", "quant.onnx"), run("cpu", "f32.onnx")
	worst := 0.0
	for i := range q {
		if math.Float32bits(q[i]) != math.Float32bits(qi[i]) {
			t.Fatalf("element %d: cpu %v, evaluator %v", i, q[i], qi[i])
		}
		worst = max(worst, math.Abs(float64(q[i]-f[i])))
	}
	if worst > 0.1 { // X's range over 255 steps, W's over 254, 64 terms
		t.Errorf("the quantized layer is %v off the f32 one", worst)
	}
}
