package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/npy"
)

const polyDir = "../../examples/jax/poly"

// TestJAXShapePolymorphic runs the shape-polymorphic export of
// examples/jax/poly in both of JAX's forms — poly.mlir, whose @main reads
// the batch size with get_dimension_size, checks it with shape
// assertions and passes it to a private function as a leading scalar;
// poly_dimargs.mlir, whose @main takes it as a leading argument — on the
// inputs of two batch sizes (in2.npz, in5.npz: the arrays only, as a JAX
// caller passes them), on both backends, and compares with NumPy's
// results (expected<N>.npz from make_inputs.py, exact in float32).
func TestJAXShapePolymorphic(t *testing.T) {
	for _, module := range []string{"poly.mlir", "poly_dimargs.mlir"} {
		for _, batch := range []int{2, 5} {
			for _, backend := range [][]string{{"--backend", "interp"}, {"--backend", "cpu", "--repeat", "1000"}} {
				out := filepath.Join(t.TempDir(), "out.npz")
				args := append([]string{"run"}, backend...)
				args = append(args, "--inputs", filepath.Join(polyDir, fmt.Sprintf("in%d.npz", batch)), "--save-outputs", out, filepath.Join(polyDir, module))
				if _, stderr, code := runAxle(args...); code != 0 {
					t.Fatalf("axle %v: exit %d: %s", args, code, stderr)
				}
				got := readArrays(t, out)
				want := readArrays(t, filepath.Join(polyDir, fmt.Sprintf("expected%d.npz", batch)))
				for name, w := range want {
					if g := got[name]; g == nil || !g.Equal(w) {
						t.Errorf("%s batch %d %v: %s = %v, NumPy's %v", module, batch, backend, name, g, w)
					}
				}
			}
		}
	}
}

// TestJAXShapePolymorphicErrors: arguments that contradict the
// polymorphic shapes are errors naming the argument: a batch dimension
// bound to two sizes (JAX's own shape-assertion message, or for the
// leading-argument form ours), a rank mismatch, and a dimension variable
// given explicitly with the wrong value.
func TestJAXShapePolymorphicErrors(t *testing.T) {
	in5 := readList(t, filepath.Join(polyDir, "in5.npz"))
	in2 := readList(t, filepath.Join(polyDir, "in2.npz"))
	x3, err := hlo.NewLiteralFromData(hlo.ArrayShape(hlo.F32, 5, 4, 1), in5[2].Lit.Data())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, arrays ...npy.Array) string {
		for i := range arrays {
			arrays[i].Name = fmt.Sprintf("arr_%d", i)
		}
		p := filepath.Join(dir, name)
		if err := npy.WriteNPZ(p, arrays); err != nil {
			t.Fatal(err)
		}
		return p
	}
	twoSizes := write("two.npz", in5[0], in5[1], in5[2], in2[3])
	rank := write("rank.npz", in5[0], in5[1], npy.Array{Lit: x3}, in5[3])
	dimVar := write("dimvar.npz", npy.Array{Lit: hlo.ScalarLiteral[int64](4)}, in5[0], in5[1], in5[2], in5[3])
	for _, c := range []struct{ module, inputs, want string }{
		{"poly.mlir", twoSizes, "poly.mlir:9:5: stablehlo.custom_call: Input shapes do not match the polymorphic shapes specification. Found inconsistency between dimension size args[3].shape[0] (= 2) and the specification 'batch' (= 5)"},
		{"poly_dimargs.mlir", twoSizes, "argument 4: dimension 0 has size 2, which no dimension variable has (batch = 5)"},
		{"poly.mlir", rank, "poly.mlir:2:3: argument 2 (%arg2): shape f32[5,4,1] does not fit type tensor<?x4xf32>"},
		{"poly_dimargs.mlir", rank, "poly_dimargs.mlir:2:3: argument 3 (%arg3): shape f32[5,4,1] does not fit type tensor<?x4xf32>"},
		{"poly_dimargs.mlir", dimVar, `parameter 0 "arg0.1" (s64[]) is a dimension variable of value 5 by the other arrays' shapes, but array ` + dimVar + ":arr_0 gives 4"},
	} {
		_, stderr, code := runAxle("run", "--inputs", c.inputs, filepath.Join(polyDir, c.module))
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s on %s: exit %d, stderr %q; want %q", c.module, filepath.Base(c.inputs), code, stderr, c.want)
		}
	}
}

func readList(t *testing.T, path string) []npy.Array {
	t.Helper()
	arrays, err := npy.ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	return arrays
}

func readArrays(t *testing.T, path string) map[string]*hlo.Literal {
	t.Helper()
	m := map[string]*hlo.Literal{}
	for _, a := range readList(t, path) {
		m[a.Name] = a.Lit
	}
	return m
}
