package jit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// specials are inputs where the ops' edge cases live.
var specials = []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -2, 1e-40, -1e-40, 1e-7, 88.7, 88.8, -103, -105, 9.5, -12,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0xffc01234), math.MaxFloat32, -math.MaxFloat32}

func testInput(rng *rand.Rand, n int, scale float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		if rng.IntN(5) == 0 {
			x[i] = specials[rng.IntN(len(specials))]
		} else {
			x[i] = (rng.Float32()*2 - 1) * scale
		}
	}
	return x
}

// masks are compare results, the only values selects read.
func testMask(rng *rand.Rand, n int) []float32 {
	m := make([]float32, n)
	for i := range m {
		m[i] = math.Float32frombits(-uint32(rng.IntN(2)))
	}
	return m
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d of %d: got %v (%#x), want %v (%#x)", what, i, len(want), got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestOpsMatchKernels runs each op alone, as a program, against the
// kernel the tile programs call, for lengths covering the tail and
// misaligned outputs, with ordinary and streaming stores.
func TestOpsMatchKernels(t *testing.T) { bothWidths(t, testOpsMatchKernels) }

func testOpsMatchKernels(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	type ref func(dst []float32, in [][]float32)
	un := func(f func(dst, a []float32)) ref { return func(d []float32, in [][]float32) { f(d, in[0]) } }
	bin := func(f func(dst, a, b []float32)) ref { return func(d []float32, in [][]float32) { f(d, in[0], in[1]) } }
	cmp := func(dir int) ref {
		return func(d []float32, in [][]float32) { kernels.CompareF32(dir, d, in[0], in[1]) }
	}
	cases := []struct {
		op   Op
		ref  ref
		mask bool // Args[0] is a mask
	}{
		{Add, bin(kernels.AddF32), false}, {Sub, bin(kernels.SubF32), false}, {Mul, bin(kernels.MulF32), false},
		{Div, bin(kernels.DivF32), false}, {Max, bin(kernels.MaximumF32), false}, {Min, bin(kernels.MinimumF32), false},
		{Neg, un(kernels.NegF32), false}, {Abs, un(kernels.AbsF32), false}, {Sqrt, un(kernels.SqrtF32), false},
		{Exp, un(kernels.ExpF32), false}, {Tanh, un(kernels.TanhF32), false}, {Logistic, un(kernels.LogisticF32), false},
		{Erf, un(kernels.ErfF32), false}, {RoundEven, un(roundEvenRef), false},
		{And, bin(kernels.AndF32), false}, {Or, bin(kernels.OrF32), false}, {Xor, bin(kernels.XorF32), false},
		{CmpEQ, cmp(0), false}, {CmpNE, cmp(1), false}, {CmpLT, cmp(2), false},
		{CmpLE, cmp(3), false}, {CmpGT, cmp(4), false}, {CmpGE, cmp(5), false},
		{Clamp, func(d []float32, in [][]float32) { kernels.ClampF32(d, in[0], in[1], in[2]) }, false},
		{Select, func(d []float32, in [][]float32) { kernels.SelectF32(d, in[0], in[1], in[2]) }, true},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		k := c.op.arity()
		p := &Program{Inputs: k}
		for i := range k {
			p.Values = append(p.Values, Value{Op: Input, Arg: i})
		}
		p.Values = append(p.Values, Value{Op: c.op, Args: [3]int{0, 1, 2}})
		f, err := Compile(p)
		if err != nil {
			t.Fatalf("%s: %v", c.op, err)
		}
		for _, n := range []int{1, 7, 8, 9, 31, 64, 100, 1001} {
			for _, off := range []int{0, 1, 3} {
				ins := make([][]float32, k)
				for i := range ins {
					ins[i] = testInput(rng, n, 20)
				}
				if c.mask {
					ins[0] = testMask(rng, n)
				}
				want := make([]float32, n)
				c.ref(want, ins)
				for _, stream := range []bool{false, true} {
					got := make([]float32, n+off)[off:]
					f.Run(f32s(got), f32s(ins...), nil, stream)
					sameBits(t, c.op.String(), got, want)
				}
			}
		}
	}
}

// TestChainMatchesKernels runs a chain10-like program with a splat, a
// constant operand in each position and an unused input against the
// kernels applied one at a time.
func TestChainMatchesKernels(t *testing.T) { bothWidths(t, testChainMatchesKernels) }

func testChainMatchesKernels(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	p := &Program{Inputs: 3, Scalars: 1, Values: []Value{
		{Op: Input, Arg: 0},              // 0 x
		{Op: Splat, Arg: 0},              // 1 c
		{Op: Mul, Args: [3]int{0, 1}},    // 2 a1 = x*c
		{Op: Add, Args: [3]int{2, 0}},    // 3 a2 = a1+x
		{Op: Tanh, Args: [3]int{3}},      // 4
		{Op: Mul, Args: [3]int{4, 4}},    // 5
		{Op: Sub, Args: [3]int{5, 1}},    // 6
		{Op: Exp, Args: [3]int{6}},       // 7
		{Op: Mul, Args: [3]int{7, 4}},    // 8
		{Op: Abs, Args: [3]int{8}},       // 9
		{Op: Sqrt, Args: [3]int{9}},      // 10
		{Op: Const, Value: 3},            // 11
		{Op: Sub, Args: [3]int{11, 10}},  // 12 const first
		{Op: Input, Arg: 1},              // 13 y
		{Op: Max, Args: [3]int{12, 13}},  // 14
		{Op: Logistic, Args: [3]int{14}}, // 15
		{Op: Input, Arg: 2},              // 16 unused
		{Op: Sub, Args: [3]int{15, 2}},   // 17 a1 read again late
	}}
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 4099
	x, y, z := testInput(rng, n, 4), testInput(rng, n, 4), testInput(rng, n, 4)
	c := float32(0.5)
	cs := make([]float32, n)
	three := make([]float32, n)
	for i := range cs {
		cs[i], three[i] = c, 3
	}
	v := make([][]float32, 18)
	for i := range v {
		v[i] = make([]float32, n)
	}
	kernels.MulF32(v[2], x, cs)
	kernels.AddF32(v[3], v[2], x)
	kernels.TanhF32(v[4], v[3])
	kernels.MulF32(v[5], v[4], v[4])
	kernels.SubF32(v[6], v[5], cs)
	kernels.ExpF32(v[7], v[6])
	kernels.MulF32(v[8], v[7], v[4])
	kernels.AbsF32(v[9], v[8])
	kernels.SqrtF32(v[10], v[9])
	kernels.SubF32(v[12], three, v[10])
	kernels.MaximumF32(v[14], v[12], y)
	kernels.LogisticF32(v[15], v[14])
	kernels.SubF32(v[17], v[15], v[2])
	for _, stream := range []bool{false, true} {
		got := make([]float32, n)
		f.Run(f32s(got), f32s(x, y, z), []float32{c}, stream)
		sameBits(t, "chain", got, v[17])
	}
}

// TestRefusals checks that programs the generator cannot take are
// refused with an error, not miscompiled.
func TestRefusals(t *testing.T) {
	wide := &Program{Inputs: 1}
	wide.Values = append(wide.Values, Value{Op: Input})
	const live = numYMM + maxSpill + 4 // more than the registers and spill slots hold
	for i := 1; i < live; i++ {
		wide.Values = append(wide.Values, Value{Op: Add, Args: [3]int{i - 1, 0}})
	}
	sum := len(wide.Values) - 1
	for i := 1; i < live; i++ {
		wide.Values = append(wide.Values, Value{Op: Add, Args: [3]int{sum, i}})
		sum = len(wide.Values) - 1
	}
	for name, p := range map[string]*Program{
		"empty":        {},
		"forward read": {Inputs: 1, Values: []Value{{Op: Add, Args: [3]int{0, 1}}, {Op: Input}}},
		"input range":  {Inputs: 1, Values: []Value{{Op: Input, Arg: 1}}},
		"scalar range": {Values: []Value{{Op: Splat, Arg: 0}}},
		"inputs":       {Inputs: MaxInputs + 1, Values: []Value{{Op: Input}}},
		"registers":    wide,
	} {
		if _, err := Compile(p); err == nil {
			t.Errorf("%s: compiled", name)
		} else if !Available && err == ErrUnsupported && name != "registers" {
			t.Errorf("%s: %v, want the program's error", name, err)
		}
	}
}

// TestSpills runs a program with more live values than registers (so
// the allocator spills, and the two-vector loop falls back to one) against
// the same arithmetic in Go.
func TestSpills(t *testing.T) { bothWidths(t, testSpills) }

func testSpills(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	const live = 40
	p := &Program{Inputs: 1, Values: []Value{{Op: Input}}}
	var kept []int
	for k := range live { // a_k = x·(k+1.5), all read at the end
		p.Values = append(p.Values, Value{Op: Const, Value: float32(k) + 1.5})
		p.Values = append(p.Values, Value{Op: Mul, Args: [3]int{0, len(p.Values) - 1}})
		kept = append(kept, len(p.Values)-1)
	}
	sum := kept[live-1]
	for k := live - 2; k >= 0; k-- {
		p.Values = append(p.Values, Value{Op: Sub, Args: [3]int{sum, kept[k]}})
		sum = len(p.Values) - 1
	}
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	const n = 77
	x := testInput(rng, n, 1)
	want := make([]float32, n)
	for e := range want {
		a := make([]float32, live)
		for k := range a {
			a[k] = x[e] * (float32(k) + 1.5)
		}
		s := a[live-1]
		for k := live - 2; k >= 0; k-- {
			s -= a[k]
		}
		want[e] = s
	}
	got := make([]float32, n)
	f.Run(f32s(got), f32s(x), nil, false)
	sameBits(t, "spills", got, want)
}

// TestOutputs runs an Adam-like update with three outputs (the moments
// and the weights, which read the new moments) against the same
// arithmetic through the kernels, with outputs at equal and at different
// alignments (streaming stores then fall back to ordinary ones).
func TestOutputs(t *testing.T) { bothWidths(t, testOutputs) }

func testOutputs(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	const b1, b2, lr = 0.9, 0.999, 1e-3
	p := &Program{Inputs: 4, Values: []Value{
		{Op: Input, Arg: 0},             // 0 g
		{Op: Input, Arg: 1},             // 1 m
		{Op: Input, Arg: 2},             // 2 v
		{Op: Input, Arg: 3},             // 3 w
		{Op: Const, Value: b1},          // 4
		{Op: Const, Value: 1 - b1},      // 5
		{Op: Mul, Args: [3]int{1, 4}},   // 6 b1·m
		{Op: Mul, Args: [3]int{0, 5}},   // 7 (1-b1)·g
		{Op: Add, Args: [3]int{6, 7}},   // 8 m'
		{Op: Const, Value: b2},          // 9
		{Op: Const, Value: 1 - b2},      // 10
		{Op: Mul, Args: [3]int{2, 9}},   // 11 b2·v
		{Op: Mul, Args: [3]int{0, 0}},   // 12 g²
		{Op: Mul, Args: [3]int{12, 10}}, // 13
		{Op: Add, Args: [3]int{11, 13}}, // 14 v'
		{Op: Sqrt, Args: [3]int{14}},    // 15
		{Op: Const, Value: 1e-8},        // 16
		{Op: Add, Args: [3]int{15, 16}}, // 17
		{Op: Div, Args: [3]int{8, 17}},  // 18
		{Op: Const, Value: lr},          // 19
		{Op: Mul, Args: [3]int{18, 19}}, // 20
		{Op: Sub, Args: [3]int{3, 20}},  // 21 w'
	}, Outputs: []int{8, 14, 21}}
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	const n = 1003
	g, m, v, w := testInput(rng, n, 1), testInput(rng, n, 1), testInput(rng, n, 1), testInput(rng, n, 1)
	splat := func(c float32) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = c
		}
		return s
	}
	t1, t2, m2, v2, w2, q := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	kernels.MulF32(t1, m, splat(b1))
	kernels.MulF32(t2, g, splat(1-b1))
	kernels.AddF32(m2, t1, t2)
	kernels.MulF32(t1, v, splat(b2))
	kernels.MulF32(t2, g, g)
	kernels.MulF32(t2, t2, splat(1-b2))
	kernels.AddF32(v2, t1, t2)
	kernels.SqrtF32(q, v2)
	kernels.AddF32(q, q, splat(1e-8))
	kernels.DivF32(q, m2, q)
	kernels.MulF32(q, q, splat(lr))
	kernels.SubF32(w2, w, q)
	for _, offs := range [][3]int{{0, 0, 0}, {1, 1, 1}, {0, 3, 5}} {
		for _, stream := range []bool{false, true} {
			outs := make([][]float32, 3)
			for k := range outs {
				outs[k] = make([]float32, n+offs[k])[offs[k]:]
			}
			f.Run(f32s(outs...), f32s(g, m, v, w), nil, stream)
			sameBits(t, "m'", outs[0], m2)
			sameBits(t, "v'", outs[1], v2)
			sameBits(t, "w'", outs[2], w2)
		}
	}
}

// f32s wraps f32 slices as arrays.
func f32s(xs ...[]float32) []Array {
	a := make([]Array, len(xs))
	for i, x := range xs {
		a[i].F32 = x
	}
	return a
}

// TestBF16 reads a bf16 input, rounds a product to bf16 precision and
// stores a bf16 output and an f32 one, against minifloat's conversions
// (and, for the rounding of NaNs, the tile programs' rule: quieted, the
// other bits kept), at lengths with tails.
func TestBF16(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	p := &Program{Inputs: 2, Values: []Value{
		{Op: Input, Arg: 0},              // 0 a (bf16)
		{Op: Input, Arg: 1},              // 1 b
		{Op: Mul, Args: [3]int{0, 1}},    // 2
		{Op: RoundBF16, Args: [3]int{2}}, // 3
		{Op: Exp, Args: [3]int{3}},       // 4
	}, Outputs: []int{4, 3}, InputTypes: []Type{BF16, F32}, OutputTypes: []Type{BF16, F32}}
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 8, 13, 64, 1001} {
		a := make([]uint16, n)
		minifloat.BF16.EncodeFloat32(a, testInput(rng, n, 3))
		b := testInput(rng, n, 3)
		af := make([]float32, n)
		minifloat.BF16.DecodeFloat32(af, a)
		round := make([]float32, n)
		for i := range round {
			m := af[i] * b[i]
			if m != m {
				round[i] = math.Float32frombits(math.Float32bits(m) | 0x400000)
				continue
			}
			var h [1]uint16
			minifloat.BF16.EncodeFloat32(h[:], []float32{m})
			minifloat.BF16.DecodeFloat32(round[i:i+1], h[:])
		}
		e := make([]float32, n)
		kernels.ExpF32(e, round)
		want := make([]uint16, n)
		minifloat.BF16.EncodeFloat32(want, e)
		got, gotRound := make([]uint16, n), make([]float32, n)
		f.Run([]Array{{BF16: got}, {F32: gotRound}}, []Array{{BF16: a}, {F32: b}}, nil, false)
		sameBits(t, "rounded", gotRound, round)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("n=%d: bf16 output %d: got %#04x, want %#04x (from %v)", n, i, got[i], want[i], e[i])
			}
		}
	}
}

// TestRows runs a softmax-like program over rows, with two row scalars
// (each row's maximum and sum) and an ordinary scalar, against the
// kernels applied row by row with the scalars splatted.
func TestRows(t *testing.T) { bothWidths(t, testRows) }

func testRows(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	// 48: whole 64-byte vectors a row; the others end in a partial vector.
	for _, rowLen := range []int{40, 48, 1, 3, 10, 13, 17, 197} {
		testRowsOf(t, rowLen)
	}
}

func testRowsOf(t *testing.T, rowLen int) {
	p := &Program{Inputs: 1, Scalars: 3, RowLen: rowLen, RowScalars: []int{0, 2}, Values: []Value{
		{Op: Input},                   // 0 x
		{Op: Splat, Arg: 0},           // 1 the row's maximum
		{Op: Splat, Arg: 1},           // 2 a per-call scalar
		{Op: Splat, Arg: 2},           // 3 the row's sum
		{Op: Sub, Args: [3]int{0, 1}}, // 4
		{Op: Exp, Args: [3]int{4}},    // 5
		{Op: Div, Args: [3]int{5, 3}}, // 6
		{Op: Mul, Args: [3]int{6, 2}}, // 7
	}, Outputs: []int{7, 5}}
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, rows := range []int{1, 2, 7} {
		n := rows * p.RowLen
		x := testInput(rng, n, 3)
		mx, sum := testInput(rng, rows, 3), testInput(rng, rows, 3)
		c := float32(1.5)
		want, wantE := make([]float32, n), make([]float32, n)
		for r := range rows {
			lo, hi := r*p.RowLen, (r+1)*p.RowLen
			sp := func(v float32) []float32 {
				s := make([]float32, p.RowLen)
				for i := range s {
					s[i] = v
				}
				return s
			}
			d := make([]float32, p.RowLen)
			kernels.SubF32(d, x[lo:hi], sp(mx[r]))
			kernels.ExpF32(wantE[lo:hi], d)
			kernels.DivF32(d, wantE[lo:hi], sp(sum[r]))
			kernels.MulF32(want[lo:hi], d, sp(c))
		}
		for _, stream := range []bool{false, true} {
			// Outputs at 64-byte boundaries: streaming stores need them
			// (and rows of whole vectors).
			got, gotE := aligned64(n+guard), aligned64(n+guard)
			for i := n; i < n+guard; i++ {
				got[i], gotE[i] = math.Float32frombits(guardBits), math.Float32frombits(guardBits)
			}
			f.RunRows(f32s(got[:n], gotE[:n]), f32s(x), []float32{0, c, 0}, [][]float32{mx, sum}, stream)
			for i := n; i < n+guard; i++ { // a partial vector's mask keeps to the row
				if math.Float32bits(got[i]) != guardBits || math.Float32bits(gotE[i]) != guardBits {
					t.Fatalf("rows of %d: written %d past the end", rowLen, i-n)
				}
			}
			got, gotE = got[:n], gotE[:n]
			sameBits(t, fmt.Sprintf("rows, stream %v", stream), got, want)
			sameBits(t, fmt.Sprintf("rows, exp, stream %v", stream), gotE, wantE)
			if stream && rowsStream(f) && !streamed(f) {
				t.Fatal("aligned outputs with stream set did not run the streaming loop")
			}
		}
	}
}

// aligned64 returns n zero floats starting at a 64-byte boundary.
func aligned64(n int) []float32 {
	buf := make([]float32, n+16)
	off := (64 - int(uintptr(unsafe.Pointer(&buf[0]))%64)) % 64 / 4
	return buf[off : off+n]
}

// TestShortcutMatchesKernels runs exp and logistic, alone and inside a
// chain, on inputs without special values (testInput's specials send
// nearly every block down the full path): blocks inside the shortcut's
// window (|x| ≲ 44), blocks with a lane just outside it, and blocks that
// mix. Programs with a shortcut generate it and the full block beside
// it, and must give the kernels' bits either way.
func TestShortcutMatchesKernels(t *testing.T) { bothWidths(t, testShortcutMatchesKernels) }

func testShortcutMatchesKernels(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		op  Op
		ref func(dst, x []float32)
	}{{Exp, kernels.ExpF32}, {Logistic, kernels.LogisticF32}} {
		// op(x) alone, and op(x)·x + op(x), whose second use of op(x)
		// and of x outlive the window test.
		alone := &Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: c.op, Args: [3]int{0}}}}
		chain := &Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: c.op, Args: [3]int{0}},
			{Op: Mul, Args: [3]int{1, 0}}, {Op: Add, Args: [3]int{2, 1}}}}
		for _, p := range []*Program{alone, chain} {
			f, err := Compile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, scale := range []float32{1, 10, 40, 44, 45, 60} {
				for _, n := range []int{8, 24, 1001, 4096} {
					x := make([]float32, n)
					for i := range x {
						x[i] = (rng.Float32()*2 - 1) * scale
					}
					want := make([]float32, n)
					c.ref(want, x)
					if p == chain {
						for i := range want {
							want[i] = float32(want[i]*x[i]) + want[i]
						}
					}
					got := make([]float32, n)
					f.Run(f32s(got), f32s(x), nil, false)
					sameBits(t, c.op.String(), got, want)
				}
			}
		}
	}
}

// A Runner gives, span by span, what Run gives with the same scalars:
// spans of every length around the vectors' (tails through the staging
// vectors included), at both widths.
func TestRunnerMatchesRun(t *testing.T) { bothWidths(t, testRunnerMatchesRun) }

func testRunnerMatchesRun(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	p := &Program{Inputs: 2, Scalars: 2, Values: []Value{
		{Op: Input}, {Op: Input, Arg: 1}, {Op: Splat}, {Op: Splat, Arg: 1},
		{Op: Add, Args: [3]int{0, 2}}, {Op: Max, Args: [3]int{4, 3}}, {Op: Exp, Args: [3]int{1}},
		{Op: Mul, Args: [3]int{5, 6}},
	}}
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(31, 32))
	scalars := []float32{0.25, -0.5}
	r := f.Runner(scalars)
	defer r.Close()
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 40, 100, 257} {
		x, y := testInput(rng, n, 3), testInput(rng, n, 3)
		got, want := make([]float32, n), make([]float32, n)
		r.Run(f32s(got), f32s(x, y))
		f.Run(f32s(want), f32s(x, y), scalars, false)
		sameBits(t, fmt.Sprintf("runner, n=%d", n), got, want)
	}
}

// TestRunStrided runs strided programs over blocks of rows (a GEMM
// epilogue's: C in place with its row stride, a bias read again for
// every row, a bf16 operand) and checks each row against the flat
// program run on that row alone, bit for bit, and that the gaps between
// an output's rows are left alone: at row lengths around the vector
// sizes, so that rows end in whole vectors, an 8-lane half and a tail.
func TestRunStrided(t *testing.T) { bothWidths(t, testRunStrided) }

func testRunStrided(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	progs := map[string]*Program{
		// relu(c + bias) · s, into c
		"bias-relu": {Inputs: 2, Scalars: 1, Values: []Value{
			{Op: Input}, {Op: Input, Arg: 1}, {Op: Add, Args: [3]int{0, 1}}, {Op: Const},
			{Op: Max, Args: [3]int{2, 3}}, {Op: Splat}, {Op: Mul, Args: [3]int{4, 5}}}},
		// tanh(c) + e^bias with a bf16 bias, and a bf16 second output
		"math-bf16": {Inputs: 2, Values: []Value{
			{Op: Input}, {Op: Input, Arg: 1}, {Op: Tanh, Args: [3]int{0}}, {Op: Exp, Args: [3]int{1}},
			{Op: Add, Args: [3]int{2, 3}}, {Op: RoundBF16, Args: [3]int{4}}},
			Outputs: []int{4, 5}, InputTypes: []Type{F32, BF16}, OutputTypes: []Type{F32, BF16}},
	}
	rng := rand.New(rand.NewPCG(41, 42))
	scalars := []float32{1.5}
	for name, p := range progs {
		flat, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		sp := *p
		sp.Strided = true
		f, err := Compile(&sp)
		if err != nil {
			t.Fatal(err)
		}
		outs, bf := len(p.outputs()), len(p.InputTypes) > 0
		for _, rows := range []int{1, 3, 7} {
			for _, cols := range []int{1, 7, 8, 9, 16, 24, 31, 40, 100} {
				for _, biasStride := range []int{0, cols + 5} {
					ld := cols + 3 + rng.IntN(20) // C's row stride
					c := testInput(rng, rows*ld, 3)
					bias := testInput(rng, max(1, (rows-1)*biasStride+cols), 3)
					ins := f32s(append([]float32(nil), c...), bias)
					if bf {
						ins[1] = Array{BF16: make([]uint16, len(bias))}
						minifloat.BF16.EncodeFloat32(ins[1].BF16, bias)
					}
					got := []Array{{F32: append([]float32(nil), c...)}, {BF16: make([]uint16, rows*ld)}}[:outs]
					want := []Array{{F32: append([]float32(nil), c...)}, {BF16: make([]uint16, rows*ld)}}[:outs]
					strides := []int{ld, ld}[:outs]
					r := f.Runner(scalars)
					r.RunStrided(got, ins, rows, cols, strides, []int{ld, biasStride})
					r.Close()
					for i := range rows {
						rowOuts := make([]Array, outs)
						for k := range rowOuts {
							rowOuts[k] = want[k].Slice(i*ld, i*ld+cols)
						}
						flat.Run(rowOuts, []Array{ins[0].Slice(i*ld, i*ld+cols), ins[1].Slice(i*biasStride, i*biasStride+cols)}, scalars, false)
					}
					what := fmt.Sprintf("%s, %d rows of %d, C stride %d, bias stride %d", name, rows, cols, ld, biasStride)
					sameBits(t, what, got[0].F32, want[0].F32) // the gaps too: want keeps c there
					if outs > 1 {
						for i := range got[1].BF16 {
							if got[1].BF16[i] != want[1].BF16[i] {
								t.Fatalf("%s: bf16 output element %d: got %#x, want %#x", what, i, got[1].BF16[i], want[1].BF16[i])
							}
						}
					}
				}
			}
		}
	}
}

// guard elements past each output's end must keep guardBits.
const (
	guard     = 16
	guardBits = 0x7fc0dead
)

// Inputs read at displacements (Value.Off) share one array: out[i] is
// a[i+3]·a[i+40] + a[i], whole vectors and staged tails alike; programs
// with rows, strides or bf16 inputs refuse them.
func TestDisplacedInputs(t *testing.T) { bothWidths(t, testDisplacedInputs) }

func testDisplacedInputs(t *testing.T) {
	p := &Program{Inputs: 1, Values: []Value{
		{Op: Input, Off: 3}, {Op: Input, Off: 40}, {Op: Mul, Args: [3]int{0, 1}},
		{Op: Input}, {Op: Add, Args: [3]int{2, 3}},
	}}
	for _, bad := range []Program{
		{Inputs: 1, Values: p.Values, RowLen: 16},
		{Inputs: 1, Values: p.Values, Strided: true},
		{Inputs: 1, Values: p.Values, InputTypes: []Type{BF16}},
		{Inputs: 1, Values: []Value{{Op: Input, Off: -1}}},
		{Inputs: 1, Values: []Value{{Op: Const, Off: 1}}},
	} {
		if err := bad.validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	if !Available {
		t.Skip("no code generation here")
	}
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 5, 8, 16, 29, 64, 1003} {
		a := testInput(rng, n+40, 3)
		want := make([]float32, n)
		for i := range want {
			want[i] = float32(a[i+3]*a[i+40]) + a[i] // rounded product: no FMA
		}
		got := make([]float32, n)
		f.Run([]Array{{F32: got}}, []Array{{F32: a}}, nil, false)
		sameBits(t, fmt.Sprintf("n=%d", n), got, want)
	}
}

// roundEvenRef is round-nearest-even as the evaluator computes it.
func roundEvenRef(dst, a []float32) {
	for i, x := range a[:len(dst)] {
		dst[i] = float32(math.RoundToEven(float64(x)))
	}
}

// TestRoundEven rounds ties both ways, the edges of the integers f32
// holds exactly, signed zeros, subnormals, infinities and NaN as the
// evaluator does, at both widths.
func TestRoundEven(t *testing.T) { bothWidths(t, testRoundEven) }

func testRoundEven(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	var x []float32
	for k := -6; k <= 6; k++ {
		x = append(x, float32(k)+0.5, float32(k)+0.49999997, float32(k)-0.25)
	}
	for _, v := range []float32{0, 1e-40, 0.5, 1 << 22, 1<<22 + 0.5, 1<<23 - 0.5, 1 << 23, 1<<23 + 1, 1 << 24, 3e38, float32(math.Inf(1)), float32(math.NaN())} {
		x = append(x, v, -v)
	}
	p := &Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: RoundEven}}}
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	got, want := make([]float32, len(x)), make([]float32, len(x))
	f.Run(f32s(got), f32s(x), nil, false)
	roundEvenRef(want, x)
	sameBits(t, "round-even", got, want)
}

// saturateRef is the evaluator's float-to-integer conversion into
// [lo, hi]: toward zero, saturating, NaN to 0.
func saturateRef(x float32, lo, hi float64) int64 {
	v := float64(x)
	switch {
	case v != v:
		return 0
	case v >= hi:
		return int64(hi)
	case v <= lo:
		return int64(lo)
	}
	return int64(v)
}

// TestIntArrays reads s32 inputs (converted to the nearest f32, ties to
// even, beyond 2^24 too) and stores u8 and s8 outputs (toward zero,
// saturating, NaN to 0) as the evaluator converts, for lengths covering
// the staged tail, with ordinary and streaming stores; at both widths
// (an s32 input keeps wide code, the 8-bit outputs take 8 lanes).
func TestIntArrays(t *testing.T) { bothWidths(t, testIntArrays) }

func testIntArrays(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	p := &Program{Inputs: 2, Scalars: 1, Values: []Value{
		{Op: Input, Arg: 0}, {Op: Input, Arg: 1}, {Op: Splat}, {Op: Mul, Args: [3]int{0, 2}}, {Op: Add, Args: [3]int{3, 1}},
		{Op: Exp, Args: [3]int{1}}},
		InputTypes: []Type{I32, F32}, OutputTypes: []Type{U8, S8, F32}, Outputs: []int{4, 4, 5}}
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -0.5, 0.99, 127.5, 128, 255.9, 256, -128.9, -129}
	for _, n := range []int{1, 7, 8, 9, 31, 100, 1001} {
		a, b := make([]int32, n), make([]float32, n)
		for i := range a {
			a[i] = int32(rng.Uint32()) >> rng.IntN(32)
			if rng.IntN(3) == 0 {
				b[i] = specials[rng.IntN(len(specials))]
			} else {
				b[i] = (rng.Float32()*2 - 1) * 300
			}
		}
		scale := [1]float32{1.0 / (1 << 24)}
		if n%2 == 1 { // the input's conversion alone
			scale[0], b = 1, make([]float32, n)
		}
		for _, stream := range []bool{false, true} {
			u, s, e := make([]uint8, n), make([]int8, n), make([]float32, n)
			f.Run([]Array{{U8: u}, {S8: s}, {F32: e}}, []Array{{I32: a}, {F32: b}}, scale[:], stream)
			for i := range n {
				v := float32(a[i])*scale[0] + b[i]
				if int64(u[i]) != saturateRef(v, 0, 255) || int64(s[i]) != saturateRef(v, -128, 127) {
					t.Fatalf("n %d, element %d: %v as u8 %d, s8 %d; want %d, %d", n, i, v, u[i], s[i], saturateRef(v, 0, 255), saturateRef(v, -128, 127))
				}
			}
		}
	}
}

// TestExtremeOfNumbers: a maximum, minimum or clamp against constants
// that are not NaN (one MAXPS or MINPS a bound) gives the kernels' bits:
// NaN, signed zeros against a zero bound, infinities, values beyond
// either bound.
func TestExtremeOfNumbers(t *testing.T) { bothWidths(t, testExtremeOfNumbers) }

func testExtremeOfNumbers(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	negZero := float32(math.Copysign(0, -1))
	x := []float32{0, negZero, 1, -1, 255, 256, -129, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0.5, -0.5, 3e38}
	for len(x) < 37 {
		x = append(x, x[len(x)%13]*1.5)
	}
	splat := func(c float32) []float32 {
		s := make([]float32, len(x))
		for i := range s {
			s[i] = c
		}
		return s
	}
	for _, c := range []struct {
		op     Op
		lo, hi float32
		ref    func(dst []float32)
	}{
		{Max, 0, 0, func(d []float32) { kernels.MaximumF32(d, x, splat(0)) }},
		{Max, negZero, 0, func(d []float32) { kernels.MaximumF32(d, x, splat(negZero)) }},
		{Min, 0, 0, func(d []float32) { kernels.MinimumF32(d, x, splat(0)) }},
		{Clamp, 0, 255, func(d []float32) { kernels.ClampF32(d, splat(0), x, splat(255)) }},
		{Clamp, -128, 127, func(d []float32) { kernels.ClampF32(d, splat(-128), x, splat(127)) }},
	} {
		p := &Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: Const, Value: c.lo}, {Op: Const, Value: c.hi}}}
		if c.op == Clamp {
			p.Values = append(p.Values, Value{Op: Clamp, Args: [3]int{1, 0, 2}})
		} else {
			p.Values = append(p.Values, Value{Op: c.op, Args: [3]int{0, 1}})
		}
		f, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, want := make([]float32, len(x)), make([]float32, len(x))
		f.Run(f32s(got), f32s(x), nil, false)
		c.ref(want)
		sameBits(t, fmt.Sprintf("%s against %v, %v", c.op, c.lo, c.hi), got, want)
	}
}
