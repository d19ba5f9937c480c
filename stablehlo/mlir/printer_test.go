package mlir

import (
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestPrintRoundTrip prints every corpus section and the pretty pairs in
// generic form and parses the text back: the modules must be equal but
// for positions, labels and value names.
func TestPrintRoundTrip(t *testing.T) {
	var srcs [][]byte
	for _, c := range prettyPairs {
		srcs = append(srcs, []byte("func.func @f("+c.args+") {\n"+c.pretty+"\n}\n"))
	}
	for _, f := range corpusFilesOrNil() {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, SplitFile(src)...)
	}
	failed := 0
	for _, src := range srcs {
		if strings.TrimSpace(stripComments(src)) == "" {
			continue
		}
		m1, err := Parse("a.mlir", src)
		if err != nil {
			t.Fatal(err)
		}
		text := m1.String()
		m2, err := Parse("printed.mlir", []byte(text))
		if err != nil {
			t.Errorf("printed text does not parse: %v\n%s", err, excerpt(text, err))
			failed++
		} else {
			canon(m1)
			canon(m2)
			m2.Pos = m1.Pos
			if !reflect.DeepEqual(m1, m2) {
				t.Errorf("round trip differs:\nbefore: %s\nafter:  %s", dump(m1), dump(m2))
				failed++
			}
		}
		if failed >= 5 {
			t.Fatal("stopping after 5 failures")
		}
	}
}

// excerpt shows the printed line an error points at.
func excerpt(text string, err error) string {
	pe, ok := err.(*Error)
	if !ok {
		return ""
	}
	lines := strings.Split(text, "\n")
	if pe.Pos.Line-1 < len(lines) {
		return lines[pe.Pos.Line-1]
	}
	return ""
}

// TestPrintSpecialFloats checks that infinities, NaNs and small floats
// print as text that reads back to the same value.
func TestPrintSpecialFloats(t *testing.T) {
	src := `func.func private @f() attributes {a = 0x7F800000 : f32, b = 0xFC00 : f16, c = 0x7F80 : bf16,
  d = 0x7FF0000000000000 : f64, e = 0x7F : f8E4M3FN, f = 1.0e-300 : f64, g = 5 : f32, h = 0x7FC00000 : f32}`
	m, err := Parse("f.mlir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Parse("printed.mlir", []byte(m.String()))
	if err != nil {
		t.Fatalf("%v\n%s", err, m)
	}
	for _, a := range m.Ops[0].Attrs {
		want, ok := a.Value.(FloatAttr)
		if !ok {
			continue
		}
		got, _ := m2.Ops[0].Attr(a.Name).(FloatAttr)
		same := want == got || math.IsNaN(want.Value) && math.IsNaN(got.Value) && want.Type == got.Type
		if !same {
			t.Errorf("%s: printed %#v, read back %#v", a.Name, want, got)
		}
	}
}
