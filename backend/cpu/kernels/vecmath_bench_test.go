package kernels

import (
	"math/rand/v2"
	"testing"
)

// benchLen is 16M floats (64 MB), far beyond the caches, so every
// benchmark here streams from memory and copy's GB/s is the ceiling.
const benchLen = 16 << 20

func benchInput() []float32 {
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float32, benchLen)
	for i := range x {
		x[i] = rng.Float32()*20 - 10
	}
	return x
}

// reportGBs reports bytes read plus written per second.
func reportGBs(b *testing.B, bytesPerOp int) {
	b.ReportMetric(float64(bytesPerOp)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkVecMath runs copy first as the bandwidth baseline; the
// elementwise functions read and write as much as copy does.
func BenchmarkVecMath(b *testing.B) {
	x := benchInput()
	dst := make([]float32, benchLen)
	for _, c := range []struct {
		name string
		f    func(dst, x []float32)
	}{
		{"copy", func(dst, x []float32) { copy(dst, x) }},
		{"exp", ExpF32},
		{"tanh", TanhF32},
		{"logistic", LogisticF32},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f(dst, x)
			}
			reportGBs(b, 8*benchLen)
		})
	}
	b.Run("sum", func(b *testing.B) {
		var s float32
		for b.Loop() {
			s += SumF32(x)
		}
		reportGBs(b, 4*benchLen)
		_ = s
	})
}

// BenchmarkVecMathParallel is BenchmarkVecMath with the array split
// between two workers for every function, copy included: the machine's
// memory bandwidth is what two cores reach, and the functions are to be
// measured against it as the backend runs them (an elementwise op over
// 16M elements is split across the worker pool).
func BenchmarkVecMathParallel(b *testing.B) {
	const threads = 2
	x := benchInput()
	dst := make([]float32, benchLen)
	split := func(f func(dst, x []float32)) func() {
		return func() {
			Parallel(threads, func(t int) {
				lo, hi := t*benchLen/threads, (t+1)*benchLen/threads
				f(dst[lo:hi], x[lo:hi])
			})
		}
	}
	for _, c := range []struct {
		name string
		f    func(dst, x []float32)
	}{
		{"copy", func(dst, x []float32) { copy(dst, x) }},
		{"exp", ExpF32},
		{"tanh", TanhF32},
		{"logistic", LogisticF32},
	} {
		run := split(c.f)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				run()
			}
			reportGBs(b, 8*benchLen)
		})
	}
}

// BenchmarkVecMathInCache times the functions over 4096 floats in
// [-10, 10) (in L1): their arithmetic alone, per 8-lane vector, the
// figure that decides how far below the copy they fall when streaming.
func BenchmarkVecMathInCache(b *testing.B) {
	x := benchInput()[:4096]
	dst := make([]float32, len(x))
	for _, c := range []struct {
		name string
		f    func(dst, x []float32)
	}{{"copy", func(d, x []float32) { copy(d, x) }}, {"exp", ExpF32}, {"tanh", TanhF32}, {"logistic", LogisticF32}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f(dst, x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)/8), "ns/vector")
		})
	}
}
