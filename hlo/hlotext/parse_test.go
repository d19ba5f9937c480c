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

// TestRepeatedNamesRenamed: names repeated across computations are
// renamed as XLA's parser does, the first keeping its name.
func TestRepeatedNamesRenamed(t *testing.T) {
	src := "HloModule m\nneg {\n  x = f32[2] parameter(0)\n  ROOT n = f32[2] negate(x)\n}\nENTRY e {\n  x = f32[2] parameter(0)\n  x.1 = f32[2] negate(x)\n  ROOT n = f32[2] call(x.1), to_apply=neg\n}\n"
	m, err := Parse(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			got = append(got, in.Name)
		}
	}
	// NameUniquer works in order: the entry's x takes x.1, so the later x.1
	// moves on to x.2.
	if want := "x n x.1 x.2 n.1"; strings.Join(got, " ") != want {
		t.Errorf("names %q, want %q", strings.Join(got, " "), want)
	}
}
