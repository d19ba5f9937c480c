package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The rows kernels against the 6×16 kernels they stand in for: every
// width 1–32, row counts around the groups of 12, 6, 3 and 2 (tails of every
// length, fewer rows than a group), depths of one K slice and of two,
// strided A and C, accumulating or not, one and two threads, with and
// without TileOps (every op, each operand order), bit for bit; and
// against float64 sums. Rows the kernels finish with ops must not reach
// the epilogue; every other row must, once, after its last K slice.
func TestRowsNarrowMatchesGemm(t *testing.T) {
	if !rowsNarrowTakes(8, 1) {
		t.Skip("no AVX2 rows kernels here")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	flagSets := []int{0, OpsBias, OpsBias | OpsBiasFirst | OpsFloor,
		OpsRes | OpsResFirst | OpsCeil, OpsBias | OpsRes | OpsResBias | OpsFloor | OpsCeil,
		OpsRes | OpsResBias | OpsResBiasFirst, OpsBias | OpsRes | OpsResBias | OpsResBiasFirst | OpsResFirst}
	for _, k := range []int{1, 3, 8, 9, 64, gemmKC + 37} {
		for _, m := range []int{1, 5, 6, 11, 12, 13, 25, 40, 131} {
			for n := 1; n <= rowsMaxCols; n++ {
				for _, acc := range []bool{false, true} {
					for _, threads := range []int{1, 2} {
						flags := flagSets[rng.IntN(len(flagSets))]
						rowsNarrowCase(t, rng, m, n, k, acc, threads, flags)
					}
				}
			}
		}
	}
}

func rowsNarrowCase(t *testing.T, rng *rand.Rand, m, n, k int, acc bool, threads, flags int) {
	t.Helper()
	name := fmt.Sprintf("m=%d n=%d k=%d acc=%v threads=%d flags=%d", m, n, k, acc, threads, flags)
	lda, ldc, ldr := k+3, n+5, n+2
	a := Strided[float32]{Data: randSlice[float32](m*lda, rng), Row: lda, Col: 1}
	b := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
	c0 := randSlice[float32](m*ldc, rng)
	var ops *TileOps
	if flags != 0 {
		ops = &TileOps{Flags: flags, Bias: randSlice[float32](n, rng), Res: randSlice[float32](m*ldr, rng), LdRes: ldr,
			ResBias: randSlice[float32](n, rng), Floor: -0.3, Ceil: 0.7}
	}
	finish := func(c []float32, i, rows int) {
		for r := i; r < i+rows; r++ {
			for j := range n {
				x := &c[r*ldc+j]
				if flags&OpsBias != 0 {
					*x += ops.Bias[j]
				}
				if flags&OpsRes != 0 {
					res := ops.Res[r*ldr+j]
					if flags&OpsResBias != 0 {
						res += ops.ResBias[j]
					}
					*x += res
				}
				if flags&OpsFloor != 0 {
					*x = max(*x, ops.Floor)
				}
				if flags&OpsCeil != 0 {
					*x = min(*x, ops.Ceil)
				}
			}
		}
	}
	want := append([]float32(nil), c0...)
	rowsNarrowOn = false
	gemm(m, n, k, a, b, want, ldc, acc, threads, sgemmMR, sgemmNR, kernelF32, nil, true)
	rowsNarrowOn = true
	finish(want, 0, m)
	got := append([]float32(nil), c0...)
	slivers := (n + sgemmNR - 1) / sgemmNR
	bp := make([]float32, k*sgemmNR*slivers)
	for pc := 0; pc < k; pc += gemmKC {
		packB(bp[pc*sgemmNR*slivers:], b, pc, 0, min(gemmKC, k-pc), n, sgemmNR, 0, slivers)
	}
	seen := make([]int, m)
	epi := func(i, j, rows, cols int) {
		if j != 0 || cols != n {
			t.Errorf("%s: epilogue block at column %d, %d wide", name, j, cols)
		}
		for r := i; r < i+rows; r++ {
			seen[r]++
		}
		finish(got, i, rows)
	}
	panel := func(pc, kb int) []float32 { return bp[pc*sgemmNR*slivers : (pc+kb)*sgemmNR*slivers] }
	rowsNarrowRun(m, n, k, a, panel, got, ldc, acc, threads, epi, ops)
	g := rowsOf((n + 7) / 8)
	for i := range m {
		finished := 1
		if ops != nil && i < m/g*g {
			finished = 0 // by the kernels
		}
		if seen[i] != finished {
			t.Fatalf("%s: row %d through the epilogue %d times, want %d", name, i, seen[i], finished)
		}
		for j := range ldc {
			g, w := got[i*ldc+j], want[i*ldc+j]
			if math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("%s: C[%d,%d] = %v, the 6×16 kernels give %v", name, i, j, g, w)
			}
			if j >= n {
				if g != c0[i*ldc+j] {
					t.Fatalf("%s: C[%d,%d] past the columns written", name, i, j)
				}
				continue
			}
			if flags != 0 {
				continue
			}
			ref := 0.0
			if acc {
				ref = float64(c0[i*ldc+j])
			}
			for p := range k {
				ref += float64(a.Data[i*lda+p]) * float64(b.Data[p*n+j])
			}
			if math.Abs(float64(g)-ref) > 1e-5*float64(k+1) {
				t.Fatalf("%s: C[%d,%d] = %v, float64 sums give %v", name, i, j, g, ref)
			}
		}
	}
}

// GemmF32's products of 17 to 32 columns on the rows kernels (B packed
// slice by slice for the call, gemmRowsPacking) against the 6×16
// kernels, bit for bit, over one K slice and two.
func TestGemmWideSkinnyMatchesGemm(t *testing.T) {
	if !rowsNarrowTakes(32, 1) {
		t.Skip("no AVX2 rows kernels here")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{17, 24, 25, 31, 32} {
		for _, k := range []int{5, gemmKC + 44} {
			for _, m := range []int{1, 7, 50} {
				for _, threads := range []int{1, 2} {
					a := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
					b := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
					want, got := make([]float32, m*n), make([]float32, m*n)
					skinnyWide = false
					GemmF32(m, n, k, a, b, want, n, false, threads)
					skinnyWide = true
					GemmF32(m, n, k, a, b, got, n, false, threads)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("m=%d n=%d k=%d threads=%d: C[%d] = %v, the 6×16 kernels give %v", m, n, k, threads, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}
