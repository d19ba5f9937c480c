package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// opsRef is TileOps' definition on element (i, j) of C, as a Go
// epilogue would compute it (the test's operands carry at most one NaN an
// op, so the order of an addition's operands decides no payload).
func opsRef(ops *TileOps, x float32, i, j int) float32 {
	if ops.Flags&OpsBias != 0 {
		x += ops.Bias[j]
	}
	if ops.Flags&OpsRes != 0 {
		x += ops.Res[i*ops.LdRes+j]
	}
	if ops.Flags&OpsFloor != 0 && !(x != x) && x <= ops.Floor {
		// maximum(x, floor) with an equal x kept: -0 stays -0 at a
		// floor of +0.
		if x < ops.Floor {
			x = ops.Floor
		}
	}
	return x
}

// TestConvTileOps runs direct convolutions finished by TileOps in their
// kernels against the same convolutions finished by a Go epilogue, bit
// for bit, for every combination of ops and operand order, on shapes cut
// into 12-row groups and 6-row slivers (and a last sliver overlapping the
// one before), one and two threads, two K blocks (whose split between threads sums
// partial outputs, for the epilogue to finish): the kernels must have
// finished the blocks themselves (the epilogue sees none of them), or
// the test proves nothing.
func TestConvTileOps(t *testing.T) {
	if !useAsm || !useAVX512 {
		t.Skip("no AVX-512 kernels")
	}
	rng := rand.New(rand.NewPCG(31, 32))
	one := []int{1, 1}
	for _, p := range []*Conv{
		newConv(1, 32, 128, 1, []int{28, 28}, one, one, []int{0, 0}, []int{0, 0}, one, one, false),               // pointwise
		newConv(1, 16, 64, 1, []int{19, 23}, []int{3, 3}, one, one, one, one, one, false),                        // groups, slivers, overlaps
		newConv(2, 24, 32, 1, []int{9, 14}, []int{3, 3}, []int{2, 2}, one, one, one, one, false),                 // strided, a batch
		newConv(1, 520, 32, 1, []int{6, 14}, []int{3, 3}, one, one, one, one, one, false),                        // two K blocks (one thread: two split K)
		newConv(1, 3, 32, 1, []int{96, 96}, []int{7, 7}, []int{2, 2}, []int{3, 3}, []int{3, 3}, one, one, false), // a first layer, staged in bands
	} {
		maxThreads := 2
		if p.InChannels == 520 {
			maxThreads = 1
		}
		if convPath(p) != "direct" {
			t.Fatalf("%v: takes the %s path, not the direct one", p.InSpatial, convPath(p))
		}
		in, kern := randSlice[float32](inputLen(p), rng), randSlice[float32](kernelLen(p), rng)
		m := p.Batch * p.OutSpatial[0] * p.OutSpatial[1]
		n := p.OutChannels
		ld := n + 3 // the residual's rows need not be C's
		bias, res := randSlice[float32](n, rng), randSlice[float32](m*ld, rng)
		bias[5] = float32(math.NaN())
		res[7*ld+9] = float32(math.Float32frombits(0x7fa00001)) // a signalling NaN, quieted by the add
		for flags := 1; flags < 32; flags++ {
			if flags&OpsBiasFirst != 0 && flags&OpsBias == 0 || flags&OpsResFirst != 0 && flags&OpsRes == 0 {
				continue
			}
			ops := &TileOps{Bias: bias, Res: res, LdRes: ld, Floor: 0.25, Flags: flags}
			if flags&3 == 1 {
				ops.Floor = 0
			}
			for threads := 1; threads <= maxThreads; threads++ {
				if err := checkTileOps(p, in, kern, ops, m, n, threads); err != nil {
					t.Fatalf("%v → %d channels, flags %05b, %d threads: %v", p.InSpatial, n, flags, threads, err)
				}
			}
		}
	}
}

func checkTileOps(p *Conv, in, kern []float32, ops *TileOps, m, n, threads int) error {
	want, got := make([]float32, m*n), make([]float32, m*n)
	finish := func(c []float32, seen *int) Epilogue {
		return func(i, j, rows, cols int) {
			*seen += rows * cols
			for r := i; r < i+rows; r++ {
				for q := j; q < j+cols; q++ {
					c[r*n+q] = opsRef(ops, c[r*n+q], r, q)
				}
			}
		}
	}
	var plain, left int
	if err := ConvEpilogueF32(p, in, kern, want, threads, finish(want, &plain)); err != nil {
		return err
	}
	if err := ConvFinishedF32(p, in, kern, got, threads, finish(got, &left), ops, nil); err != nil {
		return err
	}
	if plain != m*n || left != 0 {
		return fmt.Errorf("the epilogue finished %d and %d of %d elements: the kernels did not take every block", plain, left, m*n)
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Errorf("out[%d] (%d, %d) = %v (%#x) finished in the kernels, %v (%#x) by the epilogue",
				i, i/n, i%n, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	return nil
}
