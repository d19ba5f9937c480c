package kernels

import "testing"

func BenchmarkZZInCache(b *testing.B) {
	x := benchInput()[:4096]
	dst := make([]float32, 4096)
	for _, c := range []struct {
		name string
		f    func(dst, x []float32)
	}{{"copy", func(d, x []float32) { copy(d, x) }}, {"exp", ExpF32}, {"tanh", TanhF32}, {"logistic", LogisticF32}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f(dst, x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/vec")
		})
	}
}
