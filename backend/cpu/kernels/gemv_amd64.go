//go:build amd64 && !purego

package kernels

//go:generate go run ./_gemvgen

// gemvRuns says whether GemvF32 runs: it has AVX2 and AVX-512 kernels.
var gemvRuns = useAsm

// gemvRows computes r (1, 2 or 4) rows of C.
func gemvRows(r, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	j := 0
	if useAVX512 {
		wide, one := gemv1x4z, gemv1x1z
		switch r {
		case 2:
			wide, one = gemv2x4z, gemv2x1z
		case 4:
			wide, one = gemv4x4z, gemv4x1z
		}
		for ; j+64 <= n; j += 64 {
			wide(k, &a[0], lda, &b[j], ldb, &c[j], ldc)
		}
		for ; j+16 <= n; j += 16 {
			one(k, &a[0], lda, &b[j], ldb, &c[j], ldc)
		}
	} else {
		wide, one, w := gemv1x4y, gemv1x1y, 32
		switch r {
		case 2:
			wide, one = gemv2x4y, gemv2x1y
		case 4:
			wide, one, w = gemv4x2y, gemv4x1y, 16
		}
		for ; j+w <= n; j += w {
			wide(k, &a[0], lda, &b[j], ldb, &c[j], ldc)
		}
		for ; j+8 <= n; j += 8 {
			one(k, &a[0], lda, &b[j], ldb, &c[j], ldc)
		}
	}
	if j < n {
		gemvTail(r, n, k, j, a, lda, b, ldb, c, ldc)
	}
}
