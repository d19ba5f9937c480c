package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/hlo/minifloat"
)

// elemCase is one elementwise function, with the plain Go loop whose bits
// it must reproduce.
type elemCase struct {
	name string
	f    func(dst []float32, in [][]float32)
	ref  func(dst []float32, in [][]float32)
	nin  int
}

func unaryCase(name string, f, ref func(dst, a []float32)) elemCase {
	return elemCase{name, func(d []float32, in [][]float32) { f(d, in[0]) }, func(d []float32, in [][]float32) { ref(d, in[0]) }, 1}
}

func binaryCase(name string, f, ref func(dst, a, b []float32)) elemCase {
	return elemCase{name, func(d []float32, in [][]float32) { f(d, in[0], in[1]) }, func(d []float32, in [][]float32) { ref(d, in[0], in[1]) }, 2}
}

func compareCase(name string, dir int) elemCase {
	return binaryCase(name, func(d, a, b []float32) { CompareF32(dir, d, a, b) }, func(d, a, b []float32) { compareGo(dir, d, a, b) })
}

var elemCases = []elemCase{
	compareCase("CmpEQ", CmpEQ), compareCase("CmpNE", CmpNE), compareCase("CmpLT", CmpLT),
	compareCase("CmpLE", CmpLE), compareCase("CmpGT", CmpGT), compareCase("CmpGE", CmpGE),
	binaryCase("And", AndF32, andGo), binaryCase("Or", OrF32, orGo), binaryCase("Xor", XorF32, xorGo),
	{"Select", func(d []float32, in [][]float32) { SelectF32(d, in[0], in[1], in[2]) },
		func(d []float32, in [][]float32) { selectGo(d, in[0], in[1], in[2]) }, 3},
	binaryCase("Add", AddF32, addGo),
	binaryCase("Sub", SubF32, subGo),
	binaryCase("Mul", MulF32, mulGo),
	binaryCase("Div", DivF32, divGo),
	binaryCase("Maximum", MaximumF32, maximumGo),
	binaryCase("Minimum", MinimumF32, minimumGo),
	{"Clamp", func(d []float32, in [][]float32) { ClampF32(d, in[0], in[1], in[2]) }, func(d []float32, in [][]float32) { clampGo(d, in[0], in[1], in[2]) }, 3},
	unaryCase("Neg", NegF32, negGo),
	unaryCase("Abs", AbsF32, absGo),
	unaryCase("Sqrt", func(d, a []float32) { SqrtF32(d, a[:len(d)]) }, sqrtGo),
	unaryCase("Rsqrt", func(d, a []float32) { RsqrtF32(d, a[:len(d)]) }, rsqrtGo),
}

// specialBits are ±0, ±Inf, quiet and signaling NaNs of both signs with
// payloads, subnormals, the normal extremes and a few ordinary values.
var specialBits = []uint32{
	0, 0x80000000, 0x7f800000, 0xff800000,
	0x7fc00000, 0xffc00000, 0x7fc12345, 0xffe54321, 0x7f800001, 0xff812345, 0x7fbfffff,
	0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00400000, 0x00800000, 0x80800000,
	0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000, 0x40000000, 0x3f000000, 0xc0490fdb, 0x1e3ce508,
}

// elemPool returns k inputs of length n: every combination of special
// values first, then random bit patterns (a sixth of them special).
func elemPool(rng *rand.Rand, k, n int) [][]float32 {
	in := make([][]float32, k)
	for j := range in {
		in[j] = make([]float32, n)
	}
	s := len(specialBits)
	for i := range n {
		c := i
		for j := range in {
			var bits uint32
			if c < int(math.Pow(float64(s), float64(k))) {
				bits = specialBits[c/int(math.Pow(float64(s), float64(j)))%s]
			} else if rng.IntN(6) == 0 {
				bits = specialBits[rng.IntN(s)]
			} else {
				bits = rng.Uint32()
			}
			in[j][i] = math.Float32frombits(bits)
		}
	}
	return in
}

const sentinel = 0x7fbadbad

// TestElementwise checks every function against its Go loop bit for bit:
// every length 0..70 and 511, 512, 513, 4096 (whole blocks of four
// vectors, single vectors, masked tails), dst and inputs starting 0..7
// elements into their arrays, nothing written outside dst, and dst being
// each input in turn.
func TestElementwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const maxN = 4096
	pool := elemPool(rng, 3, maxN+16)
	sizes := []int{511, 512, 513, maxN}
	for n := range 71 {
		sizes = append(sizes, n)
	}
	withKernels(t, func(t *testing.T) {
		for _, c := range elemCases {
			for _, n := range sizes {
				for off := range 8 {
					if n > 70 && off%3 != 1 {
						continue
					}
					checkElem(t, c, pool, n, off)
				}
			}
		}
	})
}

func checkElem(t *testing.T, c elemCase, pool [][]float32, n, off int) {
	t.Helper()
	in := make([][]float32, c.nin)
	for j := range in {
		o := (off + 3*j) % 8
		in[j] = pool[j][o : o+n+j] // longer than dst: only len(dst) counts
	}
	want := make([]float32, n)
	c.ref(want, in)
	buf := make([]float32, n+16)
	for i := range buf {
		buf[i] = math.Float32frombits(sentinel)
	}
	dst := buf[off : off+n]
	c.f(dst, in)
	where := fmt.Sprintf("%s n=%d off=%d", c.name, n, off)
	compareBits(t, where, dst, want, in)
	for i, v := range buf {
		if (i < off || i >= off+n) && math.Float32bits(v) != sentinel {
			t.Fatalf("%s: wrote buf[%d] outside dst = buf[%d:%d]", where, i, off, off+n)
		}
	}
	for j := range in {
		alias := make([]float32, n+8)[off : off+n]
		copy(alias, in[j])
		ins := append([][]float32(nil), in...)
		ins[j] = alias
		c.f(alias, ins)
		compareBits(t, fmt.Sprintf("%s dst=input %d", where, j), alias, want, in)
	}
}

func compareBits(t *testing.T, where string, got, want []float32, in [][]float32) {
	t.Helper()
	for i := range want {
		if g, w := math.Float32bits(got[i]), math.Float32bits(want[i]); g != w {
			args := ""
			for _, x := range in {
				args += fmt.Sprintf(" %#08x", math.Float32bits(x[i]))
			}
			t.Fatalf("%s: [%d] of%s = %#08x, want %#08x", where, i, args, g, w)
		}
	}
}

// The NaN and signed-zero rules of NaNMax and NaNMin, which the kernels
// follow (TestElementwise checks them against the loops).
func TestNaNMaxMin(t *testing.T) {
	nz := float32(math.Copysign(0, -1))
	n1, n2 := math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00002)
	for _, c := range []struct {
		f        func(a, b float32) float32
		a, b, to float32
	}{
		{NaNMax[float32], nz, 0, nz}, {NaNMax[float32], 0, nz, 0}, {NaNMin[float32], nz, 0, nz}, {NaNMin[float32], 0, nz, 0},
		{NaNMax[float32], n1, n2, n1}, {NaNMax[float32], 1, n2, n2}, {NaNMax[float32], n1, 1, n1}, {NaNMax[float32], 1, 2, 2},
		{NaNMin[float32], n2, n1, n2}, {NaNMin[float32], 1, n2, n2}, {NaNMin[float32], n1, 1, n1}, {NaNMin[float32], 1, 2, 1},
	} {
		if got := c.f(c.a, c.b); math.Float32bits(got) != math.Float32bits(c.to) {
			t.Errorf("(%v, %v) = %#x, want %#x", c.a, c.b, math.Float32bits(got), math.Float32bits(c.to))
		}
	}
}

// U8ToF32 gives every byte's value, at every length (whole vectors, the
// tail, both) and offset.
func TestU8ToF32(t *testing.T) {
	src := make([]uint8, 300)
	for i := range src {
		src[i] = uint8(i * 7)
	}
	for n := range 70 {
		for _, off := range []int{0, 1, 5} {
			dst := make([]float32, n+1)
			dst[n] = -1
			U8ToF32(dst[:n], src[off:off+n])
			for i := range n {
				if dst[i] != float32(src[off+i]) {
					t.Fatalf("n=%d off=%d: dst[%d] = %v, want %v", n, off, i, dst[i], src[off+i])
				}
			}
			if dst[n] != -1 {
				t.Fatalf("n=%d: wrote past the end", n)
			}
		}
	}
	all := make([]uint8, 256)
	for i := range all {
		all[i] = uint8(i)
	}
	dst := make([]float32, 256)
	U8ToF32(dst, all)
	for i, v := range dst {
		if v != float32(i) {
			t.Fatalf("byte %d gives %v", i, v)
		}
	}
}

// The bf16 conversions agree bit for bit with minifloat's BF16 on every
// special the rounding meets: ties both ways, the largest finite values
// (which round to infinity), subnormals, zeros, infinities and NaNs of
// both signs with payloads, at every length to 40 (the vector kernel's
// whole vectors and the Go tail) and at offsets into the slices.
func TestBF16Conversions(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	specials := []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0xff812345,
		0x7f7fffff, 0xff7fffff, 0x7f7f8000, 0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001, 0x00000001, 0x80008000, 0x0001ffff}
	everyLength(rng, specials, func(src []float32, n, off int) {
		got, want := make([]uint16, n+1), make([]uint16, n+1)
		got[n], want[n] = 0xabcd, 0xabcd // not written past the end
		F32ToBF16(got[:n], src)
		minifloat.BF16.EncodeFloat32(want[:n], src)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("n=%d off=%d: F32ToBF16 of %#x at %d = %#x, want %#x", n, off, math.Float32bits(src[min(i, n-1)]), i, got[i], want[i])
			}
		}
		wide, wantWide := make([]float32, n+1), make([]float32, n+1)
		BF16ToF32(wide[:n], got[:n])
		minifloat.BF16.DecodeFloat32(wantWide[:n], got[:n])
		for i := range wide {
			if math.Float32bits(wide[i]) != math.Float32bits(wantWide[i]) {
				t.Fatalf("n=%d off=%d: BF16ToF32 of %#x = %#x, want %#x", n, off, got[i], math.Float32bits(wide[i]), math.Float32bits(wantWide[i]))
			}
		}
	})
}

// everyLength calls f with random values, a third of them specials (f32
// bit patterns), at every length to 40 and offsets 0 to 2 into a slice.
func everyLength(rng *rand.Rand, specials []uint32, f func(src []float32, n, off int)) {
	for n := range 41 {
		for off := range 3 {
			src := make([]float32, n+off)
			for i := range src {
				if rng.IntN(3) == 0 {
					src[i] = math.Float32frombits(specials[rng.IntN(len(specials))])
				} else {
					src[i] = math.Float32frombits(rng.Uint32())
				}
			}
			f(src[off:], n, off)
		}
	}
}

// TestF16Conversions: the half kernels give minifloat.F16's bits — at
// every length to 40 and offsets (both vector widths and the Go tail),
// on specials (NaNs with payloads and both signs, infinities, zeros,
// f32 values at half's overflow, ties and subnormal cuts); on every half
// pattern, widened and rounded back; and on every f32 pattern whose low
// 13 bits sit at or beside a half rounding tie.
func TestF16Conversions(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	specials := []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0xff812345,
		0x477fefff, 0x477ff000, 0xc77ff000, 0x7f7fffff, 0x3f801000, 0x3f803000, 0x3f800fff, 0x33000000, 0x33000001,
		0x387fe000, 0x38800000, 0x00000001, 0x80001000}
	check := func(src []float32, what string) {
		t.Helper()
		n := len(src)
		got, want := make([]uint16, n+1), make([]uint16, n+1)
		got[n], want[n] = 0xabcd, 0xabcd // not written past the end
		F32ToF16(got[:n], src)
		minifloat.F16.EncodeFloat32(want[:n], src)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: F32ToF16 of %#x at %d = %#x, want %#x", what, math.Float32bits(src[min(i, n-1)]), i, got[i], want[i])
			}
		}
		wide, wantWide := make([]float32, n+1), make([]float32, n+1)
		F16ToF32(wide[:n], got[:n])
		minifloat.F16.DecodeFloat32(wantWide[:n], got[:n])
		for i := range wide {
			if math.Float32bits(wide[i]) != math.Float32bits(wantWide[i]) {
				t.Fatalf("%s: F16ToF32 of %#x = %#x, want %#x", what, got[i], math.Float32bits(wide[i]), math.Float32bits(wantWide[i]))
			}
		}
	}
	everyLength(rng, specials, func(src []float32, n, off int) { check(src, fmt.Sprintf("n=%d off=%d", n, off)) })
	all := make([]uint16, 1<<16)
	for b := range all {
		all[b] = uint16(b)
	}
	widened := make([]float32, len(all))
	F16ToF32(widened, all)
	check(widened, "every half widened")
	var ties []float32
	for hi := uint32(0); hi < 1<<19; hi++ {
		for _, lo := range []uint32{0xfff, 0x1000, 0x1001} {
			ties = append(ties, math.Float32frombits(hi<<13|lo))
		}
	}
	check(ties, "ties")
}
