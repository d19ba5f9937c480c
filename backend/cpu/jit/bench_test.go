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

// BenchmarkShortcut compares programs with exp or logistic generated
// with and without the shortcut block, over 4096 floats in [-1, 1) (in
// L1, all in the window): gelu's x·σ(1.702x) + 0.5x, softmax's e^(x-m)
// and chain10's ten ops.
func BenchmarkShortcut(b *testing.B) {
	if !Available {
		b.Skip("no code generation here")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 4096)
	for i := range x {
		x[i] = rng.Float32()*2 - 1
	}
	dst := make([]float32, len(x))
	c := func(v float32) Value { return Value{Op: Const, Value: v} }
	progs := []struct {
		name string
		p    *Program
	}{
		{"gelu", &Program{Inputs: 1, Values: []Value{{Op: Input}, c(1.702), {Op: Mul, Args: [3]int{0, 1}},
			{Op: Logistic, Args: [3]int{2}}, {Op: Mul, Args: [3]int{0, 3}}, c(0.5), {Op: Mul, Args: [3]int{0, 5}},
			{Op: Add, Args: [3]int{4, 6}}}}},
		{"softmax-exp", &Program{Inputs: 1, Values: []Value{{Op: Input}, c(1), {Op: Sub, Args: [3]int{0, 1}},
			{Op: Exp, Args: [3]int{2}}}}},
		{"chain10", &Program{Inputs: 1, Values: []Value{{Op: Input}, c(0.5), {Op: Mul, Args: [3]int{0, 1}},
			{Op: Add, Args: [3]int{2, 0}}, {Op: Tanh, Args: [3]int{3}}, {Op: Mul, Args: [3]int{4, 4}},
			{Op: Sub, Args: [3]int{5, 1}}, {Op: Exp, Args: [3]int{6}}, {Op: Mul, Args: [3]int{7, 4}},
			{Op: Abs, Args: [3]int{8}}, {Op: Sqrt, Args: [3]int{9}}, {Op: Sub, Args: [3]int{10, 2}}}}},
	}
	for _, pr := range progs {
		for _, on := range []bool{false, true} {
			shortcuts = on
			f, err := Compile(pr.p)
			shortcuts = true
			if err != nil {
				b.Fatal(err)
			}
			name := pr.name + "/full"
			if on {
				name = pr.name + "/shortcut"
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					f.Run(f32s(dst), f32s(x), nil, false)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)/8), "ns/vector")
			})
		}
	}
}
