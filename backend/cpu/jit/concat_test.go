//go:build linux && amd64 && !purego

package jit

import (
	"math/rand/v2"
	"testing"
)

// TestConcat runs softmax's two row programs (e = exp(x - m) with its
// sum and the next rows' maximum folded; e / s) concatenated, the second
// over other rows than the first, and checks every output and partial
// result bit for bit against the two run one after the other, streaming
// or not (the first's output stored through the caches either way).
func TestConcat(t *testing.T) { bothWidths(t, testConcat) }

func testConcat(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	const rowLen, rows = 96, 5
	a := &Program{Inputs: 2, Scalars: 1, RowLen: rowLen, RowScalars: []int{0}, Values: []Value{{Op: Input},
		{Op: Splat, Arg: 0}, {Op: Sub, Args: [3]int{0, 1}}, {Op: Exp, Args: [3]int{2}}, {Op: Input, Arg: 1}},
		Outputs: []int{3}, RowFolds: []RowFold{{Op: Add, Value: 3}, {Op: Max, Value: 4}}}
	b := &Program{Inputs: 1, Scalars: 1, RowLen: rowLen, RowScalars: []int{0}, Values: []Value{{Op: Input},
		{Op: Splat, Arg: 0}, {Op: Div, Args: [3]int{0, 1}}}}
	c, err := Concat(&Program{Inputs: a.Inputs, Scalars: a.Scalars, RowLen: a.RowLen, RowScalars: a.RowScalars,
		Values: a.Values, Outputs: a.Outputs, RowFolds: a.RowFolds, CachedOutputs: []int{0}}, b)
	if err != nil {
		t.Fatal(err)
	}
	fa, fb, fc := compile(t, a), compile(t, b), compile(t, c)
	if fc.FoldWidth() != fa.FoldWidth() {
		t.Skipf("the concatenation folds %d lanes, the first %d", fc.FoldWidth(), fa.FoldWidth())
	}
	rng := rand.New(rand.NewPCG(3, 4))
	n := rows * rowLen
	x, next, prev := testInput(rng, n, 3), testInput(rng, n, 40), testInput(rng, n, 3)
	mx, sums := testInput(rng, rows, 3), testInput(rng, rows, 50)
	W := fa.FoldWidth()
	for _, stream := range []bool{false, true} {
		wantE, wantQ := aligned64(n), aligned64(n)
		wantS, wantM := make([]float32, rows*W), make([]float32, rows*W)
		fa.RunRowsFold(f32s(wantE), f32s(x, next), []float32{0}, [][]float32{mx}, [][]float32{wantS, wantM}, stream)
		fb.RunRows(f32s(wantQ), f32s(prev), []float32{0}, [][]float32{sums}, stream)
		gotE, gotQ := aligned64(n), aligned64(n)
		gotS, gotM := make([]float32, rows*W), make([]float32, rows*W)
		fc.RunRowsFold(f32s(gotE, gotQ), f32s(x, next, prev), []float32{0, 0}, [][]float32{mx, sums}, [][]float32{gotS, gotM}, stream)
		sameBits(t, "e", gotE, wantE)
		sameBits(t, "e / s", gotQ, wantQ)
		samePartials(t, "sums", gotS, wantS)
		samePartials(t, "maxima", gotM, wantM)
	}
	// Programs over other rows do not concatenate.
	if _, err := Concat(a, &Program{Inputs: 1, RowLen: 8, Values: []Value{{Op: Input}}}); err == nil {
		t.Error("programs over rows of 96 and 8 concatenated")
	}
	if _, err := Compile(&Program{Inputs: 1, Values: []Value{{Op: Input}}, CachedOutputs: []int{1}}); err == nil {
		t.Error("a cached output that is not one compiled")
	}
}

func compile(t *testing.T, p *Program) *Func {
	t.Helper()
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
