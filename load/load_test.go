package load

import (
	"testing"

	"github.com/axle-ml/axle/hlo"
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

// TestSignature: StableHLO's declared shapes keep `?`; HLO text's are its
// parameters' (both written by hand here).
func TestSignature(t *testing.T) {
	mlirText := "func.func @main(%n: tensor<i64>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n  return %x : tensor<?x4xf32>\n}"
	sig, err := Signature("m.mlir", []byte(mlirText), Options{})
	if err != nil || sig.DimVars != 1 || len(sig.Args) != 2 || sig.Args[1].Dims[0] != hlo.Unbounded || sig.Args[1].Dims[1] != 4 {
		t.Errorf("StableHLO signature %+v, %v; want 1 dimension variable and f32[?,4]", sig, err)
	}
	hloText := "HloModule m\n\nENTRY main {\n  a = s32[2,3] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n"
	sig, err = Signature("m.hlo", []byte(hloText), Options{})
	if err != nil || len(sig.Args) != 2 || sig.Args[0].HumanString() != "s32[2,3]" || sig.Args[1].HumanString() != "f32[]" || sig.DimVars != 0 {
		t.Errorf("HLO signature %+v, %v; want s32[2,3], f32[]", sig, err)
	}
}
