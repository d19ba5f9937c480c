//go:build amd64 && !purego

package kernels

// directTapsColsF32 is directTapsPairF32 for a tile of 12 rows and cols
// columns (1 to 32): b holds the (cols+15)/16 B slivers the columns
// span, kb steps apart, and only the tile's columns of C are read and
// written.
func directTapsColsF32(runs []int, a []float32, lda int, b, c []float32, ldc int, overwrite bool, kb, cols int) {
	vecs, mask := tapsMask(cols)
	_ = c[11*ldc+cols-1]
	_ = b[vecs*sgemmNR*kb-1]
	_ = a[11*lda+directRunsEnd(runs, kb)-1]
	if vecs == 1 {
		sgemm12x16tapszm(&runs[0], len(runs)/2, &a[0], lda, &b[0], &c[0], ldc, overwrite, kb, mask)
		return
	}
	sgemm12x32tapszm(&runs[0], len(runs)/2, &a[0], lda, &b[0], &c[0], ldc, overwrite, kb, mask)
}

// kernelTapsColsF32 is kernelTapsPairF32 for a tile of 6 rows and cols
// columns (1 to 32), b holding the slivers the columns span.
func kernelTapsColsF32(runs []tapRun, b, c []float32, ldc, kb, cols int, overwrite bool) {
	vecs, mask := tapsMask(cols)
	_ = c[5*ldc+cols-1]
	_ = b[vecs*sgemmNR*kb-1]
	rp := tapRunsArg(runs, kb)
	if vecs == 1 {
		sgemm6x16tapszm(rp, len(runs), &b[0], &c[0], ldc, overwrite, kb, mask)
		return
	}
	sgemm6x32tapszm(rp, len(runs), &b[0], &c[0], ldc, overwrite, kb, mask)
}

// tapsMask returns the B slivers a tile of cols columns (1 to 32) spans
// and the mask of the columns of its last sliver.
func tapsMask(cols int) (vecs int, mask uint16) {
	if cols < 1 || cols > 2*sgemmNR {
		panic("kernels: a taps tile of 1 to 32 columns")
	}
	vecs = (cols + sgemmNR - 1) / sgemmNR
	return vecs, uint16(1<<(cols-(vecs-1)*sgemmNR) - 1)
}
