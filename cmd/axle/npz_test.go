package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/npy"
)

// npzData is where npy/testdata/make.py writes the run_*.npz files: the
// inputs of npzModule and the outputs NumPy computed for them.
const npzData = "../../npy/testdata"

// npzModule is the module of make.py's make_run: an f32 sum with a
// broadcast, and a bf16 parameter converted to f32.
const npzModule = `HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  y = f32[3] parameter(1)
  z = bf16[2] parameter(2)
  by = f32[2,3] broadcast(y), dimensions={1}
  s = f32[2,3] add(x, by)
  zf = f32[2] convert(z)
  ROOT t = (f32[2,3], f32[2]) tuple(s, zf)
}
`

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o644) }

func writeModule(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "m.hlo")
	if err := writeFile(path, npzModule); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkOutputs compares the archive --save-outputs wrote with
// run_expected.npz, bit for bit, names and order included.
func checkOutputs(t *testing.T, what, path string) {
	t.Helper()
	got, err := npy.ReadNPZ(path)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	want, err := npy.ReadNPZ(filepath.Join(npzData, "run_expected.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d outputs, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || !got[i].Lit.Equal(want[i].Lit) {
			t.Errorf("%s: %s = %v, want %s = %v", what, got[i].Name, got[i].Lit, want[i].Name, want[i].Lit)
		}
	}
}

// TestRunInputsNPZ: `axle run --inputs` feeds NumPy's arrays, positional
// (arr_0, ..., the bf16 one as uint16 bits) or by name (in another order,
// bf16 as '|V2'), and --save-outputs writes what NumPy computed, on both
// backends.
func TestRunInputsNPZ(t *testing.T) {
	dir := t.TempDir()
	mod := writeModule(t, dir)
	// On cpu, 1000 runs make the cost model compile the module rather
	// than leave it to the evaluator.
	for _, backend := range [][]string{{"interp"}, {"cpu"}, {"cpu", "--repeat", "1000"}} {
		for _, in := range []string{"run_positional.npz", "run_named.npz"} {
			out := filepath.Join(dir, "out.npz")
			args := append([]string{"run", "--backend"}, backend...)
			stdout, errs, code := runAxle(append(args, "--inputs", filepath.Join(npzData, in), "--save-outputs", out, mod)...)
			if code != 0 {
				t.Fatalf("%s on %s: exit %d: %s", in, backend, code, errs)
			}
			// 11+1.5-2.5+14-0.75+6.5 and 1.5-10.
			if !strings.Contains(stdout, "result f32[2,3] checksum 29.75\nresult f32[2] checksum -8.5\n") {
				t.Errorf("%s on %s: checksums:\n%s", in, backend, stdout)
			}
			checkOutputs(t, fmt.Sprint(in, " on ", backend), out)
		}
	}
}

// TestRunInputsNPY: a comma-separated list of .npy files matches by file
// name, and by position in the list when names match no parameter.
func TestRunInputsNPY(t *testing.T) {
	dir := t.TempDir()
	mod := writeModule(t, dir)
	arrays, err := npy.ReadNPZ(filepath.Join(npzData, "run_named.npz"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*hlo.Literal{}
	for _, a := range arrays {
		byName[a.Name] = a.Lit
	}
	for i, name := range []string{"x", "y", "z"} {
		for _, file := range []string{name, "abc"[i : i+1]} {
			if err := npy.WriteFile(filepath.Join(dir, file+".npy"), byName[name]); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, list := range []string{"z.npy,x.npy,y.npy", "a.npy,b.npy,c.npy"} {
		var paths []string
		for _, f := range strings.Split(list, ",") {
			paths = append(paths, filepath.Join(dir, f))
		}
		out := filepath.Join(dir, "out.npz")
		if _, errs, code := runAxle("run", "--inputs", strings.Join(paths, ","), "--save-outputs", out, mod); code != 0 {
			t.Fatalf("%s: exit %d: %s", list, code, errs)
		}
		checkOutputs(t, list, out)
	}
}

// TestRunInputsErrors: a wrong shape or type names the parameter and the
// array; a missing, extra or doubled array is an error.
func TestRunInputsErrors(t *testing.T) {
	dir := t.TempDir()
	mod := writeModule(t, dir)
	x, _ := hlo.LiteralFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	xT, _ := hlo.LiteralFromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	x64, _ := hlo.LiteralFromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	y, _ := hlo.LiteralFromSlice([]float32{1, 2, 3})
	z, _ := hlo.LiteralFromSlice([]uint16{0x3f80, 0x4000})
	zs, _ := hlo.LiteralFromSlice([]int16{1, 2})
	a := func(name string, l *hlo.Literal) npy.Array { return npy.Array{Name: name, Lit: l} }
	for _, c := range []struct {
		name   string
		arrays []npy.Array
		want   string
	}{
		{"shape", []npy.Array{a("x", xT), a("y", y), a("z", z)}, `parameter 0 "x" (f32[2,3]): array ` + filepath.Join(dir, "shape.npz") + `:x is f32[3,2]`},
		{"dtype", []npy.Array{a("arr_0", x64), a("arr_1", y), a("arr_2", z)}, `parameter 0 "x" (f32[2,3]): array ` + filepath.Join(dir, "dtype.npz") + `:arr_0 is f64[2,3]`},
		{"bf16", []npy.Array{a("x", x), a("y", y), a("z", zs)}, `parameter 2 "z" (bf16[2]): array ` + filepath.Join(dir, "bf16.npz") + `:z is s16[2]`},
		{"missing", []npy.Array{a("arr_0", x), a("arr_1", y)}, `no array for parameter 2 "z" (bf16[2])`},
		{"extra", []npy.Array{a("x", x), a("y", y), a("z", z), a("arr_3", y)}, `:arr_3 matches no parameter (parameters 0 "x" (f32[2,3]), 1 "y" (f32[3]), 2 "z" (bf16[2]))`},
		{"unknown", []npy.Array{a("x", x), a("y", y), a("z", z), a("w", y)}, `:w matches no parameter`},
		{"twice", []npy.Array{a("x", x), a("arr_0", x), a("y", y), a("z", z)}, `parameter 0 "x" (f32[2,3]) is given twice`},
	} {
		path := filepath.Join(dir, c.name+".npz")
		if err := npy.WriteNPZ(path, c.arrays); err != nil {
			t.Fatal(err)
		}
		_, errs, code := runAxle("run", "--inputs", path, mod)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, %q, want %q", c.name, code, errs, c.want)
		}
	}
	if _, errs, code := runAxle("run", "--inputs", filepath.Join(dir, "none.npz"), mod); code != 1 || !strings.Contains(errs, "none.npz") {
		t.Errorf("missing file: exit %d, %q", code, errs)
	}
	if _, errs, code := runAxle("run", "--inputs", filepath.Join(npzData, "run_named.npz"), "--args", "a.json", mod); code != 1 || !strings.Contains(errs, "--args") {
		t.Errorf("--inputs with --args: exit %d, %q", code, errs)
	}
	// An output NumPy cannot hold is an error naming it.
	s4 := filepath.Join(dir, "s4.hlo")
	writeFile(s4, "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = s4[2] convert(p)\n}\n")
	if _, errs, code := runAxle("run", "--save-outputs", filepath.Join(dir, "o.npz"), s4); code != 1 || !strings.Contains(errs, `--save-outputs: `) || !strings.Contains(errs, `output_0.npy`) {
		t.Errorf("s4 output: exit %d, %q", code, errs)
	}
}

// TestParamFor: the matching rules, worked by hand on parameters named as
// JAX dumps them: a name as written, then without the ".N" suffix, then a
// number in arg0/arg_0/input_0/arr_0 (any case), then a list position.
