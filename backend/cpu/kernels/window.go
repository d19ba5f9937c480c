package kernels

import "fmt"

// WindowFoldF32 sets, for each of n output pixels o, the c values
// dst[o·c:(o+1)·c] to the fold over the taps, in their order, of the runs
// src[o·step+taps[t]:][:c]: NaNMax's fold (NaNMin's with min), so each
// value is its window's first extreme tap (its first NaN), as a fold in
// that order gives whatever its grouping. It is channels-last pooling's
// inner loop (a max pool's 3×3 window of 32-channel pixels: nine runs of
// 32 a pixel), on AVX-512 16 channels at a time where c is a multiple of
// 16. It returns an error, computing nothing, where a run would leave
// src or dst.
func WindowFoldF32(dst, src []float32, taps []int, n, c, step int, min bool) error {
	if n <= 0 || c <= 0 {
		return nil
	}
	if len(taps) == 0 || step < 0 || len(dst) < n*c {
		return fmt.Errorf("kernels: WindowFoldF32: %d taps, step %d, %d outputs of %d in %d", len(taps), step, n, c, len(dst))
	}
	for _, t := range taps {
		if t < 0 || (n-1)*step+t+c > len(src) {
			return fmt.Errorf("kernels: WindowFoldF32: tap %d of %d outputs %d apart reads past %d values", t, n, step, len(src))
		}
	}
	if windowFoldVec(dst, src, taps, n, c, step, min) {
		return nil
	}
	windowFoldGo(dst, src, taps, n, c, step, min)
	return nil
}

// windowFoldGo is WindowFoldF32's loop in Go (the twin of the AVX-512
// kernels).
func windowFoldGo(dst, src []float32, taps []int, n, c, step int, min bool) {
	f := NaNMax[float32]
	if min {
		f = NaNMin[float32]
	}
	for o := range n {
		d := dst[o*c : (o+1)*c]
		copy(d, src[o*step+taps[0]:][:c])
		for _, t := range taps[1:] {
			s := src[o*step+t:][:c]
			for i := range d {
				d[i] = f(d[i], s[i])
			}
		}
	}
}
