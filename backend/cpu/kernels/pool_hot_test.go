package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// hotCase is a kernel call between the hot and the cold split
// thresholds: on one thread outside an execution, split inside one.
type hotCase struct {
	name string
	run  func(out []float32)
	size int
}

// TestHotPoolSplitsSameBits: while an execution keeps the pool hot
// (Busy), the products, convolutions and depthwise convolutions that the
// cold thresholds keep on one thread split across two, and give the same
// bits as on one thread. Among the convolutions, one whose output rows
// are fewer than its channels (where a cold split would take columns)
// and one deep enough for a cold split of K.
func TestHotPoolSplitsSameBits(t *testing.T) {
	if spinYields() {
		t.Skip("GOMAXPROCS 1: the pool has no second thread")
	}
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		fill := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			return x
		}
		var cases []hotCase
		// 96×64 by 64×64: 0.8 MFLOP, under gemmParallelFlops.
		a, b := fill(96*64), fill(64*64)
		cases = append(cases, hotCase{"gemm 96×64×64", func(c []float32) {
			GemmF32(96, 64, 64, Strided[float32]{a, 64, 1}, Strided[float32]{b, 64, 1}, c, 64, false, 2)
		}, 96 * 64})
		conv := func(name string, p *Conv) {
			in, kern := fill(inputLen(p)), fill(kernelLen(p))
			out := p.Batch * p.OutChannels
			for _, o := range p.OutSpatial {
				out *= o
			}
			cases = append(cases, hotCase{name, func(dst []float32) {
				if err := ConvF32(p, in, kern, dst, 2); err != nil {
					t.Fatal(err)
				}
			}, out})
		}
		one, two := []int{1, 1}, []int{2, 2}
		conv("direct 3×3 16→32 at 8×8", newConv(1, 16, 32, 1, []int{8, 8}, []int{3, 3}, one, one, one, one, one, false))
		conv("direct 3×3 32→64 at 4×4 (rows < channels)", newConv(1, 32, 64, 1, []int{4, 4}, []int{3, 3}, one, one, one, one, one, false))
		conv("direct 3×3 456→16 at 3×4 (deep)", newConv(1, 456, 16, 1, []int{3, 4}, []int{3, 3}, one, one, one, one, one, false))
		conv("few channels 3×3/2 3→16 at 48×48", newConv(1, 3, 16, 1, []int{48, 48}, []int{3, 3}, two, one, one, one, one, false))
		conv("depthwise 3×3 32 at 16×16", newConv(1, 32, 32, 32, []int{16, 16}, []int{3, 3}, one, one, one, one, one, false))
		for _, tc := range cases {
			cold, hot := make([]float32, tc.size), make([]float32, tc.size)
			before := Dispatched()
			tc.run(cold)
			if Dispatched() != before {
				t.Errorf("%s: split outside an execution (a cold threshold below it?)", tc.name)
			}
			done := Busy()
			before = Dispatched()
			tc.run(hot)
			split := Dispatched() != before
			done()
			if !split {
				t.Errorf("%s: not split while the pool is hot", tc.name)
			}
			if i := slices.IndexFunc(cold, func(v float32) bool { return math.IsNaN(float64(v)) }); i >= 0 {
				t.Fatalf("%s: NaN at %d", tc.name, i)
			}
			for i := range cold {
				if math.Float32bits(cold[i]) != math.Float32bits(hot[i]) {
					t.Errorf("%s: element %d is %v on one thread, %v split", tc.name, i, cold[i], hot[i])
					break
				}
			}
		}
	})
}
