package hlotext

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestConformanceModulesParse: every module of the shared conformance
// suite (both text styles) parses and prints back to a fixed point.
func TestConformanceModulesParse(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/conformance/cases/*/*.json")
	more, _ := filepath.Glob("../../../shared/conformance/xla-tests/*/*.json")
	files = append(files, more...)
	if len(files) == 0 {
		t.Skip("shared conformance suite not found")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct{ HLO string }
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		m, err := Parse(c.HLO, Options{File: f})
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		p1 := Print(m, Default)
		m2, err := Parse(p1, Options{File: f + " (printed)"})
		if err != nil || Print(m2, Default) != p1 {
			t.Errorf("%s: print is not a fixed point (%v)", f, err)
		}
	}
}
