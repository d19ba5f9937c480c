package kernels

import (
	"fmt"
	"testing"
)

func BenchmarkZZFFNCold(b *testing.B) {
	for _, s := range [][3]int{{128, 1536, 384}, {128, 384, 384}} {
		for _, th := range []int{1, 2} {
			m, n, k := s[0], s[1], s[2]
			const sets = 24
			a := make([]float32, m*k)
			for i := range a {
				a[i] = float32(i%7) * 0.1
			}
			var ps []*PackedB
			var bss []Strided[float32]
			for range sets {
				w := make([]float32, k*n)
				for i := range w {
					w[i] = float32(i%5) * 0.1
				}
				bs := Strided[float32]{Data: w, Row: n, Col: 1}
				p, _ := PackBF32(k, n, bs)
				ps = append(ps, p)
				bss = append(bss, bs)
			}
			c := make([]float32, m*n)
			b.Run(fmt.Sprintf("%dx%dx%d/t%d", m, n, k, th), func(b *testing.B) {
				for i := range b.N {
					GemmPackedEpilogueF32(m, n, k, Strided[float32]{Data: a, Row: k, Col: 1}, bss[i%sets], ps[i%sets], c, n, th, nil, false)
				}
				b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
