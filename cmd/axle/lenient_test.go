package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLenientDump: a dump as real producers print it — an instruction used
// before its line, api_version=API_VERSION_UNSPECIFIED, a cuBLAS call —
// runs with plain `axle run` on both backends, the parser's warnings on
// stderr as FILE:LINE:COL: warning: ..., and the result is the hand-worked
// one: [[1,2],[3,4]]·[[1,1],[1,1]] = [[3,3],[7,7]], negated.
func TestLenientDump(t *testing.T) {
	const text = `HloModule lenient

ENTRY e {
  ROOT r = f32[2,2]{1,0} negate(g)
  g = f32[2,2]{1,0} custom-call(a, b), custom_call_target="__cublas$gemm", api_version=API_VERSION_UNSPECIFIED, backend_config={"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"DEFAULT"}
  a = f32[2,2]{1,0} constant({{1,2},{3,4}})
  b = f32[2,2]{1,0} constant({{1,1},{1,1}})
}
`
	path := filepath.Join(t.TempDir(), "lenient.hlo")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	wantWarnings := []string{
		path + ":4:33: warning: g is used before the line that defines it",
		path + ":5:21: warning: api_version=API_VERSION_UNSPECIFIED read as the original API",
		path + ":5:33: warning: a is used before the line that defines it",
		path + ":5:36: warning: b is used before the line that defines it",
	}
	for _, backend := range []string{"interp", "cpu"} {
		stdout, stderr, code := runAxle("run", "--backend", backend, path)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", backend, code, stderr)
		}
		for _, w := range wantWarnings {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", backend, w, stderr)
			}
		}
		// checksum: the sum of the elements, -(3+3+7+7).
		if !strings.Contains(stdout, "result f32[2,2] checksum -20") {
			t.Errorf("%s: stdout:\n%s", backend, stdout)
		}
	}
}
