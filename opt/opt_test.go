package opt_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"

	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/pass"
)

// runPass parses before, runs p under a pipeline with every check on, and
// returns the module in short text and whether p reported a change.
func runPass(t *testing.T, p pass.Pass, before string) (string, bool) {
	t.Helper()
	m, err := hlotext.Parse(before, hlotext.Options{File: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	pl := &pass.Pipeline{Label: "test", Passes: []pass.Pass{p}}
	changed, err := pl.RunWith(m, pass.Options{Verify: true, CheckUnchanged: true})
	if err != nil {
		t.Fatal(err)
	}
	return structure(m), changed
}

// normalize parses text and renders it the way runPass renders its result.
func normalize(t *testing.T, text string) string {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{File: t.Name() + "(want)"})
	if err != nil {
		t.Fatal(err)
	}
	return structure(m)
}

// structure renders a module independently of instruction names and of
// the order of independent instructions: per computation, the sorted
// multiset of canonical instruction lines, then the root's expression
// tree. Two modules with the same structure compute the same way.
func structure(m *hlo.Module) string {
	var b strings.Builder
	for _, c := range m.Computations {
		lines := make([]string, len(c.Instructions))
		for i, in := range c.Instructions {
			lines[i] = node(in)
		}
		slices.Sort(lines)
		fmt.Fprintf(&b, "computation %s\n  %s\nroot:\n%s\n", c.Name, strings.Join(lines, "\n  "), expr(c.Root, "  "))
	}
	return b.String()
}

// node is the canonical text of one instruction, called computations
// named rather than printed in place (they are rendered on their own).
func node(in *hlo.Instruction) string {
	cp := *in
	cp.Attrs = slices.Clone(in.Attrs)
	for i, a := range cp.Attrs {
		switch v := a.Value.(type) {
		case *hlo.Computation:
			cp.Attrs[i].Value = &hlo.Computation{Name: v.Name}
		case []*hlo.Computation:
			stubs := make([]*hlo.Computation, len(v))
			for k, c := range v {
				stubs[k] = &hlo.Computation{Name: c.Name}
			}
			cp.Attrs[i].Value = stubs
		}
	}
	s := hlotext.PrintInstruction(&cp, hlotext.CanonicalForm)
	switch in.Opcode {
	case hlo.OpParameter:
		s += fmt.Sprintf(" #%d", in.ParamNumber)
	case hlo.OpConstant:
		s += " " + in.Literal.String()
	}
	return s
}

func expr(in *hlo.Instruction, indent string) string {
	s := indent + node(in)
	for _, o := range in.Operands {
		s += "\n" + expr(o, indent+"  ")
	}
	return s
}

// checkPass: after == "" means the pass must not fire.
func checkPass(t *testing.T, p pass.Pass, before, after string) {
	t.Helper()
	got, changed := runPass(t, p, before)
	if after == "" {
		if changed {
			t.Fatalf("%s fired on\n%s\ngiving\n%s", p.Name(), before, got)
		}
		return
	}
	if !changed {
		t.Fatalf("%s did not fire on\n%s", p.Name(), before)
	}
	if want := normalize(t, after); got != want {
		t.Fatalf("%s gave\n%s\nwant\n%s", p.Name(), got, want)
	}
}

func hloModule(parts ...string) string { return "HloModule m\n" + strings.Join(parts, "\n") }
