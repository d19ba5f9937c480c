package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/axle-ml/axle/hlo/minifloat"
)

// randBF16 returns n bf16 bit patterns: most of magnitude 2⁻⁸ to 2⁸,
// some zeros, subnormals (read as zero by VDPBF16PS) and tiny normals,
// whose products with the rest land near f32's subnormal range.
func randBF16(n int, rng *rand.Rand) []uint16 {
	s := make([]uint16, n)
	for i := range s {
		sign := uint16(rng.IntN(2)) << 15
		mant := uint16(rng.IntN(128))
		var exp uint16
		switch r := rng.IntN(20); {
		case r == 0: // zero
			mant = 0
		case r == 1: // subnormal (or zero)
		case r == 2: // tiny normal
			exp = 1 + uint16(rng.IntN(20))
		default:
			exp = 127 - 8 + uint16(rng.IntN(17))
		}
		s[i] = sign | exp<<7 | mant
	}
	return s
}

// bf16Layouts are the views the tests lay a matrix out in: row-major
// with padded rows, transposed with padded columns, and both strides
// other than one.
var bf16Layouts = []string{"rows", "transposed", "strided"}

// narrowView lays out the rows×cols row-major values v as a bf16 view
// of the named layout, its unused elements NaN so a read of one shows.
func narrowView(v []uint16, rows, cols int, layout string) Narrow {
	var row, col int
	switch layout {
	case "rows":
		row, col = cols+3, 1
	case "transposed":
		row, col = 1, rows+2
	case "strided":
		row, col = 2*cols+1, 2
	}
	d := make([]uint16, (rows-1)*row+(cols-1)*col+1)
	for i := range d {
		d[i] = 0x7FC1
	}
	for i := range rows {
		for j := range cols {
			d[i*row+j*col] = v[i*cols+j]
		}
	}
	return Narrow{Data: d, Row: row, Col: col, Format: minifloat.BF16}
}

// bf16Reference is c0 + A·B in float64 from the row-major values, and
// for each element the bound GemmNarrowF32 documents (plus the float64
// sum's own error).
func bf16Reference(m, n, k int, a, b []uint16, c0 []float32) (want, tol []float64) {
	decode := func(v []uint16) ([]float64, []bool) {
		f, sub := make([]float64, len(v)), make([]bool, len(v))
		for i, x := range v {
			f[i], sub[i] = minifloat.BF16.ToFloat64(x), x&0x7F80 == 0 && x&0x7F != 0
		}
		return f, sub
	}
	av, asub := decode(a)
	bv, bsub := decode(b)
	want, tol = make([]float64, m*n), make([]float64, m*n)
	for i := range m {
		for j := range n {
			s, abs, dropped := float64(c0[i*n+j]), math.Abs(float64(c0[i*n+j])), 0.0
			for p := range k {
				prod := av[i*k+p] * bv[p*n+j]
				s += prod
				abs += math.Abs(prod)
				if asub[i*k+p] || bsub[p*n+j] {
					dropped += math.Abs(prod)
				}
			}
			want[i*n+j] = s
			tol[i*n+j] = float64(k)*0x1p-23*abs + float64(k)*0x1p-125 + dropped + float64(k+1)*0x1p-52*abs
		}
	}
	return want, tol
}

// bf16Case is one product for checkBF16: sizes, layouts, mode.
type bf16Case struct {
	m, n, k          int
	la, lb           string
	accumulate       bool
	threads, cPadded int
}

// checkBF16 runs GemmNarrowF32 on random bf16 operands laid out as c
// says, C with padded rows, and checks every element against the float64
// reference within the documented bound and the padding untouched.
func checkBF16(t *testing.T, c bf16Case, rng *rand.Rand) {
	t.Helper()
	av, bv := randBF16(c.m*c.k, rng), randBF16(c.k*c.n, rng)
	ldc := c.n + c.cPadded
	got := make([]float32, c.m*ldc)
	c0 := make([]float32, c.m*c.n)
	for i := range got {
		got[i] = float32(rng.NormFloat64())
	}
	for i := range c.m {
		for j := range c.n {
			if c.accumulate {
				c0[i*c.n+j] = got[i*ldc+j]
			}
		}
	}
	pad := append([]float32(nil), got...)
	GemmNarrowF32(c.m, c.n, c.k, narrowView(av, c.m, c.k, c.la), narrowView(bv, c.k, c.n, c.lb), got, ldc, c.accumulate, c.threads)
	want, tol := bf16Reference(c.m, c.n, c.k, av, bv, c0)
	for i := range c.m {
		for j := range ldc {
			g := got[i*ldc+j]
			if j >= c.n {
				if math.Float32bits(g) != math.Float32bits(pad[i*ldc+j]) {
					t.Fatalf("%+v: padding (%d, %d) = %v, was %v", c, i, j, g, pad[i*ldc+j])
				}
				continue
			}
			if w, e := want[i*c.n+j], tol[i*c.n+j]; !(math.Abs(float64(g)-w) <= e) {
				t.Fatalf("%+v: C(%d, %d) = %v, want %v ± %g", c, i, j, g, w, e)
			}
		}
	}
}

// bf16Paths runs f on each path GemmNarrowF32 has for two bf16
// operands: widening to f32, and VDPBF16PS (forced) on the assembly
// where the CPU has it and on the Go twin.
func bf16Paths(t *testing.T, f func(t *testing.T)) {
	defer func(p, u bool) { preferBF16DP, useBF16 = p, u }(preferBF16DP, useBF16)
	hasBF16 := useBF16
	preferBF16DP = false
	t.Run("widen", f)
	preferBF16DP = true
	if hasBF16 {
		t.Run("dp-asm", f)
	}
	useBF16 = false
	t.Run("dp-go", f)
}

// Every small size (every edge of the kernels' tiles), in every layout
// in turn, accumulating and not, within the documented bound.
func TestGemmBF16Small(t *testing.T) {
	bf16Paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 16))
		for m := 1; m <= 17; m++ {
			for n := 1; n <= 17; n++ {
				for k := 1; k <= 17; k++ {
					for ai, acc := range []bool{false, true} {
						checkBF16(t, bf16Case{m: m, n: n, k: k,
							la: bf16Layouts[(m+k+ai)%3], lb: bf16Layouts[(n+2*k)%3],
							accumulate: acc, threads: 1 + (m+n+k)%2, cPadded: (m + ai) % 2}, rng)
					}
				}
			}
		}
	})
}

// Sizes that cross the blocking: the 12×32 tiles' edges, a K block (2048
// values of k on the VDPBF16PS path, bf16KC pairs; 256 widening), an odd k at a
// block's end, an MC block of rows, two NC column blocks, and products
// big enough to split across two threads; each in three pairs of
// layouts, on one and two threads.
func TestGemmBF16Blocks(t *testing.T) {
	sizes := [][3]int{{12, 32, 2}, {13, 33, 3}, {24, 64, 511}, {25, 47, 513}, {121, 97, 1025}, {130, 100, 700}, {7, 3100, 9}, {14, 35, 2049}, {20, 33, 4100}}
	bf16Paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 17))
		for si, s := range sizes {
			for l := range bf16Layouts {
				for _, threads := range []int{1, 2} {
					checkBF16(t, bf16Case{m: s[0], n: s[1], k: s[2], la: bf16Layouts[l], lb: bf16Layouts[(l+si)%3],
						accumulate: (l+si+threads)%2 == 0, threads: threads, cPadded: l % 2}, rng)
				}
			}
		}
	})
}

// An empty shared dimension sets C to zero, or leaves it when
// accumulating; an empty C is not touched.
func TestGemmBF16Empty(t *testing.T) {
	bf16Paths(t, func(t *testing.T) {
		v := Narrow{Data: []uint16{0x3F80}, Row: 1, Col: 1, Format: minifloat.BF16}
		for _, acc := range []bool{false, true} {
			c := []float32{5, 6, 7, 8}
			GemmNarrowF32(2, 2, 0, v, v, c, 2, acc, 1)
			want := []float32{0, 0, 0, 0}
			if acc {
				want = []float32{5, 6, 7, 8}
			}
			if !slices.Equal(c, want) {
				t.Errorf("accumulate %v: C = %v, want %v", acc, c, want)
			}
			GemmNarrowF32(0, 2, 1, v, v, c[:0], 2, acc, 1)
		}
	})
}

// dotBF16Cases tell VDPBF16PS's rules apart, their expected values worked
// out by hand: the high products go first, each product's sum is rounded
// by itself, subnormal inputs read as zero, and a sum is flushed to zero
// (of its sign) where, rounded to 24 bits, it is still below 2⁻¹²⁶.
var dotBF16Cases = func() []dotBF16Case {
	bf := func(v float64) uint32 { return uint32(minifloat.BF16.FromFloat64(v)) }
	pair := func(hi, lo float64) uint32 { return bf(hi)<<16 | bf(lo) }
	return []dotBF16Case{
		// 1 + 2⁻²⁴ ties to 1, twice; one sum of both products would
		// give 1 + 2⁻²³.
		{"a rounding a product", 1, pair(0x1p-12, 0x1p-12), pair(0x1p-12, 0x1p-12), 1},
		// 1 + 2²⁴ ties to 2²⁴, less 2²⁴ is 0; low first, 1 - 2²⁴ is
		// exact and the sum 1.
		{"high product first", 1, pair(0x1p24, -0x1p24), pair(1, 1), 0},
		{"subnormal input", 0, pair(0x1p-130, 1), pair(0x1p100, 0), 0},
		{"flush below 2^-126 - 2^-151", 0, pair(0x1p-63, 1.5*0x1p-75), pair(0x1p-63, -0x1p-76), 0},
		{"keep at the tie", 0, pair(0x1p-63, 0x1p-75), pair(0x1p-63, -0x1p-76), 0x1p-126},
		{"keep above it", 0, pair(0x1p-63, 0x1p-76), pair(0x1p-63, -0x1p-76), 0x1p-126},
		{"flush keeps the sign", 0, pair(-0x1p-63, 1.5*0x1p-75), pair(0x1p-63, 0x1p-76), float32(math.Copysign(0, -1))},
	}
}()

type dotBF16Case struct {
	name string
	acc  float32
	x, y uint32
	want float32
}

func TestDotBF16Rules(t *testing.T) {
	for _, c := range dotBF16Cases {
		if got := dotBF16(c.acc, c.x, c.y); math.Float32bits(got) != math.Float32bits(c.want) {
			t.Errorf("%s: dotBF16 = %v, want %v", c.name, got, c.want)
		}
	}
}

// BenchmarkGemmBF16 times bf16×bf16→f32 products of row-major operands
// (values uniform in [-1, 1)) widening to f32 and on VDPBF16PS, in
// GFLOP/s (2·m·n·k a product). Normal values only: randBF16's subnormal
// inputs and products cost the widening path's FMAs a microcode assist
// each on Intel (1.2–2.4 GFLOP/s at 2048³ on the development host), which
// VDPBF16PS, flushing them, never takes.
func BenchmarkGemmBF16(b *testing.B) {
	defer func(p bool) { preferBF16DP = p }(preferBF16DP)
	for _, sz := range []int{512, 2048} {
		for _, threads := range []int{1, 2} {
			for _, path := range []string{"widen", "dp"} {
				b.Run(fmt.Sprintf("n=%d/threads=%d/%s", sz, threads, path), func(b *testing.B) {
					if path == "dp" && !useBF16 {
						b.Skip("no AVX512_BF16 (the Go twin is for tests)")
					}
					preferBF16DP = path == "dp"
					rng := rand.New(rand.NewPCG(1, 1))
					a := Narrow{Data: uniformBF16(sz*sz, rng), Row: sz, Col: 1, Format: minifloat.BF16}
					bm := Narrow{Data: uniformBF16(sz*sz, rng), Row: sz, Col: 1, Format: minifloat.BF16}
					c := make([]float32, sz*sz)
					for b.Loop() {
						GemmNarrowF32(sz, sz, sz, a, bm, c, sz, false, threads)
					}
					b.ReportMetric(2*float64(sz*sz*sz)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// uniformBF16 is n bf16 values uniform in [-1, 1).
func uniformBF16(n int, rng *rand.Rand) []uint16 {
	s := make([]uint16, n)
	for i := range s {
		s[i] = minifloat.BF16.FromFloat64(rng.Float64()*2 - 1)
	}
	return s
}

// A B packed ahead (PackBF16) gives GemmNarrowF32's VDPBF16PS bits
// exactly, on the assembly and on the Go twin: sizes across the tiles'
// edges, a K slice, an odd k, an NC column block; B in both layouts;
// one and two threads. A packed B of another shape, and an A or C too
// short for the product, are errors.
func TestGemmBF16Packed(t *testing.T) {
	defer func(p, u bool) { preferBF16DP, useBF16 = p, u }(preferBF16DP, useBF16)
	preferBF16DP = true
	rng := rand.New(rand.NewPCG(21, 22))
	for _, asm := range []bool{true, false} {
		useBF16 = asm && useBF16
		for _, s := range [][3]int{{1, 1, 1}, {13, 33, 7}, {24, 64, 511}, {30, 40, 2049}, {7, 3100, 9}, {50, 70, 300}} {
			m, n, k := s[0], s[1], s[2]
			a := Narrow{Data: uniformBF16(m*k, rng), Row: k, Col: 1, Format: minifloat.BF16}
			for _, transposed := range []bool{false, true} {
				b := Narrow{Data: uniformBF16(k*n, rng), Row: n, Col: 1, Format: minifloat.BF16}
				if transposed {
					b.Row, b.Col = 1, k
				}
				packed, err := PackBF16(k, n, b)
				if err != nil {
					t.Fatal(err)
				}
				for threads := 1; threads <= 2; threads++ {
					want, got := make([]float32, m*n), make([]float32, m*n)
					GemmNarrowF32(m, n, k, a, b, want, n, false, threads)
					if err := GemmBF16Packed(m, n, k, a, packed, got, n, threads); err != nil {
						t.Fatal(err)
					}
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("asm %v, %d×%d×%d, B transposed %v, %d threads: element %d is %g, want %g", asm, m, n, k, transposed, threads, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
	b := Narrow{Data: make([]uint16, 12), Row: 4, Col: 1, Format: minifloat.BF16}
	packed, err := PackBF16(3, 4, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := GemmBF16Packed(2, 4, 4, b, packed, make([]float32, 8), 4, 1); err == nil {
		t.Error("a packed B of another shape: no error")
	}
	if _, err := PackBF16(3, 5, b); err == nil {
		t.Error("a B too short for its shape: no error")
	}
	a := Narrow{Data: make([]uint16, 6), Row: 3, Col: 1, Format: minifloat.BF16}
	if err := GemmBF16Packed(2, 4, 3, a, packed, make([]float32, 7), 4, 1); err == nil {
		t.Error("a C too short: no error")
	}
	if err := GemmBF16Packed(3, 4, 3, a, packed, make([]float32, 12), 4, 1); err == nil {
		t.Error("an A too short: no error")
	}
	if err := GemmBF16Packed(2, 4, 3, a, packed, make([]float32, 8), 4, 1); err != nil {
		t.Errorf("a product that fits: %v", err)
	}
}

// BenchmarkGemmBF16Packed is a transformer layer's product with bf16
// weights, 128×768·768×3072, B packed per call (GemmNarrowF32 on the
// VDPBF16PS path) and packed ahead (GemmBF16Packed).
func BenchmarkGemmBF16Packed(b *testing.B) {
	if !useBF16 {
		b.Skip("no AVX512_BF16")
	}
	defer func(p bool) { preferBF16DP = p }(preferBF16DP)
	preferBF16DP = true
	const m, n, k = 128, 3072, 768
	rng := rand.New(rand.NewPCG(1, 1))
	a := Narrow{Data: uniformBF16(m*k, rng), Row: k, Col: 1, Format: minifloat.BF16}
	w := Narrow{Data: uniformBF16(k*n, rng), Row: n, Col: 1, Format: minifloat.BF16}
	packed, err := PackBF16(k, n, w)
	if err != nil {
		b.Fatal(err)
	}
	c := make([]float32, m*n)
	for _, threads := range []int{1, 2} {
		for _, ahead := range []bool{false, true} {
			b.Run(fmt.Sprintf("threads=%d/packed-ahead=%v", threads, ahead), func(b *testing.B) {
				for b.Loop() {
					if ahead {
						if err := GemmBF16Packed(m, n, k, a, packed, c, n, threads); err != nil {
							b.Fatal(err)
						}
						continue
					}
					GemmNarrowF32(m, n, k, a, w, c, n, false, threads)
				}
				b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
