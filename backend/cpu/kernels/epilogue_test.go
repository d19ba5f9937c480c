package kernels

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// finisher is an epilogue that maps every element v of a block to 2v+1
// and counts the visits, so a test can check that each element was
// finished exactly once and only when final: the result is then f of
// the plain product, bit for bit. (C is m×ldc.)
type finisher struct {
	c      []float32
	ldc    int
	visits []atomic.Int32
	parts  atomic.Int32 // blocks that were not whole rows
}

// wholeRows reports whether every block handed over spanned whole rows.
func (f *finisher) wholeRows() bool { return f.parts.Load() == 0 }

func newFinisher(c []float32, ldc, m, n int) *finisher {
	return &finisher{c: c, ldc: ldc, visits: make([]atomic.Int32, m*n)}
}

func (f *finisher) epi(i, j, rows, cols int) {
	if j != 0 || cols != f.ldc {
		f.parts.Add(1)
	}
	for r := i; r < i+rows; r++ {
		for q := j; q < j+cols; q++ {
			f.c[r*f.ldc+q] = 2*f.c[r*f.ldc+q] + 1
			f.visits[r*f.ldc+q].Add(1)
		}
	}
}

func (f *finisher) check(t *testing.T, plain []float32, m, n int) {
	t.Helper()
	for i := range m {
		for j := range n {
			if v := f.visits[i*f.ldc+j].Load(); v != 1 {
				t.Fatalf("C[%d,%d] finished %d times", i, j, v)
			}
			if got, want := f.c[i*f.ldc+j], 2*plain[i*f.ldc+j]+1; got != want {
				t.Fatalf("C[%d,%d] = %v, want %v: finished before it was final", i, j, got, want)
			}
		}
	}
}

// Every GEMM path (packed, skinny with A in place, skinny transposed,
// K = 0) finishes every block once, after its last K slice.
func TestGemmEpilogue(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		sizes := [][3]int{{1, 1, 1}, {7, 17, 9}, {13, 16, 300}, {100, 10, 40}, {301, 16, 20}, {1000, 7, 9}, {700, 16, 100}, {400, 10, 300}, {130, 40, 600}, {300, 200, 100}, {250, 3100, 20}, {5, 6, 0}}
		for _, s := range sizes {
			for _, transA := range []bool{false, true} {
				for _, threads := range []int{1, 3} {
					for _, wholeRows := range []bool{false, true} {
						m, n, k := s[0], s[1], s[2]
						t.Run(fmt.Sprintf("%dx%dx%d/transA=%v/threads=%d/wholeRows=%v", m, n, k, transA, threads, wholeRows), func(t *testing.T) {
							a := Strided[float32]{Data: randSlice[float32](m*k, rng), Row: k, Col: 1}
							if transA {
								a.Row, a.Col = 1, m
							}
							b := Strided[float32]{Data: randSlice[float32](k*n, rng), Row: n, Col: 1}
							plain := make([]float32, m*n)
							GemmF32(m, n, k, a, b, plain, n, false, threads)
							c := make([]float32, m*n)
							f := newFinisher(c, n, m, n)
							GemmEpilogueF32(m, n, k, a, b, c, n, threads, f.epi, wholeRows)
							f.check(t, plain, m, n)
							if wholeRows && GemmWholeRows(n) && !f.wholeRows() {
								t.Fatal("an epilogue asking for whole rows got part of one")
							}
						})
					}
				}
			}
		}
	})
}

// Every convolution path finishes every output block once, when final.
func TestConvEpilogue(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		one := []int{1, 1}
		cases := map[string]*Conv{
			"im2col":    newConv(2, 3, 5, 1, []int{7, 6}, []int{3, 3}, one, one, one, one, one, false),
			"groups":    newConv(2, 6, 4, 2, []int{5, 5}, []int{2, 2}, one, []int{1, 0}, []int{0, 1}, []int{2, 1}, []int{1, 2}, false),
			"depthwise": newConv(3, 24, 24, 24, []int{19, 17}, []int{3, 3}, []int{1, 1}, one, one, one, one, false),
			"direct":    newConv(2, 40, 24, 2, []int{8, 5}, []int{3, 2}, []int{2, 1}, []int{1, 0}, []int{2, 1}, []int{1, 2}, []int{2, 1}, false),
			"split K":   newConv(2, 1024, 5, 1, []int{5, 5}, []int{3, 3}, one, []int{1, 0}, []int{0, 1}, one, one, false),
			// Outputs not in whole pairs of slivers (masked kernels),
			// a narrow pointwise one (direct, rows grouped across
			// output rows), and few-channel channels-first images run
			// in bands of output rows: one an example, and several.
			"masked":    newConv(1, 96, 24, 1, []int{9, 30}, []int{3, 3}, one, one, one, one, one, false),
			"pointwise": newConv(2, 8, 12, 1, []int{9, 13}, one, one, []int{0, 0}, []int{0, 0}, one, one, false),
			"bands":     newConv(2, 3, 16, 1, []int{40, 120}, []int{3, 3}, []int{2, 2}, one, one, one, one, true),
			"bands2":    newConv(1, 3, 8, 1, []int{100, 100}, []int{3, 3}, one, one, one, one, one, true),
			// Fewer pixels than channels: the threads split the columns
			// (blocks of part rows, which ConvWholeRows must own up to).
			"columns": newConv(1, 64, 160, 1, []int{7, 7}, []int{3, 3}, one, one, one, one, one, false),
		}
		for name, p := range cases {
			for _, threads := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/threads=%d", name, threads), func(t *testing.T) {
					in := randSlice[float32](inputLen(p), rng)
					kern := randSlice[float32](kernelLen(p), rng)
					m := p.Batch
					for _, o := range p.OutSpatial {
						m *= o
					}
					plain := make([]float32, m*p.OutChannels)
					if err := ConvF32(p, in, kern, plain, threads); err != nil {
						t.Fatal(err)
					}
					c := make([]float32, len(plain))
					f := newFinisher(c, p.OutChannels, m, p.OutChannels)
					if err := ConvEpilogueF32(p, in, kern, c, threads, f.epi); err != nil {
						t.Fatal(err)
					}
					f.check(t, plain, m, p.OutChannels)
					if ConvWholeRows(p) && !f.wholeRows() {
						t.Fatal("ConvWholeRows says whole rows, but the epilogue got part rows")
					}
				})
			}
		}
	})
}
