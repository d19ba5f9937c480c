package hlotext

import (
	"strings"
	"testing"
)

// wantParseError checks that src fails to parse with an error at
// file:line:col whose message contains msg.
func wantParseError(t *testing.T, src, pos, msg string) {
	t.Helper()
	_, err := Parse(src, Options{File: "a.hlo"})
	if err == nil {
		t.Fatalf("parsed, want an error at %s containing %q", pos, msg)
	}
	if !strings.HasPrefix(err.Error(), "a.hlo:"+pos+": error: ") || !strings.Contains(err.Error(), msg) {
		t.Fatalf("got %v\nwant an error at a.hlo:%s containing %q", err, pos, msg)
	}
}

// TestShapeSizeOverflow: array shapes whose element count or byte size
// does not fit in an int64 are refused where they are written (Axle issue
// 43: they verified and then ran with 0 elements or panicked allocating).
// 2^32*2^32 = 2^64 elements; 2^62 f32s and 2^63-1 f32s are past 2^63
// bytes; a bound of a dynamic dimension counts as its size.
func TestShapeSizeOverflow(t *testing.T) {
	for _, c := range []struct{ shape, msg string }{
		{"f32[4294967296,4294967296]", "element count of f32[4294967296,4294967296] overflows int64"},
		{"f32[4611686018427387904]", "byte size of f32[4611686018427387904]"},
		{"f32[9223372036854775807]", "byte size of f32[9223372036854775807]"},
		{"f32[<=4611686018427387904]", "byte size of f32[<=4611686018427387904]"},
		{"(s32[], c128[1152921504606846976])", "byte size of c128[1152921504606846976]"},
	} {
		src := "HloModule m\nENTRY e {\n  ROOT p = " + c.shape + " parameter(0)\n}\n"
		pos := "3:12"
		if strings.HasPrefix(c.shape, "(") {
			pos = "3:20"
		}
		wantParseError(t, src, pos, c.msg)
	}
	// The largest sizes that fit still parse: 2^61-1 f32s are 2^63-4
	// bytes, and an empty dimension makes any other size harmless.
	for _, shape := range []string{"f32[2305843009213693951]", "f32[0,4611686018427387904,4611686018427387904]", "s8[9223372036854775807]"} {
		if _, err := Parse("HloModule m\nENTRY e {\n  ROOT p = "+shape+" parameter(0)\n}\n", Options{}); err != nil {
			t.Errorf("%s: %v", shape, err)
		}
	}
}

// TestNestingDepthBounded: deeply nested text is a positioned error, not a
// goroutine stack overflow (fatal, past any recover: Axle issue 43 found
// it with a tuple shape nested a million deep). The limit, maxNesting
// (1000), counts tuple shapes, instructions written as operands and
// computations written in attributes alike.
func TestNestingDepthBounded(t *testing.T) {
	const n = 1000000
	deepTuple := strings.Repeat("(", n) + "f32[]" + strings.Repeat(")", n)
	// "  ROOT p = " is 11 columns: the 1001st '(' is at column 1012.
	wantParseError(t, "HloModule m\nENTRY e {\n  ROOT p = "+deepTuple+" parameter(0)\n}\n", "3:1012", "shape nested more than 1000 levels deep")
	if _, err := ParseShape(deepTuple); err == nil || !strings.Contains(err.Error(), "nested more than 1000 levels deep") {
		t.Errorf("ParseShape: got %v", err)
	}

	deepOperand := strings.Repeat("f32[] negate(", n) + "x" + strings.Repeat(")", n)
	_, err := Parse("HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT p = "+deepOperand+"\n}\n", Options{File: "a.hlo"})
	if err == nil || !strings.HasPrefix(err.Error(), "a.hlo:4:") || !strings.Contains(err.Error(), "nested more than 1000 levels deep") {
		t.Errorf("nested operands: got %.300v", err)
	}

	const open = "{ x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT z = f32[] call(x, y), to_apply="
	const leaf = "{ a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }"
	comps := func(k int) string {
		return "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT p = f32[] call(x, x), to_apply=" +
			strings.Repeat(open, k) + leaf + strings.Repeat(" }", k) + "\n}\n"
	}
	_, err = Parse(comps(100000), Options{File: "a.hlo"})
	if err == nil || !strings.Contains(err.Error(), "nested more than 1000 levels deep") {
		t.Errorf("nested computations: got %.300v", err)
	}

	// Just under the limit still parses: 999 tuples around a leaf, and
	// computations nested 100 deep.
	shallow := strings.Repeat("(", 999) + "f32[]" + strings.Repeat(")", 999)
	if _, err := Parse("HloModule m\nENTRY e {\n  ROOT p = "+shallow+" parameter(0)\n}\n", Options{}); err != nil {
		t.Errorf("999 nested tuples: %.300v", err)
	}
	if _, err := Parse(comps(100), Options{}); err != nil {
		t.Errorf("100 nested computations: %.300v", err)
	}
}
