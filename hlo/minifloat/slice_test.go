package minifloat

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The slice conversions agree with the per-element ones on every bit
// pattern (decode) and on random, special and rounding-boundary f32
// values (encode), for every format.
func TestSliceConversionsMatchElements(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32}
	for range 5000 {
		vals = append(vals, math.Float32frombits(rng.Uint32()))
	}
	for _, f := range []Format{BF16, F16, F8E4M3FN, F8E5M2} {
		n := 1 << f.Bits()
		src := make([]uint16, n)
		for b := range src {
			src[b] = uint16(b)
		}
		dec := make([]float32, n)
		f.DecodeFloat32(dec, src)
		for b, v := range dec {
			if want := f.ToFloat32(uint16(b)); math.Float32bits(v) != math.Float32bits(want) && !(v != v && want != want) {
				t.Fatalf("%s: decode %#x = %v, want %v", f.Name(), b, v, want)
			}
		}
		enc := make([]uint16, len(vals))
		f.EncodeFloat32(enc, vals)
		for i, v := range vals {
			if want := f.FromFloat32(v); enc[i] != want {
				t.Fatalf("%s: encode %v = %#x, want %#x", f.Name(), v, enc[i], want)
			}
		}
	}
}
