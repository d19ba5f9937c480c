package main

import (
	"bytes"
	"encoding/json"
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

// TestRun: `axle run --args` on a hand-made module; the checksum is the
// sum of the elements: the tuple holds the argument {1, -2} twice.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	mod := filepath.Join(dir, "m.hlo")
	os.WriteFile(mod, []byte("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT t = (f32[2], f32[2]) tuple(p, p)\n}\n"), 0o644)
	args := filepath.Join(dir, "args.json")
	os.WriteFile(args, []byte(`[{"shape": "f32[2]", "data": "AACAPwAAAMA="}]`), 0o644)
	out, errs, code := runAxle("run", "--json", "--repeat", "2", "--args", args, mod)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "result f32[2] checksum -1\n") {
		t.Errorf("output lacks the checksum line:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var js struct {
		CompileMS float64            `json:"compile_ms"`
		RunMS     map[string]float64 `json:"run_ms"`
		Outputs   []struct {
			Shape    string  `json:"shape"`
			Checksum float64 `json:"checksum"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &js); err != nil {
		t.Fatalf("last line is not JSON: %v", err)
	}
	if len(js.Outputs) != 2 || js.Outputs[0].Checksum != -1 || js.Outputs[0].Shape != "f32[2]" {
		t.Errorf("json outputs %+v", js.Outputs)
	}
	if _, ok := js.RunMS["median"]; !ok {
		t.Errorf("json lacks run_ms.median")
	}
	// --cpuprofile writes a pprof profile (gzip-compressed protobuf) of
	// the timed runs; a path that cannot be created is an error.
	prof := filepath.Join(dir, "cpu.prof")
	if _, errs, code := runAxle("run", "--repeat", "3", "--args", args, "--cpuprofile", prof, mod); code != 0 {
		t.Fatalf("--cpuprofile: exit %d: %s", code, errs)
	}
	if b, err := os.ReadFile(prof); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("--cpuprofile wrote %d bytes (%v), not a gzip stream", len(b), err)
	}
	if _, errs, code := runAxle("run", "--args", args, "--cpuprofile", filepath.Join(dir, "no", "such", "dir", "p"), mod); code == 0 || !strings.Contains(errs, "--cpuprofile") {
		t.Errorf("unwritable --cpuprofile: exit %d, %q", code, errs)
	}
	// --memprofile writes a pprof profile (gzip) of every allocation, and
	// every report counts the timed runs' allocations (the evaluator's
	// runs allocate their values).
	mprof := filepath.Join(dir, "mem.prof")
	out, errs, code = runAxle("run", "--repeat", "3", "--args", args, "--memprofile", mprof, mod)
	if code != 0 {
		t.Fatalf("--memprofile: exit %d: %s", code, errs)
	}
	if b, err := os.ReadFile(mprof); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("--memprofile wrote %d bytes (%v), not a gzip stream", len(b), err)
	}
	if m := regexp.MustCompile(`allocations a run: ([0-9]+) \(`).FindStringSubmatch(out); m == nil || m[1] == "0" {
		t.Errorf("no count of a run's allocations in %q", out)
	}
	if _, errs, code := runAxle("run", "--args", args, "--memprofile", filepath.Join(dir, "no", "such", "dir", "p"), mod); code == 0 || !strings.Contains(errs, "--memprofile") {
		t.Errorf("unwritable --memprofile: exit %d, %q", code, errs)
	}
	// A constant elided in the text ({...}, as real dumps have them) gets
	// made-up values on both backends, before compiling.
	elided := filepath.Join(dir, "elided.hlo")
	os.WriteFile(elided, []byte("HloModule m\nENTRY e {\n  p = f32[3] parameter(0)\n  c = f32[3] constant({...})\n  ROOT a = f32[3] add(p, c)\n}\n"), 0o644)
	for _, backend := range []string{"cpu", "interp"} {
		if _, errs, code := runAxle("run", "--backend", backend, elided); code != 0 {
			t.Errorf("elided constant on %s: exit %d: %s", backend, code, errs)
		}
	}
	// An instruction no kernel takes (a bf16 triangular solve) is named as
	// left to the evaluator; a module without one has no such line.
	bf := filepath.Join(dir, "bf16.hlo")
	os.WriteFile(bf, []byte("HloModule m\nENTRY e {\n  a = bf16[4,4] parameter(0)\n  b = bf16[4,3] parameter(1)\n"+
		"  ROOT x = bf16[4,3] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE\n}\n"), 0o644)
	out, errs, code = runAxle("run", "--backend", "cpu", "--repeat", "1000", bf)
	if code != 0 || !strings.Contains(out, "on the evaluator (no kernel): triangular-solve bf16[4,3]") {
		t.Errorf("bf16 triangular-solve: exit %d, %s\n%s", code, errs, out)
	}
	out, _, _ = runAxle("run", "--backend", "cpu", "--repeat", "1000", elided)
	if strings.Contains(out, "on the evaluator") {
		t.Errorf("a module with kernels for everything names fallbacks:\n%s", out)
	}
	// A wrong argument shape names the parameter.
	os.WriteFile(args, []byte(`[{"shape": "f32[3]", "data": "AACAPwAAAMAAAAAA"}]`), 0o644)
	if _, errs, code := runAxle("run", "--args", args, mod); code == 0 || !strings.Contains(errs, "parameter p") {
		t.Errorf("wrong argument shape: exit %d, %q", code, errs)
	}
}

// TestOptCommand: `axle opt` simplifies x*1+0 to x, --passes selects
// passes by name (an unknown one is an error naming the passes), and
// --dump-to writes the per-pass files and the HTML page.
func TestOptCommand(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "m.hlo")
	os.WriteFile(src, []byte(`HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  one = f32[] constant(1)
  b1 = f32[4] broadcast(one), dimensions={}
  m = f32[4] multiply(p, b1)
  zero = f32[] constant(0)
  b0 = f32[4] broadcast(zero), dimensions={}
  ROOT a = f32[4] add(m, b0)
}`), 0o644)
	out, errs, code := runAxle("opt", "--short", "--verify-each", "--dump-to", dir, "--dump-format", "text,html", src)
	if code != 0 || !strings.Contains(out, "ROOT p = f32[4]{0} parameter(0)") {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	for _, f := range []string{"m.0000.input.hlo", "m.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("dump %s missing: %v", f, err)
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "m.*.algsimp.hlo")); len(matches) == 0 {
		t.Error("no dump after algsimp")
	}
	out, _, code = runAxle("opt", "--passes", "dce", src)
	if code != 0 || !strings.Contains(out, "multiply") {
		t.Fatalf("--passes dce ran more than dce: exit %d\n%s", code, out)
	}
	_, errs, code = runAxle("opt", "--dump-to", dir, "--dump-format", "pdf", src)
	if code == 0 || !strings.Contains(errs, `unknown dump format "pdf"`) {
		t.Fatalf("unknown dump format: exit %d: %s", code, errs)
	}
	_, errs, code = runAxle("opt", "--passes", "nosuch", src)
	if code == 0 || !strings.Contains(errs, `no pass "nosuch"`) || !strings.Contains(errs, "algsimp") {
		t.Fatalf("unknown pass: exit %d: %s", code, errs)
	}
}
