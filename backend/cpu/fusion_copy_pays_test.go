package cpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
)

// Two LSTM cell steps: the cell c1 is read by h1's tanh and by the next
// step. Copying c1 into h1's fusion would leave its gates (logistic,
// tanh) to run as separate kernels for the copy to read; with copyPays
// every gate is computed in a fusion.
func TestFusionCopyLSTMCell(t *testing.T) {
	var b strings.Builder
	b.WriteString("HloModule lstm\nENTRY e {\n  c0 = f32[2,128] parameter(0)\n")
	for s := 1; s <= 2; s++ {
		fmt.Fprintf(&b, "  g%d = f32[2,512] parameter(%d)\n", s, s)
		for k, name := range []string{"i", "f", "t", "o"} {
			fmt.Fprintf(&b, "  %[1]ss%[2]d = f32[2,128] slice(g%[2]d), slice={[0:2], [%[3]d:%[4]d]}\n", name, s, 128*k, 128*(k+1))
			op := "logistic"
			if name == "t" {
				op = "tanh"
			}
			fmt.Fprintf(&b, "  %[1]s%[2]d = f32[2,128] %[3]s(%[1]ss%[2]d)\n", name, s, op)
		}
		fmt.Fprintf(&b, "  fc%[1]d = f32[2,128] multiply(f%[1]d, c%[2]d)\n  it%[1]d = f32[2,128] multiply(i%[1]d, t%[1]d)\n", s, s-1)
		fmt.Fprintf(&b, "  c%[1]d = f32[2,128] add(fc%[1]d, it%[1]d)\n  tc%[1]d = f32[2,128] tanh(c%[1]d)\n  h%[1]d = f32[2,128] multiply(o%[1]d, tc%[1]d)\n", s)
	}
	b.WriteString("  ROOT r = (f32[2,128], f32[2,128], f32[2,128]) tuple(h1, h2, c2)\n}\n")
	m, x := compileText(t, b.String(), Options{Threads: 2, Poison: true})
	if x.Lowering["elementwise"] != 0 {
		t.Fatalf("lowered as %v: a gate runs outside the fusions", x.Lowering)
	}
	checkCompiledModule(t, m, x)
	args := eval.RandomArguments(m, 3)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Execute(args...)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want.Elements() { // the fused gates are the vector kernels'
		if err := closeTo(got.Elements()[i], w, 1e-5); err != nil {
			t.Fatalf("output %d: %v", i, err)
		}
	}
}
