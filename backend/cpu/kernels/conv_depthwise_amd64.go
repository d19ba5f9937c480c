//go:build amd64 && !purego

package kernels

// depthwiseGroup returns how many pixels of c channels the vector kernel
// takes as one vector of 16 (1: none, it masks the vector's tail).
func depthwiseGroup(c int) int {
	if !useAVX512 || c >= 16 || 16%c != 0 {
		return 1
	}
	return 16 / c
}

// depthwiseRun sets out[p·c + ch] = Σ_t in[p·ps + ioffs[t] + ch] ·
// w[woffs[t] + ch] for p < npix, ch < c, as depthwiseRunGo does, on the
// AVX-512 kernel where there is one (the same bits: each product rounded,
// then added in tap order), else on the AVX2 run kernel where the
// channels are whole 8-lane vectors, else pixel by pixel.
func depthwiseRun(out, in, w []float32, ioffs, woffs []int, npix, ps, c int) {
	if npix == 0 {
		return
	}
	if !useAsm || len(ioffs) == 0 {
		depthwiseRunGo(out, in, w, ioffs, woffs, npix, ps, c)
		return
	}
	// The AVX2 run kernel takes whole 8-lane vectors a pixel, and runs of
	// at least four pixels (a border pixel alone costs less through the
	// one-pixel kernel than the offsets' bounds checks below).
	if !useAVX512 && (c%8 != 0 || npix < 4) {
		for p := range npix {
			acc := out[p*c : (p+1)*c]
			c0 := depthwisePixelVec(acc, in[p*ps:], w, ioffs, woffs)
			if c0 < c {
				depthwiseRunGo(acc[c0:], in[p*ps+c0:], w[c0:], ioffs, woffs, 1, 0, c-c0)
			}
		}
		return
	}
	// The kernels read where the offsets say: check they stay inside.
	_ = out[npix*c-1]
	_ = in[(npix-1)*ps+maxOffset(ioffs)+c-1]
	_ = w[maxOffset(woffs)+c-1]
	// (Called directly, not through a func value, so that the kernels'
	// noescape keeps the offsets off the heap.)
	if useAVX512 {
		depthwiseRun512(&out[0], &in[0], &w[0], &ioffs[0], &woffs[0], len(ioffs), npix, ps, c)
	} else {
		depthwiseRun256(&out[0], &in[0], &w[0], &ioffs[0], &woffs[0], len(ioffs), npix, ps, c)
	}
}

// maxOffset returns the largest of offs, all of which must be >= 0.
func maxOffset(offs []int) int {
	m := 0
	for _, o := range offs {
		if o < 0 {
			panic("kernels: negative depthwise tap offset")
		}
		m = max(m, o)
	}
	return m
}

// depthwiseOpsTake reports whether depthwiseRunOps finishes a depthwise
// convolution of c channels with ops: the AVX2 kernel (no masks: whole
// vectors of channels), ops of a bias and bounds only.
func depthwiseOpsTake(c int, ops *TileOps) bool {
	return useAsm && !useAVX512 && depthwiseOpsOn && c%8 == 0 && ops != nil && ops.Flags != 0 &&
		ops.Flags&^(OpsBias|OpsBiasFirst|OpsFloor|OpsCeil) == 0
}

// depthwiseRunOps is depthwiseRun (npix of 4 or more, c a multiple of 8,
// on AVX2: depthwiseOpsTake) with every sum finished by ops before it is
// stored.
func depthwiseRunOps(out, in, w []float32, ioffs, woffs []int, npix, ps, c int, ops *TileOps) {
	_ = out[npix*c-1]
	_ = in[(npix-1)*ps+maxOffset(ioffs)+c-1]
	_ = w[maxOffset(woffs)+c-1]
	var bias *float32
	if ops.Flags&OpsBias != 0 {
		_ = ops.Bias[c-1]
		bias = &ops.Bias[0]
	}
	depthwiseRun256o(&out[0], &in[0], &w[0], &ioffs[0], &woffs[0], len(ioffs), npix, ps, c, bias, ops.Flags, ops.Floor, ops.Ceil)
}
