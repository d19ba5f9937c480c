//go:build amd64 && !purego

package kernels

// The elementwise kernels take any n and mask the last partial vector
// themselves; n = 0 stays in Go, where there is no &dst[0].

func addF32(dst, a, b []float32) {
	if !useAsm || len(dst) == 0 {
		addGo(dst, a, b)
		return
	}
	addF32AVX(&dst[0], &a[0], &b[0], len(dst))
}

func subF32(dst, a, b []float32) {
	if !useAsm || len(dst) == 0 {
		subGo(dst, a, b)
		return
	}
	subF32AVX(&dst[0], &a[0], &b[0], len(dst))
}

func mulF32(dst, a, b []float32) {
	if !useAsm || len(dst) == 0 {
		mulGo(dst, a, b)
		return
	}
	mulF32AVX(&dst[0], &a[0], &b[0], len(dst))
}

func divF32(dst, a, b []float32) {
	if !useAsm || len(dst) == 0 {
		divGo(dst, a, b)
		return
	}
	divF32AVX(&dst[0], &a[0], &b[0], len(dst))
}

func maximumF32(dst, a, b []float32) {
	if !useAsm || len(dst) == 0 {
		maximumGo(dst, a, b)
		return
	}
	maximumF32AVX(&dst[0], &a[0], &b[0], len(dst))
}

func minimumF32(dst, a, b []float32) {
	if !useAsm || len(dst) == 0 {
		minimumGo(dst, a, b)
		return
	}
	minimumF32AVX(&dst[0], &a[0], &b[0], len(dst))
}

func clampF32(dst, lo, x, hi []float32) {
	if !useAsm || len(dst) == 0 {
		clampGo(dst, lo, x, hi)
		return
	}
	clampF32AVX(&dst[0], &lo[0], &x[0], &hi[0], len(dst))
}

func negF32(dst, a []float32) {
	if !useAsm || len(dst) == 0 {
		negGo(dst, a)
		return
	}
	negF32AVX(&dst[0], &a[0], len(dst))
}

func absF32(dst, a []float32) {
	if !useAsm || len(dst) == 0 {
		absGo(dst, a)
		return
	}
	absF32AVX(&dst[0], &a[0], len(dst))
}

func sqrtF32(dst, a []float32) {
	if !useAsm || len(dst) == 0 {
		sqrtGo(dst, a)
		return
	}
	sqrtF32AVX(&dst[0], &a[0], len(dst))
}

func rsqrtF32(dst, a []float32) {
	if !useAsm || len(dst) == 0 {
		rsqrtGo(dst, a)
		return
	}
	rsqrtF32AVX(&dst[0], &a[0], len(dst))
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
	n := len(src) &^ 7
	if !useAsm || n == 0 {
		return 0
	}
	_ = dst[n-1]
	done := 0
	if useAVX512 {
		if done = n &^ 15; done > 0 {
			bf16ToF32AVX512(&dst[0], &src[0], done)
		}
	}
	if done < n {
		bf16ToF32(&dst[done], &src[done], n-done)
	}
	return n
}

// f32ToBF16Vec rounds the whole vectors of src and returns how many
// elements it did.
func f32ToBF16Vec(dst []uint16, src []float32) int {
	n := len(src) &^ 7
	if !useAsm || n == 0 {
		return 0
	}
	_ = dst[n-1]
	done := 0
	if useAVX512 {
		if done = n &^ 15; done > 0 {
			f32ToBF16AVX512(&dst[0], &src[0], done)
		}
	}
	if done < n {
		f32ToBF16(&dst[done], &src[done], n-done)
	}
	return n
}
