package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
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
		r := ops.Res[i*ops.LdRes+j]
		if ops.Flags&OpsResBias != 0 {
			r += ops.ResBias[j]
		}
		x += r
	}
	if ops.Flags&OpsFloor != 0 && !(x != x) && x <= ops.Floor {
		// maximum(x, floor) with an equal x kept: -0 stays -0 at a
		// floor of +0.
		if x < ops.Floor {
			x = ops.Floor
		}
	}
	if ops.Flags&OpsCeil != 0 && !(x != x) && x > ops.Ceil {
		x = ops.Ceil // minimum(x, ceil), an equal x kept
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
	directOnly(t)
	if !useAsm {
		t.Skip("no assembly kernels")
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
		maxLeft := 0
		switch path := convPath(p); {
		case path == "pointwise" && !useAVX512:
			// AVX2 runs it as a GEMM of 6-row tiles: a thread's
			// blocks may leave up to five rows each to the epilogue.
			maxLeft = p.OutSpatial[0] * p.OutSpatial[1] * p.OutChannels / 8
		case path != "direct":
			t.Fatalf("%v: takes the %s path, not the direct one", p.InSpatial, path)
		}
		in, kern := randSlice[float32](inputLen(p), rng), randSlice[float32](kernelLen(p), rng)
		m := p.Batch * p.OutSpatial[0] * p.OutSpatial[1]
		n := p.OutChannels
		ld := n + 3 // the residual's rows need not be C's
		bias, res, resBias := randSlice[float32](n, rng), randSlice[float32](m*ld, rng), randSlice[float32](n, rng)
		bias[5] = float32(math.NaN())
		res[7*ld+9] = float32(math.Float32frombits(0x7fa00001)) // a signalling NaN, quieted by the add
		resBias[2] = float32(math.Inf(-1))
		for flags := 1; flags < 256; flags++ {
			if flags&OpsBiasFirst != 0 && flags&OpsBias == 0 || flags&OpsResFirst != 0 && flags&OpsRes == 0 ||
				flags&OpsResBias != 0 && flags&OpsRes == 0 || flags&OpsResBiasFirst != 0 && flags&OpsResBias == 0 {
				continue
			}
			// A ceiling of 0.5 (above the floor) or, every other set,
			// of -0 (below it: the clamp's order decides).
			ops := &TileOps{Bias: bias, Res: res, LdRes: ld, ResBias: resBias, Floor: 0.25, Ceil: 0.5, Flags: flags}
			if flags&3 == 1 {
				ops.Floor, ops.Ceil = 0, float32(math.Copysign(0, -1))
			}
			for threads := 1; threads <= maxThreads; threads++ {
				if err := checkTileOps(p, in, kern, ops, m, n, threads, maxLeft); err != nil {
					t.Fatalf("%v → %d channels, flags %05b, %d threads: %v", p.InSpatial, n, flags, threads, err)
				}
			}
		}
	}
}

// checkTileOps checks convolution p finished with ops against it
// finished by their Go epilogue; the kernels must have finished all but
// at most maxLeft elements themselves.
func checkTileOps(p *Conv, in, kern []float32, ops *TileOps, m, n, threads, maxLeft int) error {
	want, got := make([]float32, m*n), make([]float32, m*n)
	var plain, left int
	if err := ConvEpilogueF32(p, in, kern, want, threads, opsEpilogue(ops, want, n, &plain)); err != nil {
		return err
	}
	if err := ConvFinishedF32(p, in, kern, got, threads, opsEpilogue(ops, got, n, &left), ops, nil); err != nil {
		return err
	}
	if plain != m*n || left > maxLeft {
		return fmt.Errorf("the epilogue finished %d and %d of %d elements: the kernels did not take their blocks", plain, left, m*n)
	}
	return sameFloats(got, want, n)
}

// TestGemmTileOps is TestConvTileOps for products on the direct GEMM
// kernels (on AVX2, the packed GEMM's 6×16 kernel): B packed per call (the first tile of each pair packing it)
// and packed before (the prefetching kernels), the row split and the
// column split, and a pointwise convolution with fewer pixels than
// channels, which runs as such a product. Shapes whose blocks all end in
// whole kernels must reach no epilogue; the others (one to three rows
// left for the scratch tile, columns past the last pair) must reach it
// for those, with the same bits.
func TestGemmTileOps(t *testing.T) {
	if !useAsm {
		t.Skip("no assembly kernels")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for _, c := range []struct {
		m, n, k int
		whole   bool // every block on whole kernels
	}{
		{96, 64, 40, true}, {256, 512, 300, true}, {64, 1536, 384, true}, {100, 64, 24, true},
		{97, 64, 40, false}, {96, 80, 33, false},
	} {
		a := Strided[float32]{Data: randSlice[float32](c.m*c.k, rng), Row: c.k, Col: 1}
		b := Strided[float32]{Data: randSlice[float32](c.k*c.n, rng), Row: c.n, Col: 1}
		packed, err := PackBF32(c.k, c.n, b)
		if err != nil {
			t.Fatal(err)
		}
		bias, res := randSlice[float32](c.n, rng), randSlice[float32](c.m*c.n, rng)
		bias[3] = float32(math.NaN())
		for _, flags := range []int{OpsBias | OpsBiasFirst | OpsFloor, OpsBias | OpsRes | OpsFloor, OpsRes | OpsResFirst,
			OpsBias | OpsRes | OpsResBias | OpsResBiasFirst | OpsResFirst | OpsFloor} {
			ops := &TileOps{Bias: bias, Res: res, LdRes: c.n, ResBias: bias, Flags: flags}
			for threads := 1; threads <= 2; threads++ {
				for _, pre := range []bool{false, true} {
					want, got := make([]float32, c.m*c.n), make([]float32, c.m*c.n)
					var plain, left int
					GemmEpilogueF32(c.m, c.n, c.k, a, b, want, c.n, threads, opsEpilogue(ops, want, c.n, &plain), false)
					if pre {
						if err := GemmPackedFinishedF32(c.m, c.n, c.k, a, b, packed, got, c.n, threads, opsEpilogue(ops, got, c.n, &left), ops, false); err != nil {
							t.Fatal(err)
						}
					} else {
						GemmFinishedF32(c.m, c.n, c.k, a, b, got, c.n, threads, opsEpilogue(ops, got, c.n, &left), ops, false)
					}
					what := fmt.Sprintf("%d×%d×%d, flags %05b, %d threads, packed before %v", c.m, c.n, c.k, flags, threads, pre)
					// (AVX2's tiles are 6 rows by 16 columns: its blocks
					// may leave rows to the epilogue where the AVX-512
					// kernels' heights take them all, and take columns
					// short of a pair; but never leave all. The AVX-512
					// direct kernels leave a block whose columns end
					// short of a pair to the epilogue whole.)
					wide := useAVX512 && wideFor(c.m, c.n, c.k)
					if plain != c.m*c.n || !wide && left == c.m*c.n || wide && (c.whole && left != 0 || !c.whole && left == 0) {
						t.Fatalf("%s: the epilogue finished %d and %d of %d elements", what, plain, left, c.m*c.n)
					}
					if err := sameFloats(got, want, c.n); err != nil {
						t.Fatalf("%s: %v", what, err)
					}
				}
			}
		}
	}
	// A pointwise convolution of 49 pixels, 256 → 512 channels: its last
	// row of a thread's block goes through the scratch tile, and to the
	// epilogue.
	one := []int{1, 1}
	p := newConv(1, 256, 512, 1, []int{7, 7}, one, one, []int{0, 0}, []int{0, 0}, one, one, false)
	if !pointwiseAsGemm(p) {
		t.Fatal("the 7×7 pointwise convolution does not run as a GEMM")
	}
	in, kern := randSlice[float32](inputLen(p), rng), randSlice[float32](kernelLen(p), rng)
	ops := &TileOps{Bias: randSlice[float32](512, rng), Res: randSlice[float32](49*512+5, rng), LdRes: 512, Flags: OpsBias | OpsRes | OpsFloor}
	for threads := 1; threads <= 2; threads++ {
		if err := checkTileOps(p, in, kern, ops, 49, 512, threads, 3*512); err != nil {
			t.Fatalf("pointwise 7×7, %d threads: %v", threads, err)
		}
	}
}

// opsEpilogue is the Go epilogue of ops over C (rows of ldc), counting
// the elements it finishes in seen.
func opsEpilogue(ops *TileOps, c []float32, ldc int, seen *int) Epilogue {
	var mu sync.Mutex
	return func(i, j, rows, cols int) {
		mu.Lock()
		*seen += rows * cols
		mu.Unlock()
		for r := i; r < i+rows; r++ {
			for q := j; q < j+cols; q++ {
				c[r*ldc+q] = opsRef(ops, c[r*ldc+q], r, q)
			}
		}
	}
}

// sameFloats reports the first element of got (rows of ldc) whose bits
// are not want's.
func sameFloats(got, want []float32, ldc int) error {
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Errorf("(%d, %d) = %v (%#x) finished in the kernels, %v (%#x) by the epilogue",
				i/ldc, i%ldc, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	return nil
}
