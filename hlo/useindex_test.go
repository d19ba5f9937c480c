package hlo_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// TestUseIndexReplacesAsScanning: replacing through a UseIndex leaves a
// computation as Computation.ReplaceAllUses does, over random sequences
// of replacements (instructions by earlier ones, by later ones that read
// them, by themselves, the root, control predecessors) and instructions
// added between them.
func TestUseIndexReplacesAsScanning(t *testing.T) {
	var b strings.Builder
	b.WriteString("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  a0 = f32[4] negate(p)\n")
	const n = 40
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  a%d = f32[4] add(a%d, a%d)", i, i-1, (i*7)%i)
		if i%9 == 0 {
			fmt.Fprintf(&b, ", control-predecessors={a%d}", i-2)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  ROOT r = f32[4] multiply(a%d, a%d)\n}\n", n-1, n/2)
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		scan, err := hlotext.Parse(b.String(), hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		indexed := scan.Clone()
		cs, ci := scan.Entry, indexed.Entry
		uses := ci.UseIndex()
		for step := range 12 {
			if rng.IntN(4) == 0 { // an instruction added, reading two others
				i, j := rng.IntN(len(cs.Instructions)), rng.IntN(len(cs.Instructions))
				name := fmt.Sprintf("new%d", step)
				for _, c := range []*hlo.Computation{cs, ci} {
					in, err := hlo.NewInstruction(name, hlo.OpAdd, []*hlo.Instruction{c.Instructions[i], c.Instructions[j]})
					if err != nil {
						t.Fatal(err)
					}
					c.AddInstruction(in)
					if c == ci {
						uses.Add(in)
					}
				}
				continue
			}
			i, j := rng.IntN(len(cs.Instructions)), rng.IntN(len(cs.Instructions))
			got := uses.ReplaceAllUses(ci.Instructions[i], ci.Instructions[j])
			want := cs.ReplaceAllUses(cs.Instructions[i], cs.Instructions[j])
			if got != want {
				t.Fatalf("trial %d step %d: replacing %s by %s changed %v, scanning %v", trial, step, cs.Instructions[i].Name, cs.Instructions[j].Name, got, want)
			}
		}
		if g, w := describe(ci), describe(cs); g != w {
			t.Fatalf("trial %d: through the index\\n%s\\nscanning\\n%s", trial, g, w)
		}
	}
}

// describe lists each instruction's operands and control predecessors
// by name, and the root.
func describe(c *hlo.Computation) string {
	var b strings.Builder
	for _, in := range c.Instructions {
		fmt.Fprintf(&b, "%s(", in.Name)
		for _, o := range in.Operands {
			fmt.Fprintf(&b, "%s ", o.Name)
		}
		b.WriteString(") ctl(")
		for _, o := range in.ControlPredecessors {
			fmt.Fprintf(&b, "%s ", o.Name)
		}
		b.WriteString(")\n")
	}
	fmt.Fprintf(&b, "root %s", c.Root.Name)
	return b.String()
}
