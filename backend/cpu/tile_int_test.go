package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// quantizeModule quantizes x (r×c) as ONNX's QuantizeLinear and
// DynamicQuantizeLinear write it: x/scale rounded to even, plus the zero
// point, clamped to [lo, hi] and converted to t.
func quantizeModule(r, c int, t string, lo, hi int) string {
	return fmt.Sprintf(`HloModule quantize
ENTRY main {
  x = f32[%[1]d,%[2]d] parameter(0)
  s = f32[] parameter(1)
  z = f32[] parameter(2)
  sb = f32[%[1]d,%[2]d] broadcast(s), dimensions={}
  zb = f32[%[1]d,%[2]d] broadcast(z), dimensions={}
  d = f32[%[1]d,%[2]d] divide(x, sb)
  q = f32[%[1]d,%[2]d] round-nearest-even(d)
  a = f32[%[1]d,%[2]d] add(q, zb)
  lo = f32[] constant(%[4]d)
  hi = f32[] constant(%[5]d)
  cl = f32[%[1]d,%[2]d] clamp(lo, a, hi)
  ROOT y = %[3]s[%[1]d,%[2]d] convert(cl)
}`, r, c, t, lo, hi)
}

// intEdgeCases are TestIntEdgeFusions' modules, with the fusions
// expected to run generated code.
var intEdgeCases = map[string]struct {
	text string
	jit  int // fusions expected to run generated code
}{
	"quantize u8": {quantizeModule(37, 111, "u8", 0, 255), 1},
	"quantize s8": {quantizeModule(37, 111, "s8", -128, 127), 1},
	// Converting saturates without a clamp: NaN to 0, the rest to the
	// range, toward zero.
	"saturate s8": {`HloModule saturate
ENTRY main {
  x = f32[1001] parameter(0)
  c = f32[] constant(100)
  cb = f32[1001] broadcast(c), dimensions={}
  m = f32[1001] multiply(x, cb)
  ROOT y = s8[1001] convert(m)
}`, 1},
	"saturate u8": {`HloModule saturate
ENTRY main {
  x = f32[1001] parameter(0)
  c = f32[] constant(100)
  cb = f32[1001] broadcast(c), dimensions={}
  m = f32[1001] multiply(x, cb)
  ROOT y = u8[1001] convert(m)
}`, 1},
	// Wider integers are converted after the program, without code.
	"quantize s16":                      {quantizeModule(30, 40, "s16", -32768, 32767), 0},
	"quantize u32":                      {quantizeModule(30, 40, "u32", 0, 65535), 0},
	"quantize u8, split across workers": {quantizeModule(301, 1001, "u8", 0, 255), 1},
	// An s32 accumulator dequantized: converted (to nearest, past
	// 2^24 too), scaled per column, a bias added (code reads s32).
	"dequantize s32":                       {dequantizeModule(37, 111, "s32"), 1},
	"dequantize s32, split across workers": {dequantizeModule(301, 1001, "s32"), 1},
	// Other integer operands are converted into the tile.
	"dequantize u8":  {dequantizeModule(37, 111, "u8"), 0},
	"dequantize s16": {dequantizeModule(37, 111, "s16"), 0},
	// An integer operand read through an index map (transposed) is
	// gathered converted.
	"transposed s32": {`HloModule transposed
ENTRY main {
  x = s32[40,30] parameter(0)
  t = s32[30,40] transpose(x), dimensions={1,0}
  f = f32[30,40] convert(t)
  ROOT y = f32[30,40] negate(f)
}`, 1},
	// Both edges: requantizing an s32 accumulator to u8.
	"requantize": {`HloModule requantize
ENTRY main {
  x = s32[50,70] parameter(0)
  s = f32[] parameter(1)
  f = f32[50,70] convert(x)
  sb = f32[50,70] broadcast(s), dimensions={}
  m = f32[50,70] multiply(f, sb)
  r = f32[50,70] round-nearest-even(m)
  ROOT y = u8[50,70] convert(r)
}`, 1},
}

// Loop fusions with integer edges (a float result stored as integers,
// integer operands read as floats) equal the evaluator bit for bit, NaN,
// infinities, values past the type's range and s32 values f32 rounds
// included, with generated code (8-bit results and s32 operands) and
// without, on 1 to 3 threads.
func TestIntEdgeFusions(t *testing.T) {
	cases := intEdgeCases
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			m, ref := compileWithoutJIT(t, c.text)
			if ref.Lowering["tile-fusion"] != 1 {
				t.Fatalf("lowering %v, want one tile fusion", ref.Lowering)
			}
			args := intEdgeArguments(m)
			tiled, err := ref.Execute(args...)
			if err != nil {
				t.Fatal(err)
			}
			for threads := 1; threads <= 3; threads++ {
				m, x := compileText(t, c.text, Options{Threads: threads, Poison: true})
				if jit.Available && x.Lowering["jit-fusion"] != c.jit {
					t.Fatalf("lowering %v, want %d jit fusions", x.Lowering, c.jit)
				}
				got, want := evalAndRun(t, m, x, args)
				if !got.Equal(want) {
					t.Fatalf("threads=%d: other values than the evaluator's", threads)
				}
				if !got.Equal(tiled) {
					t.Fatalf("threads=%d: other bits than the tile program", threads)
				}
			}
		})
	}
}

// dequantizeModule converts x (r×c, of type t) to f32, scales it per
// column and adds a bias row.
func dequantizeModule(r, c int, t string) string {
	return fmt.Sprintf(`HloModule dequantize
ENTRY main {
  x = %[3]s[%[1]d,%[2]d] parameter(0)
  s = f32[%[2]d] parameter(1)
  b = f32[%[2]d] parameter(2)
  f = f32[%[1]d,%[2]d] convert(x)
  sb = f32[%[1]d,%[2]d] broadcast(s), dimensions={1}
  bb = f32[%[1]d,%[2]d] broadcast(b), dimensions={1}
  m = f32[%[1]d,%[2]d] multiply(f, sb)
  ROOT y = f32[%[1]d,%[2]d] add(m, bb)
}`, r, c, t)
}

// intEdgeArguments are random arguments whose f32 arrays hold specials
// (NaN, infinities, ties, values far past any integer range) every few
// elements, and whose scalars are a scale and an offset as quantizing
// takes them.
func intEdgeArguments(m *hlo.Module) []*hlo.Literal {
	args := eval.RandomArguments(m, 11)
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 2.5, -2.5, 127.5, -128.5, 255.5, 1e10, -1e10, -0.25}
	for _, a := range args {
		switch {
		case a.Shape().Rank() == 0:
			a.SetFloat64(0, 0.0173)
		case a.DType() == hlo.F32:
			for i := 0; i < a.Len(); i += 7 {
				a.SetFloat64(i, specials[i/7%len(specials)])
			}
			for i := 3; i < a.Len(); i += 7 {
				a.SetFloat64(i, a.GetFloat64(i)*300)
			}
		case a.DType() == hlo.S32: // all magnitudes: past 2^24, f32 rounds
			for i := range a.Len() {
				a.SetInt64(i, int64(int32(uint32(i)*2654435761))>>(i%31))
			}
		}
	}
	return args
}

// A reduction of an integer operand converted to f32 reads it converted
// in the reduce fusion (a maximum: exact in any order).
func TestIntEdgeReduce(t *testing.T) {
	const text = `HloModule maxrow
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY main {
  x = s32[64,300] parameter(0)
  f = f32[64,300] convert(x)
  ninf = f32[] constant(-inf)
  ROOT r = f32[64] reduce(f, ninf), dimensions={1}, to_apply=max_f32
}`
	for threads := 1; threads <= 2; threads++ {
		m, x := compileText(t, text, Options{Threads: threads, Poison: true})
		if x.Lowering["reduce-fusion"] != 1 || x.Lowering["movement"] != 0 {
			t.Fatalf("lowering %v, want the convert in the reduce fusion", x.Lowering)
		}
		got, want := evalAndRun(t, m, x, intEdgeArguments(m))
		if !got.Equal(want) {
			t.Fatalf("threads=%d: other values than the evaluator's", threads)
		}
	}
}

// Sibling fusions reading one s32 operand converted merge into a
// multi-output fusion that reads it once, converted, with the
// evaluator's results.
func TestIntEdgeMultiOutput(t *testing.T) {
	const text = `HloModule siblings
ENTRY main {
  x = s32[300,500] parameter(0)
  f = f32[300,500] convert(x)
  two = f32[] constant(2)
  tb = f32[300,500] broadcast(two), dimensions={}
  a = f32[300,500] multiply(f, tb)
  e = f32[300,500] exponential(a)
  g = f32[300,500] convert(x)
  n = f32[300,500] negate(g)
  ROOT t = (f32[300,500], f32[300,500]) tuple(e, n)
}`
	for threads := 1; threads <= 2; threads++ {
		m, x := compileText(t, text, Options{Threads: threads, Poison: true})
		if x.Lowering["multi-output-fusion"] != 1 {
			t.Fatalf("lowering %v, want one multi-output fusion", x.Lowering)
		}
		got, want := evalAndRun(t, m, x, intEdgeArguments(m))
		if err := closeTo(got, want, 1e-5); err != nil {
			t.Fatalf("threads=%d: %v", threads, err) // exp within 2 ULP
		}
	}
}
