package hlo_test

import (
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// A clone prints identically, and editing it leaves the original alone.
func TestCloneIsDeep(t *testing.T) {
	m, err := hlotext.Parse(`HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}`, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := m.Clone()
	if d := m.Diff(c); d != "" {
		t.Fatalf("clone differs: %s", d)
	}
	if c.Entry.Root.Computation("to_apply") != c.Computations[0] {
		t.Fatal("called computation not remapped to the clone's")
	}
	c.Computations[0].Root.Opcode = hlo.OpMultiply
	c.Entry.Root.Operands[1] = c.Entry.Instructions[0]
	if hlotext.Print(m, hlotext.Short) == hlotext.Print(c, hlotext.Short) {
		t.Fatal("editing the clone changed the original")
	}
	if m.Computations[0].Root.Opcode != hlo.OpAdd || m.Entry.Root.Operands[1].Name != "z" {
		t.Fatal("original changed")
	}
}
