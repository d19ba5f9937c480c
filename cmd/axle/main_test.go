package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const benchModels = "../../../shared/corpus/hlo/xla/backends/cpu/benchmarks/hlo"

func runAxle(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

// TestParseRealModels: `axle parse` prints each real model, and the
// printed text parses again to the same text.
func TestParseRealModels(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(benchModels, "*.hlo"))
	if len(files) == 0 {
		t.Skip("shared corpus not found: clone with ../shared beside the repository")
	}
	for _, f := range files {
		out, errs, code := runAxle("parse", f)
		if code != 0 || !strings.HasPrefix(out, "HloModule ") {
			t.Fatalf("%s: exit %d: %s", f, code, errs)
		}
		tmp := filepath.Join(t.TempDir(), "printed.hlo")
		os.WriteFile(tmp, []byte(out), 0o644)
		again, errs, code := runAxle("parse", tmp)
		if code != 0 || again != out {
			t.Errorf("%s: printed form does not print back identically (exit %d: %s)", f, code, errs)
		}
	}
}

// TestParseBrokenModel: a damaged copy of a real model gives
// FILE:LINE:COL and exit status 1.
func TestParseBrokenModel(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(benchModels, "graphsage_tf.hlo"))
	if err != nil {
		t.Skip("shared corpus not found")
	}
	lines := strings.Split(string(src), "\n")
	// Damage line 29 (a reshape): drop the closing parenthesis of its operand list.
	lines[28] = strings.Replace(lines[28], ")", "", 1)
	broken := filepath.Join(t.TempDir(), "broken.hlo")
	os.WriteFile(broken, []byte(strings.Join(lines, "\n")), 0o644)
	_, errs, code := runAxle("parse", broken)
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(broken) + `:29:\d+: error: `).MatchString(errs) {
		t.Errorf("error does not name line 29 of the file: %q", errs)
	}
}

func TestUsage(t *testing.T) {
	if _, _, code := runAxle(); code != 2 {
		t.Errorf("no arguments: exit %d, want 2", code)
	}
	if _, errs, code := runAxle("frobnicate"); code != 2 || !strings.Contains(errs, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errs)
	}
	if _, errs, code := runAxle("parse", "/nonexistent.hlo"); code != 1 || !strings.Contains(errs, "/nonexistent.hlo") {
		t.Errorf("missing file: exit %d, %q", code, errs)
	}
}

// TestVerify: real models verify; a model with a wrong declared shape is
// rejected naming the computation and the instruction.
func TestVerify(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(benchModels, "*.hlo"))
	if len(files) == 0 {
		t.Skip("shared corpus not found")
	}
	for _, f := range files {
		if _, errs, code := runAxle("verify", f); code != 0 {
			t.Errorf("%s: exit %d: %s", f, code, errs)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.hlo")
	os.WriteFile(bad, []byte("HloModule m\nENTRY main {\n  p = f32[2,3] parameter(0)\n  ROOT n = f32[3,2] negate(p)\n}\n"), 0o644)
	_, errs, code := runAxle("verify", bad)
	if code != 1 || !strings.Contains(errs, `computation "main", instruction "n"`) {
		t.Errorf("exit %d, %q", code, errs)
	}
}
