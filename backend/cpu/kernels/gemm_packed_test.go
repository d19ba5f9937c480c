package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// A product with B packed ahead gives GemmEpilogueF32's bits, and both
// are within the float64 triple loop's bound; the epilogue sees every
// element of C exactly once. Sizes cross the K slice (256) and the
// column block (3072), run on the skinny and one-row paths, the row and
// the column split, with B row-major, strided and transposed.
func TestGemmPackedMatchesUnpacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	sizes := [][3]int{{1, 1, 1}, {1, 40, 33}, {5, 17, 9}, {6, 16, 16}, {7, 33, 300}, {13, 100, 257},
		{128, 384, 64}, {130, 70, 513}, {64, 3100, 40}, {200, 48, 520}}
	withKernels(t, func(t *testing.T) {
		for _, s := range sizes {
			for _, layout := range []string{"rows", "strided", "transposed"} {
				for _, threads := range []int{1, 2, 3} {
					for _, whole := range []bool{false, true} {
						checkPacked(t, rng, s[0], s[1], s[2], layout, threads, whole)
					}
				}
			}
		}
	})
}

func checkPacked(t *testing.T, rng *rand.Rand, m, n, k int, layout string, threads int, whole bool) {
	t.Helper()
	name := fmt.Sprintf("m=%d n=%d k=%d %s threads=%d wholeRows=%v", m, n, k, layout, threads, whole)
	a := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
	var b Strided[float32]
	switch layout {
	case "rows":
		b = Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
	case "strided":
		b = Strided[float32]{Data: randSlice[float32](k*n*2, rng), Row: 2 * n, Col: 2}
	default:
		b = Strided[float32]{Data: randSlice[float32](k*n, rng), Row: 1, Col: k}
	}
	pb, err := PackBF32(k, n, b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ldc := n + 2
	want, got := make([]float32, m*ldc), make([]float32, m*ldc)
	for i := range got {
		want[i], got[i] = 99, 99
	}
	seen := make([]atomic.Int32, m*n)
	epi := func(i, j, rows, cols int) {
		for r := i; r < i+rows; r++ {
			for q := j; q < j+cols; q++ {
				seen[r*n+q].Add(1)
			}
		}
	}
	GemmEpilogueF32(m, n, k, a, b, want, ldc, threads, nil, whole)
	if err := GemmPackedEpilogueF32(m, n, k, a, b, pb, got, ldc, threads, epi, whole); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ref := refGemm(m, n, k, a, b)
	for i := range m {
		for j := range ldc {
			g, w := got[i*ldc+j], want[i*ldc+j]
			if math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("%s: C[%d,%d] = %v packed, %v unpacked", name, i, j, g, w)
			}
			if j < n {
				if r := ref[i*n+j]; !(math.Abs(float64(g)-r) <= 1e-5*float64(k)+1e-6) {
					t.Fatalf("%s: C[%d,%d] = %v, want %v", name, i, j, g, r)
				}
				if c := seen[i*n+j].Load(); c != 1 {
					t.Fatalf("%s: the epilogue saw C[%d,%d] %d times", name, i, j, c)
				}
			}
		}
	}
}

func TestGemmPackedBadArgs(t *testing.T) {
	if _, err := PackBF32(-1, 3, Strided[float32]{}); err == nil {
		t.Error("negative k packed")
	}
	if _, err := PackBF32(4, 4, Strided[float32]{Data: make([]float32, 15), Row: 4, Col: 1}); err == nil {
		t.Error("15 values packed as 4×4")
	}
	pb, err := PackBF32(4, 4, Strided[float32]{Data: make([]float32, 16), Row: 4, Col: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := make([]float32, 16)
	a := Strided[float32]{Data: make([]float32, 20), Row: 5, Col: 1}
	if err := GemmPackedEpilogueF32(4, 4, 5, a, Strided[float32]{}, pb, c, 4, 1, nil, false); err == nil {
		t.Error("a K of 5 ran on a B packed with 4")
	}
	if err := GemmPackedEpilogueF32(4, 4, 4, a, Strided[float32]{}, nil, c, 4, 1, nil, false); err == nil {
		t.Error("nil packed B ran")
	}
}

// The product of a transformer layer with its weights packed ahead and
// packed per call (BenchmarkGemmPacked/…/packed against …/each-call).
func BenchmarkGemmPacked(b *testing.B) {
	for _, s := range [][3]int{{128, 1536, 384}, {128, 384, 1536}, {128, 384, 384}} {
		m, n, k := s[0], s[1], s[2]
		rng := rand.New(rand.NewPCG(1, 2))
		a := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
		bs := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
		c := make([]float32, m*n)
		pb, _ := PackBF32(k, n, bs)
		for _, mode := range []string{"each-call", "packed"} {
			b.Run(fmt.Sprintf("%dx%dx%d/%s", m, n, k, mode), func(b *testing.B) {
				for b.Loop() {
					if mode == "packed" {
						_ = GemmPackedEpilogueF32(m, n, k, a, bs, pb, c, n, 2, nil, false)
					} else {
						GemmEpilogueF32(m, n, k, a, bs, c, n, 2, nil, false)
					}
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// packBCols deals a column-contiguous B (a transposed operand) into
// slivers of 16: every value where the sliver layout puts it, bit for
// bit, zeros past the last column, at depths that leave 0 to 15 rows
// after the 16×16 blocks, on every kernel level.
func TestPackBCols(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, kb := range []int{1, 15, 16, 17, 31, 32, 33, 48, 63, 64, 100} {
			for _, nb := range []int{16, 17, 32, 40} {
				const ld, pc, jc = 131, 3, 2 // B's column stride, and the block's origin
				src := make([]float32, (jc+nb)*ld)
				for i := range src {
					src[i] = math.Float32frombits(rng.Uint32())
				}
				b := Strided[float32]{Data: src, Row: 1, Col: ld}
				slivers := (nb + 15) / 16
				dst := make([]float32, slivers*kb*16)
				for i := range dst {
					dst[i] = 5
				}
				packBCols(dst, b, pc, jc, kb, nb, 16, 0, slivers)
				for sl := range slivers {
					for p := range kb {
						for c := range 16 {
							got := dst[sl*kb*16+p*16+c]
							want := float32(0)
							if j := sl*16 + c; j < nb {
								want = src[(jc+j)*ld+pc+p]
							}
							if math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("kb %d nb %d: sliver %d row %d column %d: %#x, want %#x", kb, nb, sl, p, c, math.Float32bits(got), math.Float32bits(want))
							}
						}
					}
				}
			}
		}
	})
}
