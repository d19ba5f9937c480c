//go:build amd64 && !purego

package kernels

func compareF32(dir int, dst, a, b []float32) {
	if !useAsm || len(dst) == 0 {
		compareGo(dir, dst, a, b)
		return
	}
	switch dir {
	case CmpEQ:
		cmpEQF32AVX(&dst[0], &a[0], &b[0], len(dst))
	case CmpNE:
		cmpNEF32AVX(&dst[0], &a[0], &b[0], len(dst))
	case CmpLT:
		cmpLTF32AVX(&dst[0], &a[0], &b[0], len(dst))
	case CmpLE:
		cmpLEF32AVX(&dst[0], &a[0], &b[0], len(dst))
	case CmpGT:
		cmpGTF32AVX(&dst[0], &a[0], &b[0], len(dst))
	default:
		cmpGEF32AVX(&dst[0], &a[0], &b[0], len(dst))
	}
}

func selectF32(dst, p, a, b []float32) {
	if !useAsm || len(dst) == 0 {
		selectGo(dst, p, a, b)
		return
	}
	selectF32AVX(&dst[0], &p[0], &a[0], &b[0], len(dst))
}

func andF32(dst, a, b []float32) {
	if !useAsm || len(dst) == 0 {
		andGo(dst, a, b)
		return
	}
	andF32AVX(&dst[0], &a[0], &b[0], len(dst))
}

func orF32(dst, a, b []float32) {
	if !useAsm || len(dst) == 0 {
		orGo(dst, a, b)
		return
	}
	orF32AVX(&dst[0], &a[0], &b[0], len(dst))
}

func xorF32(dst, a, b []float32) {
	if !useAsm || len(dst) == 0 {
		xorGo(dst, a, b)
		return
	}
	xorF32AVX(&dst[0], &a[0], &b[0], len(dst))
}
