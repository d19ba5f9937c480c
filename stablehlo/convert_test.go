package stablehlo

import (
	"testing"
)

// TestHandWritten runs the hand-worked programs of testdata/ (generic
// form, expected values worked out by hand in each file's checks).
func TestHandWritten(t *testing.T) {
	cases, err := FindCases("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"interp", "cpu"} {
		exec := clientExecutor(t, backend)
		for _, c := range cases {
			if o := RunCase(c, exec); o.Status != "pass" {
				t.Errorf("%s on %s: %s: %s", c.Name, backend, o.Status, o.Reason)
			}
		}
	}
}
