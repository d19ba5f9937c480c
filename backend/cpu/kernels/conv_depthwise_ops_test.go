package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The AVX2 depthwise kernel finishing its sums with TileOps (a bias and
// bounds) against the plain kernel with the ops applied after, bit for
// bit: channel counts of whole vectors, strides (stride 2 keeps the
// epilogue pass), paddings wider than the window (rows all padding), 3×3 and 5×5 windows, one and two threads,
// each op set. The pixels the kernel finishes must not reach the
// epilogue, and every other pixel must, once.
func TestDepthwiseOpsMatchEpilogue(t *testing.T) {
	if !depthwiseOpsTake(8, &TileOps{Flags: OpsBias}) {
		t.Skip("no AVX2 depthwise kernel here")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	flagSets := []int{OpsBias, OpsBias | OpsBiasFirst, OpsBias | OpsFloor | OpsCeil, OpsFloor, OpsBias | OpsBiasFirst | OpsCeil}
	for _, c := range []int{8, 16, 32, 40, 96} {
		for _, s := range []struct{ h, w, k, stride, pad int }{{9, 13, 3, 1, 1}, {10, 17, 3, 2, 1}, {7, 6, 5, 1, 2}, {6, 11, 3, 1, 4}, {12, 12, 5, 2, 2}} {
			for _, threads := range []int{1, 2} {
				flags := flagSets[rng.IntN(len(flagSets))]
				name := fmt.Sprintf("c=%d %dx%d k%d s%d pad%d threads=%d flags=%d", c, s.h, s.w, s.k, s.stride, s.pad, threads, flags)
				pad := []int{s.pad, s.pad}
				one := []int{1, 1}
				p := newConv(2, c, c, c, []int{s.h, s.w}, []int{s.k, s.k}, []int{s.stride, s.stride}, pad, pad, one, one, false)
				in := randSlice[float32](inputLen(p), rng)
				kern := randSlice[float32](kernelLen(p), rng)
				pixels := 2 * p.OutSpatial[0] * p.OutSpatial[1]
				ops := &TileOps{Flags: flags, Bias: randSlice[float32](c, rng), Floor: -0.2, Ceil: 0.3}
				finish := func(out []float32, i, rows int) {
					for px := i; px < i+rows; px++ {
						for ch := range c {
							x := &out[px*c+ch]
							if flags&OpsBias != 0 {
								*x += ops.Bias[ch]
							}
							if flags&OpsFloor != 0 && !(ops.Floor <= *x) {
								*x = ops.Floor
							}
							if flags&OpsCeil != 0 && !(ops.Ceil >= *x) {
								*x = ops.Ceil
							}
						}
					}
				}
				want := make([]float32, pixels*c)
				convDepthwise(p, in, kern, want, threads, nil)
				finish(want, 0, pixels)
				got := make([]float32, pixels*c)
				seen := make([]int, pixels)
				epi := func(i, j, rows, cols int) {
					if j != 0 || cols != c {
						t.Errorf("%s: epilogue block at column %d, %d wide", name, j, cols)
					}
					for px := i; px < i+rows; px++ {
						seen[px]++
					}
					finish(got, i, rows)
				}
				convDepthwiseOps(p, in, kern, got, threads, epi, ops)
				byKernel := 0
				for px, n := range seen {
					if n > 1 {
						t.Fatalf("%s: pixel %d through the epilogue %d times", name, px, n)
					}
					byKernel += 1 - n
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: out[%d] (pixel %d) = %v, the epilogue pass gives %v", name, i, i/c, got[i], want[i])
					}
				}
				if s.stride == 1 && s.w-2*s.pad >= 4+s.k && byKernel == 0 {
					t.Fatalf("%s: no pixel finished by the kernel", name)
				}
			}
		}
	}
}
