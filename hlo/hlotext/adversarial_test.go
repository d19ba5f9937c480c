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
