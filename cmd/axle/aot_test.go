package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAOTCommand: `axle aot` writes the package (plan, Go file, and with
// --main the command), and bad input is a clear error: missing flags, a
// package name that is not an identifier, a module file that does not
// parse (FILE:LINE:COL), --main outside any Go module.
func TestAOTCommand(t *testing.T) {
	dir := t.TempDir()
	src := "../../examples/jax/mlp.mlir"
	out, stderr, code := runAxle("aot", "--pkg", "mlp", "-o", filepath.Join(dir, "mlp"), src)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"mlp.go", "mlp.axleplan"} {
		if _, err := os.Stat(filepath.Join(dir, "mlp", f)); err != nil {
			t.Errorf("%s not written: %v\n%s", f, err, out)
		}
	}
	bad := filepath.Join(dir, "bad.hlo")
	if err := os.WriteFile(bad, []byte("HloModule m\nENTRY e {\n  ROOT x = f32[2] frob()\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"aot", src}, "give --pkg NAME"},
		{[]string{"aot", "--pkg", "1x", "-o", dir, src}, "not a Go identifier"},
		{[]string{"aot", "--pkg", "main", "-o", dir, src}, "not a Go identifier"},
		{[]string{"aot", "--pkg", "m", "-o", dir, bad}, "bad.hlo:3:"},
		{[]string{"aot", "--pkg", "m", "-o", filepath.Join(os.TempDir(), "axle-aot-nomod"), "--main", src}, "no go.mod"},
		{[]string{"aot", "--pkg", "m", "-o", dir, filepath.Join(dir, "missing.hlo")}, "missing.hlo"},
		{[]string{"aot", "--pkg", "m", "-o", dir, "../../examples/onnx/scores_nonzero/model.onnx"}, `node "nonzero" (NonZero) runs on eval:0`},
		{[]string{"aot", "--pkg", "m", "-o", dir, stepExample}, "ahead-of-time packages run a single device"},
	} {
		_, stderr, code := runAxle(c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want it to say %q", c.args, code, stderr, c.want)
		}
	}
}
