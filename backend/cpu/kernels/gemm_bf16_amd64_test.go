//go:build amd64 && !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/hlo/minifloat"
)

// randBF16Word is a packed pair of random bf16 values whose exponents
// lie in [lo, hi], a few subnormal or zero: ranges near 64 put the
// products and sums around f32's subnormal range and the flush.
func randBF16Word(rng *rand.Rand, lo, hi int) uint32 {
	half := func() uint32 {
		e := uint32(lo + rng.IntN(hi-lo+1))
		if rng.IntN(8) == 0 {
			e = 0
		}
		return uint32(rng.IntN(2))<<15 | e<<7 | uint32(rng.IntN(128))
	}
	return half()<<16 | half()
}

// The assembly kernels give the Go twin's bits, NaN for NaN, on random
// operands: every tile shape, step counts around the unrolled loop's,
// into a C with padded rows, setting and accumulating, in exponent ranges
// from the usual to all of bf16's (overflows, and sums near 2⁻¹²⁶).
func TestBF16KernelsMatchTwin(t *testing.T) {
	if !useBF16 {
		t.Skip("no AVX512_BF16")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for _, r := range [][2]int{{110, 144}, {1, 254}, {50, 75}, {60, 66}} {
		for _, shape := range [][2]int{{2, 2}, {1, 2}, {2, 1}, {1, 1}} {
			for _, kp := range []int{1, 2, 3, 4, 5, 7, 8, 9, 33, 256} {
				for _, overwrite := range []bool{true, false} {
					checkBF16Kernel(t, rng, r, shape[0], shape[1], kp, overwrite)
				}
			}
		}
	}
}

func checkBF16Kernel(t *testing.T, rng *rand.Rand, r [2]int, ablocks, bblocks, kp int, overwrite bool) {
	t.Helper()
	a, b := make([]uint32, ablocks*bf16MR*kp), make([]uint32, bblocks*bf16NR*kp)
	for i := range a {
		a[i] = randBF16Word(rng, r[0], r[1])
	}
	for i := range b {
		b[i] = randBF16Word(rng, r[0], r[1])
	}
	rows, ldc := ablocks*bf16MR, bblocks*bf16NR+5
	got := make([]float32, rows*ldc)
	for i := range got {
		got[i] = float32(rng.NormFloat64())
	}
	want := append([]float32(nil), got...)
	kernelBF16(ablocks, bblocks, kp, a, b, got, ldc, overwrite)
	kernelBF16Go(ablocks, bblocks, kp, a, b, want, ldc, overwrite)
	for i := range got {
		g, w := got[i], want[i]
		if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
			t.Fatalf("exponents %v, %dx%d tile, %d steps, overwrite %v: C[%d] = %v (%08x), twin %v (%08x)",
				r, ablocks*bf16MR, bblocks*bf16NR, kp, overwrite, i, g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
}

// The instruction itself follows the rules the twin's cases spell out:
// a first step sets each lane to the case's acc (acc·1, exact), the
// second is the case's.
func TestBF16KernelRules(t *testing.T) {
	if !useBF16 {
		t.Skip("no AVX512_BF16")
	}
	for _, c := range dotBF16Cases {
		first := uint32(minifloat.BF16.FromFloat32(c.acc)) << 16
		if minifloat.BF16.ToFloat32(uint16(first>>16)) != c.acc {
			t.Fatalf("%s: acc %v is not a bf16 value", c.name, c.acc)
		}
		a, b := make([]uint32, 2*bf16MR), make([]uint32, 2*bf16NR)
		for i := range bf16MR {
			a[i], a[bf16MR+i] = first, c.x
		}
		for j := range bf16NR {
			b[j], b[bf16NR+j] = 0x3F800000, c.y // (1, 0)
		}
		got := make([]float32, bf16MR*bf16NR)
		bf16gemm6x16(2, &a[0], &b[0], &got[0], bf16NR, true)
		if math.Float32bits(got[0]) != math.Float32bits(c.want) {
			t.Errorf("%s: VDPBF16PS = %v, want %v", c.name, got[0], c.want)
		}
	}
}

// The whole product on the assembly and on the twin: the same packing
// and the same steps, so the same bits.
func TestGemmBF16AsmMatchesTwin(t *testing.T) {
	if !useBF16 {
		t.Skip("no AVX512_BF16")
	}
	defer func(p, u bool) { preferBF16DP, useBF16 = p, u }(preferBF16DP, useBF16)
	preferBF16DP = true
	rng := rand.New(rand.NewPCG(8, 8))
	for _, s := range [][3]int{{37, 70, 1100}, {130, 100, 700}} {
		m, n, k := s[0], s[1], s[2]
		a := narrowView(randBF16(m*k, rng), m, k, "transposed")
		b := narrowView(randBF16(k*n, rng), k, n, "rows")
		got, want := make([]float32, m*n), make([]float32, m*n)
		useBF16 = true
		GemmNarrowF32(m, n, k, a, b, got, n, false, 2)
		useBF16 = false
		GemmNarrowF32(m, n, k, a, b, want, n, false, 2)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v: C[%d] = %v, twin %v", s, i, got[i], want[i])
			}
		}
	}
}
