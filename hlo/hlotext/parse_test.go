package hlotext

import (
	"fmt"
	"strings"
	"testing"
)

// TestExponentialTupleInference: shapes that double at every line must be
// refused with a position, not exhaust memory (found by fuzzing).
func TestExponentialTupleInference(t *testing.T) {
	var b strings.Builder
	b.WriteString("HloModule m\nENTRY e {\n  t0 = f32[] parameter(0)\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "  t%d = tuple(t%d, t%d)\n", i, i-1, i-1)
	}
	b.WriteString("}\n")
	_, err := Parse(b.String(), Options{File: "exp.hlo"})
	if err == nil || !strings.Contains(err.Error(), "exp.hlo:20:") {
		t.Fatalf("want an error at line 20 (t17, the first tuple over 65536 leaves), got %v", err)
	}
}

// TestErrorFormat pins the compiler-style error: position, message, the
// source line and a caret under the column.
func TestErrorFormat(t *testing.T) {
	src := "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] add(p, q)\n}\n"
	_, err := Parse(src, Options{File: "x.hlo"})
	want := "x.hlo:4:25: error: instruction does not exist: q\n  ROOT a = f32[] add(p, q)\n                        ^"
	if err == nil || err.Error() != want {
		t.Fatalf("got\n%v\nwant\n%s", err, want)
	}
}

// TestSplitFileLines: errors in the second module of a `// -----` file
// report lines of the whole file.
func TestSplitFileLines(t *testing.T) {
	src := "HloModule a\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n// -----\nHloModule b\nENTRY e {\n  ROOT p = f32[] bogus(0)\n}\n"
	mods, err := ParseFile(src, Options{File: "s.hlo"})
	if err == nil || !strings.HasPrefix(err.Error(), "s.hlo:8:18: error: unknown opcode: bogus") {
		t.Fatalf("got %v (%d modules)", err, len(mods))
	}
}

// TestCRLineEnds: CR and CRLF count as line ends for positions too.
func TestCRLineEnds(t *testing.T) {
	for _, eol := range []string{"\r\n", "\r"} {
		src := strings.ReplaceAll("HloModule m\nENTRY e {\n  ROOT p = f32[] nope(0)\n}\n", "\n", eol)
		_, err := Parse(src, Options{File: "c.hlo"})
		if err == nil || !strings.HasPrefix(err.Error(), "c.hlo:3:18:") {
			t.Errorf("eol %q: got %v", eol, err)
		}
	}
}
