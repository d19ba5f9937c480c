package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// winoCases are 3×3 convolutions Winograd takes, on F(2×2, 3×3) and
// F(4×4, 3×3) both: odd and even outputs (tiles past the last row and
// column), paddings of 0, 1 and 2 and uneven ones, batches,
// channels-first kernels (ONNX's OIHW), enough tile rows for several
// bands, and too few bands for the threads (the output channels split, a
// partial pair of slivers last).
func winoCases() []*Conv {
	one := []int{1, 1}
	return []*Conv{
		newConv(1, 32, 32, 1, []int{8, 8}, []int{3, 3}, one, []int{0, 0}, []int{0, 0}, one, one, false),
		newConv(2, 32, 48, 1, []int{7, 9}, []int{3, 3}, one, []int{1, 1}, []int{1, 1}, one, one, false),
		newConv(1, 40, 33, 1, []int{6, 5}, []int{3, 3}, one, []int{2, 0}, []int{1, 2}, one, one, false),
		newConv(3, 64, 64, 1, []int{14, 14}, []int{3, 3}, one, []int{1, 1}, []int{1, 1}, one, one, false),
		newConv(1, 256, 256, 1, []int{7, 7}, []int{3, 3}, one, []int{1, 1}, []int{1, 1}, one, one, false),
		newConv(1, 96, 160, 1, []int{5, 4}, []int{3, 3}, one, []int{1, 1}, []int{1, 1}, one, one, false),
		newConv(1, 64, 72, 1, []int{30, 30}, []int{3, 3}, one, []int{1, 1}, []int{1, 1}, one, one, false),
		channelsLastImage(newConv(2, 32, 64, 1, []int{9, 10}, []int{3, 3}, one, []int{1, 1}, []int{1, 1}, one, one, true)),
		newConv(1, 48, 40, 1, []int{17, 19}, []int{3, 3}, one, []int{1, 1}, []int{1, 1}, one, one, false),
		channelsLastImage(newConv(2, 40, 96, 1, []int{16, 16}, []int{3, 3}, one, []int{1, 2}, []int{1, 0}, one, one, true)),
		newConv(1, 256, 160, 1, []int{16, 16}, []int{3, 3}, one, []int{1, 1}, []int{1, 1}, one, one, false),
		// Fewer output channels than a pair of slivers: the products'
		// partial pairs.
		newConv(1, 96, 24, 1, []int{20, 20}, []int{3, 3}, one, []int{1, 1}, []int{1, 1}, one, one, false),
		newConv(2, 32, 16, 1, []int{9, 11}, []int{3, 3}, one, []int{1, 1}, []int{1, 1}, one, one, false),
		// Negative padding (a crop) on one side, a wide pad on the other.
		newConv(1, 32, 32, 1, []int{13, 12}, []int{3, 3}, one, []int{-1, 3}, []int{0, -2}, one, one, false),
		newConv(2, 32, 48, 1, []int{22, 21}, []int{3, 3}, one, []int{-2, 0}, []int{1, -1}, one, one, false),
	}
}

// channelsLastImage keeps p's channels-first (OIHW) kernel and lays its
// image out channels last, as the ONNX importer's convolutions run.
func channelsLastImage(p *Conv) *Conv {
	st := p.InChannels
	for d := len(p.InSpatial) - 1; d >= 0; d-- {
		p.InSpatialStrides[d] = st
		st *= p.InSpatial[d]
	}
	p.InChannelStride, p.InBatchStride = 1, st
	return p
}

// winoBound is the documented bound of Winograd's rounding, a fraction of
// Σ|image|·|kernel| over the window (what the output would be with every
// sign alike): 2⁻¹⁹ (32 units in the last place of f32) on F(2×2, 3×3),
// 2⁻¹⁷ on F(4×4, 3×3), whose transforms scale by up to 8 and 5 and whose
// kernel transform has sixths. The cases here reach 0.09 and 0.4 of
// them.
func winoBound(p *Conv, in, kern []float32) []float64 {
	abs := func(s []float32) []float32 {
		r := make([]float32, len(s))
		for i, v := range s {
			r[i] = float32(math.Abs(float64(v)))
		}
		return r
	}
	s := refConv(p, abs(in), abs(kern))
	f := 0x1p-19
	if winoTile(p) == 4 {
		f = 0x1p-17
	}
	for i := range s {
		s[i] *= f
	}
	return s
}

// F(2×2, 3×3) against the float64 definition within winoBound, on every
// kernel level and 1–3 threads, the kernel transformed per call and
// cached.
func TestConvWinograd(t *testing.T) {
	smallWinograd(t)
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		tiles := map[int]bool{}
		for ci, p := range winoCases() {
			if !winogradTakes(p) {
				t.Fatalf("case %d: Winograd does not take it", ci)
			}
			tiles[winoTile(p)] = true
			in := randSlice[float32](inputLen(p), rng)
			kern := randSlice[float32](kernelLen(p), rng)
			want, bound := refConv(p, in, kern), winoBound(p, in, kern)
			for _, threads := range []int{1, 2, 3} {
				for _, cached := range []bool{false, true} {
					t.Run(fmt.Sprintf("case%d/threads=%d/cached=%v", ci, threads, cached), func(t *testing.T) {
						var cache *ConvKernelCache
						if cached {
							cache = &ConvKernelCache{}
						}
						out := make([]float32, len(want))
						for range 2 { // the cache's second call reads what the first made
							for i := range out {
								out[i] = float32(math.NaN())
							}
							if err := ConvPackedF32(p, in, kern, out, threads, nil, cache); err != nil {
								t.Fatal(err)
							}
						}
						worst := 0.0
						for i, w := range want {
							d := math.Abs(float64(out[i]) - w)
							if !(d <= bound[i]) {
								t.Fatalf("out[%d] = %v, want %v (bound %g)", i, out[i], w, bound[i])
							}
							worst = max(worst, d/bound[i])
						}
						t.Logf("F(%d×%[1]d, 3×3): worst error %.3f of the bound", winoTile(p), worst)
					})
				}
			}
		}
		if !tiles[2] || !tiles[4] {
			t.Fatalf("the cases run on tiles %v, not both F(2×2) and F(4×4)", tiles)
		}
	})
}

// The assembly transforms give the Go twins' bits, on both tile sizes,
// for channel counts with and without a tail of fewer than eight, and
// strides that are not the channel count.
func TestWinoTransformsMatchGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, m := range []int{2, 4} {
		a := m + 2
		for _, c := range []int{8, 13, 32, 40} {
			row, col, vs := 7*c+5, c+3, a*a*c+11
			d := randSlice[float32](a*row+a*col+c, rng)
			got, want := make([]float32, a*a*vs), make([]float32, a*a*vs)
			winoInput(m, d, row, col, got, vs, c)
			winoInputGo(m, d, row, col, want, vs, c)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("F(%d×%[1]d) input transform, %d channels: v[%d] = %v, Go gives %v", m, c, i, got[i], want[i])
				}
			}
			yrow, ycol := m*c+9, c+1
			gy, wy := make([]float32, m*yrow+m*ycol+c), make([]float32, m*yrow+m*ycol+c)
			winoOutput(m, got, vs, gy, yrow, ycol, c)
			winoOutputGo(m, got, vs, wy, yrow, ycol, c)
			for i := range wy {
				if math.Float32bits(gy[i]) != math.Float32bits(wy[i]) {
					t.Fatalf("F(%d×%[1]d) output transform, %d channels: y[%d] = %v, Go gives %v", m, c, i, gy[i], wy[i])
				}
			}
		}
	}
}

// ResNet-50's 3×3 layers at half width (the ONNX corpus's model), batch
// 1, and the bench's batch-32 layer, on Winograd (as chosen), F(2×2,
// 3×3) alone and the direct path, two threads, the kernel cached as a
// model's constant is; GFLOP/s counts the direct form's flops.
func BenchmarkConvWinograd(b *testing.B) {
	one := []int{1, 1}
	for _, s := range []struct{ batch, hw, c int }{{1, 56, 32}, {1, 28, 64}, {1, 14, 128}, {1, 7, 256}, {32, 56, 64}} {
		p := newConv(s.batch, s.c, s.c, 1, []int{s.hw, s.hw}, []int{3, 3}, one, one, one, one, one, false)
		rng := rand.New(rand.NewPCG(1, 2))
		in := randSlice[float32](inputLen(p), rng)
		kern := randSlice[float32](kernelLen(p), rng)
		out := make([]float32, p.Batch*s.hw*s.hw*s.c)
		flops := 2 * float64(len(out)) * float64(9*s.c)
		for _, mode := range []string{"winograd", "winograd2", "direct"} {
			b.Run(fmt.Sprintf("b%d_%dx%dx%d/%s", s.batch, s.hw, s.hw, s.c, mode), func(b *testing.B) {
				defer func(w, f4 bool) { winograd, winoF4 = w, f4 }(winograd, winoF4)
				winograd, winoF4 = mode != "direct", mode == "winograd"
				cache := &ConvKernelCache{}
				for b.Loop() {
					if err := ConvPackedF32(p, in, kern, out, 2, nil, cache); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// The epilogue gets every output element exactly once, final when handed
// over (it rewrites each as the output's value plus one, and the result
// is the plain convolution's plus one), and whole rows wherever
// ConvWholeRows promises them.
func TestConvWinogradEpilogue(t *testing.T) {
	smallWinograd(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for ci, p := range winoCases() {
		in := randSlice[float32](inputLen(p), rng)
		kern := randSlice[float32](kernelLen(p), rng)
		plain := make([]float32, len(refConv(p, in, kern)))
		if err := ConvF32(p, in, kern, plain, 1); err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 2, 3} {
			out := make([]float32, len(plain))
			seen := make([]int32, len(plain))
			var mu sync.Mutex
			partRows := false
			epi := func(i, j, rows, cols int) {
				mu.Lock()
				defer mu.Unlock()
				if j != 0 || cols != p.OutChannels {
					partRows = true
				}
				for r := i; r < i+rows; r++ {
					for c := j; c < j+cols; c++ {
						seen[r*p.OutChannels+c]++
						out[r*p.OutChannels+c]++
					}
				}
			}
			if err := ConvEpilogueF32(p, in, kern, out, threads, epi); err != nil {
				t.Fatal(err)
			}
			for i := range out {
				if seen[i] != 1 {
					t.Fatalf("case %d, %d threads: element %d handed to the epilogue %d times", ci, threads, i, seen[i])
				}
				if out[i] != plain[i]+1 {
					t.Fatalf("case %d, %d threads: element %d finished as %v, want %v", ci, threads, i, out[i], plain[i]+1)
				}
			}
			if partRows && ConvWholeRows(p) {
				t.Fatalf("case %d, %d threads: part rows handed over where ConvWholeRows promises whole ones", ci, threads)
			}
		}
	}
}

// Goroutines sharing one cache on their first call (each may transform
// the kernel; one transform is kept) give the bits of a lone call.
func TestConvWinogradSharedCache(t *testing.T) {
	smallWinograd(t)
	rng := rand.New(rand.NewPCG(17, 18))
	for _, p := range winoCases()[6:] {
		in := randSlice[float32](inputLen(p), rng)
		kern := randSlice[float32](kernelLen(p), rng)
		want := make([]float32, len(refConv(p, in, kern)))
		if err := ConvF32(p, in, kern, want, 2); err != nil {
			t.Fatal(err)
		}
		cache := &ConvKernelCache{}
		var wg sync.WaitGroup
		outs := make([][]float32, 4)
		for g := range outs {
			outs[g] = make([]float32, len(want))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
					if err := ConvPackedF32(p, in, kern, outs[g], 2, nil, cache); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		for g, out := range outs {
			for i := range want {
				if math.Float32bits(out[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v: goroutine %d: out[%d] = %v, a lone call gives %v", p.InSpatial, g, i, out[i], want[i])
				}
			}
		}
		if cache.wino == nil {
			t.Fatalf("%v: no transformed kernel kept", p.InSpatial)
		}
	}
}

// TransformWinograd refuses what it cannot transform with an error, not a
// panic: a kernel too short for its strides, a window other than 3×3,
// groups, inconsistent parameters.
func TestTransformWinogradBadArgs(t *testing.T) {
	one := []int{1, 1}
	p := newConv(1, 32, 32, 1, []int{8, 8}, []int{3, 3}, one, one, one, one, one, false)
	if _, err := TransformWinograd(p, make([]float32, kernelLen(p)-1)); err == nil {
		t.Error("a kernel one value short: no error")
	}
	if _, err := TransformWinograd(p, make([]float32, kernelLen(p))); err != nil {
		t.Errorf("a whole kernel: %v", err)
	}
	q := newConv(1, 32, 32, 1, []int{8, 8}, []int{5, 5}, one, one, one, one, one, false)
	if _, err := TransformWinograd(q, make([]float32, kernelLen(q))); err == nil {
		t.Error("a 5×5 window: no error")
	}
	g := newConv(1, 32, 32, 2, []int{8, 8}, []int{3, 3}, one, one, one, one, one, false)
	if _, err := TransformWinograd(g, make([]float32, kernelLen(g))); err == nil {
		t.Error("two groups: no error")
	}
	bad := *p
	bad.Stride = []int{1}
	if _, err := TransformWinograd(&bad, make([]float32, kernelLen(p))); err == nil {
		t.Error("one stride for two dimensions: no error")
	}
}

// An infinity, a NaN or a value of 2⁴⁸ or more in the image or the kernel
// sends the convolution to the direct path, whose bits it then has: an
// infinity reaches only the outputs whose windows hold it.
func TestConvWinogradSpecialValues(t *testing.T) {
	smallWinograd(t)
	rng := rand.New(rand.NewPCG(19, 20))
	one := []int{1, 1}
	p := newConv(1, 32, 32, 1, []int{16, 16}, []int{3, 3}, one, one, one, one, one, false)
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0x1p48, -0x1p60} {
		for _, where := range []string{"image", "kernel"} {
			in := randSlice[float32](inputLen(p), rng)
			kern := randSlice[float32](kernelLen(p), rng)
			if where == "image" {
				in[(5*16+7)*32+3] = bad
			} else {
				kern[100] = bad
			}
			got, want := make([]float32, 16*16*32), make([]float32, 16*16*32)
			if err := ConvPackedF32(p, in, kern, got, 2, nil, &ConvKernelCache{}); err != nil {
				t.Fatal(err)
			}
			func() {
				defer func(v bool) { winograd = v }(winograd)
				winograd = false
				if err := ConvF32(p, in, kern, want, 2); err != nil {
					t.Fatal(err)
				}
			}()
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v in the %s: out[%d] = %v, the direct path gives %v", bad, where, i, got[i], want[i])
				}
			}
		}
	}
	// Just under the bound, the image is Winograd's.
	in := randSlice[float32](inputLen(p), rng)
	in[77] = -0x1.fffffep47
	if !winoInputSafe(p, in) {
		t.Fatal("an image under 2⁴⁸ found unsafe")
	}
}

// absMaxBits (assembly where there is some) against the Go loop, lengths
// around its 32-value steps, with NaNs, infinities and negative values.
func TestAbsMaxBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for n := range 100 {
		x := randSlice[float32](n, rng)
		if n > 0 {
			x[rng.IntN(n)] = []float32{-3e30, float32(math.Inf(-1)), float32(math.NaN()), 5}[n%4]
		}
		if got, want := absMaxBits(x), absMaxBitsGo(x); got != want {
			t.Fatalf("n=%d: %#x, the Go loop gives %#x", n, got, want)
		}
	}
}

// Which layers take Winograd and on which tile: thin and strided ones
// not, F(4×4) for large maps of moderate channels, F(2×2) for small
// maps and for kernels whose F(4×4) transform would outgrow
// winoKernelValues, the direct path past its F(2×2) one.
func TestWinogradChoice(t *testing.T) {
	one, two := []int{1, 1}, []int{2, 2}
	for _, c := range []struct {
		batch, hw, cin, cout int
		stride               []int
		tile                 int // 0: not Winograd
	}{
		{1, 56, 32, 32, one, 4},
		{1, 56, 16, 32, one, 4},
		{1, 56, 16, 24, one, 0},   // C·K/(C+K) under 10
		{1, 56, 8, 64, one, 0},    // too few input channels
		{1, 80, 96, 24, one, 4},   // PP-OCR det's
		{1, 10, 96, 24, one, 0},   // 4 MFLOP
		{1, 56, 64, 64, two, 0},   // strided
		{1, 14, 128, 128, one, 4}, // 16 tiles
		{1, 12, 96, 96, one, 2},   // 9 tiles
		{2, 12, 96, 96, one, 4},   // 18 tiles over the batch
		{2, 10, 64, 64, one, 2},   // F(4×4) would cover 1.44 of the output
		{1, 7, 256, 256, one, 2},
		{1, 16, 256, 256, one, 2}, // F(4×4)'s kernel 2.4 M values
		{1, 16, 240, 240, one, 4},
		{1, 7, 512, 512, one, 2}, // F(2×2)'s kernel 4 M values: the most
		{1, 7, 512, 640, one, 0},
	} {
		p := newConv(c.batch, c.cin, c.cout, 1, []int{c.hw, c.hw}, []int{3, 3}, c.stride, one, one, one, one, false)
		tile := 0
		if winogradTakes(p) {
			tile = winoTile(p)
		}
		if tile != c.tile {
			t.Errorf("batch %d, %d², %d→%d, stride %v: tile %d, want %d", c.batch, c.hw, c.cin, c.cout, c.stride, tile, c.tile)
		}
	}
}

// smallWinograd lets Winograd take convolutions of any work for the rest
// of test t (winoMinFlops): the tests' shapes are small.
func smallWinograd(t *testing.T) {
	v := winoMinFlops
	winoMinFlops = 0
	t.Cleanup(func() { winoMinFlops = v })
}
