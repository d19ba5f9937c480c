package jit

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// roundF16Ref is x rounded to f16 precision, as an f32, by minifloat:
// what the tile programs' rounding computes for an f16 op's result.
func roundF16Ref(x float32) float32 {
	return minifloat.F16.ToFloat32(minifloat.F16.FromFloat32(x))
}

// f16Specials are f16 patterns where the conversions' edge cases live:
// ±0, the smallest and largest subnormals and normals, ±inf, and NaNs
// quiet and signaling, with payloads, of both signs.
var f16Specials = []uint16{0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400, 0x7bff, 0xfbff,
	0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfc01, 0x7d55, 0xfeaa, 0x7fff, 0xffff}

// f32Specials are f32 values whose f16 rounding is an edge case: ties
// between two f16 values (2049 = 2048 + half an ulp, to even: 2048;
// 2051: up to 2052), values just either side of a tie, overflow
// (65520 is the tie between 65504 and infinity), subnormal results and
// ties among them (2^-25, half the smallest subnormal: to 0), and NaNs
// with payloads the hardware would keep.
var f32Specials = []float32{2049, 2051, -2049, math.Nextafter32(2049, 0), math.Nextafter32(2049, 4096),
	65504, 65519.996, 65520, -65520, 1e6, 0x1p-25, -0x1p-25, math.Nextafter32(0x1p-25, 1), 0x1.8p-24, 0x1.4p-20,
	0x1p-14, 0x1.ffcp-15, 1e-30, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
	math.Float32frombits(0x7f800001), math.Float32frombits(0xffc01234), math.Float32frombits(0x7fbfe000),
	math.Float32frombits(0xff801fff)}

// f16Input makes n f16 inputs: random values around scale, the edge
// cases above about one in four.
func f16Input(rng *rand.Rand, n int, scale float32) []uint16 {
	h := make([]uint16, n)
	minifloat.F16.EncodeFloat32(h, testInput(rng, n, scale))
	for i := range h {
		switch rng.IntN(8) {
		case 0:
			h[i] = f16Specials[rng.IntN(len(f16Specials))]
		case 1:
			h[i] = minifloat.F16.FromFloat32(f32Specials[rng.IntN(len(f32Specials))])
		}
	}
	return h
}

// TestF16 reads an f16 input, rounds a product to f16 precision, takes
// its exponential and stores f16 and f32 outputs, against minifloat's
// conversions and the kernels, at lengths with tails. The f16 outputs
// are of a rounded value (stored as it is), of an unrounded one, and of
// the input itself (whose NaNs the store makes canonical).
func TestF16(t *testing.T) { bothWidths(t, testF16) }

func testF16(t *testing.T) {
	if !Available || !hasF16C {
		t.Skip("no f16 code generation here")
	}
	p := &Program{Inputs: 2, Values: []Value{
		{Op: Input, Arg: 0},             // 0 a (f16)
		{Op: Input, Arg: 1},             // 1 b
		{Op: Mul, Args: [3]int{0, 1}},   // 2
		{Op: RoundF16, Args: [3]int{2}}, // 3
		{Op: Exp, Args: [3]int{3}},      // 4
	}, Outputs: []int{4, 3, 3, 0}, InputTypes: []Type{F16, F32}, OutputTypes: []Type{F16, F32, F16, F16}}
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{1, 7, 8, 13, 64, 1001} {
		a := f16Input(rng, n, 3)
		b := testInput(rng, n, 3)
		for i := range b {
			if rng.IntN(6) == 0 {
				b[i] = f32Specials[rng.IntN(len(f32Specials))]
			}
		}
		round := make([]float32, n)
		for i := range round {
			round[i] = roundF16Ref(minifloat.F16.ToFloat32(a[i]) * b[i])
		}
		e := make([]float32, n)
		kernels.ExpF32(e, round)
		want := [][]uint16{make([]uint16, n), make([]uint16, n), make([]uint16, n)}
		for i := range n {
			want[0][i] = minifloat.F16.FromFloat32(e[i])
			want[1][i] = minifloat.F16.FromFloat32(round[i])
			want[2][i] = minifloat.F16.FromFloat32(minifloat.F16.ToFloat32(a[i]))
		}
		got := [][]uint16{make([]uint16, n), make([]uint16, n), make([]uint16, n)}
		gotRound := make([]float32, n)
		f.Run([]Array{{F16: got[0]}, {F32: gotRound}, {F16: got[1]}, {F16: got[2]}}, []Array{{F16: a}, {F32: b}}, nil, false)
		sameBits(t, "rounded", gotRound, round)
		for k, what := range []string{"exp", "rounded product", "input"} {
			for i := range n {
				if got[k][i] != want[k][i] {
					t.Fatalf("n=%d: f16 output of the %s, element %d: got %#04x, want %#04x (input %#04x)", n, what, i, got[k][i], want[k][i], a[i])
				}
			}
		}
	}
}

// TestF16Exhaustive checks RoundF16 (in 8-lane and, where the machine
// has AVX-512, 16-lane code), the f16 stores of rounded and unrounded
// values and the f16 loads against minifloat bit for bit: for every f16
// pattern widened, and for f32 patterns at every rounding boundary: the
// 13 bits a normal f16 drops at and either side of half its ulp, with
// every f16 mantissa and exponent and both signs, the cut points of the
// subnormals (where more bits go), and random patterns.
func TestF16Exhaustive(t *testing.T) { bothWidths(t, testF16Exhaustive) }

func testF16Exhaustive(t *testing.T) {
	if !Available || !hasF16C {
		t.Skip("no f16 code generation here")
	}
	xs := f16BoundaryInputs()
	n := len(xs)
	// All f32 arrays: the rounding is 16-lane where the code is.
	round, err := Compile(&Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: RoundF16, Args: [3]int{0}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n)
	round.Run([]Array{{F32: got}}, []Array{{F32: xs}}, nil, false)
	for i, x := range xs {
		if w := roundF16Ref(x); math.Float32bits(got[i]) != math.Float32bits(w) {
			t.Fatalf("round-f16 of %#08x: got %#08x, want %#08x", math.Float32bits(x), math.Float32bits(got[i]), math.Float32bits(w))
		}
	}
	store, err := Compile(&Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: RoundF16, Args: [3]int{0}}},
		Outputs: []int{1, 0}, OutputTypes: []Type{F16, F16}})
	if err != nil {
		t.Fatal(err)
	}
	rounded, stored := make([]uint16, n), make([]uint16, n)
	store.Run([]Array{{F16: rounded}, {F16: stored}}, []Array{{F32: xs}}, nil, false)
	for i, x := range xs {
		w := minifloat.F16.FromFloat32(x)
		if rounded[i] != w || stored[i] != w {
			t.Fatalf("f16 store of %#08x: got %#04x rounded first, %#04x not, want %#04x", math.Float32bits(x), rounded[i], stored[i], w)
		}
	}
	// Every f16 pattern read, and stored again.
	load, err := Compile(&Program{Inputs: 1, Values: []Value{{Op: Input}}, Outputs: []int{0, 0},
		InputTypes: []Type{F16}, OutputTypes: []Type{F32, F16}})
	if err != nil {
		t.Fatal(err)
	}
	hs := make([]uint16, 1<<16)
	for i := range hs {
		hs[i] = uint16(i)
	}
	wide, again := make([]float32, len(hs)), make([]uint16, len(hs))
	load.Run([]Array{{F32: wide}, {F16: again}}, []Array{{F16: hs}}, nil, false)
	for i, h := range hs {
		w := minifloat.F16.ToFloat32(h)
		if math.Float32bits(wide[i]) != math.Float32bits(w) || again[i] != minifloat.F16.FromFloat32(w) {
			t.Fatalf("f16 %#04x: read as %#08x and stored as %#04x, want %#08x and %#04x",
				h, math.Float32bits(wide[i]), again[i], math.Float32bits(w), minifloat.F16.FromFloat32(w))
		}
	}
}

// f16BoundaryInputs are TestF16Exhaustive's f32 inputs (about 2.7
// million).
func f16BoundaryInputs() []float32 {
	var bits []uint32
	// Every f16 value widened.
	for h := range 1 << 16 {
		bits = append(bits, math.Float32bits(minifloat.F16.ToFloat32(uint16(h))))
	}
	// Every f32 exponent (normal f16s, their overflow, and everything
	// below them), every f16 mantissa, the dropped 13 bits half an ulp
	// and either side of it.
	for sign := range uint32(2) {
		for e := range uint32(256) {
			for m := range uint32(1 << 10) {
				for _, low := range []uint32{0x0fff, 0x1000, 0x1001} {
					bits = append(bits, sign<<31|e<<23|m<<13|low)
				}
			}
		}
	}
	// Subnormal f16s: at f32 exponent e (2^(e-127) below 2^-14) the f16
	// spacing 2^-24 drops s = 126-e bits of the mantissa with its
	// implicit bit (s = 24 at 2^-25, where the implicit bit is the half).
	for sign := range uint32(2) {
		for e := uint32(101); e <= 113; e++ {
			s := 126 - e
			for k := range uint32(1 << 9) {
				hi := k << min(s, 23) & 0x7fffff
				for _, d := range []int32{-1, 0, 1} {
					low := uint32(int32(1)<<(s-1)+d) & (1<<min(s, 23) - 1)
					bits = append(bits, sign<<31|e<<23|hi|low)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(23, 24))
	for range 1 << 20 {
		bits = append(bits, rng.Uint32())
	}
	xs := make([]float32, len(bits))
	for i, b := range bits {
		xs[i] = math.Float32frombits(b)
	}
	return xs
}

// An f16 program's code needs F16C: Compile refuses it where the machine
// lacks it (the caller keeps its tile program), and other programs still
// compile.
func TestF16NeedsF16C(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	f16 := []*Program{
		{Inputs: 1, Values: []Value{{Op: Input}}, InputTypes: []Type{F16}},
		{Inputs: 1, Values: []Value{{Op: Input}}, OutputTypes: []Type{F16}},
		{Inputs: 1, Values: []Value{{Op: Input}, {Op: RoundF16, Args: [3]int{0}}}},
	}
	other := &Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: RoundBF16, Args: [3]int{0}}}}
	was := hasF16C
	hasF16C = false
	defer func() { hasF16C = was }()
	for i, p := range f16 {
		if _, err := Compile(p); !errors.Is(err, ErrUnsupported) {
			t.Errorf("program %d without F16C: %v, want ErrUnsupported", i, err)
		}
	}
	if _, err := Compile(other); err != nil {
		t.Errorf("a program without f16 arrays or rounding, without F16C: %v", err)
	}
}
