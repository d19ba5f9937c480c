package tile

import (
	"math"
	"math/rand/v2"
	"testing"
)

// roundEvenF32 is math.RoundToEven on every kind of f32: ties both ways,
// the edges of the integers f32 holds exactly, signed zeros, subnormals,
// infinities, NaN and random values of every magnitude.
func TestRoundEvenF32(t *testing.T) {
	var x []float32
	for k := -6; k <= 6; k++ {
		x = append(x, float32(k)+0.5, float32(k)+0.49999997, float32(k)-0.25)
	}
	for _, v := range []float32{0, 1e-40, 0.5, 1 << 22, 1<<22 + 0.5, 1<<23 - 0.5, 1 << 23, 1<<23 + 1, 1 << 24, 3e38,
		float32(math.Inf(1)), float32(math.NaN())} {
		x = append(x, v, -v)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 10000 {
		x = append(x, math.Float32frombits(rng.Uint32()))
	}
	got := make([]float32, len(x))
	roundEvenF32(got, x)
	for i, v := range x {
		want := float32(math.RoundToEven(float64(v)))
		if math.Float32bits(got[i]) != math.Float32bits(want) && !(v != v && got[i] != got[i]) {
			t.Fatalf("round(%v = %#x) = %v, want %v", v, math.Float32bits(v), got[i], want)
		}
	}
}
