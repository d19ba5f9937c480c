//go:build !amd64 || purego

package kernels

// gemvRuns is false without the assembly kernels: the GEMM runs instead.
const gemvRuns = false

func gemvRows(r, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	gemvTail(r, n, k, 0, a, lda, b, ldb, c, ldc)
}

func gemvStrip(k, n int) int { return 0 }

func gemvWide(r int) (gemvKernel, int) { return nil, 0 }
