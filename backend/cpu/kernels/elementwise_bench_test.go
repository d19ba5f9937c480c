package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkElementwise runs each function ("kernel": the assembly where
// there is one) next to its plain Go loop ("go"), on a 512-float tile
// (in L1, what the fused tile programs use) and on benchLen floats
// (streaming from memory, where copy in BenchmarkVecMath is the
// ceiling). Inputs are in [0.5, 10.5): no NaNs or subnormals to slow
// either side down.
func BenchmarkElementwise(b *testing.B) {
	for _, n := range []int{512, benchLen} {
		rng := rand.New(rand.NewPCG(5, 6))
		in := make([][]float32, 3)
		for j := range in {
			in[j] = make([]float32, n)
			for i := range in[j] {
				in[j][i] = rng.Float32()*10 + 0.5
			}
		}
		dst := make([]float32, n)
		for _, c := range elemCases {
			for _, impl := range []struct {
				name string
				f    func(dst []float32, in [][]float32)
			}{{"kernel", c.f}, {"go", c.ref}} {
				b.Run(fmt.Sprintf("%s/n=%d/%s", c.name, n, impl.name), func(b *testing.B) {
					b.SetBytes(int64(4 * n * (c.nin + 1)))
					for b.Loop() {
						impl.f(dst, in)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
				})
			}
		}
	}
}
