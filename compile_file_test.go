package axle_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hloproto"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/load"
	"github.com/axle-ml/axle/npy"
)

const polyDir = "examples/jax/poly"

// TestCompileFileRefines compiles the shape-polymorphic export
// examples/jax/poly/poly.mlir (`tensor<?x4xf32>`, as jax.export writes it)
// for two batch sizes through CompileFile with ArgShapes, runs each on
// in<N>.npz and compares with expected<N>.npz, which NumPy computed
// (make_inputs.py; the values are exact in float32). The cache holds one
// executable per refined shape: asking again for batch 2 is a hit.
func TestCompileFileRefines(t *testing.T) {
	for _, backend := range []string{"interp", "cpu"} {
		c := newClient(t, backend)
		for _, batch := range []int{2, 5, 2} {
			in := readNPZ(t, filepath.Join(polyDir, fmt.Sprintf("in%d.npz", batch)))
			want := readNPZ(t, filepath.Join(polyDir, fmt.Sprintf("expected%d.npz", batch)))
			shapes := make([]hlo.Shape, len(in))
			for i, a := range in {
				shapes[i] = a.Shape()
			}
			x, err := c.CompileFile(filepath.Join(polyDir, "poly.mlir"), axle.LoadOptions{Options: load.Options{ArgShapes: shapes}})
			if err != nil {
				t.Fatalf("%s batch %d: %v", backend, batch, err)
			}
			got, err := x.ExecuteLiterals(in...)
			if err != nil {
				t.Fatalf("%s batch %d: %v", backend, batch, err)
			}
			for i := range want {
				if !got[i].Equal(want[i]) {
					t.Errorf("%s batch %d: output %d = %v, NumPy's %v", backend, batch, i, got[i], want[i])
				}
			}
		}
		if st := c.CacheStats(); st.Misses != 2 || st.Hits != 1 {
			t.Errorf("%s: cache %d misses %d hits, want 2 and 1 (one executable per batch size)", backend, st.Misses, st.Hits)
		}
	}
}

// TestCompileBytesFormats: the same module as HLO text, as an
// HloModuleProto and as StableHLO compiles through CompileBytes by
// extension and, without one, by content, and computes the same sum
// (1+2+3 worked by hand); CompileText refuses the StableHLO.
func TestCompileBytesFormats(t *testing.T) {
	text := "HloModule m\n\nENTRY main {\n  p = f32[3] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add\n}\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := hloproto.Write(m)
	if err != nil {
		t.Fatal(err)
	}
	mlirText := `func.func @main(%p: tensor<3xf32>) -> tensor<f32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%p init: %z) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}`
	arg, _ := hlo.LiteralFromSlice([]float32{1, 2, 3}, 3)
	c := newClient(t, "interp")
	for _, f := range []struct {
		name string
		data []byte
	}{{"m.hlo", []byte(text)}, {"m.pb", pb}, {"m.mlir", []byte(mlirText)}, {"m", []byte(text)}, {"m", pb}, {"m", []byte(mlirText)}} {
		x, err := c.CompileBytes(f.name, f.data, axle.LoadOptions{})
		if err != nil {
			t.Errorf("%s (%d bytes): %v", f.name, len(f.data), err)
			continue
		}
		out, err := x.ExecuteLiterals(arg)
		if err != nil || out[0].GetFloat64(0) != 6 {
			t.Errorf("%s: got %v, %v; want 6", f.name, out, err)
		}
	}
	if _, err := c.CompileText(mlirText, axle.CompileOptions{}); err == nil {
		t.Error("CompileText took StableHLO; it reads HLO text only")
	}
}

// TestCompileFileErrors: an argument shape that contradicts a static
// module names the parameter; a dynamic module without shapes is an
// error; a file of two modules asks for one.
func TestCompileFileErrors(t *testing.T) {
	c := newClient(t, "interp")
	text := "HloModule m\n\nENTRY main {\n  ROOT p = f32[3] parameter(0)\n}\n"
	_, err := c.CompileBytes("m.hlo", []byte(text), axle.LoadOptions{Options: load.Options{ArgShapes: []hlo.Shape{hlo.ArrayShape(hlo.F32, 4)}}})
	if err == nil || !strings.Contains(err.Error(), "parameter 0 (p)") {
		t.Errorf("wrong shape: got %v, want an error naming parameter 0 (p)", err)
	}
	if _, err := c.CompileFile(filepath.Join(polyDir, "poly.mlir"), axle.LoadOptions{}); err == nil || !strings.Contains(err.Error(), "argument 2 (%arg2)") {
		t.Errorf("dynamic module, no shapes: got %v, want an error naming argument 2 (%%arg2)", err)
	}
	two := filepath.Join(t.TempDir(), "two.hlo")
	os.WriteFile(two, []byte(text+"\n// -----\n"+strings.Replace(text, "HloModule m", "HloModule n", 1)), 0o644)
	if _, err := c.CompileFile(two, axle.LoadOptions{}); err == nil || !strings.Contains(err.Error(), "2 modules") {
		t.Errorf("two modules: got %v, want an error saying the file holds 2 modules", err)
	}
}

func readNPZ(t *testing.T, path string) []*hlo.Literal {
	t.Helper()
	arrays, err := npy.ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(arrays, func(a, b npy.Array) int { return strings.Compare(a.Name, b.Name) })
	out := make([]*hlo.Literal, len(arrays))
	for i, a := range arrays {
		out[i] = a.Lit
	}
	return out
}

// A shape-polymorphic StableHLO export (its batch dimension `?`) compiled
// for a batch of 2 and run on zeros.
func ExampleClient_CompileFile() {
	c, err := axle.NewClient(axle.ClientOptions{Backend: "interp"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	shapes := []hlo.Shape{hlo.ArrayShape(hlo.F32, 4, 3), hlo.ArrayShape(hlo.F32, 3), hlo.ArrayShape(hlo.F32, 2, 4), hlo.ArrayShape(hlo.F32, 2, 3)}
	x, err := c.CompileFile("examples/jax/poly/poly.mlir", axle.LoadOptions{Options: load.Options{ArgShapes: shapes}})
	if err != nil {
		fmt.Println(err)
		return
	}
	args := make([]*hlo.Literal, len(shapes))
	for i, s := range shapes {
		args[i] = hlo.NewLiteral(s)
	}
	out, err := x.ExecuteLiterals(args...)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		fmt.Println(o.Shape().HumanString())
	}
	// Output:
	// f32[2,3]
	// f32[2]
}
