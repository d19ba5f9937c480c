package minifloat

import (
	"math"
	"testing"
)

// The f16 bit-arithmetic conversions give the general conversions' bits:
// FromFloat32 against FromFloat64 on a sweep of f32 patterns (every 61st)
// and at every rounding boundary — each normal f16's tie and its
// neighbours, each subnormal's at its own cut, overflow — and ToFloat32
// and DecodeFloat32 against ToFloat64 on every f16 pattern, NaN payloads
// included.
func TestF16FastPaths(t *testing.T) {
	check := func(b uint32) {
		x := math.Float32frombits(b)
		if got, want := F16.FromFloat32(x), F16.FromFloat64(float64(x)); got != want {
			t.Fatalf("FromFloat32(%#08x) = %#04x, want %#04x", b, got, want)
		}
	}
	for b := uint64(0); b < 1<<32; b += 61 {
		check(uint32(b))
	}
	// Normal results cut the low 13 bits: ties at 0x1000.
	for hi := uint32(0); hi < 1<<19; hi++ {
		for _, lo := range []uint32{0, 1, 0xfff, 0x1000, 0x1001, 0x1fff} {
			check(hi<<13 | lo)
		}
	}
	// Subnormal results (2^-25 <= |x| < 2^-14) cut s = 126-e bits.
	for e := uint32(100); e <= 113; e++ {
		s := min(126-e, 31)
		for n := uint32(0); n<<s < 1<<24; n++ {
			for _, rem := range []uint32{0, 1, 1<<(s-1) - 1, 1 << (s - 1), 1<<(s-1) + 1, 1<<s - 1} {
				mant := n<<s | rem
				if mant < 1<<23 || mant >= 1<<24 {
					continue
				}
				for _, sign := range []uint32{0, 1 << 31} {
					check(sign | e<<23 | mant&0x7fffff)
				}
			}
		}
	}
	for _, b := range []uint32{0x477fefff, 0x477ff000, 0x477ff001, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7f800001, 0xffc00000, 0x7fbfffff, 0x80000000, 0x00000001} {
		check(b)
	}
	dec := make([]float32, 1<<16)
	src := make([]uint16, 1<<16)
	for b := range src {
		src[b] = uint16(b)
	}
	F16.DecodeFloat32(dec, src)
	for b := range 1 << 16 {
		want := math.Float32bits(float32(F16.ToFloat64(uint16(b))))
		if got := math.Float32bits(F16.ToFloat32(uint16(b))); got != want {
			t.Fatalf("ToFloat32(%#04x) = %#08x, want %#08x", b, got, want)
		}
		if got := math.Float32bits(dec[b]); got != want {
			t.Fatalf("DecodeFloat32(%#04x) = %#08x, want %#08x", b, got, want)
		}
		if got, want := math.Float32bits(RoundF16(F16.ToFloat32(uint16(b)))), math.Float32bits(F16.ToFloat32(F16.FromFloat64(F16.ToFloat64(uint16(b))))); got != want {
			t.Fatalf("RoundF16(%#04x) = %#08x, want %#08x", b, got, want)
		}
	}
}

func BenchmarkF16FromFloat32(b *testing.B) {
	src := make([]float32, 4096)
	for i := range src {
		src[i] = float32(i-2048) * 0.37
	}
	dst := make([]uint16, len(src))
	for b.Loop() {
		F16.EncodeFloat32(dst, src)
	}
}
