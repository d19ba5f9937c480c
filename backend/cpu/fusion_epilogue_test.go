package cpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/hlo/randhlo"
)

// checkEpilogue compiles text with output fusion, checks the lowering
// counts, and compares the results with the evaluator (to rounding: the
// GEMM sums in f32) and, bit for bit, with the same module compiled
// without output fusion, for 1 to 3 threads, and across those thread
// counts. It returns the fused module.
func checkEpilogue(t *testing.T, text string, lowering map[string]int) *hlo.Module {
	t.Helper()
	return checkEpilogueThreads(t, text, lowering, true)
}

// checkEpilogueThreads is checkEpilogue; with sameBits false the results
// may differ between thread counts (a split-K convolution sums its
// partial outputs per thread), but not from the unfused ones.
func checkEpilogueThreads(t *testing.T, text string, lowering map[string]int, sameBits bool) *hlo.Module {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	args := eval.RandomArguments(m, 11)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	var fused *hlo.Module
	var first *hlo.Literal // the one-thread result
	for threads := 1; threads <= 3; threads++ {
		x, err := Compile(m, Options{Threads: threads, Poison: true})
		if err != nil {
			t.Fatal(err)
		}
		for how, n := range lowering {
			if x.Lowering[how] != n {
				t.Fatalf("lowering %v, want %d %s", x.Lowering, n, how)
			}
		}
		plain, err := Compile(m, Options{Threads: threads, Poison: true, NoOutputFusion: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Execute(args...)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := plain.Execute(args...)
		if err != nil {
			t.Fatal(err)
		}
		if msg := closeEnough(got, want); msg != "" {
			t.Fatalf("threads %d: against the evaluator: %s", threads, msg)
		}
		if !got.Equal(ref) {
			t.Fatalf("threads %d: output fusion changed bits:\n%s", threads, firstDiff(got, ref))
		}
		if first == nil {
			first = got
		} else if sameBits && !got.Equal(first) {
			t.Fatalf("threads %d: bits differ from one thread's:\n%s", threads, firstDiff(got, first))
		}
		fused = x.Module()
	}
	return fused
}

func firstDiff(a, b *hlo.Literal) string {
	for i := range a.Len() {
		if x, y := a.GetFloat64(i), b.GetFloat64(i); x != y {
			return fmt.Sprintf("element %d: %g, unfused %g", i, x, y)
		}
	}
	return "shapes differ"
}

const mlpLayer = `HloModule layer
ENTRY e {
  x = f32[%[1]d,%[3]d] parameter(0)
  w = f32[%[3]d,%[2]d] parameter(1)
  b = f32[%[2]d] parameter(2)
  d = f32[%[1]d,%[2]d] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[%[1]d,%[2]d] broadcast(b), dimensions={1}
  s = f32[%[1]d,%[2]d] add(d, bb)
  z = f32[] constant(0)
  zb = f32[%[1]d,%[2]d] broadcast(z), dimensions={}
  ROOT h = f32[%[1]d,%[2]d] maximum(s, zb)
}`

// An MLP layer becomes one kOutput fusion holding the dot, which prints,
// verifies and runs on the evaluator with the original's results.
func TestEpilogueMLPLayer(t *testing.T) {
	text := fmt.Sprintf(mlpLayer, 64, 48, 40)
	fm := checkEpilogue(t, text, map[string]int{"gemm+epilogue": 1, "gemm": 0, "tile-fusion": 0})
	if err := hlo.Verify(fm); err != nil {
		t.Fatal(err)
	}
	out := hlotext.Print(fm, hlotext.PrintOptions{})
	if !strings.Contains(out, "kind=kOutput") || !strings.Contains(out, " dot(") {
		t.Fatalf("no kOutput fusion with the dot:\n%s", out)
	}
	back, err := hlotext.Parse(out, hlotext.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m, _ := hlotext.Parse(text, hlotext.Options{})
	evaluatesAlike(t, m, back, 3)
}

// m and n around the micro-kernel's 6×16 tile, K below, at and over the
// skinny path's 8 and the 256-deep K block.
func TestEpilogueEdgeSizes(t *testing.T) {
	for _, k := range []int{2, 9, 300} {
		for _, m := range []int{1, 2, 5, 6, 7, 12, 13, 17} {
			for _, n := range []int{1, 3, 15, 16, 17} {
				t.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(t *testing.T) {
					checkEpilogue(t, fmt.Sprintf(mlpLayer, m, n, k), map[string]int{"gemm+epilogue": 1})
				})
			}
		}
	}
}

// Several blocks in every direction: two NC column blocks (n > 3072),
// two K blocks, MC row blocks split across threads.
func TestEpilogueBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("a 130×3100×260 product on the evaluator")
	}
	checkEpilogue(t, fmt.Sprintf(mlpLayer, 130, 3100, 260), map[string]int{"gemm+epilogue": 1})
}

// A product big enough for the threads to split C's columns: the
// epilogue then gets parts of rows (the bias read from its column on).
func TestEpiloguePartRows(t *testing.T) {
	if kernels.GemmRunsInline(128, 256, 200, false) {
		t.Fatal("the product here would run on one thread")
	}
	checkEpilogue(t, fmt.Sprintf(mlpLayer, 128, 256, 200), map[string]int{"gemm+epilogue": 1})
}

// Part rows through the block code (one call per block, each operand
// read by its row stride): a bias row, a residual, a bias reshaped from
// two dimensions, a bf16 residual; and, where one operand cannot be read
// by rows (a bias along the columns, one value per row), row by row.
func TestEpiloguePartRowsOperands(t *testing.T) {
	const text = `HloModule operands
ENTRY e {
  x = f32[100,200] parameter(0)
  w = f32[200,264] parameter(1)
  b = f32[264] parameter(2)
  r = f32[100,264] parameter(3)
  q = f32[8,33] parameter(4)
  h = bf16[100,264] parameter(5)
  d = f32[100,264] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[100,264] broadcast(b), dimensions={1}
  s = f32[100,264] add(d, bb)
  t = f32[100,264] add(s, r)
  qr = f32[264] reshape(q)
  qb = f32[100,264] broadcast(qr), dimensions={1}
  u = f32[100,264] multiply(t, qb)
  hf = f32[100,264] convert(h)
  %s
}`
	for _, root := range []string{
		"ROOT y = f32[100,264] subtract(u, hf)",
		`c = f32[100] parameter(6)
  cb = f32[100,264] broadcast(c), dimensions={0}
  v = f32[100,264] subtract(u, hf)
  ROOT y = f32[100,264] add(v, cb)`,
	} {
		before := tile.StridedBlockRuns()
		checkEpilogue(t, fmt.Sprintf(text, root), map[string]int{"gemm+epilogue": 1})
		if strided := tile.StridedBlockRuns() > before; strided != !strings.Contains(root, "cb") && jit.Available {
			t.Errorf("%q: block code used: %v", root, strided)
		}
	}
}

// An epilogue reading several operands: a bias row, a residual, a scalar
// parameter and the dot's own left operand (square, so it has the
// result's dimensions), with a transcendental op.
func TestEpilogueOperands(t *testing.T) {
	const text = `HloModule several
ENTRY e {
  x = f32[37,37] parameter(0)
  w = f32[37,37] parameter(1)
  b = f32[37] parameter(2)
  r = f32[37,37] parameter(3)
  a = f32[] parameter(4)
  d = f32[37,37] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[37,37] broadcast(b), dimensions={0}
  s = f32[37,37] add(d, bb)
  ab = f32[37,37] broadcast(a), dimensions={}
  t = f32[37,37] multiply(s, ab)
  u = f32[37,37] add(t, r)
  v = f32[37,37] tanh(u)
  ROOT y = f32[37,37] subtract(v, x)
}`
	checkEpilogue(t, text, map[string]int{"gemm+epilogue": 1, "tile-fusion": 0})
}

// A batched product (attention's scores) finishes each product's blocks
// at its own rows of the output.
func TestEpilogueBatched(t *testing.T) {
	const text = `HloModule batched
ENTRY e {
  q = f32[3,%[1]d,%[3]d] parameter(0)
  k = f32[3,%[3]d,%[2]d] parameter(1)
  s = f32[] parameter(2)
  d = f32[3,%[1]d,%[2]d] dot(q, k), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  sb = f32[3,%[1]d,%[2]d] broadcast(s), dimensions={}
  ROOT y = f32[3,%[1]d,%[2]d] multiply(d, sb)
}`
	for _, size := range [][3]int{{17, 33, 20}, {40, 7, 50}} {
		checkEpilogue(t, fmt.Sprintf(text, size[0], size[1], size[2]), map[string]int{"gemm+epilogue": 1})
	}
}

// attentionScores is attention's scores and softmax as MiniLM's
// exporter writes them: %[4]d heads of %[1]d×%[3]d by %[3]d×%[2]d,
// scaled by a division, a mask along the keys added, softmax along the
// rows.
const attentionScores = `HloModule scores
max {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT m = f32[] maximum(p, q)
}
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  q = f32[%[4]d,%[1]d,%[3]d] parameter(0)
  k = f32[%[4]d,%[3]d,%[2]d] parameter(1)
  mask = f32[%[2]d] parameter(2)
  d = f32[%[4]d,%[1]d,%[2]d] dot(q, k), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  c = f32[] constant(5.65685415)
  cb = f32[%[4]d,%[1]d,%[2]d] broadcast(c), dimensions={}
  x = f32[%[4]d,%[1]d,%[2]d] divide(d, cb)
  mb = f32[%[4]d,%[1]d,%[2]d] broadcast(mask), dimensions={2}
  l = f32[%[4]d,%[1]d,%[2]d] add(x, mb)
  ninf = f32[] constant(-inf)
  mx = f32[%[4]d,%[1]d] reduce(l, ninf), dimensions={2}, to_apply=max
  mxb = f32[%[4]d,%[1]d,%[2]d] broadcast(mx), dimensions={0,1}
  z = f32[%[4]d,%[1]d,%[2]d] subtract(l, mxb)
  ex = f32[%[4]d,%[1]d,%[2]d] exponential(z)
  zero = f32[] constant(0)
  s = f32[%[4]d,%[1]d] reduce(ex, zero), dimensions={2}, to_apply=add
  sb = f32[%[4]d,%[1]d,%[2]d] broadcast(s), dimensions={0,1}
  ROOT p = f32[%[4]d,%[1]d,%[2]d] divide(ex, sb)
}`

// Attention's scores finish with their softmax in one fusion on every
// thread count: the workers take whole heads and then run the softmax
// over their heads' rows, in row tiles that fold ahead and pipeline as
// the softmax's own fusion does (MiniLM's 12 heads of 128×128, whose
// rows make several tiles a worker; three heads, split unevenly over
// two threads; heads of rows shorter than a vector).
func TestEpilogueAttentionScores(t *testing.T) {
	for _, size := range [][4]int{{128, 128, 32, 12}, {40, 24, 8, 3}, {17, 5, 9, 4}} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			checkEpilogue(t, fmt.Sprintf(attentionScores, size[0], size[1], size[2], size[3]), map[string]int{"gemm+epilogue": 1})
		})
	}
}

// Transposed operands are read through their strides.
func TestEpilogueTransposed(t *testing.T) {
	const text = `HloModule transposed
ENTRY e {
  x = f32[%[3]d,%[1]d] parameter(0)
  w = f32[%[2]d,%[3]d] parameter(1)
  b = f32[%[2]d] parameter(2)
  d = f32[%[1]d,%[2]d] dot(x, w), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  bb = f32[%[1]d,%[2]d] broadcast(b), dimensions={1}
  ROOT s = f32[%[1]d,%[2]d] add(d, bb)
}`
	for _, size := range [][3]int{{70, 33, 20}, {100, 10, 50}, {7, 5, 3}} {
		checkEpilogue(t, fmt.Sprintf(text, size[0], size[1], size[2]), map[string]int{"gemm+epilogue": 1})
	}
}

// softmax is a row program over the product's rows: %[1]d×%[3]d by
// %[3]d×%[2]d, a bias, softmax along the rows.
const softmaxLayer = `HloModule softmax
max {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT m = f32[] maximum(p, q)
}
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[%[1]d,%[3]d] parameter(0)
  w = f32[%[3]d,%[2]d] parameter(1)
  b = f32[%[2]d] parameter(2)
  d = f32[%[1]d,%[2]d] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[%[1]d,%[2]d] broadcast(b), dimensions={1}
  l = f32[%[1]d,%[2]d] add(d, bb)
  ninf = f32[] constant(-inf)
  mx = f32[%[1]d] reduce(l, ninf), dimensions={1}, to_apply=max
  mb = f32[%[1]d,%[2]d] broadcast(mx), dimensions={0}
  z = f32[%[1]d,%[2]d] subtract(l, mb)
  e = f32[%[1]d,%[2]d] exponential(z)
  zero = f32[] constant(0)
  s = f32[%[1]d] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[%[1]d,%[2]d] broadcast(s), dimensions={0}
  ROOT p = f32[%[1]d,%[2]d] divide(e, sb)
}`

// A row program (softmax) finishes whole rows: on the skinny GEMM (n ≤
// 16, six rows at a time) and the packed one (one column block); rows
// split across two column blocks (n over 3072) are refused.
func TestEpilogueRows(t *testing.T) {
	for _, c := range []struct{ m, n, k, fused int }{{256, 10, 512, 1}, {13, 7, 9, 1}, {20, 100, 300, 1}, {4, 3100, 8, 0}} {
		t.Run(fmt.Sprintf("%dx%dx%d", c.m, c.n, c.k), func(t *testing.T) {
			checkEpilogue(t, fmt.Sprintf(softmaxLayer, c.m, c.n, c.k), map[string]int{"gemm+epilogue": c.fused, "gemm": 1 - c.fused})
		})
	}
}

// Where folding would cost work or cannot read the value in place, the
// dot stays a GEMM of its own.
func TestEpilogueRefused(t *testing.T) {
	cases := []struct{ name, body string }{
		{"read twice", `
  s = f32[16,24] add(d, bb)
  n = f32[16,24] negate(d)
  ROOT t = (f32[16,24], f32[16,24]) tuple(s, n)`},
		{"an output", `
  s = f32[16,24] add(d, bb)
  ROOT t = (f32[16,24], f32[16,24]) tuple(s, d)`},
		{"reversed", `
  rv = f32[16,24] reverse(d), dimensions={1}
  ROOT n = f32[16,24] add(rv, bb)`},
		{"narrowed", `
  s = f32[16,24] add(d, bb)
  ROOT c = bf16[16,24] convert(s)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := `HloModule refused
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[16,32] parameter(0)
  w = f32[32,24] parameter(1)
  b = f32[24] parameter(2)
  d = f32[16,24] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[16,24] broadcast(b), dimensions={1}` + c.body + "\n}"
			checkEpilogue(t, text, map[string]int{"gemm+epilogue": 0, "gemm": 1})
		})
	}
}

// convLayer is a convolution with a bias on its output features and a
// ReLU: %[1]s the input shape, %[2]s the kernel's, %[3]s the output's,
// %[4]s its feature count, %[5]s the convolution's attributes, %[6]d the
// output's feature dimension.
const convLayer = `HloModule conv
ENTRY e {
  x = f32%[1]s parameter(0)
  k = f32%[2]s parameter(1)
  b = f32[%[4]d] parameter(2)
  c = f32%[3]s convolution(x, k), %[5]s
  bb = f32%[3]s broadcast(b), dimensions={%[6]d}
  s = f32%[3]s add(c, bb)
  z = f32[] constant(0)
  zb = f32%[3]s broadcast(z), dimensions={}
  ROOT h = f32%[3]s maximum(s, zb)
}`

// On several threads an execution's kernels split from a hotShare of
// their cold sizes on, and the fusion judges by that whether a product
// would take its epilogue's threads away: a MobileNet depthwise layer
// (2.7 MFLOP, on one thread when the workers are parked, on both within
// an execution) and an MLP layer of 1 MFLOP take their epilogues, on
// every thread count. (TestEpilogueKeepsThreads: products that stay on
// one thread even then.)
func TestEpilogueFoldsWhereKernelsSplitWithinAnExecution(t *testing.T) {
	dw := fmt.Sprintf(convLayer, "[1,28,28,192]", "[3,3,1,192]", "[1,28,28,192]", 192,
		"window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=192", 3)
	checkEpilogue(t, dw, map[string]int{"conv+epilogue": 1, "conv": 0})
	if !kernels.GemmRunsInline(512, 512, 2, false) || kernels.GemmRunsInline(512, 512, 2, true) {
		t.Fatal("the MLP layer no longer tells the thresholds apart")
	}
	checkEpilogue(t, fmt.Sprintf(mlpLayer, 512, 512, 2), map[string]int{"gemm+epilogue": 1})
}

// Convolution with bias and ReLU on every path of the conv kernel: the
// direct kernel (16+ channels), implicit im2col (3 channels), feature
// groups, depthwise, split K, and a channels-first input copied first.
// A channels-first output, which the kernel cannot write in place, is
// refused.
func TestEpilogueConv(t *testing.T) {
	cases := []struct {
		name, in, kernel, out string
		features              int
		attrs                 string
		featureDim            int
		fused                 int
		threadVariant         bool // split K: partial sums per thread
	}{
		{"direct", "[2,9,7,16]", "[3,3,16,20]", "[2,9,7,20]", 20, "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 3, 1, false},
		{"im2col", "[3,8,8,3]", "[3,3,3,17]", "[3,6,6,17]", 17, "window={size=3x3}, dim_labels=b01f_01io->b01f", 3, 1, false},
		{"groups", "[1,6,6,32]", "[3,3,16,24]", "[1,6,6,24]", 24, "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2", 3, 1, false},
		{"depthwise", "[2,10,10,8]", "[3,3,1,8]", "[2,10,10,8]", 8, "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=8", 3, 1, false},
		{"split K", "[1,4,4,704]", "[3,3,704,8]", "[1,4,4,8]", 8, "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 3, 1, true},
		{"channels-first input", "[2,16,6,6]", "[3,3,16,5]", "[2,6,6,5]", 5, "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_01io->b01f", 3, 1, false},
		{"channels-first output", "[2,6,6,16]", "[3,3,16,5]", "[2,5,6,6]", 5, "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->bf01", 1, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := fmt.Sprintf(convLayer, c.in, c.kernel, c.out, c.features, c.attrs, c.featureDim)
			checkEpilogueThreads(t, text, map[string]int{"conv+epilogue": c.fused, "conv": 1 - c.fused}, !c.threadVariant)
		})
	}
}

// convResidual is a ResNet block's convolution: a bias, a residual and a
// ReLU (kernels.TileOps, which the direct kernels apply as they store a
// tile), %[1]s and %[3]s the convolution's window, %[4]s its kernel's
// spatial dimensions, %[2]s the two adds' bodies, %[5]s the residual r's
// definition from parameter q: q itself (copied), or its negation, whose
// buffer the fusion's output takes (the kernels must then leave the
// finish to the epilogue: overlapping groups would read a residual
// already overwritten).
const convResidual = `HloModule block
ENTRY e {
  x = f32[2,14,15,32] parameter(0)
  k = f32[%[4]s,32,64] parameter(1)
  b = f32[64] parameter(2)
  q = f32[2,14,15,64] parameter(3)
  e = f32[64] parameter(4)
  eb = f32[2,14,15,64] broadcast(e), dimensions={3}
  r = f32[2,14,15,64] %[5]s(q)
  c = f32[2,14,15,64] convolution(x, k), window={size=%[1]s %[3]s}, dim_labels=b01f_01io->b01f
  bb = f32[2,14,15,64] broadcast(b), dimensions={3}
%[2]s
  z = f32[] constant(0)
  zb = f32[2,14,15,64] broadcast(z), dimensions={}
  ROOT h = f32[2,14,15,64] maximum(t, zb)
}`

// The bias, residual and ReLU after a pointwise and a 3×3 convolution,
// each add's operands in either order, the residual with a bias of its
// own, finished in the kernels: the bits of the unfused module's, and
// the evaluator's results.
func TestEpilogueConvResidual(t *testing.T) {
	for _, conv := range [][3]string{{"1x1", "", "1,1"}, {"3x3", "pad=1_1x1_1", "3,3"}} {
		for _, adds := range []string{
			"  s = f32[2,14,15,64] add(c, bb)\n  t = f32[2,14,15,64] add(s, r)",
			"  s = f32[2,14,15,64] add(bb, c)\n  t = f32[2,14,15,64] add(r, s)",
			// A stage's first block: the residual with a bias of its own.
			"  s = f32[2,14,15,64] add(c, bb)\n  u = f32[2,14,15,64] add(r, eb)\n  t = f32[2,14,15,64] add(u, s)",
		} {
			for _, r := range []string{"copy", "negate"} {
				text := fmt.Sprintf(convResidual, conv[0], adds, conv[1], conv[2], r)
				checkEpilogue(t, text, map[string]int{"conv+epilogue": 1})
			}
		}
	}
}

// heavyLayer is a product (%[1]s, %[2]s) with bias and a tanh GELU: an
// epilogue of ten ops an element on %[3]s.
const heavyLayer = `HloModule heavy
ENTRY e {
  x = f32%[1]s parameter(0)
  w = f32%[2]s parameter(1)
  b = f32[%[4]d] parameter(2)
  d = f32%[3]s %[5]s
  bb = f32%[3]s broadcast(b), dimensions={%[6]d}
  a = f32%[3]s add(d, bb)
  a2 = f32%[3]s multiply(a, a)
  a3 = f32%[3]s multiply(a2, a)
  c1 = f32[] constant(0.044715)
  c1b = f32%[3]s broadcast(c1), dimensions={}
  t1 = f32%[3]s multiply(a3, c1b)
  t2 = f32%[3]s add(t1, a)
  c2 = f32[] constant(0.797884583)
  c2b = f32%[3]s broadcast(c2), dimensions={}
  t3 = f32%[3]s multiply(t2, c2b)
  t4 = f32%[3]s tanh(t3)
  one = f32[] constant(1)
  oneb = f32%[3]s broadcast(one), dimensions={}
  t5 = f32%[3]s add(t4, oneb)
  t6 = f32%[3]s multiply(t5, a)
  h = f32[] constant(0.5)
  hb = f32%[3]s broadcast(h), dimensions={}
  ROOT y = f32%[3]s multiply(t6, hb)
}`

// A product small enough to run on one thread even within an execution
// (whose kernels split from a hotShare of their cold sizes on) keeps an
// epilogue big enough for several threads as a fusion of its own, but
// folds it when the executable has one thread anyway.
func TestEpilogueKeepsThreads(t *testing.T) {
	gemm := fmt.Sprintf(heavyLayer, "[256,2]", "[2,128]", "[256,128]", 128,
		"dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}", 1)
	conv := fmt.Sprintf(heavyLayer, "[1,16,31,1]", "[1,1,1,64]", "[1,16,31,64]", 64,
		"convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f", 3)
	if !kernels.GemmRunsInline(256, 128, 2, true) {
		t.Fatal("the product splits within an execution")
	}
	for _, c := range []struct{ text, how string }{{gemm, "gemm+epilogue"}, {conv, "conv+epilogue"}} {
		m, err := hlotext.Parse(c.text, hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for threads, want := range []int{1: 1, 2: 0} {
			if threads == 0 {
				continue
			}
			x, err := Compile(m, Options{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			if x.Lowering[c.how] != want {
				t.Errorf("%d threads: lowering %v, want %d %s", threads, x.Lowering, want, c.how)
			}
		}
		checkEpilogue(t, c.text, nil) // either way, the evaluator's results
	}
}

// BenchmarkEpilogue times an MLP layer (256×784 by 784×512, bias, ReLU)
// and a 3×3 convolution (32 → 32 channels, 32×32 images, batch 8) with
// bias and ReLU, with and without output fusion; -count interleaves the
// two, which on a shared machine compares them better than two runs.
func BenchmarkEpilogue(b *testing.B) {
	conv := fmt.Sprintf(convLayer, "[8,32,32,32]", "[3,3,32,32]", "[8,32,32,32]", 32,
		"window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 3)
	for _, c := range []struct{ name, text string }{{"mlp", fmt.Sprintf(mlpLayer, 256, 512, 784)}, {"conv", conv}} {
		m, err := hlotext.Parse(c.text, hlotext.Options{})
		if err != nil {
			b.Fatal(err)
		}
		args := eval.RandomArguments(m, 1)
		for _, fused := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/fused=%v", c.name, fused), func(b *testing.B) {
				x, err := Compile(m, Options{Threads: 2, NoOutputFusion: !fused})
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					out, err := x.Execute(args...)
					if err != nil {
						b.Fatal(err)
					}
					x.Recycle(out)
				}
			})
		}
	}
}

// Random modules (the fuzzer's generator) where output fusion fires: the
// results equal those compiled without it, bit for bit, and the
// evaluator's to rounding.
func TestEpilogueRandomModules(t *testing.T) {
	seeds, folds := uint64(1500), 0
	if testing.Short() {
		seeds = 300
	}
	for seed := range seeds {
		opts := randhlo.Options{Instructions: 4 + int(seed%40), MaxDim: 9}
		m, err := randhlo.Module(seed, opts)
		if err != nil {
			t.Fatal(err)
		}
		threads := 1 + int(seed%3)
		x, err := Compile(m, Options{Threads: threads, Poison: true})
		if err != nil {
			t.Fatalf("%v\n%s", err, randhlo.Text(seed, opts))
		}
		n := x.Lowering["gemm+epilogue"] + x.Lowering["conv+epilogue"]
		if n == 0 {
			continue
		}
		folds += n
		plain, err := Compile(m, Options{Threads: threads, Poison: true, NoOutputFusion: true})
		if err != nil {
			t.Fatal(err)
		}
		args := eval.RandomArguments(m, seed)
		want, err := eval.Run(m, args...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Execute(args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, randhlo.Text(seed, opts))
		}
		ref, err := plain.Execute(args...)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(ref) {
			t.Fatalf("seed %d: output fusion changed bits\n%s", seed, randhlo.Text(seed, opts))
		}
		if err := conformance.Compare(got, want, conformance.Tolerance{Atol: 1e-4, Rtol: 1e-4}); err != nil {
			t.Fatalf("seed %d: against the evaluator: %v\n%s", seed, err, randhlo.Text(seed, opts))
		}
	}
	if folds == 0 {
		t.Fatal("no module had a product to fold: the test tests nothing")
	}
	t.Logf("%d products folded", folds)
}

// The pass on HLO text: the dot moves into the kLoop fusion reading it,
// which becomes kOutput and reads the dot's operands; with the dot also
// an output of the module nothing changes.
func TestFuseEpiloguesText(t *testing.T) {
	const fused = `fused_computation {
  param_d = f32[4,3] parameter(0)
  param_b = f32[3] parameter(1)
  bb = f32[4,3] broadcast(param_b), dimensions={1}
  s = f32[4,3] add(param_d, bb)
  z = f32[] constant(0)
  zb = f32[4,3] broadcast(z), dimensions={}
  ROOT h = f32[4,3] maximum(s, zb)
}

ENTRY e {
  x = f32[4,5] parameter(0)
  w = f32[5,3] parameter(1)
  b = f32[3] parameter(2)
  d = f32[4,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
`
	const want = `HloModule layer, entry_computation_layout={(f32[4,5]{1,0}, f32[5,3]{1,0}, f32[3]{0})->f32[4,3]{1,0}}

fused_computation {
  param_b = f32[3]{0} parameter(2)
  bb = f32[4,3]{1,0} broadcast(param_b), dimensions={1}
  param_x = f32[4,5]{1,0} parameter(0)
  param_w = f32[5,3]{1,0} parameter(1)
  d = f32[4,3]{1,0} dot(param_x, param_w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[4,3]{1,0} add(d, bb)
  z = f32[] constant(0)
  zb = f32[4,3]{1,0} broadcast(z), dimensions={}
  ROOT h = f32[4,3]{1,0} maximum(s, zb)
}

ENTRY e {
  x = f32[4,5]{1,0} parameter(0)
  w = f32[5,3]{1,0} parameter(1)
  b = f32[3]{0} parameter(2)
  ROOT f = f32[4,3]{1,0} fusion(x, w, b), kind=kOutput, calls=fused_computation
}

`
	const f = "f = f32[4,3] fusion(d, b), kind=kLoop, calls=fused_computation\n"
	for _, c := range []struct{ name, tail, want string }{
		{"folds", "  ROOT " + f + "}", want},
		{"dot is an output", "  " + f + "  ROOT t = (f32[4,3], f32[4,3]) tuple(f, d)\n}", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := hlotext.Parse("HloModule layer\n\n"+fused+c.tail, hlotext.Options{})
			if err != nil {
				t.Fatal(err)
			}
			before := hlotext.Print(m, hlotext.Short)
			n, err := fuseEpilogues(m.Entry, hlo.NewNameSet(m), 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := hlo.Verify(m); err != nil {
				t.Fatal(err)
			}
			got := hlotext.Print(m, hlotext.Short)
			want := c.want
			if want == "" {
				want = before // must not fire, and must change nothing
			}
			if got != want || (n == 0) != (c.want == "") {
				t.Fatalf("%d folded; got\n%s\nwant\n%s", n, got, want)
			}
		})
	}
}

// A softmax over a convolution's output channels folds when the kernel
// hands over whole pixels (one feature group), not with two groups.
func TestEpilogueConvRows(t *testing.T) {
	const text = `HloModule convsoftmax
max {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT m = f32[] maximum(p, q)
}
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[2,6,6,32] parameter(0)
  k = f32[3,3,%[1]d,10] parameter(1)
  c = f32[2,6,6,10] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=%[2]d
  ninf = f32[] constant(-inf)
  mx = f32[2,6,6] reduce(c, ninf), dimensions={3}, to_apply=max
  mb = f32[2,6,6,10] broadcast(mx), dimensions={0,1,2}
  z = f32[2,6,6,10] subtract(c, mb)
  e = f32[2,6,6,10] exponential(z)
  zero = f32[] constant(0)
  s = f32[2,6,6] reduce(e, zero), dimensions={3}, to_apply=add
  sb = f32[2,6,6,10] broadcast(s), dimensions={0,1,2}
  ROOT p = f32[2,6,6,10] divide(e, sb)
}`
	checkEpilogue(t, fmt.Sprintf(text, 32, 1), map[string]int{"conv+epilogue": 1})
	checkEpilogue(t, fmt.Sprintf(text, 16, 2), map[string]int{"conv+epilogue": 0, "conv": 1})
}

// Convolution with bias and ReLU on the channels-first (NCHW) kernels:
// the output is the matrix [batch·channels, pixels] and the bias a
// per-row value. The GEMM kernel (3×3 with few output channels, 1×1,
// groups, a batch of small products, one split over threads, a
// transposed convolution), and the depthwise kernel.
func TestEpilogueConvNCHW(t *testing.T) {
	const nchw, dw = "conv_nchw+epilogue", "conv_dw_nchw+epilogue"
	cases := []struct {
		name, in, kernel, out string
		features              int
		attrs, lowering       string
	}{
		{"3x3", "[2,16,9,7]", "[5,16,3,3]", "[2,5,9,7]", 5, "window={size=3x3 pad=1_1x1_1}", nchw},
		{"3x3 big", "[1,16,64,48]", "[12,16,3,3]", "[1,12,64,48]", 12, "window={size=3x3 pad=1_1x1_1}", nchw},
		{"1x1", "[1,24,20,20]", "[40,24,1,1]", "[1,40,20,20]", 40, "window={size=1x1}", nchw},
		{"1x1 big", "[1,64,48,48]", "[48,64,1,1]", "[1,48,48,48]", 48, "window={size=1x1}", nchw},
		{"groups", "[2,32,12,12]", "[8,16,3,3]", "[2,8,12,12]", 8, "window={size=3x3 pad=1_1x1_1}, feature_group_count=2", nchw},
		{"batch", "[4,16,24,24]", "[8,16,3,3]", "[4,8,24,24]", 8, "window={size=3x3 pad=1_1x1_1}", nchw},
		{"transposed", "[1,16,10,10]", "[6,16,2,2]", "[1,6,20,20]", 6, "window={size=2x2 pad=1_1x1_1 lhs_dilate=2x2}", nchw},
		{"depthwise", "[2,8,10,10]", "[8,1,3,3]", "[2,8,10,10]", 8, "window={size=3x3 pad=1_1x1_1}, feature_group_count=8", dw},
		{"depthwise big", "[1,32,80,80]", "[32,1,3,3]", "[1,32,40,40]", 32, "window={size=3x3 stride=2x2 pad=1_1x1_1}, feature_group_count=32", dw},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := fmt.Sprintf(convLayer, c.in, c.kernel, c.out, c.features, c.attrs+", dim_labels=bf01_oi01->bf01", 1)
			checkEpilogue(t, text, map[string]int{c.lowering: 1, "conv": 0})
		})
	}
}

// Part rows of an epilogue reading contiguous slices of a larger operand
// (an LSTM step's slice of all steps' projections): one slice is read in
// place from its offset, by the block code; two slices of one operand
// share an input at displacements, which the block code does not take,
// so they go row by row.
func TestEpiloguePartRowsSlices(t *testing.T) {
	const text = `HloModule slices
ENTRY e {
  x = f32[100,200] parameter(0)
  w = f32[200,264] parameter(1)
  p = f32[5,100,264] parameter(2)
  d = f32[100,264] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s3 = f32[1,100,264] slice(p), slice={[3:4], [0:100], [0:264]}
  s = f32[100,264] reshape(s3)
  t = f32[100,264] add(d, s)
  %s
}`
	for _, c := range []struct {
		root    string
		strided bool
	}{
		{"ROOT y = f32[100,264] tanh(t)", true},
		{`u3 = f32[1,100,264] slice(p), slice={[1:2], [0:100], [0:264]}
  u = f32[100,264] reshape(u3)
  ROOT y = f32[100,264] multiply(t, u)`, false},
	} {
		before := tile.StridedBlockRuns()
		checkEpilogue(t, fmt.Sprintf(text, c.root), map[string]int{"gemm+epilogue": 1})
		if strided := tile.StridedBlockRuns() > before; strided != c.strided && jit.Available {
			t.Errorf("%q: block code used: %v", c.root, strided)
		}
	}
}

// layerNormLayer is a product finished by a layer norm whose scale is
// operand %[4]s: the parameter g, or the constant gc (values %[5]s).
const layerNormLayer = `HloModule ln
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[%[1]d,%[3]d] parameter(0)
  w = f32[%[3]d,%[2]d] parameter(1)
  g = f32[%[2]d] parameter(2)
  gc = f32[%[2]d] constant(%[5]s)
  d = f32[%[1]d,%[2]d] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  s = f32[%[1]d] reduce(d, zero), dimensions={1}, to_apply=add
  n = f32[] constant(%[2]d)
  nb = f32[%[1]d] broadcast(n), dimensions={}
  mean = f32[%[1]d] divide(s, nb)
  mb = f32[%[1]d,%[2]d] broadcast(mean), dimensions={0}
  c = f32[%[1]d,%[2]d] subtract(d, mb)
  gb = f32[%[1]d,%[2]d] broadcast(%[4]s), dimensions={1}
  ROOT y = f32[%[1]d,%[2]d] multiply(c, gb)
}`

// A layer norm's scale, gathered along the rows, is gathered again at
// every call when it is a parameter (each call's values), and may be
// kept across calls only when it is a constant: three calls with fresh
// arguments, each against the evaluator and the unfused module's bits,
// on one and two threads, rows in several tiles and GEMM blocks.
func TestEpilogueGatherAcrossCalls(t *testing.T) {
	for _, scale := range []string{"g", "gc"} {
		vals := make([]string, 96)
		for i := range vals {
			vals[i] = fmt.Sprint(0.25 + float64(i%7)/4)
		}
		text := fmt.Sprintf(layerNormLayer, 300, 96, 40, scale, "{"+strings.Join(vals, ", ")+"}")
		m, err := hlotext.Parse(text, hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for threads := 1; threads <= 2; threads++ {
			x, err := Compile(m, Options{Threads: threads, Poison: true})
			if err != nil {
				t.Fatal(err)
			}
			if x.Lowering["gemm+epilogue"] != 1 {
				t.Fatalf("lowering %v", x.Lowering)
			}
			plain, err := Compile(m, Options{Threads: threads, Poison: true, NoOutputFusion: true})
			if err != nil {
				t.Fatal(err)
			}
			for call := range 3 {
				args := eval.RandomArguments(m, uint64(20+call))
				want, err := eval.Run(m, args...)
				if err != nil {
					t.Fatal(err)
				}
				got, err := x.Execute(args...)
				if err != nil {
					t.Fatal(err)
				}
				ref, err := plain.Execute(args...)
				if err != nil {
					t.Fatal(err)
				}
				if msg := closeEnough(got, want); msg != "" {
					t.Fatalf("scale %s, %d threads, call %d: against the evaluator: %s", scale, threads, call, msg)
				}
				if err := sameAsUnfused(got, ref); err != "" {
					t.Fatalf("scale %s, %d threads, call %d: %s", scale, threads, call, err)
				}
			}
		}
	}
}

// sameAsUnfused compares a fusion whose row sums fold in generated code
// with the unfused module: the same bits where the folds keep the row
// kernels' 32 partial sums (jit.WideCode) or no code is generated (the
// row kernels sum both), within closeEnough otherwise (the 8-lane code's
// folds keep 16, another order of the same additions).
func sameAsUnfused(got, ref *hlo.Literal) string {
	if jit.WideCode() || !jit.Available {
		if !got.Equal(ref) {
			return "fusion changed bits:\n" + firstDiff(got, ref)
		}
		return ""
	}
	if msg := closeEnough(got, ref); msg != "" {
		return "against the unfused module: " + msg
	}
	return ""
}
