//go:build linux && amd64 && !purego

package jit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestRowFolds runs softmax's first pass with its two folds (the sum of
// e^(x-m), and the maximum of a second input, as a tile program folds
// the next tile's rows) over rows whose lengths cover the main loop, the
// one-vector loop and the 8-lane half vector, and checks each partial
// result bit for bit against the same sums done in Go in the order the
// loop's documented lane assignment gives: lane l of the s-th vector of
// an iteration folds into partial s·lanes+l (the one-vector loop and the
// half vector into s = 0, and a row's last partial vector, whose length
// is not a multiple of 8, into the first lanes of s = 0). The outputs
// must be those of the program without folds.
func TestRowFolds(t *testing.T) { bothWidths(t, testRowFolds) }

func testRowFolds(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	for _, rowLen := range []int{8, 16, 24, 40, 56, 96, 1000, 1024, 1, 5, 10, 13, 23, 31, 100, 197} {
		testRowFoldsOf(t, rowLen)
	}
}

func testRowFoldsOf(t *testing.T, rowLen int) {
	values := []Value{
		{Op: Input},                   // 0 x
		{Op: Splat, Arg: 0},           // 1 the row's maximum
		{Op: Sub, Args: [3]int{0, 1}}, // 2
		{Op: Exp, Args: [3]int{2}},    // 3
		{Op: Input, Arg: 1},           // 4 the next rows
	}
	plain, err := Compile(&Program{Inputs: 2, Scalars: 1, RowLen: rowLen, RowScalars: []int{0}, Values: values, Outputs: []int{3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []Op{Max, Min, Add} {
		p := &Program{Inputs: 2, Scalars: 1, RowLen: rowLen, RowScalars: []int{0}, Values: values, Outputs: []int{3},
			RowFolds: []RowFold{{Op: Add, Value: 3}, {Op: op, Value: 4}}}
		f, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		lanes := 8
		if f.wide {
			lanes = 16
		}
		W := f.FoldWidth()
		if W%lanes != 0 || W/lanes < 1 || W/lanes > maxUnroll {
			t.Fatalf("fold width %d with %d lanes", W, lanes)
		}
		rng := rand.New(rand.NewPCG(uint64(rowLen), 7))
		for _, rows := range []int{1, 3} {
			n := rows * rowLen
			x, next, mx := testInput(rng, n, 3), testInput(rng, n, 50), testInput(rng, rows, 3)
			want := aligned64(n)
			plain.RunRows(f32s(want), f32s(x, next), []float32{0}, [][]float32{mx}, false)
			for _, stream := range []bool{false, true} {
				got := aligned64(n)
				sums, other := make([]float32, rows*W), make([]float32, rows*W)
				f.RunRowsFold(f32s(got), f32s(x, next), []float32{0}, [][]float32{mx}, [][]float32{sums, other}, stream)
				what := fmt.Sprintf("row %d, %s, %d rows, stream %v", rowLen, op, rows, stream)
				sameBits(t, what, got, want)
				wantSums := foldPartials(Add, want, rowLen, lanes, W)
				wantOther := foldPartials(op, next, rowLen, lanes, W)
				samePartials(t, what+": add", sums, wantSums)
				samePartials(t, what+": "+op.String(), other, wantOther)
				// Each fold's own code, over the values the fold folds,
				// leaves the same partials, bit for bit.
				for k, x := range [][]float32{want, next} {
					fc, err := f.FoldCode(k)
					if err != nil {
						t.Fatal(err)
					}
					if fc.FoldWidth() != W {
						t.Fatalf("%s: fold %d's code folds %d lanes, want %d", what, k, fc.FoldWidth(), W)
					}
					copied, part := make([]float32, n), make([]float32, rows*W)
					fc.RunRowsFold(f32s(copied), f32s(x), nil, nil, [][]float32{part}, false)
					sameBits(t, what+": the fold's code's copy", copied, x)
					sameBits(t, fmt.Sprintf("%s: fold %d's code", what, k), part, [][]float32{sums, other}[k])
				}
			}
		}
	}
}

// samePartials compares partial results bit for bit, but any NaN for a
// NaN (Go may swap an addition's operands, and so which NaN it keeps)
// and either zero for a zero (MAXPS keeps its second operand of two).
func samePartials(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i, w := range want {
		g := got[i]
		if w != w && g != g || w == 0 && g == 0 {
			continue
		}
		if math.Float32bits(g) != math.Float32bits(w) {
			t.Fatalf("%s: partial %d of %d: got %v (%#x), want %v (%#x)", what, i, len(want), g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
}

// foldPartials folds each row of x as the generated loop does: whole
// iterations of W/lanes vectors while they remain, vector s into the
// partials from s·lanes, then one vector at a time and a last half
// vector into the first lanes.
func foldPartials(op Op, x []float32, rowLen, lanes, W int) []float32 {
	id := math.Float32frombits(foldIdentity(op))
	unroll := W / lanes
	out := make([]float32, len(x)/rowLen*W)
	for r := range len(x) / rowLen {
		acc := out[r*W : (r+1)*W]
		for i := range acc {
			acc[i] = id
		}
		row := x[r*rowLen : (r+1)*rowLen]
		at := func(i, slot int) { acc[slot] = foldOne(op, acc[slot], row[i]) }
		i := 0
		for ; i+unroll*lanes <= rowLen; i += unroll * lanes {
			for k := range unroll * lanes {
				at(i+k, k)
			}
		}
		for ; i < rowLen; i++ {
			if i >= rowLen&^7 {
				// The last partial vector, in the 8-lane code: the first
				// lanes of the first slot.
				at(i, i%8)
				continue
			}
			at(i, i%lanes)
		}
	}
	return out
}

func foldOne(op Op, acc, v float32) float32 {
	switch {
	case op == Add:
		return acc + v
	case acc != acc || v != v:
		return float32(math.NaN())
	case op == Max:
		return max(acc, v)
	}
	return min(acc, v)
}

// TestRowFoldsInSlots is TestRowFolds with the wide loops' accumulators
// kept in their slots, as before they had registers (foldRegs).
func TestRowFoldsInSlots(t *testing.T) {
	foldRegs = false
	defer func() { foldRegs = true }()
	bothWidths(t, testRowFolds)
}

// TestFoldProgramsWide: a row program that folds is generated wide where
// the machine has AVX-512, even without a long op (softmax's maximum,
// layer norm's mean), so that its accumulators live in registers; the
// same program without the fold, which only streams, stays 8-lane.
func TestFoldProgramsWide(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	values := []Value{
		{Op: Input},                   // 0 x
		{Op: Input, Arg: 1},           // 1 mask
		{Op: Add, Args: [3]int{0, 1}}, // 2
	}
	folds, err := Compile(&Program{Inputs: 2, RowLen: 128, Values: values, Outputs: []int{2}, RowFolds: []RowFold{{Op: Max, Value: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Compile(&Program{Inputs: 2, RowLen: 128, Values: values, Outputs: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	if folds.wide != wideCode || plain.wide {
		t.Errorf("wide code: with a fold %v, without %v; want %v and false (AVX-512 here: %v)", folds.wide, plain.wide, wideCode, wideCode)
	}
}
