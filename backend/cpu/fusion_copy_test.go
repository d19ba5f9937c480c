package cpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// attentionScoresText is attention's softmax over masked scaled scores:
// the division by √d is read by the row maximum's fusion and the
// softmax's.
const attentionScoresText = `HloModule scores
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  q = f32[12,128,32] parameter(0)
  k = f32[12,128,32] parameter(1)
  mask = f32[128] parameter(2)
  s = f32[12,128,128] dot(q, k), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  c = f32[] constant(5.65685415)
  cb = f32[12,128,128] broadcast(c), dimensions={}
  d0 = f32[12,128,128] divide(s, cb)
  mb0 = f32[12,128,128] broadcast(mask), dimensions={2}
  d = f32[12,128,128] add(d0, mb0)
  ninf = f32[] constant(-inf)
  mx = f32[12,128] reduce(d, ninf), dimensions={2}, to_apply=max_f32
  fin = pred[12,128] is-finite(mx)
  zero = f32[] constant(0)
  zb = f32[12,128] broadcast(zero), dimensions={}
  m = f32[12,128] select(fin, mx, zb)
  mb = f32[12,128,128] broadcast(m), dimensions={0,1}
  sh = f32[12,128,128] subtract(d, mb)
  ex = f32[12,128,128] exponential(sh)
  sum = f32[12,128] reduce(ex, zero), dimensions={2}, to_apply=add_f32
  sb = f32[12,128,128] broadcast(sum), dimensions={0,1}
  ROOT p = f32[12,128,128] divide(ex, sb)
}`

// The division by a splat is computed in both fusions that read it: no
// elementwise divide (and no spread-out divisor) is left on its own, and
// the result is the evaluator's. (The per-head products run inline, so
// the division, big enough to run on all threads, is no epilogue.)
func TestFusionCopiesDivisionBySplat(t *testing.T) {
	m, x := compileText(t, attentionScoresText, Options{Threads: 2})
	for _, in := range x.Module().Entry.Instructions {
		if in.Opcode == hlo.OpDivide || in.Opcode == hlo.OpBroadcast && in.Shape.Rank() == 3 && in.Operands[0].Shape.Rank() == 0 {
			t.Errorf("%s %s was left outside the fusions", in.Opcode, in.Name)
		}
	}
	args := eval.RandomArguments(m, 3)
	got, want := evalAndRun(t, m, x, args)
	if err := closeTo(got, want, 1e-5); err != nil {
		t.Fatal(err) // exp runs on the vector kernel, within 2 ULP
	}
}

// layerNormText is a layer norm whose result two dots and a residual add
// read.
const layerNormText = `HloModule ln
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,96] parameter(0)
  w1 = f32[96,96] parameter(1)
  w2 = f32[96,96] parameter(2)
  g = f32[96] parameter(3)
  zero = f32[] constant(0)
  n = f32[] constant(96)
  nb = f32[64] broadcast(n), dimensions={}
  s = f32[64] reduce(x, zero), dimensions={1}, to_apply=add_f32
  mean = f32[64] divide(s, nb)
  mb = f32[64,96] broadcast(mean), dimensions={0}
  c = f32[64,96] subtract(x, mb)
  c2 = f32[64,96] multiply(c, c)
  v = f32[64] reduce(c2, zero), dimensions={1}, to_apply=add_f32
  var = f32[64] divide(v, nb)
  sd = f32[64] sqrt(var)
  sdb = f32[64,96] broadcast(sd), dimensions={0}
  y0 = f32[64,96] divide(c, sdb)
  gb = f32[64,96] broadcast(g), dimensions={1}
  y = f32[64,96] multiply(y0, gb)
  a = f32[64,96] dot(y, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[64,96] dot(y, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[64,96] add(a, y)
  ROOT t = (f32[64,96], f32[64,96]) tuple(r, b)
}`

// The layer norm's result, stored for the dots, is read back by the
// residual add's fusion rather than partly recomputed there: no
// elementwise op is left outside a fusion (the division by the row
// deviation was, when the add copied the multiply after it).
func TestFusionReadsBackWhatDotsRead(t *testing.T) {
	m, x := compileText(t, layerNormText, Options{Threads: 1, NoOutputFusion: true})
	for _, in := range x.Module().Entry.Instructions {
		switch in.Opcode {
		case hlo.OpDivide, hlo.OpMultiply, hlo.OpSubtract:
			t.Errorf("%s %s was left outside the fusions", in.Opcode, in.Name)
		}
	}
	args := eval.RandomArguments(m, 3)
	got, want := evalAndRun(t, m, x, args)
	if err := closeTo(got, want, 1e-4); err != nil {
		t.Fatal(err) // the dots' sums round differently
	}
}

// Periodic gathers (a bias along the rows) are gathered once per call
// when the tiles are whole periods, and per tile where a tile starts
// elsewhere: a loop fusion (tiles of 512, period 128), a row program
// (rows of 384 with their bias) and a GEMM epilogue handed part rows
// (on two threads, blocks of 96 of the 768 columns: every other one
// starts mid-period) all give the evaluator's values, with the tile
// programs and with generated code.
func TestFusionPeriodicGathers(t *testing.T) {
	for _, text := range []string{`HloModule loop
ENTRY e {
  x = f32[96,128] parameter(0)
  b = f32[128] parameter(1)
  bb = f32[96,128] broadcast(b), dimensions={1}
  s = f32[96,128] add(x, bb)
  ROOT m = f32[96,128] multiply(s, bb)
}`, `HloModule rows
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[40,384] parameter(0)
  b = f32[384] parameter(1)
  bb = f32[40,384] broadcast(b), dimensions={1}
  s = f32[40,384] add(x, bb)
  zero = f32[] constant(0)
  r = f32[40] reduce(s, zero), dimensions={1}, to_apply=add_f32
  rb = f32[40,384] broadcast(r), dimensions={0}
  ROOT d = f32[40,384] subtract(s, rb)
}`, `HloModule epilogue
ENTRY e {
  x = f32[64,96] parameter(0)
  w = f32[96,12,64] parameter(1)
  b = f32[64] parameter(2)
  y = f32[64,12,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[64,12,64] broadcast(b), dimensions={2}
  s = f32[64,12,64] add(y, bb)
  ROOT m = f32[64,12,64] multiply(s, bb)
}`} {
		for _, code := range []bool{false, true} { // tile programs, generated code
			for threads := 1; threads <= 2; threads++ {
				saved := tile.SetGeneratedCode(code && tile.GeneratedCode())
				m, x := compileText(t, text, Options{Threads: threads})
				tile.SetGeneratedCode(saved)
				for seed := uint64(1); seed <= 2; seed++ { // the second call reuses the scratch
					args := eval.RandomArguments(m, seed)
					got, want := evalAndRun(t, m, x, args)
					if err := closeTo(got, want, 1e-4); err != nil {
						t.Fatalf("%s, code %v, %d threads: %v", m.Name, code, threads, err)
					}
				}
			}
		}
	}
}

// A scalar computed by ops (a quantizer's scale from the range) is
// computed once, in a fusion of its own, and read by the big fusion as a
// splat: in it every op would run per element. A small fusion still
// takes it.
func TestFusionComputesScalarsOnce(t *testing.T) {
	const text = `HloModule scale
ENTRY e {
  x = f32[%d] parameter(0)
  lo = f32[] parameter(1)
  hi = f32[] parameter(2)
  r = f32[] subtract(hi, lo)
  c = f32[] constant(255)
  s = f32[] divide(r, c)
  sb = f32[%d] broadcast(s), dimensions={}
  ROOT y = f32[%d] divide(x, sb)
}`
	for _, n := range []int{scalarHoist, 16} {
		src := fmt.Sprintf(text, n, n, n)
		m, x := compileText(t, src, Options{Threads: 2})
		var big *hlo.Instruction
		for _, in := range x.Module().Entry.Instructions {
			if in.Opcode == hlo.OpFusion && in.Shape.Rank() == 1 {
				big = in
			}
		}
		if big == nil {
			t.Fatalf("n=%d: no fusion of x", n)
		}
		scalarOps := 0
		for _, in := range big.Computation("calls").Instructions {
			if in.Shape.Rank() == 0 && in.Opcode != hlo.OpParameter && in.Opcode != hlo.OpConstant {
				scalarOps++
			}
		}
		if want := map[bool]int{true: 0, false: 2}[n >= scalarHoist]; scalarOps != want {
			t.Errorf("n=%d: the fusion of x computes %d scalar ops, want %d", n, scalarOps, want)
		}
		got, want := evalAndRun(t, m, x, eval.RandomArguments(m, 4))
		if !got.Equal(want) {
			t.Fatalf("n=%d: other values than the evaluator's", n)
		}
	}
}

// residualBlocks is n residual blocks of [1,8,8,16] images: block k's
// output r_k = max(conv_k(r_{k-1}) + b_k + r_{k-1}, 0) is read by the
// next block's 1×1 convolution and by its residual add (r_{-1} is x).
func residualBlocks(n int) string {
	var b strings.Builder
	b.WriteString("HloModule resnet\nENTRY e {\n  x = f32[1,8,8,16] parameter(0)\n  zero = f32[] constant(0)\n")
	b.WriteString("  zb = f32[1,8,8,16] broadcast(zero), dimensions={}\n")
	prev := "x"
	for k := range n {
		fmt.Fprintf(&b, "  w%d = f32[1,1,16,16] parameter(%d)\n  b%d = f32[16] parameter(%d)\n", k, k+1, k, k+1+n)
		fmt.Fprintf(&b, "  c%d = f32[1,8,8,16] convolution(%s, w%d), window={size=1x1}, dim_labels=b01f_01io->b01f\n", k, prev, k)
		fmt.Fprintf(&b, "  bb%[1]d = f32[1,8,8,16] broadcast(b%[1]d), dimensions={3}\n  y%[1]d = f32[1,8,8,16] add(c%[1]d, bb%[1]d)\n", k)
		fmt.Fprintf(&b, "  s%d = f32[1,8,8,16] add(y%d, %s)\n", k, k, prev)
		root := ""
		if k == n-1 {
			root = "ROOT "
		}
		fmt.Fprintf(&b, "  %sr%d = f32[1,8,8,16] maximum(s%d, zb)\n", root, k, k)
		prev = fmt.Sprintf("r%d", k)
	}
	b.WriteString("}\n")
	return b.String()
}

// A block's output, stored for the next block's convolution, is read
// back by that block's residual add rather than recomputed from the
// earlier blocks' convolutions (which read k+1 full images in block k
// and kept each convolution from folding into its bias add): the three
// blocks compute their six adds and three maxima once, each block is one
// convolution with its epilogue, reading the previous block's output.
func TestFusionReadsBackWhatConvolutionsRead(t *testing.T) {
	m, x := compileText(t, residualBlocks(3), Options{Threads: 1, Poison: true})
	ops := 0
	for _, c := range x.Module().Computations {
		for _, in := range c.Instructions {
			if in.Opcode == hlo.OpAdd || in.Opcode == hlo.OpMaximum {
				ops++
			}
		}
	}
	if ops != 9 {
		t.Errorf("%d adds and maxima in the compiled module, want 9", ops)
	}
	prev := "x"
	for _, in := range x.Module().Entry.Instructions {
		if in.Opcode == hlo.OpParameter {
			continue
		}
		if kind, _ := in.EnumAttr("kind"); in.Opcode != hlo.OpFusion || kind != kOutput || in.Operands[0].Name != prev {
			t.Fatalf("%s is not a convolution with its epilogue reading %s:\n%s", in.Name, prev, hlotext.Print(x.Module(), hlotext.Short))
		}
		prev = in.Name
	}
	checkCompiledModule(t, m, x)
	got, want := evalAndRun(t, m, x, eval.RandomArguments(m, 3))
	if err := closeTo(got, want, 1e-5); err != nil {
		t.Fatal(err) // the convolutions' sums round differently
	}
}

// A value a fusion reads from outside (one it did not take or copy, its
// copying budget spent) is stored, so no fusion grown later takes it as
// its own. Here a later block's fusion copies the residual chain back to
// the first block and reads the first block's bias add y0 from outside;
// r0's fusion then took y0 (r0's add was its only reader in the
// original graph), which left y0 and its broadcast computed on their
// own, unfused, for the later fusion to read.
func TestFusionKeepsParametersStored(t *testing.T) {
	var b strings.Builder
	const n = 4
	b.WriteString("HloModule chain\nENTRY e {\n  x = f32[4,64] parameter(0)\n  zero = f32[] constant(0)\n  zb = f32[4,64] broadcast(zero), dimensions={}\n")
	prev, outs := "x", []string{}
	for k := range n {
		fmt.Fprintf(&b, "  p%[1]d = f32[4,64] parameter(%[2]d)\n  b%[1]d = f32[64] parameter(%[3]d)\n", k, k+1, k+1+n)
		fmt.Fprintf(&b, "  bb%[1]d = f32[4,64] broadcast(b%[1]d), dimensions={1}\n  y%[1]d = f32[4,64] add(p%[1]d, bb%[1]d)\n", k)
		fmt.Fprintf(&b, "  s%[1]d = f32[4,64] add(y%[1]d, %[2]s)\n  r%[1]d = f32[4,64] maximum(s%[1]d, zb)\n", k, prev)
		fmt.Fprintf(&b, "  e%[1]d = f32[4,64] exponential(r%[1]d)\n", k)
		prev, outs = fmt.Sprintf("r%d", k), append(outs, fmt.Sprintf("e%d", k))
	}
	fmt.Fprintf(&b, "  ROOT t = (%s) tuple(%s)\n}\n", strings.TrimSuffix(strings.Repeat("f32[4,64], ", n), ", "), strings.Join(outs, ", "))
	m, x := compileText(t, b.String(), Options{Threads: 1, Poison: true})
	for _, in := range x.Module().Entry.Instructions {
		switch in.Opcode {
		case hlo.OpParameter, hlo.OpFusion, hlo.OpGetTupleElement, hlo.OpTuple:
		default:
			t.Errorf("%s %s was left outside the fusions", in.Opcode, in.Name)
		}
	}
	checkCompiledModule(t, m, x)
	got, want := evalAndRun(t, m, x, eval.RandomArguments(m, 3))
	for i, w := range want.Elements() {
		if err := closeTo(got.Elements()[i], w, 1e-5); err != nil {
			t.Fatalf("output %d: %v", i, err) // exp runs on the vector kernel
		}
	}
}
