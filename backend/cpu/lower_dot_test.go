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

// batchThreads hands whole products to the workers when each is too
// small to split or the batch divides evenly, and not when the whole
// batch is too little work or one product runs alone.
func TestBatchThreads(t *testing.T) {
	for _, c := range []struct{ batch, m, n, k, threads, want int }{
		{96, 128, 128, 64, 2, 2}, // attention: 2 MFLOP products, 403 MFLOP in all
		{5, 128, 128, 64, 2, 2},  // small products, an uneven batch: still
		{8, 16, 16, 16, 2, 1},    // 65 kFLOP in all: inline
		{2, 1024, 1024, 1024, 2, 2},
		{3, 1024, 1024, 1024, 2, 1}, // big and uneven: each product split
		{1, 1024, 1024, 1024, 2, 1},
		{96, 128, 128, 64, 1, 1},
		{4, 128, 128, 64, 8, 4}, // no more workers than products
	} {
		if got := batchThreads(c.batch, c.m, c.n, c.k, c.threads); got != c.want {
			t.Errorf("%+v: %d workers, want %d", c, got, c.want)
		}
	}
}

// A batch of small products split across the workers (each product on
// one of them) gives the evaluator's results and the same bits for any
// thread count, with and without a fused epilogue, in f32 and f64.
func TestDotBatchAcrossThreads(t *testing.T) {
	// 24 products of 64×64 by 64×64 (0.5 MFLOP each): on one thread each,
	// and together worth splitting.
	if batchThreads(24, 64, 64, 64, 2) != 2 {
		t.Fatal("the batches here would not be split")
	}
	for _, c := range []struct{ name, text, lowering string }{
		{"attention scores", `HloModule att
ENTRY e {
  q = f32[2,64,12,64] parameter(0)
  k = f32[2,64,12,64] parameter(1)
  ROOT s = f32[2,12,64,64] dot(q, k), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}
}`, "gemm"},
		{"with an epilogue", `HloModule att
ENTRY e {
  a = f32[24,64,64] parameter(0)
  b = f32[24,64,64] parameter(1)
  c = f32[24,64,64] parameter(2)
  d = f32[24,64,64] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  z = f32[] constant(0)
  zb = f32[24,64,64] broadcast(z), dimensions={}
  s = f32[24,64,64] add(d, c)
  ROOT r = f32[24,64,64] maximum(s, zb)
}`, "gemm+epilogue"},
		{"f64", `HloModule att
ENTRY e {
  a = f64[24,64,64] parameter(0)
  b = f64[24,64,64] parameter(1)
  ROOT d = f64[24,64,64] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := hlotext.Parse(c.text, hlotext.Options{})
			if err != nil {
				t.Fatal(err)
			}
			args := eval.RandomArguments(m, 9)
			var first *hlo.Literal
			for threads := 1; threads <= 3; threads++ {
				x, err := Compile(m, Options{Threads: threads, Poison: true})
				if err != nil {
					t.Fatal(err)
				}
				if c.lowering != "" && x.Lowering[c.lowering] != 1 {
					t.Fatalf("lowered as %v, want one %s", x.Lowering, c.lowering)
				}
				got, want := evalAndRun(t, m, x, args)
				if msg := closeEnough(got, want); msg != "" {
					t.Fatalf("threads=%d: %s", threads, msg)
				}
				if first == nil {
					first = got
				} else if !got.Equal(first) {
					t.Fatalf("threads=%d gives other bits than threads=1", threads)
				}
			}
		})
	}
}
