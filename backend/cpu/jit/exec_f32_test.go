//go:build linux && amd64 && !purego

package jit

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
)

// RunF32 computes what the kernels compute, one op at a time, for a
// program with a displaced input, a splat and a constant, at lengths
// around the vectors' (the tails staged as Run stages them), and only
// programs of f32 arrays with one output take it.
func TestRunF32(t *testing.T) { bothWidths(t, testRunF32) }

func testRunF32(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	// logistic(a[i+5]·c) · a[i+40] - y[i] + 2
	p := &Program{Inputs: 2, Scalars: 1, Values: []Value{
		{Op: Input, Off: 5}, {Op: Splat}, {Op: Mul, Args: [3]int{0, 1}}, {Op: Logistic, Args: [3]int{2}},
		{Op: Input, Off: 40}, {Op: Mul, Args: [3]int{3, 4}}, {Op: Input, Arg: 1}, {Op: Sub, Args: [3]int{5, 6}},
		{Op: Const, Value: 2}, {Op: Add, Args: [3]int{7, 8}},
	}}
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(41, 42))
	const c = float32(0.75)
	for _, n := range []int{1, 7, 8, 9, 16, 23, 96, 101, 257} {
		a, y := testInput(rng, n+40, 3), testInput(rng, n, 3)
		want := make([]float32, n)
		for i := range want {
			want[i] = a[i+5] * c
		}
		kernels.LogisticF32(want, want)
		for i := range want {
			want[i] = float32(want[i]*a[i+40]) - y[i] + 2 // rounded product: no FMA
		}
		got := make([]float32, n)
		f.RunF32(got, [][]float32{a, y}, []float32{c})
		sameBits(t, fmt.Sprintf("n=%d", n), got, want)
	}
	for _, other := range []Program{
		{Inputs: 1, Values: []Value{{Op: Input}}, InputTypes: []Type{BF16}},
		{Inputs: 1, Values: []Value{{Op: Input}, {Op: Exp, Args: [3]int{0}}}, Outputs: []int{0, 1}},
		{Inputs: 1, Values: []Value{{Op: Input}}, Strided: true},
	} {
		g, err := Compile(&other)
		if err != nil {
			t.Fatal(err)
		}
		if g.f32 {
			t.Errorf("%+v: RunF32 takes it", other)
		}
	}
}
