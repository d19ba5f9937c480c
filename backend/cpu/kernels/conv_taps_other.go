//go:build !amd64 || purego

package kernels

func directTapsColsF32(runs []int, a []float32, lda int, b, c []float32, ldc int, overwrite bool, kb, cols int) {
	panic("kernels: no AVX-512 kernel")
}

func kernelTapsColsF32(runs []tapRun, b, c []float32, ldc, kb, cols int, overwrite bool) {
	panic("kernels: no AVX-512 kernel")
}
