//go:build linux && amd64 && !purego

package jit

import (
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
)

// BenchmarkUnary compares one-op programs with the kernels they copy,
// over 4096 floats (in L1): the generated loop's scheduling against the
// hand-interleaved kernels'.
func BenchmarkUnary(b *testing.B) {
	if !Available {
		b.Skip("no code generation here")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	x := testInput(rng, 4096, 10)
	dst := make([]float32, len(x))
	for _, c := range []struct {
		op Op
		k  func(dst, x []float32)
	}{{Exp, kernels.ExpF32}, {Tanh, kernels.TanhF32}, {Logistic, kernels.LogisticF32}, {Sqrt, kernels.SqrtF32}} {
		f, err := Compile(&Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: c.op, Args: [3]int{0}}}})
		if err != nil {
			b.Fatal(err)
		}
		ins := [][]float32{x}
		b.Run(c.op.String()+"/jit", func(b *testing.B) {
			for b.Loop() {
				f.Run(f32s(dst), f32s(ins...), nil, false)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)/8), "ns/vector")
		})
		b.Run(c.op.String()+"/kernel", func(b *testing.B) {
			for b.Loop() {
				c.k(dst, x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)/8), "ns/vector")
		})
	}
}
