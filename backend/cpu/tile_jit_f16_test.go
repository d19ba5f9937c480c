package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"golang.org/x/sys/cpu"
)

// f16Arith is a loop fusion of f16 ops whose results the evaluator's
// (computed in f64, rounded once) equal bit for bit: an add, multiply
// or divide of f16 values is exact in f32 or rounded once there, where
// rounding twice gives the once-rounded f16 (f32 has more than twice
// f16's bits and two more). Compares, selects, converts through f32 and
// the f32 multiply between them are exact or rounded once either way.
const f16Arith = `HloModule f16arith
ENTRY main {
  x = f16[%[1]d,%[2]d] parameter(0)
  y = f16[%[1]d,%[2]d] parameter(1)
  z = f32[%[1]d,%[2]d] parameter(2)
  s = f16[%[1]d,%[2]d] add(x, y)
  p = f16[%[1]d,%[2]d] multiply(s, x)
  d = f16[%[1]d,%[2]d] divide(p, y)
  zero = f16[] constant(0)
  zb = f16[%[1]d,%[2]d] broadcast(zero), dimensions={}
  c = pred[%[1]d,%[2]d] compare(d, zb), direction=GT
  n = f16[%[1]d,%[2]d] negate(d)
  sel = f16[%[1]d,%[2]d] select(c, n, s)
  df = f32[%[1]d,%[2]d] convert(sel)
  w = f32[%[1]d,%[2]d] multiply(df, z)
  wh = f16[%[1]d,%[2]d] convert(w)
  wb = bf16[%[1]d,%[2]d] convert(wh)
  wf = f16[%[1]d,%[2]d] convert(wb)
  m = f16[%[1]d,%[2]d] maximum(wf, x)
  ROOT r = f16[%[1]d,%[2]d] subtract(m, y)
}`

// f16Math is a loop fusion of f16 math (exp, tanh, logistic) beside the
// arithmetic: the kernels' f32 results, rounded to f16, may differ from
// the evaluator's correctly rounded ones in their last bit.
const f16Math = `HloModule f16math
ENTRY main {
  x = f16[%[1]d,%[2]d] parameter(0)
  y = f16[%[1]d,%[2]d] parameter(1)
  e = f16[%[1]d,%[2]d] exponential(x)
  t = f16[%[1]d,%[2]d] tanh(y)
  s = f16[%[1]d,%[2]d] add(e, t)
  l = f16[%[1]d,%[2]d] logistic(s)
  q = f16[%[1]d,%[2]d] divide(l, e)
  ROOT r = f32[%[1]d,%[2]d] convert(q)
}`

// f16Bounds is a loop fusion of the ops whose f16 results need no
// rounding when their operands are rounded values or f16 constants
// (maximum, minimum, clamp, negate, abs, select: the generated code
// rounds a ReLU6 once), beside the same ops over raw f16 inputs, whose
// NaNs keep their payloads until an op rounds them (a maximum of two
// inputs, widened to f32 and added there, shows a payload left).
const f16Bounds = `HloModule f16bounds
ENTRY main {
  x = f16[%[1]d,%[2]d] parameter(0)
  y = f16[%[1]d,%[2]d] parameter(1)
  z = f32[%[1]d,%[2]d] parameter(2)
  a = f16[%[1]d,%[2]d] add(x, y)
  zero = f16[] constant(0)
  zb = f16[%[1]d,%[2]d] broadcast(zero), dimensions={}
  six = f16[] constant(6)
  sb = f16[%[1]d,%[2]d] broadcast(six), dimensions={}
  m = f16[%[1]d,%[2]d] maximum(a, zb)
  c = f16[%[1]d,%[2]d] minimum(m, sb)
  cl = f16[%[1]d,%[2]d] clamp(zb, a, sb)
  n = f16[%[1]d,%[2]d] negate(c)
  ab = f16[%[1]d,%[2]d] abs(n)
  p = pred[%[1]d,%[2]d] compare(x, zb), direction=GT
  s = f16[%[1]d,%[2]d] select(p, ab, cl)
  zf = f16[%[1]d,%[2]d] convert(z)
  mz = f16[%[1]d,%[2]d] maximum(zf, s)
  mx = f16[%[1]d,%[2]d] maximum(x, y)
  o1 = f32[%[1]d,%[2]d] convert(mz)
  o2 = f32[%[1]d,%[2]d] convert(mx)
  ROOT r = f32[%[1]d,%[2]d] add(o2, o1)
}`

// f16Specials are argument values where f16's edge cases live: ±0,
// subnormals, the largest value (whose products overflow to infinity),
// infinities and NaNs; and for the f32 operand, values whose products
// overflow f16 or fall into its subnormals.
var (
	f16Specials = []uint16{0x0000, 0x8000, 0x0001, 0x8003, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x3c00, 0x3800,
		0x4600, 0x4601, 0x7d01, 0xfe37} // 6, just above it, NaNs with payloads
	f32Specials = []float32{0, 1e6, -1e6, 1e-7, -3e-6, 65520, 2049, float32(math.Inf(1)), float32(math.NaN())}
)

// withF16Specials sets about one element in six of each f16 and f32
// argument to one of the specials.
func withF16Specials(args []*hlo.Literal, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 16))
	for _, a := range args {
		switch d := a.Data().(type) {
		case []uint16:
			for i := range d {
				if rng.IntN(6) == 0 {
					d[i] = f16Specials[rng.IntN(len(f16Specials))]
				}
			}
		case []float32:
			for i := range d {
				if rng.IntN(6) == 0 {
					d[i] = f32Specials[rng.IntN(len(f32Specials))]
				}
			}
		}
	}
}

// f16 loop fusions run generated code (the tile program kept only
// where the machine lacks F16C), with the evaluator's bits where its
// ops are correctly rounded (f16Arith), the tile program's bits always,
// and the same bits on any thread count; lengths with a vector tail,
// and large enough to split across workers.
func TestJITF16Fusions(t *testing.T) {
	if !jit.Available {
		t.Skip("no code generation on this platform")
	}
	for _, c := range []struct {
		name  string
		text  string
		exact bool // the evaluator's bits
	}{
		{"arithmetic", fmt.Sprintf(f16Arith, 37, 29), true},
		{"arithmetic, split across workers", fmt.Sprintf(f16Arith, 301, 1001), true},
		{"bounds", fmt.Sprintf(f16Bounds, 37, 29), true},
		{"bounds, split across workers", fmt.Sprintf(f16Bounds, 301, 1001), true},
		{"math", fmt.Sprintf(f16Math, 37, 29), false},
		{"math, split across workers", fmt.Sprintf(f16Math, 301, 1001), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, ref := compileWithoutJIT(t, c.text)
			args := eval.RandomArguments(m, 17)
			withF16Specials(args, 17)
			tiled, err := ref.Execute(args...)
			if err != nil {
				t.Fatal(err)
			}
			for threads := 1; threads <= 3; threads++ {
				m, x := compileText(t, c.text, Options{Threads: threads, Poison: true})
				if want := f16JITFusions(); x.Lowering["jit-fusion"] != want {
					t.Fatalf("lowering %v, want %d jit fusions", x.Lowering, want)
				}
				got, want := evalAndRun(t, m, x, args)
				if c.exact && !got.Equal(want) {
					t.Fatalf("threads=%d: other bits than the evaluator: %v", threads, firstDifference(got, want))
				}
				// A few f16 ulps (2^-10 relative each: the math's last
				// bits, carried through the ops after it).
				if err := conformance.Compare(got, want, conformance.Tolerance{Rtol: 4e-3, Atol: 1e-7}); err != nil {
					t.Fatalf("threads=%d against the evaluator: %v", threads, err)
				}
				if !got.Equal(tiled) {
					t.Fatalf("threads=%d: other bits than the tile program: %v", threads, firstDifference(got, tiled))
				}
			}
		})
	}
}

// f16JITFusions is how many jit fusions an f16 module of one loop
// fusion lowers to here: one, where the machine has F16C.
func f16JITFusions() int {
	if !jit.Available || !cpu.X86.HasF16C {
		return 0
	}
	return 1
}

// firstDifference describes the first element at which two literals of
// one shape differ in their bits.
func firstDifference(got, want *hlo.Literal) string {
	for i := range got.Len() {
		if g, w := got.Bits(i), want.Bits(i); g != w {
			return fmt.Sprintf("element %d: %#x (%v), want %#x (%v)", i, g, got.GetFloat64(i), w, want.GetFloat64(i))
		}
	}
	return "none"
}

// An f16 loop fusion with an op the generator does not take (log) runs
// the runs of ops either side of it as generated segments, over the tile
// program's f32 tiles (16-lane code, with its tanh, where the machine
// has AVX-512), rounding to f16 after each op as the tile program does:
// its bits, on any thread count.
func TestJITF16Segments(t *testing.T) {
	if !jit.Available || !cpu.X86.HasF16C {
		t.Skip("no f16 code generation on this platform")
	}
	text := `HloModule logmid16
ENTRY main {
  a = f16[700,300] parameter(0)
  b = f16[700,300] parameter(1)
  x = f16[700,300] multiply(a, a)
  y = f16[700,300] add(x, b)
  l = f16[700,300] log(y)
  z = f16[700,300] tanh(l)
  ROOT w = f16[700,300] multiply(z, a)
}`
	m, ref := compileWithoutJIT(t, text)
	args := eval.RandomArguments(m, 19)
	withF16Specials(args, 19)
	tiled, err := ref.Execute(args...)
	if err != nil {
		t.Fatal(err)
	}
	for threads := 1; threads <= 3; threads++ {
		m, x := compileText(t, text, Options{Threads: threads, Poison: true})
		if segs, _, _ := rootSegments(t, x); segs != 2 {
			t.Fatalf("the fusion has %d generated segments, want 2", segs)
		}
		got, want := evalAndRun(t, m, x, args)
		if err := conformance.Compare(got, want, conformance.Tolerance{Rtol: 4e-3, Atol: 1e-7}); err != nil {
			t.Fatalf("threads=%d against the evaluator: %v", threads, err)
		}
		if !got.Equal(tiled) {
			t.Fatalf("threads=%d: other bits than the tile program: %v", threads, firstDifference(got, tiled))
		}
	}
}

// Where the machine lacks F16C, an f16 fusion keeps its tile program
// (with the tile program's bits), and an f32 one still runs generated
// code.
func TestJITF16WithoutF16C(t *testing.T) {
	if !jit.Available {
		t.Skip("no code generation on this platform")
	}
	defer jit.SetF16C(jit.SetF16C(false))
	text := fmt.Sprintf(f16Arith, 37, 29)
	m, x := compileText(t, text, Options{Threads: 1})
	if x.Lowering["jit-fusion"] != 0 || x.Lowering["tile-fusion"] != 1 {
		t.Fatalf("lowering %v without F16C, want one tile fusion", x.Lowering)
	}
	args := eval.RandomArguments(m, 23)
	got, want := evalAndRun(t, m, x, args)
	if !got.Equal(want) {
		t.Fatalf("other bits than the evaluator: %v", firstDifference(got, want))
	}
	_, x = compileText(t, `HloModule f32
ENTRY main {
  x = f32[300] parameter(0)
  e = f32[300] exponential(x)
  ROOT r = f32[300] multiply(e, x)
}`, Options{Threads: 1})
	if x.Lowering["jit-fusion"] != 1 {
		t.Fatalf("an f32 fusion without F16C: lowering %v", x.Lowering)
	}
}
