package cpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// Loop fusions with generated code agree with the evaluator, give the
// tile program's bits exactly, and the same bits on any thread count.
// Fusions the generator does not take keep their tile program.
func TestJITFusions(t *testing.T) {
	if !jit.Available {
		t.Skip("no code generation on this platform")
	}
	cases := map[string]struct {
		text string
		jit  int // fusions expected to run generated code
	}{
		// chain10's ten ops, on a length with a vector tail.
		"chain": {`HloModule chain
ENTRY main {
  x = f32[37,111] parameter(0)
  c = f32[] constant(0.5)
  cb = f32[37,111] broadcast(c), dimensions={}
  a1 = f32[37,111] multiply(x, cb)
  a2 = f32[37,111] add(a1, x)
  a3 = f32[37,111] tanh(a2)
  a4 = f32[37,111] multiply(a3, a3)
  a5 = f32[37,111] subtract(a4, cb)
  a6 = f32[37,111] exponential(a5)
  a7 = f32[37,111] multiply(a6, a3)
  a8 = f32[37,111] abs(a7)
  a9 = f32[37,111] sqrt(a8)
  ROOT a10 = f32[37,111] subtract(a9, a1)
}`, 1},
		// A ReLU gradient: compare, select, a scalar parameter splatted.
		"relu grad": {`HloModule relugrad
ENTRY main {
  x = f32[1000] parameter(0)
  g = f32[1000] parameter(1)
  s = f32[] parameter(2)
  zero = f32[] constant(0)
  zb = f32[1000] broadcast(zero), dimensions={}
  p = pred[1000] compare(x, zb), direction=GT
  sb = f32[1000] broadcast(s), dimensions={}
  gs = f32[1000] multiply(g, sb)
  ROOT r = f32[1000] select(p, gs, zb)
}`, 1},
		// Clamp, logistic, maximum and minimum, negate and divide.
		"mix": {`HloModule mix
ENTRY main {
  x = f32[3,5,7] parameter(0)
  y = f32[3,5,7] parameter(1)
  lo = f32[] constant(-2)
  hi = f32[] constant(2)
  l = f32[3,5,7] broadcast(lo), dimensions={}
  h = f32[3,5,7] broadcast(hi), dimensions={}
  c = f32[3,5,7] clamp(l, x, h)
  s = f32[3,5,7] logistic(c)
  m = f32[3,5,7] maximum(s, y)
  n = f32[3,5,7] minimum(m, x)
  d = f32[3,5,7] divide(n, y)
  ROOT r = f32[3,5,7] negate(d)
}`, 1},
		// Operands read through index maps (a transpose, a bias row
		// broadcast over a batch, a column broadcast, a slice, a reverse)
		// are gathered chunk by chunk into buffers the code reads.
		"gathers": {gathersModule(30, 40), 1},
		// bf16 values round to bf16 after every op, in generated code as
		// in the tile program: bf16 operands read, bf16 results stored.
		"bf16": {`HloModule narrow
ENTRY main {
  x = bf16[300] parameter(0)
  e = bf16[300] exponential(x)
  ROOT r = bf16[300] multiply(e, x)
}`, 1},
		// Converts between f32 and bf16 are that rounding, or nothing.
		"bf16 and f32": {`HloModule mixed
ENTRY main {
  x = bf16[20,33] parameter(0)
  y = f32[20,33] parameter(1)
  xf = f32[20,33] convert(x)
  s = f32[20,33] add(xf, y)
  t = f32[20,33] tanh(s)
  tb = bf16[20,33] convert(t)
  u = bf16[20,33] multiply(tb, x)
  ROOT r = f32[20,33] convert(u)
}`, 1},
		// f16 too, through F16C (tile_jit_f16_test.go has more).
		"f16": {`HloModule half
ENTRY main {
  x = f16[300] parameter(0)
  e = f16[300] exponential(x)
  ROOT r = f16[300] multiply(e, x)
}`, 1},
	}
	// Big enough to split across workers, at ranges that are not whole
	// vectors apart.
	big := cases["chain"]
	big.text = strings.ReplaceAll(big.text, "37,111", "301,1001")
	cases["chain, split across workers"] = big
	cases["gathers, split across workers"] = struct {
		text string
		jit  int
	}{gathersModule(300, 401), 1}
	// A GRU step's gates read eight arrays, six of them thirds of two
	// operands: those read in place at displacements, sharing registers.
	// Widths with a staged tail, of whole vectors, and split across
	// workers.
	for _, h := range []int{37, 96, 40000} {
		cases[fmt.Sprintf("GRU gates, %d wide", h)] = struct {
			text string
			jit  int
		}{gruGatesModule(h, 5, 3), 1}
	}
	// An LSTM step's cell reads each gate as a slice of every row of the
	// projections: run as rows, each read in place by its row stride
	// (rows with a staged tail, and of whole vectors).
	for _, h := range []int{37, 128} {
		cases[fmt.Sprintf("LSTM cell, %d wide", h)] = struct {
			text string
			jit  int
		}{lstmCellModule(h), 1}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			m, ref := compileWithoutJIT(t, c.text)
			args := eval.RandomArguments(m, 11)
			tiled, err := ref.Execute(args...)
			if err != nil {
				t.Fatal(err)
			}
			for threads := 1; threads <= 3; threads++ {
				before := tile.RowRuns()
				m, x := compileText(t, c.text, Options{Threads: threads, Poison: true})
				if x.Lowering["jit-fusion"] != c.jit {
					t.Fatalf("lowering %v, want %d jit fusions", x.Lowering, c.jit)
				}
				got, want := evalAndRun(t, m, x, args)
				if err := conformance.Compare(got, want, conformance.Tolerance{Rtol: 1e-5, Atol: 1e-6}); err != nil {
					t.Fatalf("threads=%d against the evaluator: %v", threads, err)
				}
				if !got.Equal(tiled) {
					t.Fatalf("threads=%d: other bits than the tile program", threads)
				}
				if strings.HasPrefix(name, "LSTM") && tile.RowRuns() == before {
					t.Errorf("threads=%d: the cell did not run as rows", threads)
				}
			}
		})
	}
}

// compileWithoutJIT compiles text with tile programs only.
func compileWithoutJIT(t *testing.T, text string) (*hlo.Module, *Executable) {
	t.Helper()
	defer tile.SetGeneratedCode(tile.SetGeneratedCode(false))
	m, x := compileText(t, text, Options{Threads: 1})
	if x.Lowering["jit-fusion"] != 0 {
		t.Fatalf("lowering %v with generated code off", x.Lowering)
	}
	return m, x
}

// gathersModule reads operands of an r×c fusion through index maps (a
// transpose, a bias row broadcast over a batch, a column broadcast, a
// slice, a reverse): they are gathered chunk by chunk into buffers the
// generated code reads.
func gathersModule(r, c int) string {
	return fmt.Sprintf(`HloModule gathers
ENTRY main {
  x = f32[%[1]d,%[2]d] parameter(0)
  y = f32[%[2]d,%[1]d] parameter(1)
  b = f32[%[2]d] parameter(2)
  c = f32[%[1]d] parameter(3)
  z = f32[%[3]d,%[4]d] parameter(4)
  yt = f32[%[1]d,%[2]d] transpose(y), dimensions={1,0}
  bb = f32[%[1]d,%[2]d] broadcast(b), dimensions={1}
  cb = f32[%[1]d,%[2]d] broadcast(c), dimensions={0}
  zs = f32[%[1]d,%[2]d] slice(z), slice={[1:%[5]d], [2:%[6]d]}
  zr = f32[%[1]d,%[2]d] reverse(zs), dimensions={1}
  e = f32[%[1]d,%[2]d] exponential(x)
  s1 = f32[%[1]d,%[2]d] add(e, yt)
  s2 = f32[%[1]d,%[2]d] multiply(s1, bb)
  s3 = f32[%[1]d,%[2]d] subtract(s2, cb)
  ROOT r = f32[%[1]d,%[2]d] maximum(s3, zr)
}`, r, c, r+2, c+4, r+1, c+2)
}

// gruGatesModule is step s of a GRU (hidden size h, t steps): the input
// projections of all steps and the recurrent one each hold the three
// gates' h columns, the gates read as slices (eight arrays in all).
func gruGatesModule(h, t, s int) string {
	return fmt.Sprintf(`HloModule gru_gates
ENTRY main {
  xp = f32[%[2]d,1,%[4]d] parameter(0)
  d = f32[1,%[4]d] parameter(1)
  b = f32[%[1]d] parameter(2)
  hp = f32[1,%[1]d] parameter(3)
  bb = f32[1,%[1]d] broadcast(b), dimensions={1}
  one = f32[] constant(1)
  ones = f32[1,%[1]d] broadcast(one), dimensions={}
  xs3 = f32[1,1,%[4]d] slice(xp), slice={[%[3]d:%[5]d], [0:1], [0:%[4]d]}
  xs = f32[1,%[4]d] reshape(xs3)
  xr = f32[1,%[1]d] slice(xs), slice={[0:1], [0:%[1]d]}
  dr = f32[1,%[1]d] slice(d), slice={[0:1], [0:%[1]d]}
  ar = f32[1,%[1]d] add(xr, dr)
  r = f32[1,%[1]d] logistic(ar)
  xz = f32[1,%[1]d] slice(xs), slice={[0:1], [%[1]d:%[6]d]}
  dz = f32[1,%[1]d] slice(d), slice={[0:1], [%[1]d:%[6]d]}
  az = f32[1,%[1]d] add(xz, dz)
  z = f32[1,%[1]d] logistic(az)
  dn = f32[1,%[1]d] slice(d), slice={[0:1], [%[6]d:%[4]d]}
  an = f32[1,%[1]d] add(dn, bb)
  xn = f32[1,%[1]d] slice(xs), slice={[0:1], [%[6]d:%[4]d]}
  rn = f32[1,%[1]d] multiply(r, an)
  nn = f32[1,%[1]d] add(xn, rn)
  n = f32[1,%[1]d] tanh(nn)
  zc = f32[1,%[1]d] subtract(ones, z)
  zn = f32[1,%[1]d] multiply(zc, n)
  zh = f32[1,%[1]d] multiply(z, hp)
  ROOT hn = f32[1,%[1]d] add(zn, zh)
}`, h, t, s, 3*h, s+1, 2*h)
}

// lstmCellModule is an LSTM cell (hidden size h, two directions of a
// batch of two): the gates are slices of the last dimension of the
// step's projections.
func lstmCellModule(h int) string {
	return fmt.Sprintf(`HloModule lstm_cell
ENTRY main {
  p = f32[2,2,%[2]d] parameter(0)
  c = f32[2,2,%[1]d] parameter(1)
  pi = f32[2,2,%[1]d] slice(p), slice={[0:2], [0:2], [0:%[1]d]}
  i = f32[2,2,%[1]d] logistic(pi)
  pf = f32[2,2,%[1]d] slice(p), slice={[0:2], [0:2], [%[1]d:%[3]d]}
  f = f32[2,2,%[1]d] logistic(pf)
  pg = f32[2,2,%[1]d] slice(p), slice={[0:2], [0:2], [%[3]d:%[4]d]}
  g = f32[2,2,%[1]d] tanh(pg)
  po = f32[2,2,%[1]d] slice(p), slice={[0:2], [0:2], [%[4]d:%[2]d]}
  o = f32[2,2,%[1]d] logistic(po)
  fc = f32[2,2,%[1]d] multiply(f, c)
  ig = f32[2,2,%[1]d] multiply(i, g)
  cn = f32[2,2,%[1]d] add(fc, ig)
  tc = f32[2,2,%[1]d] tanh(cn)
  ROOT hn = f32[2,2,%[1]d] multiply(o, tc)
}`, h, 4*h, 2*h, 3*h)
}

// loopFusions counts the single-output loop fusions of a lowering, run
// as tile programs or as generated code.
func loopFusions(lowering map[string]int) int {
	return lowering["tile-fusion"] + lowering["jit-fusion"]
}

// Fusions without generated code as a whole run their runs of f32 ops
// as generated segments: a row program (softmax), the producer of a
// reduction fusion, and a loop fusion with an op the generator does not
// take (log). They agree with the evaluator and give the bits of the
// tile programs without segments, on any thread count.
func TestJITSegments(t *testing.T) {
	if !jit.Available {
		t.Skip("no code generation on this platform")
	}
	cases := map[string]struct {
		text string
		segs int // segments of the fusion computing the root
		// pipe: its last two segments run pipelined (tile_pipe.go)
		pipe bool
	}{
		"softmax": {`HloModule softmax` + reductionBodies + `
ENTRY main {
  a = f32[64,1000] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[64] reduce(a, ninf), dimensions={1}, to_apply=max
  mb = f32[64,1000] broadcast(m), dimensions={0}
  d = f32[64,1000] subtract(a, mb)
  e = f32[64,1000] exponential(d)
  zero = f32[] constant(0)
  s = f32[64] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[64,1000] broadcast(s), dimensions={0}
  ROOT p = f32[64,1000] divide(e, sb)
}`, 2, true}, // subtract and exp; the divide, reading the sum as a row scalar
		// Two row reductions: the first's row values take a tile the
		// second segment's outputs would otherwise be given, since
		// assignTiles frees it once the (now skipped) spread has read it.
		"variance scaling": {`HloModule var` + reductionBodies + `
ENTRY main {
  a = f32[24,48] parameter(0)
  zero = f32[] constant(0)
  s = f32[24] reduce(a, zero), dimensions={1}, to_apply=add
  n = f32[] constant(48)
  nb = f32[24] broadcast(n), dimensions={}
  mean = f32[24] divide(s, nb)
  mb = f32[24,48] broadcast(mean), dimensions={0}
  d = f32[24,48] subtract(a, mb)
  sq = f32[24,48] multiply(d, d)
  v = f32[24] reduce(sq, zero), dimensions={1}, to_apply=add
  var = f32[24] divide(v, nb)
  rb = f32[24,48] broadcast(var), dimensions={0}
  ROOT y = f32[24,48] multiply(d, rb)
}`, 2, true},
		// Layer norm with a scale and a shift: their broadcasts are
		// gathers among the last ops, computed before the segment runs, so
		// they must not take a tile an earlier op of the segment reads (as
		// the tile program's order lets them).
		"layer norm with scale and shift": {`HloModule layernorm` + reductionBodies + `
ENTRY main {
  a = f32[40,48] parameter(0)
  gamma = f32[48] parameter(1)
  beta = f32[48] parameter(2)
  zero = f32[] constant(0)
  s = f32[40] reduce(a, zero), dimensions={1}, to_apply=add
  n = f32[] constant(48)
  nb = f32[40] broadcast(n), dimensions={}
  mean = f32[40] divide(s, nb)
  mb = f32[40,48] broadcast(mean), dimensions={0}
  d = f32[40,48] subtract(a, mb)
  sq = f32[40,48] multiply(d, d)
  v = f32[40] reduce(sq, zero), dimensions={1}, to_apply=add
  var = f32[40] divide(v, nb)
  eps = f32[] constant(1e-5)
  eb = f32[40] broadcast(eps), dimensions={}
  ve = f32[40] add(var, eb)
  r = f32[40] rsqrt(ve)
  rb = f32[40,48] broadcast(r), dimensions={0}
  y = f32[40,48] multiply(d, rb)
  gb = f32[40,48] broadcast(gamma), dimensions={1}
  yg = f32[40,48] multiply(y, gb)
  bb = f32[40,48] broadcast(beta), dimensions={1}
  ROOT o = f32[40,48] add(yg, bb)
}`, 2, true},
		// A shift per row, gathered along the rows, over three tiles (the
		// last shorter): the pending tile's gather must be at its rows.
		"layer norm with a shift per row": {`HloModule layernormr` + reductionBodies + `
ENTRY main {
  a = f32[1000,48] parameter(0)
  beta = f32[1000] parameter(1)
  zero = f32[] constant(0)
  s = f32[1000] reduce(a, zero), dimensions={1}, to_apply=add
  n = f32[] constant(48)
  nb = f32[1000] broadcast(n), dimensions={}
  mean = f32[1000] divide(s, nb)
  mb = f32[1000,48] broadcast(mean), dimensions={0}
  d = f32[1000,48] subtract(a, mb)
  sq = f32[1000,48] multiply(d, d)
  v = f32[1000] reduce(sq, zero), dimensions={1}, to_apply=add
  var = f32[1000] divide(v, nb)
  rb = f32[1000,48] broadcast(var), dimensions={0}
  y = f32[1000,48] multiply(d, rb)
  bb = f32[1000,48] broadcast(beta), dimensions={0}
  ROOT o = f32[1000,48] add(y, bb)
}`, 2, true},
		// Rows over several tiles, the last one shorter: the mean's sum
		// folds a tile ahead, in the segment computing the squares,
		// whose sum folds there too; a worker's first tile and a tile
		// before a shorter one fold their own.
		"layer norm over tiles": {`HloModule layernorm` + reductionBodies + `
ENTRY main {
  a = f32[1000,64] parameter(0)
  zero = f32[] constant(0)
  s = f32[1000] reduce(a, zero), dimensions={1}, to_apply=add
  n = f32[] constant(64)
  nb = f32[1000] broadcast(n), dimensions={}
  mean = f32[1000] divide(s, nb)
  mb = f32[1000,64] broadcast(mean), dimensions={0}
  d = f32[1000,64] subtract(a, mb)
  sq = f32[1000,64] multiply(d, d)
  v = f32[1000] reduce(sq, zero), dimensions={1}, to_apply=add
  var = f32[1000] divide(v, nb)
  eps = f32[] constant(1e-5)
  eb = f32[1000] broadcast(eps), dimensions={}
  ve = f32[1000] add(var, eb)
  r = f32[1000] rsqrt(ve)
  rb = f32[1000,64] broadcast(r), dimensions={0}
  ROOT y = f32[1000,64] multiply(d, rb)
}`, 2, true},
		// The last segment reads the maximum too, whose row values the
		// next tile's ahead fold writes before the pipelined call: they
		// must stay in a tile of their own until it is done.
		"softmax plus its maximum": {`HloModule softmaxm` + reductionBodies + `
ENTRY main {
  a = f32[200,96] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[200] reduce(a, ninf), dimensions={1}, to_apply=max
  mb = f32[200,96] broadcast(m), dimensions={0}
  d = f32[200,96] subtract(a, mb)
  e = f32[200,96] exponential(d)
  zero = f32[] constant(0)
  s = f32[200] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[200,96] broadcast(s), dimensions={0}
  q = f32[200,96] divide(e, sb)
  ROOT r = f32[200,96] add(q, mb)
}`, 2, true},
		"reduction of products": {`HloModule dotlike` + reductionBodies + `
ENTRY main {
  a = f32[300,500] parameter(0)
  b = f32[300,500] parameter(1)
  e = f32[300,500] exponential(a)
  p = f32[300,500] multiply(e, b)
  zero = f32[] constant(0)
  ROOT s = f32[300] reduce(p, zero), dimensions={1}, to_apply=add
}`, 1, false},
		"log in the middle": {`HloModule logmid
ENTRY main {
  a = f32[700,300] parameter(0)
  b = f32[700,300] parameter(1)
  x = f32[700,300] multiply(a, a)
  y = f32[700,300] add(x, b)
  l = f32[700,300] log(y)
  z = f32[700,300] tanh(l)
  ROOT w = f32[700,300] multiply(z, a)
}`, 2, false},
	}
	// Rows whose length is not a multiple of 8 end in a partial vector
	// the generated code masks: a classifier's softmax over 10 classes, a
	// vision transformer's over 197 tokens, a layer norm over 100.
	for _, rc := range [][2]int{{256, 10}, {120, 197}} {
		c := cases["softmax"]
		c.text = strings.NewReplacer("64,1000", fmt.Sprint(rc[0], ",", rc[1]), "[64]", fmt.Sprint("[", rc[0], "]")).Replace(c.text)
		cases[fmt.Sprint("softmax over rows of ", rc[1])] = c
	}
	ln := cases["layer norm with scale and shift"]
	ln.text = strings.NewReplacer("40,48", "300,100", "[40]", "[300]", "[48]", "[100]", "constant(48)", "constant(100)").Replace(ln.text)
	cases["layer norm with scale and shift over rows of 100"] = ln
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			m, ref := compileWithoutJIT(t, c.text)
			args := eval.RandomArguments(m, 13)
			tiled, err := ref.Execute(args...)
			if err != nil {
				t.Fatal(err)
			}
			var first *hlo.Literal
			for threads := 1; threads <= 3; threads++ {
				m, x := compileText(t, c.text, Options{Threads: threads, Poison: true})
				segs, sums, piped := rootSegments(t, x)
				if segs != c.segs || piped != c.pipe {
					t.Fatalf("the root's fusion has %d segments (pipelined: %v), want %d (%v)", segs, piped, c.segs, c.pipe)
				}
				got, want := evalAndRun(t, m, x, args)
				// (A sum of 500 products of either sign cancels: f32 sums
				// are compared with the evaluator's loosely.)
				if err := conformance.Compare(got, want, conformance.Tolerance{Rtol: 1e-4, Atol: 1e-4}); err != nil {
					t.Fatalf("threads=%d against the evaluator: %v", threads, err)
				}
				// A sum a segment folds adds in another order than the
				// tile program's kernel: close to its bits, not equal.
				// Everything else is bit for bit.
				if sums == 0 && !got.Equal(tiled) {
					t.Fatalf("threads=%d: other bits than the tile programs", threads)
				}
				if err := conformance.Compare(got, tiled, conformance.Tolerance{Rtol: 1e-5, Atol: 1e-6}); err != nil {
					t.Fatalf("threads=%d against the tile programs: %v", threads, err)
				}
				if first == nil {
					first = got
				} else if !got.Equal(first) {
					t.Fatalf("threads=%d: other bits than on one thread", threads)
				}
			}
			// Pipelining runs the same instructions: the same bits.
			defer tile.SetPipelining(tile.SetPipelining(false))
			m, x := compileText(t, c.text, Options{Threads: 2, Poison: true})
			if got, _ := evalAndRun(t, m, x, args); !got.Equal(first) {
				t.Fatalf("other bits without pipelining")
			}
		})
	}
}

// rootSegments compiles the fusion computing x's root again and counts
// its program's generated segments, and the sums they fold.
func rootSegments(t *testing.T, x *Executable) (segs, sums int, piped bool) {
	t.Helper()
	root := x.entry.Root
	if root.Opcode != hlo.OpFusion {
		t.Fatalf("the root is %s, not a fusion", root.Opcode)
	}
	var p *tile.Prog
	if fc := root.Computation("calls"); fc.Root.Opcode == hlo.OpReduce {
		r, err := tile.Reduce(root)
		if err != nil {
			t.Fatal(err)
		}
		p = r.Body()
	} else {
		var err error
		if p, err = tile.Loop(root); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range p.Segments() {
		sums += g.FoldedSums
	}
	return len(p.Segments()), sums, p.Piped()
}

// BenchmarkSoftmaxSegments runs a softmax row program over 64 rows of
// 1024 (in cache) on one thread with tile programs only and with its
// subtract-and-exponential run as a generated segment.
func BenchmarkSoftmaxSegments(b *testing.B) {
	text := `HloModule softmax` + reductionBodies + `
ENTRY main {
  a = f32[64,1024] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[64] reduce(a, ninf), dimensions={1}, to_apply=max
  mb = f32[64,1024] broadcast(m), dimensions={0}
  d = f32[64,1024] subtract(a, mb)
  e = f32[64,1024] exponential(d)
  zero = f32[] constant(0)
  s = f32[64] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[64,1024] broadcast(s), dimensions={0}
  ROOT p = f32[64,1024] divide(e, sb)
}`
	for _, on := range []bool{false, true} {
		saved := tile.SetGeneratedCode(on)
		m, x := compileText(b, text, Options{Threads: 1})
		tile.SetGeneratedCode(saved)
		args := eval.RandomArguments(m, 1)
		name := "tile"
		if on {
			name = "seg"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				r, _ := x.Execute(args...)
				_ = r
			}
		})
	}
}

// A fusion of fewer elements than one vector runs on the tile kernels,
// not generated code (whose call would stage the few elements through a
// frame), and says so; from one vector on it runs generated code. Both
// give the evaluator's bits.
func TestJITMinElements(t *testing.T) {
	if !jit.Available {
		t.Skip("no generated code here")
	}
	for _, c := range []struct {
		n    int
		want string
	}{{1, "tile-fusion"}, {7, "tile-fusion"}, {8, "jit-fusion"}, {13, "jit-fusion"}} {
		text := fmt.Sprintf(`HloModule small
ENTRY e {
  a = f32[%[1]d] parameter(0)
  b = f32[%[1]d] parameter(1)
  s = f32[%[1]d] add(a, b)
  ROOT m = f32[%[1]d] multiply(s, a)
}`, c.n)
		m, x := compileText(t, text, Options{Threads: 1})
		if x.Lowering[c.want] != 1 {
			t.Fatalf("n=%d: lowered as %v, want one %s", c.n, x.Lowering, c.want)
		}
		got, want := evalAndRun(t, m, x, eval.RandomArguments(m, 4))
		if !got.Equal(want) {
			t.Fatalf("n=%d: %v, the evaluator gives %v", c.n, got, want)
		}
	}
}
