//go:build !amd64 || purego

package kernels

// depthwiseGroup returns how many pixels of c channels go as one vector:
// none without the vector kernel.
func depthwiseGroup(c int) int { return 1 }

// depthwiseRun sets out[p·c + ch] = Σ_t in[p·ps + ioffs[t] + ch] ·
// w[woffs[t] + ch] for p < npix, ch < c (depthwiseRunGo).
func depthwiseRun(out, in, w []float32, ioffs, woffs []int, npix, ps, c int) {
	depthwiseRunGo(out, in, w, ioffs, woffs, npix, ps, c)
}

func depthwiseOpsTake(c int, ops *TileOps) bool { return false }

func depthwiseRunOps(out, in, w []float32, ioffs, woffs []int, npix, ps, c int, ops *TileOps) {
	panic("kernels: no AVX2 depthwise kernel")
}
