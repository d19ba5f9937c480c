package load

import (
	"testing"
)

// TestFormatOf: the extension decides; without one, the content does
// (HLO text says HloModule, MLIR defines a func.func, anything else is a
// protocol buffer).
func TestFormatOf(t *testing.T) {
	for _, c := range []struct {
		name, data string
		want       Format
	}{
		{"m.hlo", "func.func", HLOText},
		{"m.TXT", "", HLOText},
		{"m.hlo.pb", "HloModule", Proto},
		{"m.mlir", "HloModule", MLIR},
		{"m", "HloModule m\nENTRY e {}", HLOText},
		{"m", "module {\n  func.func @main() {}\n}", MLIR},
		{"m", "\x0a\x03abc\xff", Proto},
		{"dir.v1/m", "func.func", MLIR},
	} {
		if got := FormatOf(c.name, []byte(c.data)); got != c.want {
			t.Errorf("FormatOf(%q, %q) = %v, want %v", c.name, c.data, got, c.want)
		}
	}
}
