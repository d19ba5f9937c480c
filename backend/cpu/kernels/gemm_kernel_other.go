//go:build !amd64 || purego

package kernels

func kernelF32(k int, a, b, c []float32, ldc int, overwrite bool) {
	kernelGo(sgemmMR, sgemmNR, k, a, b, c, ldc, overwrite)
}

func kernelF64(k int, a, b, c []float64, ldc int, overwrite bool) {
	kernelGo(dgemmMR, dgemmNR, k, a, b, c, ldc, overwrite)
}

// pairKernelF32 and pairKernelF64 are the AVX-512 kernels' entries; there
// are none without the assembly.
func pairKernelF32(blocks, k int, a, b, c []float32, ldc int, overwrite bool) {
	panic("kernels: no AVX-512 kernel")
}

func directRowsF32(rows, k int, a []float32, lda int, b, c []float32, ldc int, overwrite bool, pf prefetchRange) {
	panic("kernels: no AVX-512 kernel")
}

func directRowsOpsF32(rows, k int, a []float32, lda int, b, c []float32, ldc int, overwrite bool, pf prefetchRange, ops *TileOps, row, col int) {
	panic("kernels: no AVX-512 kernel")
}

func directRowsPackOpsF32(rows, k int, a []float32, lda int, src []float32, ldb int, b, c []float32, ldc int, overwrite bool, ops *TileOps, row, col int) {
	panic("kernels: no AVX-512 kernel")
}

func directRowsPackF32(rows, k int, a []float32, lda int, src []float32, ldb int, b, c []float32, ldc int, overwrite bool) {
	panic("kernels: no AVX-512 kernel")
}

func skinnyTileF32(k int, a []float32, lda int, b, c []float32, ldc, cols int, overwrite bool) {
	panic("kernels: no AVX-512 kernel")
}

func pairKernelF64(blocks, k int, a, b, c []float64, ldc int, overwrite bool) {
	panic("kernels: no AVX-512 kernel")
}

func kernelQuad(blocks, kq int, a, b []byte, c []int32, ldc int, overwrite bool, bias []int32) {
	kernelQuadGo(blocks, kq, a, b, c, ldc, overwrite, bias)
}

func packQuads6Rows(chunks int, src []byte, lda int, dst []byte, flip byte) int { return 0 }

func packQuads16S8(quads int, src []int8, ld int, dst []byte, sums *[q8NR]int32) int { return 0 }

func kernelTapsPairF32(runs []tapRun, b, c []float32, ldc, kb int, overwrite bool, pf prefetchRange) {
	panic("kernels: no AVX-512 kernel")
}

func directTapsPairF32(runs []int, a []float32, lda int, b, c []float32, ldc int, overwrite bool, kb int, pf prefetchRange) {
	panic("kernels: no AVX-512 kernel")
}

func kernelTapsPairOpsF32(runs []tapRun, b, c []float32, ldc, kb int, overwrite bool, pf prefetchRange, ops *TileOps, row, col int) {
	panic("kernels: no AVX-512 kernel")
}

func directTapsPairOpsF32(runs []int, a []float32, lda int, b, c []float32, ldc int, overwrite bool, kb int, pf prefetchRange, ops *TileOps, row, col int) {
	panic("kernels: no AVX-512 kernel")
}

func kernelTapsF32(runs []tapRun, b, c []float32, ldc int, overwrite bool, _ prefetchRange) {
	kernelTapsGo(runs, b, c, ldc, overwrite)
}

func directRowsStreamF32(k int, a []float32, lda int, b, c []float32, ldc int, overwrite bool, pf prefetchRange, ops *TileOps, row, col int) {
	panic("kernels: no AVX2 kernel")
}

func kernelStreamOpsF32(k int, a, b, c []float32, ldc int, overwrite bool, pf prefetchRange, ops *TileOps, row, col int) {
	panic("kernels: no AVX2 kernel")
}

func kernelStreamOpsTilesF32(k int, a, b, c []float32, ldc int, overwrite bool, pf prefetchRange, ops *TileOps, row, col, tiles int) {
	panic("kernels: no AVX2 kernel")
}

func kernelTapsOpsF32(runs []tapRun, b, c []float32, ldc int, overwrite bool, pf prefetchRange, ops *TileOps, row, col int) {
	panic("kernels: no AVX2 kernel")
}

func kernelStreamF32(k int, a, b, c []float32, ldc int, overwrite bool, _ prefetchRange) {
	kernelGo(sgemmMR, sgemmNR, k, a, b, c, ldc, overwrite)
}

func kernelTaps8F32(runs []tapRun, b, c []float32, ldc int, overwrite bool) bool { return false }

func packRows16F32(k int, src []float32, ldb int, dst []float32) bool { return false }

func packRowsPartialF32(k int, src []float32, ldb int, dst []float32, w int) bool { return false }

// Prefetch does nothing without the assembly kernels.
func Prefetch(x []float32) {}

func kernelS8(kp int, a, b []int16, c []int32, ldc int, overwrite bool) {
	kernelS8Go(kp, a, b, c, ldc, overwrite)
}

func packRows16S8(pairs int, src []int8, ldb int, dst []int16) bool { return false }

func packA6S8(chunks int, src []int8, lda int, dst []int16) bool { return false }

func packA6F32(chunks int, src []float32, lda int, dst []float32) bool { return false }

func depthwisePixelVec(acc, in, kernel []float32, offs, woffs []int) int { return 0 }

func interleaveRowsBF16(slivers int, lo, hi []uint16, dst []uint32, step int) bool { return false }

func rowsNarrowF32(vecs, k int, a []float32, lda int, b, c []float32, ldc, groups, cols int, overwrite bool) {
	panic("kernels: no AVX2 kernel")
}

func rowsNarrowOpsF32(vecs, k int, a []float32, lda int, b, c []float32, ldc, groups, cols int, overwrite bool, ops *TileOps, row int) {
	panic("kernels: no AVX2 kernel")
}
