package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestConvCutCache runs direct convolutions whose blocks' cuts (groups,
// slivers and the slivers' tap runs, which point into the image) are
// kept across calls: on one image, on the same image with new contents,
// on another image, and on both at once from several goroutines. Every
// result must match the convolution without a cache bit for bit, and the
// cuts must have been kept (or the test proves nothing).
func TestConvCutCache(t *testing.T) {
	directOnly(t)
	rng := rand.New(rand.NewPCG(21, 22))
	one := []int{1, 1}
	for _, p := range []*Conv{
		newConv(1, 32, 32, 1, []int{56, 56}, []int{3, 3}, one, one, one, one, one, false),       // groups and slivers
		newConv(1, 64, 64, 1, []int{14, 14}, []int{3, 3}, one, one, one, one, one, false),       // slivers only
		newConv(2, 48, 40, 1, []int{7, 9}, []int{3, 3}, []int{2, 2}, one, one, one, one, false), // strided, a batch
	} {
		if convPath(p) != "direct" {
			t.Fatalf("%v: takes the %s path, not the direct one", p.InSpatial, convPath(p))
		}
		kern := randSlice[float32](kernelLen(p), rng)
		a, b := randSlice[float32](inputLen(p), rng), randSlice[float32](inputLen(p), rng)
		out := p.Batch * p.OutSpatial[0] * p.OutSpatial[1] * p.OutChannels
		var cache ConvKernelCache
		check := func(in []float32, threads int) error {
			want, got := make([]float32, out), make([]float32, out)
			if err := ConvF32(p, in, kern, want, threads); err != nil {
				return err
			}
			if err := ConvPackedF32(p, in, kern, got, threads, nil, &cache); err != nil {
				return err
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					return fmt.Errorf("out[%d] = %v with kept cuts, %v without", i, got[i], want[i])
				}
			}
			return nil
		}
		for step, in := range [][]float32{a, a, nil, b, a} {
			if in == nil { // the same image array, new contents
				copy(a, randSlice[float32](len(a), rng))
				in = a
			}
			if err := check(in, 1+step%2); err != nil {
				t.Fatalf("%v, call %d: %v", p.InSpatial, step, err)
			}
		}
		if s := cache.cuts.sets; len(s) != 2 || s[1].img != &a[0] || len(s[1].cuts) == 0 || s[0].img != &b[0] {
			t.Fatalf("%v: the cuts kept are not those of the two images, the last one used last", p.InSpatial)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 3 {
					in := a
					if (g+i)%2 == 1 {
						in = b
					}
					if err := check(in, 2); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("%v, concurrent calls on two images: %v", p.InSpatial, err)
		}
	}
}

// TestConvCutCacheVariableKernel runs a convolution whose kernel array
// is refilled between calls (a training step's weights) with a cache of
// cuts only: every result must be the uncached one's, so no panel of the
// old values may survive, while the cuts are kept.
func TestConvCutCacheVariableKernel(t *testing.T) {
	directOnly(t)
	rng := rand.New(rand.NewPCG(23, 24))
	one := []int{1, 1}
	p := newConv(2, 32, 64, 1, []int{14, 14}, []int{3, 3}, one, one, one, one, one, false)
	in := randSlice[float32](inputLen(p), rng)
	kern := randSlice[float32](kernelLen(p), rng)
	out := p.Batch * p.OutSpatial[0] * p.OutSpatial[1] * p.OutChannels
	cache := NewConvCutCache()
	for step := range 3 {
		want, got := make([]float32, out), make([]float32, out)
		if err := ConvF32(p, in, kern, want, 2); err != nil {
			t.Fatal(err)
		}
		if err := ConvPackedF32(p, in, kern, got, 2, nil, cache); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("step %d: out[%d] = %v with the cut cache, %v without", step, i, got[i], want[i])
			}
		}
		copy(kern, randSlice[float32](len(kern), rng)) // the same array, new weights
	}
	if len(cache.panels) != 0 {
		t.Errorf("%d panels kept for a kernel that changes", len(cache.panels))
	}
	if s := cache.cuts.sets; len(s) != 1 || len(s[0].cuts) == 0 {
		t.Errorf("no cuts kept")
	}
}

// gatherRGB interleaves three planes pixel by pixel, at every length
// (whole vectors of 16 or 8 pixels, the four-pixel steps, the last pixels), each
// value by its bits (NaNs with payloads, -0, subnormals), and writes
// nothing past the triples.
func TestGatherRGB(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range append([]int{0, 1, 3, 4, 7, 8, 9, 12, 15, 16, 17, 23, 24, 31, 32, 33, 47, 48, 49, 63, 64, 65, 100, 224}, 1000+rng.IntN(100)) {
			planes := make([][]float32, 3)
			for p := range planes {
				planes[p] = make([]float32, n)
				for x := range planes[p] {
					planes[p][x] = math.Float32frombits(rng.Uint32())
				}
			}
			const guard = 5
			buf := make([]float32, 3*n+guard)
			for i := range buf {
				buf[i] = -7
			}
			gatherRGB(buf[:3*n], planes[0], planes[1], planes[2])
			for x := range n {
				for p := range 3 {
					if got, want := math.Float32bits(buf[3*x+p]), math.Float32bits(planes[p][x]); got != want {
						t.Fatalf("n %d: pixel %d plane %d: %#x, want %#x", n, x, p, got, want)
					}
				}
			}
			for i := 3 * n; i < len(buf); i++ {
				if buf[i] != -7 {
					t.Fatalf("n %d: wrote past the triples at %d", n, i)
				}
			}
		}
	})
}
