package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertRoundTrip: a real model converted to a .pb and back prints
// exactly what `axle parse` prints for the original text.
func TestConvertRoundTrip(t *testing.T) {
	src := filepath.Join(benchModels, "graphsage_tf.hlo")
	if _, err := os.Stat(src); err != nil {
		t.Skip("shared corpus not found")
	}
	want, errs, code := runAxle("parse", src)
	if code != 0 {
		t.Fatalf("parse: exit %d: %s", code, errs)
	}
	dir := t.TempDir()
	pb := filepath.Join(dir, "graphsage.pb")
	if _, errs, code := runAxle("convert", "--to", "proto", "-o", pb, src); code != 0 {
		t.Fatalf("convert --to proto: exit %d: %s", code, errs)
	}
	got, errs, code := runAxle("convert", "--to", "hlo", pb)
	if code != 0 || got != want {
		t.Fatalf("convert --to hlo of the .pb (exit %d: %s) differs from parse of the text:\n%s", code, errs, got)
	}
	// The same bytes under a name without an extension are read by content.
	bare := filepath.Join(dir, "graphsage")
	b, _ := os.ReadFile(pb)
	os.WriteFile(bare, b, 0o644)
	if got, errs, code := runAxle("parse", bare); code != 0 || got != want {
		t.Errorf("parse of the extensionless .pb: exit %d: %s", code, errs)
	}
}

// TestProtoDoor: parse, verify, opt and run take a .pb as they take the
// text; run's checksum on the interpreter is the same for both.
func TestProtoDoor(t *testing.T) {
	src := filepath.Join(benchModels, "graphsage_tf.hlo")
	if _, err := os.Stat(src); err != nil {
		t.Skip("shared corpus not found")
	}
	pb := filepath.Join(t.TempDir(), "graphsage.pb")
	if _, errs, code := runAxle("convert", "--to", "proto", "-o", pb, src); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, errs)
	}
	out, errs, code := runAxle("verify", pb)
	if code != 0 || !strings.Contains(out, "OK") {
		t.Errorf("verify: exit %d: %s%s", code, out, errs)
	}
	textOpt, _, _ := runAxle("opt", src)
	if out, errs, code := runAxle("opt", pb); code != 0 || out != textOpt {
		t.Errorf("opt of the .pb (exit %d: %s) differs from opt of the text", code, errs)
	}
	checksum := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "result ") {
				return l
			}
		}
		return ""
	}
	textRun, _, _ := runAxle("run", "--backend", "interp", src)
	pbRun, errs, code := runAxle("run", "--backend", "interp", pb)
	if code != 0 || checksum(pbRun) == "" || checksum(pbRun) != checksum(textRun) {
		t.Errorf("run of the .pb: exit %d: %s\n%q vs %q", code, errs, checksum(pbRun), checksum(textRun))
	}
}

// TestProtoErrors: a damaged .pb is reported with the file and the byte
// offset; a text file of two modules does not fit one proto.
func TestProtoErrors(t *testing.T) {
	dir := t.TempDir()
	two := filepath.Join(dir, "two.hlo")
	os.WriteFile(two, []byte("HloModule a\n\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n\n// -----\n\nHloModule b\n\nENTRY e {\n  ROOT c = f32[] constant(2)\n}\n"), 0o644)
	if _, errs, code := runAxle("convert", "--to", "proto", "-o", filepath.Join(dir, "x.pb"), two); code != 1 || !strings.Contains(errs, "holds 2 modules") {
		t.Errorf("two modules to one proto: exit %d: %s", code, errs)
	}
	one := filepath.Join(dir, "one.hlo")
	os.WriteFile(one, []byte("HloModule a\n\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n"), 0o644)
	pb := filepath.Join(dir, "one.pb")
	if _, errs, code := runAxle("convert", "--to", "proto", "-o", pb, one); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, errs)
	}
	b, _ := os.ReadFile(pb)
	os.WriteFile(pb, b[:len(b)-3], 0o644)
	if _, errs, code := runAxle("parse", pb); code != 1 || !strings.HasPrefix(errs, pb+": HloModuleProto: byte ") {
		t.Errorf("truncated .pb: exit %d: %q", code, errs)
	}
	if _, errs, code := runAxle("convert", "--to", "json", one); code != 2 || !strings.Contains(errs, "usage") {
		t.Errorf("bad --to: exit %d: %s", code, errs)
	}
}
