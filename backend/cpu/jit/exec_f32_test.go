//go:build linux && amd64 && !purego

package jit

import (
	"fmt"
	"math/rand/v2"
	"slices"
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
		f.RunF32([][]float32{got}, [][]float32{a, y}, []float32{c})
		sameBits(t, fmt.Sprintf("n=%d", n), got, want)
	}
	g, err := Compile(&Program{Inputs: 1, Values: []Value{{Op: Input}}, InputTypes: []Type{BF16}})
	if err != nil {
		t.Fatal(err)
	}
	if g.f32 {
		t.Error("a program of a bf16 input is taken as f32")
	}
}

// RunF32 stores each output of a program with several; RunStridedF32
// runs blocks of rows with their strides (a bias read again for every
// row, stride 0), rows of lengths around the vectors', leaving the gaps
// between an output's rows alone.
func TestRunF32Outputs(t *testing.T) { bothWidths(t, testRunF32Outputs) }

func testRunF32Outputs(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	// e^x and e^x·b
	values := []Value{{Op: Input}, {Op: Exp, Args: [3]int{0}}, {Op: Input, Arg: 1}, {Op: Mul, Args: [3]int{1, 2}}}
	flat, err := Compile(&Program{Inputs: 2, Values: values, Outputs: []int{1, 3}})
	if err != nil {
		t.Fatal(err)
	}
	strided, err := Compile(&Program{Inputs: 2, Values: values, Outputs: []int{1, 3}, Strided: true})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(43, 44))
	for _, cols := range []int{1, 7, 8, 9, 16, 17, 33} {
		const rows, ldx, ldo = 5, 40, 37
		x, bias := testInput(rng, rows*ldx, 2), testInput(rng, cols, 2)
		e, eb := make([]float32, rows*ldo), make([]float32, rows*ldo)
		wantE, wantEB := make([]float32, rows*ldo), make([]float32, rows*ldo)
		for r := range rows {
			kernels.ExpF32(wantE[r*ldo:r*ldo+cols], x[r*ldx:r*ldx+cols])
			for i := range cols {
				wantEB[r*ldo+i] = wantE[r*ldo+i] * bias[i]
			}
		}
		strided.RunStridedF32([][]float32{e, eb}, [][]float32{x, bias}, nil, rows, cols, []int{ldo, ldo}, []int{ldx, 0})
		sameBits(t, fmt.Sprintf("strided e^x, %d columns", cols), e, wantE)
		sameBits(t, fmt.Sprintf("strided e^x·b, %d columns", cols), eb, wantEB)

		n := cols * 3
		e, eb = make([]float32, n), make([]float32, n)
		b3 := append(append(slices.Clone(bias), bias...), bias...)
		flat.RunF32([][]float32{e, eb}, [][]float32{x[:n], b3}, nil)
		wantE, wantEB = make([]float32, n), make([]float32, n)
		kernels.ExpF32(wantE, x[:n])
		for i := range n {
			wantEB[i] = wantE[i] * b3[i]
		}
		sameBits(t, fmt.Sprintf("flat e^x, n=%d", n), e, wantE)
		sameBits(t, fmt.Sprintf("flat e^x·b, n=%d", n), eb, wantEB)
	}
}
