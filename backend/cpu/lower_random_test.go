package cpu

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// rng-bit-generator against the evaluator (bit for bit, every algorithm,
// state length and output type it accepts), the Random123 known answers
// through the op, and rng's distributions.

// bitGenKernel lowers `rng-bit-generator(p0)` with state and bits shapes.
func bitGenKernel(t testing.TB, alg, state, bits string, threads int) (*hlo.Instruction, kernel) {
	t.Helper()
	m, err := hlotext.Parse(module([]string{state}, fmt.Sprintf("(%s, %s) rng-bit-generator(p0), algorithm=%s", state, bits, alg)), hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := m.Entry.Root
	k, ok := lowerRandom(in, threads)
	if !ok {
		t.Fatalf("%s: no kernel", in)
	}
	return in, k
}

// stateLiteral is a state of the given shape holding words.
func stateLiteral(t testing.TB, shape string, words ...uint64) *hlo.Literal {
	t.Helper()
	s, err := hlotext.ParseShape(shape)
	if err != nil {
		t.Fatal(err)
	}
	l := hlo.NewLiteral(s)
	copy(wordsOf[uint64](l), words)
	return l
}

// checkSameBits compares two tuples' elements byte for byte.
func checkSameBits(t *testing.T, what string, got, want *hlo.Literal) {
	t.Helper()
	g, w := got.Elements(), want.Elements()
	if len(g) != len(w) {
		t.Fatalf("%s: %d elements, want %d", what, len(g), len(w))
	}
	for i := range g {
		if !bytes.Equal(bytesOf(g[i]), bytesOf(w[i])) {
			t.Fatalf("%s: element %d is\n%v\nwant\n%v", what, i, g[i], w[i])
		}
	}
}

// runBitGen runs the kernel into a poisoned tuple (or none) and the
// evaluator, and compares them.
func runBitGen(t *testing.T, alg, state, bits string, st *hlo.Literal, threads int, poison bool) {
	t.Helper()
	in, k := bitGenKernel(t, alg, state, bits, threads)
	var ev eval.Evaluator
	want, err := ev.Instruction(in, []*hlo.Literal{st})
	if err != nil {
		t.Fatalf("%s: evaluator: %v", in, err)
	}
	var out *hlo.Literal
	if poison {
		out = poisoned(in.Shape)
	}
	got, err := k(&runState{}, out, []*hlo.Literal{st})
	if err != nil {
		t.Fatal(err)
	}
	checkSameBits(t, fmt.Sprintf("%s %s %s %x threads=%d", alg, state, bits, wordsOf[uint64](st), threads), got, want)
}

func TestRngBitGeneratorKernelMatchesEvaluator(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	states := []string{"u64[2]", "u64[3]", "s64[3]", "u64[5]", "f64[2]"}
	bits := []string{
		"u32[2,3]", "u32[]", "u32[7]", "u32[3,5,9]", "u32[0,4]", "s32[5,4]", "f32[3,3]", "u32[6,4]{0,1}",
		"u16[3]", "s16[5,3]", "f16[4]", "bf16[5]", "u8[5]", "s8[9]", "s4[7]", "u4[3,3]", "s2[5]", "u2[6]",
		"f8e4m3fn[6]", "f8e5m2[2,5]", "f4e2m1fn[5]", "u64[5]", "s64[2,3]", "f64[7]", "u64[]", "u64[3,2]{0,1}",
	}
	for _, alg := range []string{"rng_three_fry", "rng_philox", "rng_default"} {
		for _, b := range bits {
			for _, s := range states {
				words := make([]uint64, 5)
				for i := range words {
					words[i] = rng.Uint64()
				}
				if rng.IntN(3) == 0 {
					words[1] = ^uint64(0) - uint64(rng.IntN(3)) // the counter wraps
				}
				runBitGen(t, alg, s, b, stateLiteral(t, s, words...), 1+rng.IntN(2), rng.IntN(2) == 0)
			}
		}
	}
}

// Outputs large enough to be split among threads, in shapes that
// exercise three-fry's halving (no even dimension: the largest is split;
// an even dimension in the middle) and philox's partial last block.
func TestRngBitGeneratorKernelParallel(t *testing.T) {
	for _, alg := range []string{"rng_three_fry", "rng_philox"} {
		for _, b := range []string{"u32[3,5,1001]", "u32[7,130,33]", "u32[40001]", "u8[3,9999]", "u64[20001]", "s16[2,3,4097]"} {
			for _, threads := range []int{1, 2, 3} {
				st := stateLiteral(t, "u64[3]", 0x0123456789abcdef, ^uint64(0)-5000, 7)
				runBitGen(t, alg, "u64[3]", b, st, threads, true)
			}
		}
	}
}

// The Random123 known answers (as in eval/rng_test.go), through the op:
// three-fry's u32[2] is one block at counter x0 | x1<<32 under key
// k0 | k1<<32; philox's u32[4] one block at the 128-bit counter.
func TestRngBitGeneratorKernelKnownAnswers(t *testing.T) {
	join := func(lo, hi uint32) uint64 { return uint64(lo) | uint64(hi)<<32 }
	threefry := []struct{ ctr, key, out [2]uint32 }{
		{[2]uint32{0, 0}, [2]uint32{0, 0}, [2]uint32{0x6b200159, 0x99ba4efe}},
		{[2]uint32{0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [2]uint32{0x1cb996fc, 0xbb002be7}},
		{[2]uint32{0x243f6a88, 0x85a308d3}, [2]uint32{0x13198a2e, 0x03707344}, [2]uint32{0xc4923a9c, 0x483df7a0}},
	}
	for _, v := range threefry {
		_, k := bitGenKernel(t, "rng_three_fry", "u64[2]", "u32[2]", 1)
		key, ctr := join(v.key[0], v.key[1]), join(v.ctr[0], v.ctr[1])
		r, err := k(nil, nil, []*hlo.Literal{stateLiteral(t, "u64[2]", key, ctr)})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Elements()[1].Data().([]uint32); got[0] != v.out[0] || got[1] != v.out[1] {
			t.Errorf("three-fry %x %x: %x, want %x", v.ctr, v.key, got, v.out)
		}
		if got := wordsOf[uint64](r.Elements()[0]); got[0] != key || got[1] != ctr+1 {
			t.Errorf("three-fry state %x, want [%x %x]", got, key, ctr+1)
		}
	}
	philox := []struct {
		ctr [4]uint32
		key [2]uint32
		out [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, v := range philox {
		_, k := bitGenKernel(t, "rng_philox", "u64[3]", "u32[4]", 1)
		key, lo, hi := join(v.key[0], v.key[1]), join(v.ctr[0], v.ctr[1]), join(v.ctr[2], v.ctr[3])
		r, err := k(nil, nil, []*hlo.Literal{stateLiteral(t, "u64[3]", key, lo, hi)})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Elements()[1].Data().([]uint32); [4]uint32(got) != v.out {
			t.Errorf("philox %x %x: %x, want %x", v.ctr, v.key, got, v.out)
		}
		wantLo, wantHi := lo+1, hi
		if lo == math.MaxUint64 {
			wantHi++ // the carry
		}
		if got := wordsOf[uint64](r.Elements()[0]); got[1] != wantLo || got[2] != wantHi {
			t.Errorf("philox state %x, want counter %x %x", got, wantLo, wantHi)
		}
	}
}

func TestRngBitGeneratorKernelDeclines(t *testing.T) {
	for _, c := range []struct{ state, bits, alg string }{
		{"u64[2]", "pred[4]", "rng_philox"},
		{"u64[2]", "c64[4]", "rng_philox"},
		{"u32[4]", "u32[4]", "rng_philox"},
		{"u64[1]", "u32[4]", "rng_philox"},
		{"u64[2]", "u32[<=4]", "rng_three_fry"},
	} {
		m, err := hlotext.Parse(module([]string{c.state}, fmt.Sprintf("(%s, %s) rng-bit-generator(p0), algorithm=%s", c.state, c.bits, c.alg)), hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := lowerRandom(m.Entry.Root, 1); ok {
			t.Errorf("%v: lowered", c)
		}
	}
}

// compileRun compiles text and checks that opcode how is lowered to its
// kernel and nothing falls back to the evaluator.
func compileRun(t *testing.T, text, how string, threads int) *Executable {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Compile(m, Options{Threads: threads, Poison: true})
	if err != nil {
		t.Fatal(err)
	}
	if x.Engine != "compiled" || x.Lowering[how] == 0 || len(x.Fallbacks) > 0 {
		t.Fatalf("engine %s, lowering %v, fallbacks %v", x.Engine, x.Lowering, x.Fallbacks)
	}
	return x
}

// A dropout-like module end to end: two chained generators, the mask
// compared and selected.
func TestRngBitGeneratorCompiled(t *testing.T) {
	text := `HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  x = f32[64,33] parameter(1)
  r = (u64[2], u32[64,33]) rng-bit-generator(s), algorithm=rng_default
  b = u32[64,33] get-tuple-element(r), index=1
  s1 = u64[2] get-tuple-element(r), index=0
  r2 = (u64[2], u32[7]) rng-bit-generator(s1), algorithm=rng_three_fry
  b2 = u32[7] get-tuple-element(r2), index=1
  s2 = u64[2] get-tuple-element(r2), index=0
  h = u32[] constant(2147483648)
  hb = u32[64,33] broadcast(h), dimensions={}
  keep = pred[64,33] compare(b, hb), direction=LT
  z = f32[] constant(0)
  zb = f32[64,33] broadcast(z), dimensions={}
  y = f32[64,33] select(keep, x, zb)
  ROOT t = (f32[64,33], u32[7], u64[2]) tuple(y, b2, s2)
}`
	for _, threads := range []int{1, 2} {
		x := compileRun(t, text, "rng-bit-generator", threads)
		rng := rand.New(rand.NewPCG(1, 2))
		args := []*hlo.Literal{stateLiteral(t, "u64[2]", 42, 7), eval.RandomLiteral(hlo.ArrayShape(hlo.F32, 64, 33), rng)}
		got, err := x.Run(args, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := eval.Run(x.Module(), args...)
		if err != nil {
			t.Fatal(err)
		}
		checkSameBits(t, "dropout module", got, want)
	}
}

// rngKernel lowers `dist` rng of shape over constant operands a and b.
func rngKernel(t *testing.T, shape, dist, a, b string, threads int) (*hlo.Instruction, kernel) {
	t.Helper()
	text := fmt.Sprintf("HloModule m\nENTRY e {\n  a = %s constant(%s)\n  b = %s constant(%s)\n  ROOT r = %s rng(a, b), distribution=%s\n}\n",
		operandType(shape), a, operandType(shape), b, shape, dist)
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := m.Entry.Root
	k, ok := lowerRandom(in, threads)
	if !ok {
		t.Fatalf("%s: no kernel", in)
	}
	return in, k
}

// operandType is the scalar type of an array shape's text.
func operandType(shape string) string {
	for i, c := range shape {
		if c == '[' {
			return shape[:i] + "[]"
		}
	}
	return shape
}

func rngOps(in *hlo.Instruction) []*hlo.Literal {
	return []*hlo.Literal{in.Operands[0].Literal, in.Operands[1].Literal}
}

func runRng(t *testing.T, in *hlo.Instruction, k kernel, seed uint64) *hlo.Literal {
	t.Helper()
	r, err := k(&runState{Seed: seed}, poisoned(in.Shape), rngOps(in))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Uniform draws lie in [a, b) with the moments of the uniform
// distribution (mean (a+b)/2, variance (b-a)²/12, within 5 standard
// errors), for every type; normal draws have mean mu and variance
// sigma². Integer ranges count both ends; pred and 4-bit types too.
func TestRngKernelDistributions(t *testing.T) {
	const n = 20000
	for _, c := range []struct {
		typ, dist, a, b string
		lo, hi          float64 // the range, or mean and sigma for normal
		discrete        bool
	}{
		{"f32", "rng_uniform", "2", "3", 2, 3, false},
		{"f64", "rng_uniform", "-1", "1", -1, 1, false},
		{"bf16", "rng_uniform", "0", "1", 0, 1, false},
		{"f16", "rng_uniform", "-4", "4", -4, 4, false},
		{"f8e4m3fn", "rng_uniform", "0", "2", 0, 2, false},
		{"s32", "rng_uniform", "-5", "5", -5, 5, true},
		{"s64", "rng_uniform", "-1000000", "1000000", -1e6, 1e6, true},
		{"u8", "rng_uniform", "10", "250", 10, 250, true},
		{"s8", "rng_uniform", "-128", "127", -128, 127, true},
		{"s4", "rng_uniform", "-8", "7", -8, 7, true},
		{"u32", "rng_uniform", "0", "4294967295", 0, 4294967295, true},
		{"pred", "rng_uniform", "false", "true", 0, 1, true},
		{"f32", "rng_normal", "10", "2", 10, 2, false},
		{"f64", "rng_normal", "-3", "0.5", -3, 0.5, false},
		{"bf16", "rng_normal", "0", "1", 0, 1, false},
	} {
		shape := fmt.Sprintf("%s[%d]", c.typ, n)
		in, k := rngKernel(t, shape, c.dist, c.a, c.b, 2)
		x := runRng(t, in, k, 1)
		var ev eval.Evaluator
		y, err := ev.Instruction(in, rngOps(in))
		if err != nil {
			t.Fatal(err)
		}
		for i := range x.Len() {
			if v := x.GetFloat64(i); math.IsNaN(v) || (c.dist == "rng_uniform" && (v < c.lo || v >= c.hi)) {
				t.Fatalf("%s: element %d is %v", in, i, v)
			}
		}
		mean, vr := moments(x)
		evMean, evVar := moments(y)
		wantMean, wantVar := (c.lo+c.hi)/2, (c.hi-c.lo)*(c.hi-c.lo)/12
		if c.discrete { // uniform over the integers lo..hi-1
			m := c.hi - c.lo
			wantMean, wantVar = c.lo+(m-1)/2, (m*m-1)/12
		}
		if c.dist == "rng_normal" {
			wantMean, wantVar = c.lo, c.hi*c.hi
		}
		sd := math.Sqrt(wantVar)
		// Against the evaluator's sample: both means within 6 standard
		// errors of their difference, variances within 6%.
		if math.Abs(mean-evMean) > 6*sd*math.Sqrt(2.0/n) || math.Abs(vr-evVar) > 0.06*evVar {
			t.Errorf("%s: mean %v variance %v, the evaluator's %v and %v", in, mean, vr, evMean, evVar)
		}
		// Against the ideal distribution, except for f8, whose rounding
		// to 3 mantissa bits and redraws of values rounding to b shift
		// the moments (in the evaluator too).
		if c.typ != "f8e4m3fn" && (math.Abs(mean-wantMean) > 5*sd/math.Sqrt(n)+0.01*sd || math.Abs(vr-wantVar) > 0.05*wantVar) {
			t.Errorf("%s: mean %v variance %v, want %v and %v", in, mean, vr, wantMean, wantVar)
		}
	}
}

// moments are the sample mean and variance of x.
func moments(x *hlo.Literal) (mean, variance float64) {
	var sum, sq float64
	for i := range x.Len() {
		v := x.GetFloat64(i)
		sum += v
		sq += v * v
	}
	n := float64(x.Len())
	return sum / n, sq/n - (sum/n)*(sum/n)
}

// Empty and NaN ranges give a, as in the evaluator.
func TestRngKernelEmptyRange(t *testing.T) {
	for _, c := range []struct{ shape, a, b string }{
		{"f32[9]", "3", "3"}, {"f32[9]", "3", "1"}, {"f64[9]", "nan", "1"}, {"s32[9]", "4", "-2"}, {"u16[9]", "7", "7"},
	} {
		in, k := rngKernel(t, c.shape, "rng_uniform", c.a, c.b, 1)
		x := runRng(t, in, k, 0)
		a := in.Operands[0].Literal
		for i := range x.Len() {
			if got, want := x.GetFloat64(i), a.GetFloat64(0); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("%s: element %d is %v, want %v", in, i, got, want)
			}
		}
	}
}

// Executions of one kernel differ; fresh kernels replay them; the seed
// and the instruction's name select the stream; the thread count does
// not change it.
func TestRngKernelStream(t *testing.T) {
	in, k := rngKernel(t, "f32[5000]", "rng_uniform", "0", "1", 2)
	first, second := runRng(t, in, k, 7), runRng(t, in, k, 7)
	if first.Equal(second) {
		t.Error("two executions drew the same values")
	}
	_, k1 := rngKernel(t, "f32[5000]", "rng_uniform", "0", "1", 1)
	if again := runRng(t, in, k1, 7); !again.Equal(first) {
		t.Error("a fresh kernel on one thread did not replay the first execution")
	}
	_, k2 := rngKernel(t, "f32[5000]", "rng_uniform", "0", "1", 2)
	if runRng(t, in, k2, 8).Equal(first) {
		t.Error("another seed gave the same values")
	}
	in.Name = "other"
	k3, _ := lowerRandom(in, 2)
	if runRng(t, in, k3, 7).Equal(first) {
		t.Error("another instruction gave the same values")
	}
}

// rng in a while loop, end to end: each iteration draws anew.
func TestRngCompiled(t *testing.T) {
	text := `HloModule m
body {
  p = (s32[], f32[2,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[2,16] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  a = f32[] constant(0)
  b = f32[] constant(1)
  r = f32[16] rng(a, b), distribution=rng_uniform
  r2 = f32[1,16] reshape(r)
  z = s32[] constant(0)
  acc1 = f32[2,16] dynamic-update-slice(acc, r2, i, z)
  ROOT t = (s32[], f32[2,16]) tuple(i1, acc1)
}
cond {
  p = (s32[], f32[2,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  two = s32[] constant(2)
  ROOT c = pred[] compare(i, two), direction=LT
}
ENTRY e {
  z = s32[] constant(0)
  zf = f32[] constant(-1)
  acc = f32[2,16] broadcast(zf), dimensions={}
  init = (s32[], f32[2,16]) tuple(z, acc)
  w = (s32[], f32[2,16]) while(init), condition=cond, body=body
  ROOT out = f32[2,16] get-tuple-element(w), index=1
}`
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Compile(m, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Fallbacks) > 0 {
		t.Fatalf("fallbacks %v", x.Fallbacks)
	}
	got, err := x.Run(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := got.Data().([]float32)
	for _, f := range v {
		if f < 0 || f >= 1 {
			t.Fatalf("value %v outside [0, 1): %v", f, v)
		}
	}
	if fmt.Sprint(v[:16]) == fmt.Sprint(v[16:]) {
		t.Errorf("two iterations drew the same values: %v", v)
	}
}

// The CNN example's dropout mask: u32[256,32,32,32] of philox bits.
func BenchmarkRngBitGenerator(b *testing.B) {
	in, _ := bitGenKernel(b, "rng_default", "u64[2]", "u32[256,32,32,32]", 1)
	st := stateLiteral(b, "u64[2]", 42, 7)
	b.SetBytes(4 * 256 * 32 * 32 * 32)
	b.Run("evaluator", func(b *testing.B) {
		var ev eval.Evaluator
		for b.Loop() {
			if _, err := ev.Instruction(in, []*hlo.Literal{st}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("compiled-%dt", threads), func(b *testing.B) {
			k, _ := lowerRandom(in, threads)
			out := newTuple(in.Shape)
			for b.Loop() {
				if _, err := k(nil, out, []*hlo.Literal{st}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
