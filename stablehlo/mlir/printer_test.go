package mlir

import (
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
