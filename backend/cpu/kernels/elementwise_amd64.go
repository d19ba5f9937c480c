//go:build amd64 && !purego

package kernels

// The elementwise kernels take any n and mask the last partial vector
// themselves; n = 0 stays in Go, where there is no &dst[0].

func addF32(dst, a, b []float32) { binaryAsm(addF32AVX, addGo, dst, a, b) }
func subF32(dst, a, b []float32) { binaryAsm(subF32AVX, subGo, dst, a, b) }
func mulF32(dst, a, b []float32) { binaryAsm(mulF32AVX, mulGo, dst, a, b) }
func divF32(dst, a, b []float32) { binaryAsm(divF32AVX, divGo, dst, a, b) }
func maximumF32(dst, a, b []float32) {
	binaryAsm(extreme(maximumF32AVX512, maximumF32AVX), maximumGo, dst, a, b)
}
func minimumF32(dst, a, b []float32) {
	binaryAsm(extreme(minimumF32AVX512, minimumF32AVX), minimumGo, dst, a, b)
}

// extreme picks the 16-lane maximum or minimum kernel where the machine
// has AVX-512 (max pooling's window folds: ResNet's stem pool, 112²×32
// → 56²×32, 0.205 → 0.150 ms on one thread, 0.175 → 0.130 on two), the
// 8-lane one otherwise.
func extreme(k512, k func(dst, a, b *float32, n int)) func(dst, a, b *float32, n int) {
	if useAVX512 {
		return k512
	}
	return k
}
func negF32(dst, a []float32)   { unaryAsm(negF32AVX, negGo, dst, a) }
func absF32(dst, a []float32)   { unaryAsm(absF32AVX, absGo, dst, a) }
func sqrtF32(dst, a []float32)  { unaryAsm(sqrtF32AVX, sqrtGo, dst, a) }
func rsqrtF32(dst, a []float32) { unaryAsm(rsqrtF32AVX, rsqrtGo, dst, a) }

func clampF32(dst, lo, x, hi []float32) {
	if !useAsm || len(dst) == 0 {
		clampGo(dst, lo, x, hi)
		return
	}
	clampF32AVX(&dst[0], &lo[0], &x[0], &hi[0], len(dst))
}

// binaryAsm runs kernel k, or the Go loop g where it cannot run. Both
// inline into the callers above, so the calls stay direct.
func binaryAsm(k func(dst, a, b *float32, n int), g func(dst, a, b []float32), dst, a, b []float32) {
	if !useAsm || len(dst) == 0 {
		g(dst, a, b)
		return
	}
	k(&dst[0], &a[0], &b[0], len(dst))
}

// unaryAsm is binaryAsm for one operand.
func unaryAsm(k func(dst, a *float32, n int), g func(dst, a []float32), dst, a []float32) {
	if !useAsm || len(dst) == 0 {
		g(dst, a)
		return
	}
	k(&dst[0], &a[0], len(dst))
}

// packCols16Vec packs the first k rounded down to 16 rows of sixteen
// contiguous columns of B (column c at src[c·ld:]) into the 16-wide
// sliver d, d[p·16+c] = src[c·ld+p], and returns how many rows it did.
func packCols16Vec(d, src []float32, ld, k int) int {
	n := k &^ 15
	if !useAVX512 || n == 0 {
		return 0
	}
	_, _ = d[n*16-1], src[15*ld+n-1]
	packCols16AVX512(n, &src[0], ld, &d[0])
	return n
}

// WindowFoldFast reports whether WindowFoldF32 runs vector code on runs
// of c values (AVX-512, c a multiple of 16; AVX2, of 8).
func WindowFoldFast(c int) bool {
	return useAVX512 && c%16 == 0 || useAsm && c%8 == 0
}

// windowFoldVec runs WindowFoldF32 on the AVX-512 kernels, or the AVX2
// ones, reporting false where it cannot (c not whole vectors, no
// assembly). The caller checked the runs' bounds.
func windowFoldVec(dst, src []float32, taps []int, n, c, step int, min bool) bool {
	if !WindowFoldFast(c) {
		return false
	}
	k := windowMaxAVX2
	switch wide := useAVX512 && c%16 == 0; {
	case wide && min:
		k = windowMinAVX512
	case wide:
		k = windowMaxAVX512
	case min:
		k = windowMinAVX2
	}
	k(&dst[0], &src[0], &taps[0], len(taps), n, 4*c, 4*step)
	return true
}

// interleave3Vec interleaves the whole vectors (16 pixels, or 8 on
// AVX2) of the three planes into dst (gatherRGB) and returns how many
// pixels it did.
func interleave3Vec(dst, s0, s1, s2 []float32) int {
	n := len(s0) &^ 7
	if useAVX512 {
		n = len(s0) &^ 15
	}
	if !useAsm || n == 0 {
		return 0
	}
	_, _, _, _ = dst[3*n-1], s1[n-1], s2[n-1], s0[n-1]
	// (Called directly, not through a func value: the kernels' noescape
	// then keeps the planes off the heap.)
	if useAVX512 {
		interleave3AVX512(&dst[0], &s0[0], &s1[0], &s2[0], n)
	} else {
		interleave3AVX2(&dst[0], &s0[0], &s1[0], &s2[0], n)
	}
	return n
}

// u8ToF32Vec converts the whole vectors of src and returns how many
// elements it did.
func u8ToF32Vec(dst []float32, src []uint8) int {
	n := len(src) &^ 7
	if !useAsm || n == 0 {
		return 0
	}
	_ = dst[n-1]
	u8ToF32(&dst[0], &src[0], n)
	return n
}

// bf16ToF32Vec widens the whole vectors of src and returns how many
// elements it did.
func bf16ToF32Vec(dst []float32, src []uint16) int {
	return convertVec(dst, src, bf16ToF32AVX512, bf16ToF32)
}

// f32ToBF16Vec rounds the whole vectors of src and returns how many
// elements it did.
func f32ToBF16Vec(dst []uint16, src []float32) int {
	return convertVec(dst, src, f32ToBF16AVX512, f32ToBF16)
}

// f16ToF32Vec widens the whole vectors of src (F16C) and returns how
// many elements it did.
func f16ToF32Vec(dst []float32, src []uint16) int {
	if !hasF16C {
		return 0
	}
	return convertVec(dst, src, f16ToF32AVX512, f16ToF32)
}

// f32ToF16Vec rounds the whole vectors of src (F16C) and returns how
// many elements it did.
func f32ToF16Vec(dst []uint16, src []float32) int {
	if !hasF16C {
		return 0
	}
	return convertVec(dst, src, f32ToF16AVX512, f32ToF16)
}

// convertVec converts the whole 8-vectors of src, the whole 16-vectors
// with the AVX-512 kernel k512 where there is AVX-512, and returns how
// many elements it did.
func convertVec[D, S any](dst []D, src []S, k512, k func(dst *D, src *S, n int)) int {
	n := len(src) &^ 7
	if !useAsm || n == 0 {
		return 0
	}
	_ = dst[n-1]
	done := 0
	if useAVX512 {
		if done = n &^ 15; done > 0 {
			k512(&dst[0], &src[0], done)
		}
	}
	if done < n {
		k(&dst[done], &src[done], n-done)
	}
	return n
}
