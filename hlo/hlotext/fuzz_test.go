package hlotext

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary text to the parser. It must never panic or
// hang, and whatever it accepts must print to text that parses back and
// prints identically (the printer's output is a fixed point).
func FuzzParse(f *testing.F) {
	f.Add("HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, p)\n}\n")
	f.Add("f32[2,4]{1,0} multiply(f32[2,4]{1,0}, f32[2,4]{1,0})")
	for _, pattern := range []string{"parser/*/*.hlo", "xla/backends/cpu/benchmarks/hlo/*.hlo"} {
		files, _ := filepath.Glob(filepath.Join(corpusDir, pattern))
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil && len(b) < 64<<10 {
				f.Add(string(b))
			}
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		mods, err := ParseFile(text, Options{File: "fuzz"})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error without position: %v", err)
			}
			return
		}
		for _, m := range mods {
			p1 := Print(m, Default)
			m2, err := Parse(p1, Options{File: "printed"})
			if err != nil {
				t.Fatalf("printed module does not parse: %v\n%s", err, p1)
			}
			if p2 := Print(m2, Default); p2 != p1 {
				t.Fatalf("print is not a fixed point:\n%s\n---\n%s", p1, p2)
			}
		}
	})
}
