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
	checkQuantizedExample(t, "../../examples/onnx/qlinear", 0.1) // X's range over 255 steps, W's over 254, 64 terms
}

// checkQuantizedExample runs an example folder's quant.onnx on the cpu
// backend and the evaluator and its f32.onnx on the cpu backend, all on
// its in.npz: the quantized results must be the same bits, and within tol
// of the f32 ones.
func checkQuantizedExample(t *testing.T, ex string, tol float64) {
	t.Helper()
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
	if worst > tol {
		t.Errorf("the quantized layer is %v off the f32 one (at most %v)", worst, tol)
	}
}

// The README's quantized convolution (examples/onnx/qconv, as ONNX
// Runtime's dynamic quantization writes a Conv): the cpu backend's result
// is the evaluator's bit for bit, and within the quantization's error of
// the f32 layer: X in [-1, 1) over 255 steps, W in [-0.5, 0.5) over 254,
// 72 products an output, each off by at most |x|·Δw/2 + |w|·Δx/2 + Δx·Δw/4
// ≤ 0.0040, so 0.29 in all.
func TestQuantizedConvExample(t *testing.T) {
	checkQuantizedExample(t, "../../examples/onnx/qconv", 0.29)
}
