package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The direct kernels (A read in place, and B packed by the kernels as
// they first read it, or not; on AVX2, the 6×16 direct kernel) give the
// packed kernels' bits: A
// row-major with a row stride longer than K (a view of wider rows) and a
// stride of 0 (every row the same), rows and columns past whole slivers
// and sliver pairs, several KC slices, accumulating or not, one and two
// threads with either split, and an epilogue that sees every element once.
func TestGemmDirectA(t *testing.T) {
	if !useAsm {
		t.Skip("no assembly kernels")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, s := range [][4]int{ // m, n, k, extra row length of A
		{12, 32, 5, 0}, {13, 64, 300, 3}, {5, 48, 17, 1}, {96, 512, 784, 0},
		{97, 301, 513, 7}, {250, 200, 300, 0}, {40, 700, 257, 2}, {7, 33, 1, 0},
	} {
		for _, row := range []int{s[2] + s[3], 0} {
			for _, acc := range []bool{false, true} {
				for _, threads := range []int{1, 2} {
					for _, cols := range []bool{false, true} {
						name := fmt.Sprintf("%dx%dx%d/row=%d/acc=%v/threads=%d/columns=%v", s[0], s[1], s[2], row, acc, threads, cols)
						checkDirect(t, rng, name, s[0], s[1], s[2], row, acc, threads, cols)
					}
				}
			}
		}
	}
}

func checkDirect(t *testing.T, rng *rand.Rand, name string, m, n, k, row int, acc bool, threads int, cols bool) {
	t.Helper()
	a := Strided[float32]{Data: randSlice[float32](max(m*row, k)+row, rng), Row: row, Col: 1}
	b := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
	ldc := n + 3
	init := randSlice[float32](m*ldc, rng)
	run := func(direct, packB bool) ([]float32, []int) {
		defer func(d, p, c bool) { directA, directPackB, columnSplit = d, p, c }(directA, directPackB, columnSplit)
		directA, directPackB, columnSplit = direct, packB, cols
		c := append([]float32(nil), init...)
		seen := make([]int, m*n)
		epi := func(i, j, rows, cols int) {
			for r := i; r < i+rows; r++ {
				for q := j; q < j+cols; q++ {
					seen[r*n+q]++
				}
			}
		}
		if acc {
			GemmF32(m, n, k, a, b, c, ldc, true, threads)
			return c, nil
		}
		GemmEpilogueF32(m, n, k, a, b, c, ldc, threads, epi, false)
		return c, seen
	}
	want, _ := run(false, false)
	var got []float32
	for _, packB := range []bool{false, true} {
		var seen []int
		got, seen = run(true, packB)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s packB=%v: C[%d,%d] = %v direct, %v packed", name, packB, i/ldc, i%ldc, got[i], want[i])
			}
		}
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("%s packB=%v: epilogue saw C[%d,%d] %d times", name, packB, i/n, i%n, s)
			}
		}
	}
	// The packed result is itself checked against the float64 triple loop
	// by TestGemmSizesAndStrides; check the direct one too, here.
	ref := refGemm(m, n, k, a, b)
	for i := range m {
		for j := range n {
			w := ref[i*n+j]
			if acc {
				w += float64(init[i*ldc+j])
			}
			if g := float64(got[i*ldc+j]); !(math.Abs(g-w) <= 1e-5*float64(k)+1e-5) {
				t.Fatalf("%s: C[%d,%d] = %v, want %v", name, i, j, g, w)
			}
		}
	}
}

// Every number of rows a block can have runs on the direct kernels of
// 12, 8, 6 and 4 rows (AVX2: 6, and the 6-row tile ending a block) with
// the packed kernels' bits: 1 to 30 rows (each
// remainder of 12, and the last one to three rows through the scratch
// tile), and blocks cut from 64, 244 and 256 rows.
func TestGemmDirectHeights(t *testing.T) {
	if !useAsm {
		t.Skip("no assembly kernels")
	}
	rng := rand.New(rand.NewPCG(23, 24))
	ms := []int{64, 244, 256}
	for m := 1; m <= 30; m++ {
		ms = append(ms, m)
	}
	for _, m := range ms {
		for _, acc := range []bool{false, true} {
			name := fmt.Sprintf("%dx64x37/acc=%v", m, acc)
			checkDirect(t, rng, name, m, 64, 37, 37+1, acc, 1, false)
		}
	}
}

// directHeight cuts any number of rows into kernels of 12, 8, 6 and 4
// rows leaving at most three, and none when the number is even (and at
// least 4).
func TestDirectHeight(t *testing.T) {
	for n := range 200 {
		left, cuts := n, []int{}
		for left >= 4 {
			h := directHeight(left)
			if h != 12 && h != 8 && h != 6 && h != 4 || h > left {
				t.Fatalf("%d rows: a cut of %d with %d left", n, h, left)
			}
			cuts, left = append(cuts, h), left-h
		}
		if left > 3 || n >= 4 && n%2 == 0 && left != 0 {
			t.Fatalf("%d rows: cut %v, %d left over", n, cuts, left)
		}
		if n >= 16 && cuts[0] != 12 {
			t.Fatalf("%d rows: cut %v, not 12 first", n, cuts)
		}
	}
}

// The AVX2 direct block (macroKernelDirectAVX2) on its own, one thread,
// against the packed block: every row count 1 to 30 (a last tile of 1 to
// 5 rows read in place ending the block, or packed where the block has
// fewer than six rows above its end), columns past whole slivers, two K
// slices, B packed before (its prefetch streams) or by the product,
// accumulating or not. Under gemmFrom it runs only in the column split.
func TestGemmDirectAVX2Rows(t *testing.T) {
	if !useAsm || useAVX512 {
		t.Skip("no AVX2-only kernels here")
	}
	rng := rand.New(rand.NewPCG(25, 26))
	for m := 1; m <= 30; m++ {
		for _, n := range []int{48, 40} {
			k, lda := 300, 303
			a := Strided[float32]{Data: randSlice[float32]((m-1)*lda+k, rng), Row: lda, Col: 1}
			b := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
			packed, err := PackBF32(k, n, b)
			if err != nil {
				t.Fatal(err)
			}
			pb := func(dst []float32, pc, jc, kb, nb, from, to int) { packB(dst, b, pc, jc, kb, nb, sgemmNR, from, to) }
			init := randSlice[float32](m*n, rng)
			for _, pre := range []bool{false, true} {
				src := bSource[float32]{pack: pb}
				if pre {
					src = bSource[float32]{panel: packed.panel, peek: packed.panel}
				}
				for _, acc := range []bool{false, true} {
					run := func(blk aBlock[float32]) []float32 {
						c := append([]float32(nil), init...)
						gemmCoreFrom(m, n, k, blk, src, c, n, acc, 1, sgemmMR, sgemmNR, nil)
						return c
					}
					pa := func(dst []float32, ic, pc, mb, kb int) { packA(dst, a, ic, pc, mb, kb, sgemmMR) }
					want := run(packedBlock(pa, sgemmMR, sgemmNR, kernelF32, wideGemm))
					direct := directBlock(a, b, sgemmMR, sgemmNR, true, wideGemm)
					if direct.run == nil {
						t.Fatal("no AVX2 direct block")
					}
					got := run(direct)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("m=%d n=%d packed before %v acc %v: C[%d,%d] = %v direct, %v packed", m, n, pre, acc, i/n, i%n, got[i], want[i])
						}
					}
				}
			}
		}
	}
}
