package cpu

import (
	"fmt"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// attentionOutput is attention's last product, the heads' P·V, and its
// transpose back to the sequence's layout: %[1]d heads of %[2]d
// positions, %[3]d values a head, %[4]s the transpose's permutation and
// %[5]s its shape; %[6]s the root (t, or a tuple keeping the product
// read elsewhere too).
const attentionOutput = `HloModule attn
ENTRY e {
  p = f32[1,%[1]d,%[2]d,%[2]d] parameter(0)
  v = f32[1,%[2]d,%[1]d,%[3]d] parameter(1)
  d = f32[1,%[1]d,%[2]d,%[3]d] dot(p, v), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={1}
  t = f32%[5]s transpose(d), dimensions={%[4]s}
  ROOT r = %[6]s
}`

// TestDotTranspose: the product written transposed by its GEMM (one
// kCustom fusion, no copy), against the evaluator and, bit for bit,
// against the same product and transpose run apart (the product kept
// unfused by a second reader), on 1 to 3 threads; and the ones it leaves
// alone (a transpose moving the columns, a product of a few rows).
func TestDotTranspose(t *testing.T) {
	for _, c := range []struct {
		heads, seq, dim int
		perm, shape     string
		fused           bool
	}{
		{12, 128, 32, "0,2,1,3", "[1,128,12,32]", true},
		{3, 20, 16, "0,2,1,3", "[1,20,3,16]", true},
		{4, 9, 8, "2,0,1,3", "[9,1,4,8]", true},
		{2, 11, 5, "0,2,1,3", "[1,11,2,5]", true},
		{2, 7, 5, "0,2,1,3", "[1,7,2,5]", false}, // few rows: the small products' kernel
		{2, 8, 4, "0,1,3,2", "[1,2,4,8]", false}, // the columns move
	} {
		name := fmt.Sprintf("%dx%dx%d/%s", c.heads, c.seq, c.dim, c.perm)
		text := func(root string) string {
			return fmt.Sprintf(attentionOutput, c.heads, c.seq, c.dim, c.perm, c.shape, root)
		}
		fused := text("f32" + c.shape + " copy(t)")
		apart := text("(f32" + c.shape + ", f32[1," + fmt.Sprint(c.heads, ",", c.seq, ",", c.dim) + "]) tuple(t, d)")
		m, err := hlotext.Parse(fused, hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ma, err := hlotext.Parse(apart, hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		args := eval.RandomArguments(m, 7)
		want, err := eval.Run(m, args...)
		if err != nil {
			t.Fatal(err)
		}
		for threads := 1; threads <= 3; threads++ {
			x, err := Compile(m, Options{Threads: threads, Poison: true})
			if err != nil {
				t.Fatal(err)
			}
			if n := x.Lowering["gemm-transposed"]; n != map[bool]int{true: 1}[c.fused] || c.fused && x.Lowering["movement"] != 0 {
				t.Fatalf("%s: lowering %v", name, x.Lowering)
			}
			got, err := x.Execute(args...)
			if err != nil {
				t.Fatal(err)
			}
			if msg := closeEnough(got, want); msg != "" {
				t.Fatalf("%s, %d threads: against the evaluator: %s", name, threads, msg)
			}
			xa, err := Compile(ma, Options{Threads: threads, Poison: true})
			if err != nil {
				t.Fatal(err)
			}
			if xa.Lowering["gemm-transposed"] != 0 {
				t.Fatalf("%s: a product read elsewhere too was fused: %v", name, xa.Lowering)
			}
			ref, err := xa.Execute(args...)
			if err != nil {
				t.Fatal(err)
			}
			if r := ref.Elements()[0]; !got.Equal(r) {
				t.Fatalf("%s, %d threads: the transposed GEMM changed bits:\n%s", name, threads, firstDiff(got, r))
			}
		}
	}
}
