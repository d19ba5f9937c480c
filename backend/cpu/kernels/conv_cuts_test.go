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
