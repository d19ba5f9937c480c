package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sharedBench = "../../../shared/bench"

// TestOptBackendCPUDumps: `axle opt --backend cpu` dumps the module after
// the fusion passes: a text file after each that changed it, and an HTML
// column for every one.
func TestOptBackendCPUDumps(t *testing.T) {
	src := filepath.Join(sharedBench, "softmax_4096x1024.hlo")
	if _, err := os.Stat(src); err != nil {
		t.Skip("shared bench not found: clone with ../shared beside the repository")
	}
	dir := t.TempDir()
	out, errs, code := runAxle("opt", "--backend", "cpu", "--dump-to", dir, "--dump-format", "html,text", src)
	if code != 0 || !strings.Contains(out, "kind=kLoop") {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	for _, p := range []string{"loop-fusion", "fusion-dce"} {
		files, _ := filepath.Glob(filepath.Join(dir, "softmax_4096x1024.*."+p+".hlo"))
		if len(files) != 1 {
			t.Fatalf("no dump after %s: %v", p, files)
		}
		text, _ := os.ReadFile(files[0])
		if !strings.Contains(string(text), "fusion(") || !strings.Contains(string(text), "kind=kLoop") {
			t.Errorf("%s: no loop fusion after %s:\n%s", files[0], p, text)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "softmax_4096x1024.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"late-dce", "reduce-iota-fusion", "loop-fusion", "fusion-dce", "output-fusion", "multi-output-fusion", "fusion-late-dce"} {
		if !strings.Contains(string(page), `title="`+p+` (`) {
			t.Errorf("the page has no column for %s", p)
		}
	}
	if _, errs, code := runAxle("opt", "--backend", "gpu", src); code != 2 || !strings.Contains(errs, "unknown backend") {
		t.Errorf("unknown backend: exit %d: %s", code, errs)
	}
}

// TestOptBackendCPUVerifyEach: every backend pass leaves the bench
// modules verifying and reports its changes honestly, with a pass
// selection and --timings.
func TestOptBackendCPUVerifyEach(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedBench, "*.hlo"))
	if len(files) == 0 {
		t.Skip("shared bench not found: clone with ../shared beside the repository")
	}
	for _, f := range files {
		if _, errs, code := runAxle("opt", "--backend", "cpu", "--verify-each", f); code != 0 {
			t.Errorf("%s: exit %d: %s", f, code, errs)
		}
	}
	out, errs, code := runAxle("opt", "--backend", "cpu", "--verify-each", "--timings", "--skip-passes", "output-fusion",
		filepath.Join(sharedBench, "mlp_b256.hlo"))
	if code != 0 || strings.Contains(out, "kOutput") || !strings.Contains(errs, "multi-output-fusion") {
		t.Errorf("--skip-passes output-fusion: exit %d: %s\n%s", code, errs, out)
	}
}
