package hlotext

import (
	"strings"
	"testing"
)

// parseWarn parses text collecting the warnings as strings.
func parseWarn(t *testing.T, text string) (string, []string, error) {
	t.Helper()
	var warns []string
	m, err := Parse(text, Options{File: "t.hlo", Warn: func(w Warning) { warns = append(warns, w.String()) }})
	if err != nil {
		return "", warns, err
	}
	return Print(m, Default), warns, nil
}

// TestForwardUse: an instruction used on a line before the one defining
// it is accepted with one warning per name at its first use, and the module
// is the one written in definition order.
func TestForwardUse(t *testing.T) {
	const outOfOrder = `HloModule m

ENTRY e {
  p = f32[2]{0} parameter(0)
  ROOT r = f32[2]{0} add(n, m)
  m = f32[2]{0} multiply(n, p)
  n = f32[2]{0} negate(p)
}
`
	const inOrder = `HloModule m

ENTRY e {
  p = f32[2]{0} parameter(0)
  n = f32[2]{0} negate(p)
  m = f32[2]{0} multiply(n, p)
  ROOT r = f32[2]{0} add(n, m)
}
`
	got, warns, err := parseWarn(t, outOfOrder)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := parseWarn(t, inOrder)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("printed\n%s\nwant\n%s", got, want)
	}
	wantWarns := []string{
		"t.hlo:5:26: warning: n is used before the line that defines it",
		"t.hlo:5:29: warning: m is used before the line that defines it",
	}
	if len(warns) != len(wantWarns) {
		t.Fatalf("warnings %q, want %d", warns, len(wantWarns))
	}
	for i, w := range wantWarns {
		if !strings.HasPrefix(warns[i], w) {
			t.Errorf("warning %d = %q, want prefix %q", i, warns[i], w)
		}
	}
}

// TestForwardUseRootDefault: without ROOT the root is the last line
// written, even when reordering moves another instruction last.
func TestForwardUseRootDefault(t *testing.T) {
	got, _, err := parseWarn(t, "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  b = f32[] negate(a)\n  a = f32[] exponential(p)\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "ROOT %a = f32[] exponential") || strings.Index(got, "%b = ") < strings.Index(got, "ROOT %a") {
		t.Errorf("want a, the last line, as root, defined before b:\n%s", got)
	}
}

// TestForwardUseErrors: what stays ambiguous is rejected at the position of
// the use.
func TestForwardUseErrors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"undefined", "  p = f32[] parameter(0)\n  ROOT a = f32[] add(p, q)\n", "t.hlo:4:25: error: instruction does not exist: q"},
		{"cycle", "  p = f32[] parameter(0)\n  a = f32[] add(p, b)\n  ROOT b = f32[] negate(a)\n", "t.hlo:4:20: error: instructions form a cycle: "},
		{"self", "  p = f32[] parameter(0)\n  ROOT a = f32[] add(p, a)\n", "t.hlo:4:25: error: instructions form a cycle: a"},
		{"other computation", "  ROOT a = f32[] negate(x)\n}\nc {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n", "t.hlo:3:25: error: instruction does not exist: x"},
		{"no shape", "  p = f32[] parameter(0)\n  a = negate(b)\n  ROOT b = f32[] negate(p)\n", "t.hlo:4:7: error: b is used before the line that defines it, which an instruction without a written shape cannot take"},
		{"declared shape", "  p = f32[] parameter(0)\n  a = f32[] negate(s32[] b)\n  ROOT b = f32[] negate(p)\n", "t.hlo:4:20: error: The declared operand shape s32[] is not compatible"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := parseWarn(t, "HloModule m\nENTRY e {\n"+c.body+"}\n")
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("got %v, want prefix %q", err, c.want)
			}
		})
	}
}

// TestAPIVersionUnspecified: older XLA's api_version=API_VERSION_UNSPECIFIED
// is read as the original API (printed without api_version), with a
// warning; an unknown version is still an error.
func TestAPIVersionUnspecified(t *testing.T) {
	const in = "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT c = f32[2]{0} custom-call(p), custom_call_target=\"foo\", api_version=API_VERSION_UNSPECIFIED\n}\n"
	got, warns, err := parseWarn(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "api_version") || !strings.Contains(got, `custom_call_target="foo"`) {
		t.Errorf("printed:\n%s", got)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "t.hlo:4:22: warning: api_version=API_VERSION_UNSPECIFIED read as the original API") {
		t.Errorf("warnings %q", warns)
	}
	_, _, err = parseWarn(t, strings.Replace(in, "UNSPECIFIED", "BOGUS", 1))
	if err == nil || !strings.Contains(err.Error(), "Unknown API version: API_VERSION_BOGUS") {
		t.Errorf("unknown version: got %v", err)
	}
}

// TestWarnNil: without Warn, lenient input parses silently.
func TestWarnNil(t *testing.T) {
	if _, err := Parse("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] negate(b)\n  b = f32[] negate(p)\n}\n", Options{}); err != nil {
		t.Fatal(err)
	}
}
