package kernels

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// BenchmarkGemmSkinny times the two matrix products of a dense layer's
// training step at batch 100 (784 inputs, 10 classes): x·W and the
// weight gradient xᵀ·g, where the left operand is read transposed; and
// mlp_b256's classifier, 256×512 by 512×10, with the AVX-512 twelve-row
// kernel ("z", where the machine has it) and the 6-row one.
func BenchmarkGemmSkinny(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := randSlice[float32](100*784, rng)
	for i := range x {
		x[i] = float32(int(x[i]*1000) % 256)
	}
	w := randSlice[float32](784*10, rng)
	g := randSlice[float32](100*10, rng)
	h := randSlice[float32](256*512, rng)
	w3 := randSlice[float32](512*10, rng)
	for _, c := range []struct {
		name    string
		m, n, k int
		a, b    Strided[float32]
	}{
		{"forward-100x784x10", 100, 10, 784, Strided[float32]{x, 784, 1}, Strided[float32]{w, 10, 1}},
		{"weight-grad-784x100x10", 784, 10, 100, Strided[float32]{x, 1, 784}, Strided[float32]{g, 10, 1}},
		{"classifier-256x512x10", 256, 10, 512, Strided[float32]{h, 512, 1}, Strided[float32]{w3, 10, 1}},
		{"classifier-256x512x10-z", 256, 10, 512, Strided[float32]{h, 512, 1}, Strided[float32]{w3, 10, 1}},
	} {
		out := make([]float32, c.m*c.n)
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, threads), func(b *testing.B) {
				defer func(z, always bool) { skinnyZ, skinnyZAlways = z, always }(skinnyZ, skinnyZAlways)
				skinnyZ = strings.HasSuffix(c.name, "-z")
				skinnyZAlways = skinnyZ
				for b.Loop() {
					GemmF32(c.m, c.n, c.k, c.a, c.b, out, c.n, false, threads)
				}
				b.ReportMetric(2*float64(c.m*c.n*c.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
