//go:build amd64 && !purego

package kernels

//go:generate go run ./_gemvgen

// gemvRuns says whether GemvF32 runs: it has AVX2 and AVX-512 kernels.
var gemvRuns = useAsm

// gemvRows computes r (1, 2 or 4) rows of C. Each kernel keeps one FMA
// chain per accumulator, so a kernel with few of them waits on the FMA's
// latency at every k step: one row of 64 columns issues one FMA a cycle
// of the two the core can, so one and two rows take 128 columns at a
// time where C has them (BenchmarkGemvF32, alternated: 1×96·96×288
// 0.73–0.76 → 0.55–0.67 µs, 2×128·128×512 1.73–1.87 → 1.55 µs,
// 1×128·128×512 1.45–2.18 → 0.99–1.05 µs). A last
// partial block overlaps the one before it rather than running the
// narrow kernels: the columns computed twice get the same bits twice.
func gemvRows(r, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	j := 0
	if useAVX512 {
		wide, mid, one := gemv1x8z, gemv1x4z, gemv1x1z
		switch r {
		case 2:
			wide, mid, one = gemv2x8z, gemv2x4z, gemv2x1z
		case 4:
			wide, mid, one = gemv4x4z, gemv4x4z, gemv4x1z // 4x8 would need 40 registers
		}
		ww := 128
		if r == 4 {
			ww = 64
		}
		j = gemvBlocks(wide, ww, 0, n, k, a, lda, b, ldb, c, ldc, false)
		j = gemvBlocks(mid, 64, j, n, k, a, lda, b, ldb, c, ldc, true)
		j = gemvBlocks(one, 16, j, n, k, a, lda, b, ldb, c, ldc, true)
	} else {
		wide, one, w := gemv1x4y, gemv1x1y, 32
		switch r {
		case 2:
			wide, one = gemv2x4y, gemv2x1y
		case 4:
			wide, one, w = gemv4x2y, gemv4x1y, 16
		}
		j = gemvBlocks(wide, w, 0, n, k, a, lda, b, ldb, c, ldc, true)
		j = gemvBlocks(one, 8, j, n, k, a, lda, b, ldb, c, ldc, true)
	}
	if j < n {
		gemvTail(r, n, k, j, a, lda, b, ldb, c, ldc)
	}
}

// gemvBlocks runs kernel f on the w-column blocks of C from column j on,
// and, where a partial block is left and at least w columns lie before
// it, once more on the last w columns (overlapping the block before); it
// returns the first column left.
func gemvBlocks(f func(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int), w, j, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, overlap bool) int {
	for ; j+w <= n; j += w {
		f(k, &a[0], lda, &b[j], ldb, &c[j], ldc)
	}
	if overlap && j < n && n >= w {
		f(k, &a[0], lda, &b[n-w], ldb, &c[n-w], ldc)
		j = n
	}
	return j
}
