package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkScratchMLP(b *testing.B) {
	for _, s := range [][3]int{{256, 512, 784}, {256, 512, 512}} {
		for _, threads := range []int{1, 2} {
			m, n, k := s[0], s[1], s[2]
			b.Run(fmt.Sprintf("%dx%dx%d/t=%d", m, n, k, threads), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 1))
				a := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
				bm := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
				c := make([]float32, m*n)
				for b.Loop() {
					GemmF32(m, n, k, a, bm, c, n, false, threads)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
