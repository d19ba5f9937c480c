package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/npy"
)

// TestJAXExample runs README's "From JAX" worked example as a user would:
// the StableHLO module JAX prints for a small MLP (examples/jax/mlp.mlir),
// its arguments from NumPy (in.npz), and the result compared with what
// NumPy computed in float64 (expected.npz, written by make_inputs.py), on
// the evaluator and on the compiled cpu path.
func TestJAXExample(t *testing.T) {
	const ex = "../../examples/jax"
	want, err := npy.ReadNPZ(filepath.Join(ex, "expected.npz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--backend", "interp"},
		{"--backend", "cpu", "--repeat", "1000"}, // enough runs for the cost model to compile it
	} {
		out := filepath.Join(t.TempDir(), "out.npz")
		args = append(args, "--inputs", filepath.Join(ex, "in.npz"), "--save-outputs", out, filepath.Join(ex, "mlp.mlir"))
		if _, stderr, code := runAxle(append([]string{"run"}, args...)...); code != 0 {
			t.Fatalf("axle run %v: exit %d: %s", args, code, stderr)
		}
		got, err := npy.ReadNPZ(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Name != "output_0" || !got[0].Lit.Shape().Equal(want[0].Lit.Shape()) {
			t.Fatalf("%v: outputs %v, want one output_0 of %v", args, got, want[0].Lit.Shape())
		}
		g, w := got[0].Lit.Data().([]float32), want[0].Lit.Data().([]float32)
		for i := range w {
			if math.Abs(float64(g[i]-w[i])) > 1e-6 {
				t.Fatalf("%v: element %d = %g, NumPy's %g", args, i, g[i], w[i])
			}
		}
	}
}

// TestMLIRDoor: every command that reads modules takes StableHLO, by
// extension or by content, and bad MLIR is reported at FILE:LINE:COL.
func TestMLIRDoor(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../examples/jax/mlp.mlir")
	if err != nil {
		t.Fatal(err)
	}
	noExt := filepath.Join(dir, "model")
	if err := os.WriteFile(noExt, src, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"verify"}, {"parse"}, {"opt"}, {"run", "--backend", "interp"}} {
		if _, stderr, code := runAxle(append(cmd, noExt)...); code != 0 {
			t.Errorf("axle %v on MLIR without extension: exit %d: %s", cmd, code, stderr)
		}
	}
	bad := filepath.Join(dir, "bad.mlir")
	text := "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.add %a, %nope : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n"
	if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runAxle("verify", bad)
	if code == 0 || !strings.Contains(stderr, bad+":2:") {
		t.Errorf("axle verify on an undefined value: exit %d, stderr %q; want an error at %s:2:col", code, stderr, bad)
	}
}
