package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const spinModule = `HloModule spin
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT ne = pred[] compare(i, n), direction=NE
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(j, n)
}
ENTRY e {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, n)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}
`

// --timeout cancels an endless loop (n = -1: 2^32 iterations) on both
// backends; --memory-limit refuses a 40 GB output before allocating it;
// every run prints its measured peak (a = p+p and m = a*a, 4 KiB each,
// both held by the evaluator).
func TestRunTimeoutMemoryLimitPeak(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	spin := write("spin.hlo", spinModule)
	minusOne := write("args.json", `[{"shape": "s32[]", "data": "/////w=="}]`)
	for _, backend := range []string{"interp", "cpu"} {
		_, errs, code := runAxle("run", "--backend", backend, "--timeout", "50ms", "--args", minusOne, spin)
		if code != 1 || !strings.Contains(errs, "context deadline exceeded") {
			t.Errorf("%s --timeout: exit %d, %q", backend, code, errs)
		}
	}
	huge := write("huge.hlo", "HloModule huge\nENTRY e {\n  c = f32[] constant(1)\n  ROOT b = f32[10000000000] broadcast(c), dimensions={}\n}\n")
	for _, backend := range []string{"interp", "cpu"} {
		_, errs, code := runAxle("run", "--backend", backend, "--memory-limit", "8G", huge)
		if code != 1 || !strings.Contains(errs, "memory limit exceeded") || !strings.Contains(errs, "8589934592 bytes") {
			t.Errorf("%s --memory-limit 8G: exit %d, %q", backend, code, errs)
		}
	}
	if _, errs, code := runAxle("run", "--memory-limit", "lots", huge); code != 2 || !strings.Contains(errs, "--memory-limit") {
		t.Errorf("--memory-limit lots: exit %d, %q", code, errs)
	}
	peak := write("peak.hlo", "HloModule peak\nENTRY e {\n  p = f32[1024] parameter(0)\n  a = f32[1024] add(p, p)\n  ROOT m = f32[1024] multiply(a, a)\n}\n")
	out, errs, code := runAxle("run", "--backend", "interp", "--json", peak)
	if code != 0 || !strings.Contains(out, "measured peak: 8.0 KiB") || !strings.Contains(out, `"measured_peak_bytes":8192`) {
		t.Errorf("measured peak: exit %d, %s\n%s", code, errs, out)
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "512": 512, "4K": 4096, "3m": 3 << 20, "8G": 8 << 30, "-1": -1} {
		if got, err := parseByteSize(in); err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"G", "1.5G", "99999999999G", "eight"} {
		if _, err := parseByteSize(in); err == nil {
			t.Errorf("parseByteSize(%q): no error", in)
		}
	}
}

// TestJSONNonFinite: JSON has no NaN or infinity, yet a result may hold
// them (log of zero, a fully masked softmax); the --json line must still be
// JSON a script can read, the checksums written as strings, on the HLO and
// the ONNX doors alike.
func TestJSONNonFinite(t *testing.T) {
	dir := t.TempDir()
	hloFile := filepath.Join(dir, "nonfinite.hlo")
	if err := writeFile(hloFile, "HloModule nonfinite\nENTRY e {\n  z = f32[2] constant({0, 1})\n  l = f32[2] log(z)\n  n = f32[2] divide(z, z)\n  ROOT t = (f32[2], f32[2]) tuple(l, n)\n}\n"); err != nil {
		t.Fatal(err)
	}
	onnxModel := filepath.Join("..", "..", "onnx", "onnxtest", "testdata", "models", "test_nonfinite_masking_opset14", "model.onnx")
	for _, c := range []struct {
		args []string
		want string // the checksums in order
	}{
		{[]string{"run", "--backend", "cpu", "--json", hloFile}, "-Inf NaN"},
		{[]string{"run", "--backend", "interp", "--json", hloFile}, "-Inf NaN"},
		// attention, softmax, log, inverse, maximum, minimum, activations, colmax, rowmax, rowsum, count
		{[]string{"run", "--backend", "cpu", "--json", onnxModel}, "NaN NaN -Inf NaN NaN -Inf NaN -Inf -Inf -Inf"},
	} {
		args := c.args
		out, errs, code := runAxle(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var report struct {
			Outputs []struct {
				Checksum any `json:"checksum"`
			} `json:"outputs"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &report); err != nil {
			t.Fatalf("%v: last line is not JSON (%v): %q", args, err, lines[len(lines)-1])
		}
		var got []string
		for _, o := range report.Outputs {
			got = append(got, fmt.Sprint(o.Checksum))
		}
		if g := strings.Join(got, " "); !strings.HasPrefix(g, c.want) {
			t.Errorf("%v: checksums %q, want %q first", args, g, c.want)
		}
	}
}
