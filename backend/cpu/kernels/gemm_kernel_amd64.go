//go:build amd64 && !purego

package kernels

func kernelF32(k int, a, b, c []float32, ldc int, overwrite bool) {
	if useAsm {
		_ = c[5*ldc+15] // the tile must be inside c
		sgemm6x16(k, &a[0], &b[0], &c[0], ldc, overwrite)
		return
	}
	kernelGo(sgemmMR, sgemmNR, k, a, b, c, ldc, overwrite)
}

func kernelF64(k int, a, b, c []float64, ldc int, overwrite bool) {
	if useAsm {
		_ = c[5*ldc+7]
		dgemm6x8(k, &a[0], &b[0], &c[0], ldc, overwrite)
		return
	}
	kernelGo(dgemmMR, dgemmNR, k, a, b, c, ldc, overwrite)
}

func kernelRowsF32(k int, a *[sgemmMR][]float32, b, c []float32, ldc int, overwrite bool) {
	if useAsm {
		_ = c[5*ldc+15]
		_ = b[16*k-1]
		var rows [sgemmMR]*float32
		for i := range rows {
			rows[i] = &a[i][:k][0]
		}
		sgemm6x16rows(k, &rows, &b[0], &c[0], ldc, overwrite)
		return
	}
	kernelRowsGo(k, a, b, c, ldc, overwrite)
}
