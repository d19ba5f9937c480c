package cpu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// Dots whose batch, free and contracting dimensions each collapse into
// one index run on the GEMM, wherever the dimensions sit: a dense layer
// over a sequence, batch dimensions after the others, two contracting
// dimensions. Each against the evaluator.
func TestDotOnGemm(t *testing.T) {
	for _, c := range []struct{ name, lhs, rhs, out, dims string }{
		{"dense layer over a sequence", "f32[2,3,8]", "f32[8,5]", "f32[2,3,5]",
			"lhs_contracting_dims={2}, rhs_contracting_dims={0}"},
		{"batch not leading", "f32[3,2,4]", "f32[4,2,5]", "f32[2,3,5]",
			"lhs_batch_dims={1}, rhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_contracting_dims={0}"},
		{"two contracting dimensions", "f32[6,3,4]", "f32[3,4,7]", "f32[6,7]",
			"lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}"},
		{"attention scores", "f32[2,4,2,4]", "f32[2,4,2,4]", "f32[2,2,4,4]",
			"lhs_batch_dims={0,2}, rhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_contracting_dims={3}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := fmt.Sprintf("HloModule d\nENTRY e {\n  a = %s parameter(0)\n  b = %s parameter(1)\n  ROOT d = %s dot(a, b), %s\n}\n", c.lhs, c.rhs, c.out, c.dims)
			checkDot(t, text, true)
		})
	}
}

// Random dimension numbers and operand orders: whatever the lowering
// (the GEMM, or the evaluator when the dimensions do not collapse), the
// result is the evaluator's.
func TestDotLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for range 150 {
		checkDot(t, randomDot(rng), false)
	}
}

func checkDot(t *testing.T, text string, wantGemm bool) {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	x, err := Compile(m, Options{NoOptimize: true, Poison: true, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if wantGemm && x.Lowering["gemm"] != 1 {
		t.Fatalf("lowered as %v, not the GEMM:\n%s", x.Lowering, text)
	}
	args := eval.RandomArguments(m, 5)
	got, want := evalAndRun(t, m, x, args)
	if msg := closeEnough(got, want); msg != "" {
		t.Fatalf("%s (lowering %v)\n%s", msg, x.Lowering, text)
	}
}

// randomDot is a dot with 0-2 batch, 0-2 free dimensions a side and 1-2
// contracting ones, each operand's dimensions in a random order.
func randomDot(rng *rand.Rand) string {
	size := func() int64 { return int64(1 + rng.IntN(4)) }
	nb, nc := rng.IntN(3), 1+rng.IntN(2)
	batch, contract := make([]int64, nb), make([]int64, nc)
	for i := range batch {
		batch[i] = size()
	}
	for i := range contract {
		contract[i] = size()
	}
	side := func(free []int64) (dims, bd, cd []int64) {
		roles := make([]int64, 0, nb+nc+len(free)) // 0..nb-1 batch, then contracting, then free
		for r := range int64(nb + nc + len(free)) {
			roles = append(roles, r)
		}
		rng.Shuffle(len(roles), func(i, j int) { roles[i], roles[j] = roles[j], roles[i] })
		dims = make([]int64, len(roles))
		bd, cd = make([]int64, nb), make([]int64, nc)
		for pos, r := range roles {
			switch {
			case r < int64(nb):
				dims[pos], bd[r] = batch[r], int64(pos)
			case r < int64(nb+nc):
				dims[pos], cd[r-int64(nb)] = contract[r-int64(nb)], int64(pos)
			default:
				dims[pos] = free[r-int64(nb+nc)]
			}
		}
		// free dimensions appear in the result in the operand's order
		return dims, bd, cd
	}
	lfree, rfree := make([]int64, rng.IntN(3)), make([]int64, rng.IntN(3))
	for i := range lfree {
		lfree[i] = size()
	}
	for i := range rfree {
		rfree[i] = size()
	}
	ld, lb, lc := side(lfree)
	rd, rb, rc := side(rfree)
	out := append(append(append([]int64{}, batch...), orderedFree(ld, lb, lc)...), orderedFree(rd, rb, rc)...)
	return fmt.Sprintf("HloModule d\nENTRY e {\n  a = %s parameter(0)\n  b = %s parameter(1)\n  ROOT d = %s dot(a, b), lhs_batch_dims=%s, rhs_batch_dims=%s, lhs_contracting_dims=%s, rhs_contracting_dims=%s\n}\n",
		shapeText(hlo.F32, ld), shapeText(hlo.F32, rd), shapeText(hlo.F32, out), intsText(lb), intsText(rb), intsText(lc), intsText(rc))
}

// orderedFree lists the sizes of the dimensions that are neither batch
// nor contracting, in the operand's order.
func orderedFree(dims, bd, cd []int64) []int64 {
	var free []int64
	for pos, s := range dims {
		if !slices.Contains(bd, int64(pos)) && !slices.Contains(cd, int64(pos)) {
			free = append(free, s)
		}
	}
	return free
}
