package hlotext

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// readFragments reads one of XLA's sub-grammar case tables
// (test_name, input, expected).
func readFragments(t *testing.T, name string) [][3]string {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "parser/fragments", name))
	if err != nil {
		t.Skipf("shared corpus not found: %v", err)
	}
	defer f.Close()
	var rows [][3]string
	sc := bufio.NewScanner(f)
	sc.Scan()
	for sc.Scan() {
		cols := strings.SplitN(sc.Text(), "\t", 3)
		for len(cols) < 3 {
			cols = append(cols, "")
		}
		rows = append(rows, [3]string{cols[0], cols[1], cols[2]})
	}
	return rows
}

// attrRoundTrip parses an attribute value on an instruction and prints it
// back: the attribute sub-parsers and printers under test.
func attrRoundTrip(t *testing.T, instr, attr, value string) string {
	t.Helper()
	src := "HloModule m\nENTRY e {\n  " + instr + ", " + attr + "=" + value + "\n}\n"
	m, err := Parse(src, Options{File: "fragment"})
	if err != nil {
		t.Fatalf("%s=%s: %v", attr, value, err)
	}
	root := m.Entry.Root
	v, ok := root.Attr(attr)
	if !ok {
		t.Fatalf("%s lost", attr)
	}
	pr := &printer{}
	pr.value(v)
	return pr.b.String()
}

func TestFragmentShardings(t *testing.T) {
	for _, r := range readFragments(t, "shardings.tsv") {
		if got := attrRoundTrip(t, "ROOT p = f32[] parameter(0)", "sharding", r[1]); got != r[2] {
			t.Errorf("%s: got %s want %s", r[0], got, r[2])
		}
	}
}

func TestFragmentFrontendAttributes(t *testing.T) {
	for _, r := range readFragments(t, "frontend_attributes.tsv") {
		if got := attrRoundTrip(t, "ROOT p = f32[] parameter(0)", "frontend_attributes", r[1]); got != r[2] {
			t.Errorf("%s: got %s want %s", r[0], got, r[2])
		}
	}
}

func TestFragmentReplicaGroups(t *testing.T) {
	for _, r := range readFragments(t, "replica_groups.tsv") {
		// A second computation would be needed for to_apply; the attribute
		// is checked on an all-to-all, which takes replica_groups alone.
		instr := "p = f32[4] parameter(0)\n  ROOT a = f32[4] all-to-all(p)"
		if got := attrRoundTrip(t, instr, "replica_groups", r[1]); got != r[2] {
			t.Errorf("%s: got %s want %s", r[0], got, r[2])
		}
	}
}

func TestFragmentConvDimLabels(t *testing.T) {
	for _, r := range readFragments(t, "conv_dim_labels.tsv") {
		c, msg := parseDimLabels(r[1])
		if msg != "" {
			t.Fatalf("%s: %s", r[0], msg)
		}
		if got := c.String(); got != r[2] {
			t.Errorf("%s: got %s want %s", r[0], got, r[2])
		}
	}
}

func TestFragmentPaddingConfigs(t *testing.T) {
	for _, r := range readFragments(t, "padding_configs.tsv") {
		p := &parser{scanner: scanner{src: r[1]}}
		cfg, err := p.padding()
		if err != nil {
			t.Fatalf("%s: %v", r[0], err)
		}
		if got := cfg.String(); got != r[2] {
			t.Errorf("%s: got %s want %s", r[0], got, r[2])
		}
	}
}

func TestFragmentShapes(t *testing.T) {
	for _, r := range readFragments(t, "shapes_valid.tsv") {
		sh, err := ParseShape(r[1])
		if err != nil {
			t.Errorf("%s: %q: %v", r[0], r[1], err)
			continue
		}
		// What we print must parse back to the same shape.
		again, err := ParseShape(sh.String())
		if err != nil || !again.Equal(sh) {
			t.Errorf("%s: %q printed as %q, which parses to %v (%v)", r[0], r[1], sh.String(), again, err)
		}
	}
	for _, r := range readFragments(t, "shapes_invalid.tsv") {
		_, err := ParseShape(r[1])
		if err == nil {
			t.Errorf("%s: %q accepted", r[0], r[1])
			continue
		}
		if !strings.Contains(err.Error(), r[2]) {
			t.Errorf("%s: %q: error %q lacks %q", r[0], r[1], err, r[2])
		}
	}
}

// TestShapePrinting pins XLA's shape text on hand-written cases.
func TestShapePrinting(t *testing.T) {
	for _, c := range []struct{ in, withLayout, human string }{
		{"f32[2,3]", "f32[2,3]{1,0}", "f32[2,3]"},
		{"f32[]", "f32[]", "f32[]"},
		{"u32[]{:S(2)}", "u32[]{:S(2)}", "u32[]"},
		{"s32[<=4,?]", "s32[<=4,?]{1,0}", "s32[<=4,?]"},
		{"(f32[], f32[], f32[], f32[], f32[], f32[])", "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])", "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])"},
		{"b(f32[8,16]{0,1})", "b(f32[8,16]{0,1})", "b(f32[8,16])"},
		{"token[]", "token[]", "token[]"},
	} {
		sh, err := ParseShape(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := sh.String(); got != c.withLayout {
			t.Errorf("%s: String() = %s, want %s", c.in, got, c.withLayout)
		}
		if got := sh.HumanString(); got != c.human {
			t.Errorf("%s: HumanString() = %s, want %s", c.in, got, c.human)
		}
	}
	if _, err := ParseShape("f32[2]{0}"); err != nil {
		t.Fatal(err)
	}
	var _ = hlo.Buffer
}
