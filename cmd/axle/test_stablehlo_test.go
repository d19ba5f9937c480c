package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTestStableHLO runs the command over a folder of hand-written
// programs: one passing, one failing its own check, one RUN-DISABLED.
func TestTestStableHLO(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"pass.mlir": `// RUN: stablehlo-translate --interpret %s
func.func @main() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>
  func.return
}`,
		"fail.mlir": `// RUN: stablehlo-translate --interpret %s
func.func @main() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const %0, dense<[1, 3]> : tensor<2xi32>
  func.return
}`,
		"disabled.mlir": `// RUN-DISABLED(no interpreter support): stablehlo-translate --interpret %s
func.func @main() {
  func.return
}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, backend := range []string{"interp", "cpu"} {
		var out, errOut bytes.Buffer
		code := run([]string{"test-stablehlo", "--backend", backend, dir}, &out, &errOut)
		if code != 1 {
			t.Errorf("%s: exit code %d, want 1 (one program fails); stderr %s", backend, code, errOut.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if last := lines[len(lines)-1]; last != "1 passed, 1 failed, 1 skipped" {
			t.Errorf("%s: last line %q, want %q\n%s", backend, last, "1 passed, 1 failed, 1 skipped", out.String())
		}
		for _, want := range []string{"PASS " + filepath.Join(dir, "pass.mlir"), "FAIL " + filepath.Join(dir, "fail.mlir") + ": ", "SKIP " + filepath.Join(dir, "disabled.mlir") + ": "} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: output lacks %q:\n%s", backend, want, out.String())
			}
		}
	}
}
