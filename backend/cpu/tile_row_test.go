package cpu

import (
	"math"
	"slices"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// Row reductions read back along their rows join their reader's fusion
// as a row program: softmax and its relatives become one fusion that
// reads its input once, agree with the evaluator, and give the same bits
// for any thread count.
func TestRowPrograms(t *testing.T) {
	cases := map[string]struct {
		text          string
		tiles, reduce int // fusions of each kind expected
		rowLen        int // of the program that computes the root
	}{
		// Rows longer than a tile: one row per tile.
		"softmax, long rows": {`HloModule softmax` + reductionBodies + `
ENTRY main {
  a = f32[9,1000] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[9] reduce(a, ninf), dimensions={1}, to_apply=max
  mb = f32[9,1000] broadcast(m), dimensions={0}
  d = f32[9,1000] subtract(a, mb)
  e = f32[9,1000] exponential(d)
  zero = f32[] constant(0)
  s = f32[9] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[9,1000] broadcast(s), dimensions={0}
  ROOT p = f32[9,1000] divide(e, sb)
}`, 1, 0, 1000},
		// Short rows, several to a tile (51 of 10 in 510), and a row
		// count that does not fill the last tile.
		"log-softmax, short rows": {`HloModule logsoftmax` + reductionBodies + `
ENTRY main {
  a = f32[103,10] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[103] reduce(a, ninf), dimensions={1}, to_apply=max
  mb = f32[103,10] broadcast(m), dimensions={0}
  d = f32[103,10] subtract(a, mb)
  e = f32[103,10] exponential(d)
  zero = f32[] constant(0)
  s = f32[103] reduce(e, zero), dimensions={1}, to_apply=add
  l = f32[103] log(s)
  lb = f32[103,10] broadcast(l), dimensions={0}
  ROOT r = f32[103,10] subtract(d, lb)
}`, 1, 0, 10}, // log(s) too, per row of the tile
		// Rows of two trailing dimensions of a rank-3 value, centred.
		"two trailing dims": {`HloModule centre` + reductionBodies + `
ENTRY main {
  a = f32[6,20,30] parameter(0)
  zero = f32[] constant(0)
  s = f32[6] reduce(a, zero), dimensions={1,2}, to_apply=add
  sb = f32[6,20,30] broadcast(s), dimensions={0}
  k = f32[] constant(0.0016666667)
  kb = f32[6,20,30] broadcast(k), dimensions={}
  mean = f32[6,20,30] multiply(sb, kb)
  ROOT c = f32[6,20,30] subtract(a, mean)
}`, 1, 0, 600},
		// A reduction root whose producer holds another row reduction:
		// log-sum-exp's sum with the maximum subtracted inside.
		"reduction of a row program": {`HloModule lse` + reductionBodies + `
ENTRY main {
  a = f32[4,5,600] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[4,5] reduce(a, ninf), dimensions={2}, to_apply=max
  mb = f32[4,5,600] broadcast(m), dimensions={0,1}
  d = f32[4,5,600] subtract(a, mb)
  e = f32[4,5,600] exponential(d)
  zero = f32[] constant(0)
  ROOT s = f32[4,5] reduce(e, zero), dimensions={2}, to_apply=add
}`, 0, 1, 600},
		// Layer normalization: the variance's reduction reads the mean
		// spread over the rows, and rsqrt(var·k + ε) is an op on row values.
		"layer norm": {`HloModule layernorm` + reductionBodies + `
ENTRY main {
  a = f32[50,300] parameter(0)
  zero = f32[] constant(0)
  s = f32[50] reduce(a, zero), dimensions={1}, to_apply=add
  k = f32[] constant(0.0033333334)
  kb = f32[50] broadcast(k), dimensions={}
  mean = f32[50] multiply(s, kb)
  mb = f32[50,300] broadcast(mean), dimensions={0}
  d = f32[50,300] subtract(a, mb)
  sq = f32[50,300] multiply(d, d)
  v = f32[50] reduce(sq, zero), dimensions={1}, to_apply=add
  var = f32[50] multiply(v, kb)
  eps = f32[] constant(1e-5)
  eb = f32[50] broadcast(eps), dimensions={}
  ve = f32[50] add(var, eb)
  r = f32[50] rsqrt(ve)
  rb = f32[50,300] broadcast(r), dimensions={0}
  ROOT y = f32[50,300] multiply(d, rb)
}`, 1, 0, 300},
		// Softmax as ONNX lowers it: the maximum zeroed where it is not
		// finite (a row masked to -inf throughout), and scores scaled by
		// a splat first. is-finite of the row maximum is a row value too.
		"guarded softmax": {`HloModule guarded` + reductionBodies + `
ENTRY main {
  a = f32[2,3,40,40] parameter(0)
  mask = f32[2,40] parameter(1)
  c = f32[] constant(5.65685415)
  cb = f32[2,3,40,40] broadcast(c), dimensions={}
  s = f32[2,3,40,40] divide(a, cb)
  mb = f32[2,3,40,40] broadcast(mask), dimensions={0,3}
  x = f32[2,3,40,40] add(s, mb)
  ninf = f32[] constant(-inf)
  m = f32[2,3,40] reduce(x, ninf), dimensions={3}, to_apply=max
  fin = pred[2,3,40] is-finite(m)
  zero = f32[] constant(0)
  zb = f32[2,3,40] broadcast(zero), dimensions={}
  m2 = f32[2,3,40] select(fin, m, zb)
  m2b = f32[2,3,40,40] broadcast(m2), dimensions={0,1,2}
  d = f32[2,3,40,40] subtract(x, m2b)
  e = f32[2,3,40,40] exponential(d)
  sum = f32[2,3,40] reduce(e, zero), dimensions={3}, to_apply=add
  sb = f32[2,3,40,40] broadcast(sum), dimensions={0,1,2}
  ROOT p = f32[2,3,40,40] divide(e, sb)
}`, 1, 0, 40},
		// A row value that also reads an array from outside is not a row
		// program's: it is computed on its own and read back as usual.
		"row value with an outside operand": {`HloModule outside` + reductionBodies + `
ENTRY main {
  a = f32[20,30] parameter(0)
  p = f32[20] parameter(1)
  zero = f32[] constant(0)
  s = f32[20] reduce(a, zero), dimensions={1}, to_apply=add
  t = f32[20] add(s, p)
  tb = f32[20,30] broadcast(t), dimensions={0}
  ROOT y = f32[20,30] subtract(a, tb)
}`, 2, 1, 0},
		// A gather read by the same op as the row values, computed after
		// their (skipped) spread: it must not take their tile (found by
		// FuzzCPUBackend; with rows of 8, the values are row scalars).
		"gather beside row values": {`HloModule beside` + reductionBodies + `
ENTRY main {
  a = f32[7,6,8] parameter(0)
  c = f32[7,6] parameter(1)
  ninf = f32[] constant(-inf)
  m = f32[7] reduce(a, ninf), dimensions={1,2}, to_apply=max
  mb = f32[7,6,8] broadcast(m), dimensions={0}
  cb = f32[7,6,8] broadcast(c), dimensions={0,1}
  ROOT d = f32[7,6,8] subtract(mb, cb)
}`, 1, 0, 48},
		// A broadcast along other dimensions than the rows' is not a row
		// spread: the maximum stays its own fusion.
		"column broadcast": {`HloModule col` + reductionBodies + `
ENTRY main {
  a = f32[30,30] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[30] reduce(a, ninf), dimensions={1}, to_apply=max
  mb = f32[30,30] broadcast(m), dimensions={1}
  ROOT d = f32[30,30] subtract(a, mb)
}`, 1, 1, 0},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var first *hlo.Literal
			for threads := 1; threads <= 3; threads++ {
				m, x := compileText(t, c.text, Options{Threads: threads, Poison: true})
				if x.Lowering["tile-fusion"]+x.Lowering["jit-fusion"] != c.tiles || x.Lowering["reduce-fusion"] != c.reduce {
					t.Fatalf("lowering %v, want %d tile and %d reduce fusions", x.Lowering, c.tiles, c.reduce)
				}
				if got := rootRowLen(x); got != c.rowLen {
					t.Fatalf("the root's program folds rows of %d, want %d", got, c.rowLen)
				}
				args := eval.RandomArguments(m, 5)
				got, want := evalAndRun(t, m, x, args)
				if err := conformance.Compare(got, want, conformance.Tolerance{Rtol: 1e-5, Atol: 1e-6}); err != nil {
					t.Fatalf("threads=%d: %v", threads, err)
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

// rootRowLen is the row length of the tile program computing the entry's
// root (0 when it is not a row program).
func rootRowLen(x *Executable) int {
	root := x.entry.Root
	if root.Opcode != hlo.OpFusion {
		return 0
	}
	if fc := root.Computation("calls"); fc != nil && fc.Root.Opcode == hlo.OpReduce {
		r, err := tile.Reduce(root)
		if err != nil {
			return -1
		}
		return r.Body().RowLen()
	}
	p, err := tile.CompileLoop(root)
	if err != nil {
		return -1
	}
	return p.RowLen()
}

// TestSegmentsStreamInputs checks which segments prefetch the next tile
// of an operand they read in place: in a loop fusion run tile by tile,
// the first segment reading an f32 parameter, PrefetchAhead one tile;
// then the tile runner's own burst prefetch leaves that parameter alone
// (it skips non-f32 operands when it runs).
// A bf16 parameter (decoded into a tile, not read in place) is not
// streamed, nor is anything when the tiles may run out of order.
func TestSegmentsStreamInputs(t *testing.T) {
	if !jit.Available {
		t.Skip("no generated code here")
	}
	softmax := func(dt string) string {
		return `HloModule softmax` + reductionBodies + `
ENTRY main {
  a = ` + dt + `[64,1024] parameter(0)
  b = f32[64,1024] convert(a)
  ninf = f32[] constant(-inf)
  m = f32[64] reduce(b, ninf), dimensions={1}, to_apply=max
  mb = f32[64,1024] broadcast(m), dimensions={0}
  d = f32[64,1024] subtract(b, mb)
  e = f32[64,1024] exponential(d)
  zero = f32[] constant(0)
  s = f32[64] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[64,1024] broadcast(s), dimensions={0}
  ROOT p = f32[64,1024] divide(e, sb)
}`
	}
	for _, c := range []struct {
		dt      string
		stream  bool
		streams [][]int // per segment
	}{
		{"f32", true, [][]int{{0}, nil}},
		{"f32", false, [][]int{nil, nil}},
		// The convert gets a segment of its own, folding the maximum.
		{"bf16", true, [][]int{nil, nil, nil}},
	} {
		_, x := compileText(t, softmax(c.dt), Options{Threads: 1})
		// Loop streams its tiles in order; a program compiled alone
		// does not.
		p, err := tile.Loop(x.entry.Root)
		if !c.stream {
			if p, err = tile.CompileLoop(x.entry.Root); err == nil {
				p.Generate()
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		segs := p.Segments()
		if len(segs) != len(c.streams) {
			t.Fatalf("%s stream=%v: %d segments, want %d", c.dt, c.stream, len(segs), len(c.streams))
		}
		for i, g := range segs {
			if !slices.Equal(g.Streams, c.streams[i]) {
				t.Errorf("%s stream=%v: segment %d streams %v, want %v", c.dt, c.stream, i, g.Streams, c.streams[i])
			}
		}
		if inPlace := p.TilePrefetches(0); inPlace != (c.dt != "f32" || !c.stream) {
			t.Errorf("%s stream=%v: tile prefetch of parameter 0 %v", c.dt, c.stream, inPlace)
		}
	}
}

// TestGuardedSoftmaxNonFinite runs the guarded softmax of TestRowPrograms
// on rows the evaluator takes through each branch of its guard: a row
// masked to -inf throughout (maximum not finite: zeroed, then 0/0), one
// with a NaN, one with +inf, and ordinary ones; the fused program must
// give the evaluator's values, NaNs where it has them.
func TestGuardedSoftmaxNonFinite(t *testing.T) {
	text := `HloModule guarded` + reductionBodies + `
ENTRY main {
  a = f32[6,24] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[6] reduce(a, ninf), dimensions={1}, to_apply=max
  fin = pred[6] is-finite(m)
  zero = f32[] constant(0)
  zb = f32[6] broadcast(zero), dimensions={}
  m2 = f32[6] select(fin, m, zb)
  m2b = f32[6,24] broadcast(m2), dimensions={0}
  d = f32[6,24] subtract(a, m2b)
  e = f32[6,24] exponential(d)
  sum = f32[6] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[6,24] broadcast(sum), dimensions={0}
  ROOT p = f32[6,24] divide(e, sb)
}`
	vals := make([]float32, 6*24)
	for i := range vals {
		vals[i] = float32(i%7) - 3
	}
	for j := range 24 {
		vals[1*24+j] = float32(math.Inf(-1)) // all masked
	}
	vals[2*24+5] = float32(math.NaN())
	vals[3*24+7] = float32(math.Inf(1))
	arg, err := hlo.NewLiteralFromData(hlo.ArrayShape(hlo.F32, 6, 24), vals)
	if err != nil {
		t.Fatal(err)
	}
	m, x := compileText(t, text, Options{Threads: 2, Poison: true})
	if n := x.Lowering["tile-fusion"] + x.Lowering["jit-fusion"]; n != 1 || x.Lowering["reduce-fusion"] != 0 {
		t.Fatalf("lowering %v, want the softmax as one row program", x.Lowering)
	}
	got, want := evalAndRun(t, m, x, []*hlo.Literal{arg})
	if err := conformance.Compare(got, want, conformance.Tolerance{Rtol: 1e-5, Atol: 1e-6}); err != nil {
		t.Fatal(err)
	}
	if w1, w2 := want.GetFloat64(1*24), want.GetFloat64(2*24); !math.IsNaN(w1) || !math.IsNaN(w2) {
		t.Fatalf("the evaluator's masked and NaN rows are %v and %v, want NaN", w1, w2)
	}
}
