//go:build amd64 && !purego

package kernels

import "unsafe"

func kernelF32(k int, a, b, c []float32, ldc int, overwrite bool) {
	if useAsm {
		_ = c[5*ldc+15] // the tile must be inside c
		sgemm6x16(k, &a[0], &b[0], &c[0], ldc, overwrite)
		return
	}
	kernelGo(sgemmMR, sgemmNR, k, a, b, c, ldc, overwrite)
}

// kernelStreamOpsF32 is kernelStreamF32 finishing the tile with ops as
// it stores it: the tile is rows [row, row+6), columns [col, col+16) of
// the matrix ops' operands describe.
func kernelStreamOpsF32(k int, a, b, c []float32, ldc int, overwrite bool, pf prefetchRange, ops *TileOps, row, col int) {
	_ = c[5*ldc+15]
	_ = a[sgemmMR*k-1]
	_ = b[sgemmNR*k-1]
	bias, res, resBias := ops.operandsOf(sgemmMR, sgemmNR, row, col)
	sgemm6x16fo(k, &a[0], &b[0], &c[0], ldc, overwrite, pf.off, pf.step, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil)
}

// kernelStreamOpsTilesF32 is kernelStreamOpsF32 for tiles tiles down a
// column of C from row, in one call (sgemm6x16fot): a holds their packed
// A tiles one after another, pf is the first tile's share of the stream
// (each next one's lies kb/2 prefetches on, as streamShare's).
func kernelStreamOpsTilesF32(k int, a, b, c []float32, ldc int, overwrite bool, pf prefetchRange, ops *TileOps, row, col, tiles int) {
	_ = c[(tiles*sgemmMR-1)*ldc+15]
	_ = a[tiles*sgemmMR*k-1]
	_ = b[sgemmNR*k-1]
	bias, res, resBias := ops.operandsOf(tiles*sgemmMR, sgemmNR, row, col)
	sgemm6x16fot(k, &a[0], &b[0], &c[0], ldc, overwrite, pf.off, pf.step, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil, tiles)
}

// directRowsStreamF32 computes a 6×16 tile with the AVX2 direct kernel:
// A's six rows read where they lie, lda apart, from a[0] on, b a packed
// B sliver, with pf's prefetch stream; with ops (nil: none) it finishes
// the tile as it stores it, the tile being rows [row, row+6), columns
// [col, col+16) of the matrix ops' operands describe.
func directRowsStreamF32(k int, a []float32, lda int, b, c []float32, ldc int, overwrite bool, pf prefetchRange, ops *TileOps, row, col int) {
	_ = c[5*ldc+15]
	_ = a[5*lda+k-1]
	_ = b[sgemmNR*k-1]
	if ops == nil {
		sgemm6x16df(k, &a[0], lda, &b[0], &c[0], ldc, overwrite, pf.off, pf.step)
		return
	}
	bias, res, resBias := ops.operandsOf(sgemmMR, sgemmNR, row, col)
	sgemm6x16dfo(k, &a[0], lda, &b[0], &c[0], ldc, overwrite, pf.off, pf.step, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil)
}

// kernelStreamF32 is kernelF32 running pf's prefetch stream (every two
// steps of four, kernelTapsPairF32's).
func kernelStreamF32(k int, a, b, c []float32, ldc int, overwrite bool, pf prefetchRange) {
	if useAsm {
		_ = c[5*ldc+15]
		_ = a[sgemmMR*k-1]
		_ = b[sgemmNR*k-1]
		sgemm6x16f(k, &a[0], &b[0], &c[0], ldc, overwrite, pf.off, pf.step)
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

// pairKernelF32 computes a (6·blocks)×32 tile, blocks (1 or 2) A slivers
// by two B slivers, with the AVX-512 kernel: a holds the A slivers back
// to back, each 6·k long, and b the two B slivers, each 16·k long.
func pairKernelF32(blocks, k int, a, b, c []float32, ldc int, overwrite bool) {
	_ = c[(6*blocks-1)*ldc+31]
	_ = a[blocks*6*k-1]
	_ = b[32*k-1]
	if blocks == 2 {
		sgemm12x32z(k, &a[0], &b[0], &c[0], ldc, overwrite)
	} else {
		sgemm6x32z(k, &a[0], &b[0], &c[0], ldc, overwrite)
	}
}

// directRowsF32 computes a rows×32 tile (rows 4, 6, 8 or 12) with the
// AVX-512 direct kernels: the rows of A read where they lie, lda apart,
// from a[0] on (directKernel in the generator), and b two packed B
// slivers, each 16·k long. With a stream pf (kernelTapsPairF32's) it
// runs the kernel that prefetches it every two steps of four.
func directRowsF32(rows, k int, a []float32, lda int, b, c []float32, ldc int, overwrite bool, pf prefetchRange) {
	_ = c[(rows-1)*ldc+31]
	_ = a[(rows-1)*lda+k-1]
	_ = b[32*k-1]
	plain, stream := directKernelsOf(rows)
	if pf == (prefetchRange{}) {
		plain(k, &a[0], lda, &b[0], &c[0], ldc, overwrite)
		return
	}
	stream(k, &a[0], lda, &b[0], &c[0], ldc, overwrite, pf.off, pf.step)
}

// directKernelsOf returns the direct kernels of a tile rows high: the
// plain one and the one with a prefetch stream.
func directKernelsOf(rows int) (func(k int, a *float32, lda int, b, c *float32, ldc int, overwrite bool),
	func(k int, a *float32, lda int, b, c *float32, ldc int, overwrite bool, pfOff, pfStep int)) {
	switch rows {
	case 12:
		return sgemm12x32zd, sgemm12x32zdf
	case 8:
		return sgemm8x32zd, sgemm8x32zdf
	case 6:
		return sgemm6x32zd, sgemm6x32zdf
	case 4:
		return sgemm4x32zd, sgemm4x32zdf
	}
	panic("kernels: no direct kernel of that height")
}

// directRowsPackF32 is directRowsF32 reading 32 columns of B's rows at
// src, ldb apart, and packing them into b's two slivers as it goes.
func directRowsPackF32(rows, k int, a []float32, lda int, src []float32, ldb int, b, c []float32, ldc int, overwrite bool) {
	_ = c[(rows-1)*ldc+31]
	_ = a[(rows-1)*lda+k-1]
	_ = src[(k-1)*ldb+31]
	_ = b[32*k-1]
	switch rows {
	case 12:
		sgemm12x32zdp(k, &a[0], lda, &src[0], ldb, &b[0], &c[0], ldc, overwrite)
	case 8:
		sgemm8x32zdp(k, &a[0], lda, &src[0], ldb, &b[0], &c[0], ldc, overwrite)
	case 6:
		sgemm6x32zdp(k, &a[0], lda, &src[0], ldb, &b[0], &c[0], ldc, overwrite)
	case 4:
		sgemm4x32zdp(k, &a[0], lda, &src[0], ldb, &b[0], &c[0], ldc, overwrite)
	default:
		panic("kernels: no direct kernel of that height")
	}
}

// directRowsOpsF32 is directRowsF32 finishing the tile with ops as it
// stores it: the tile is rows [row, row+rows), columns [col, col+32) of
// the matrix ops' operands describe.
func directRowsOpsF32(rows, k int, a []float32, lda int, b, c []float32, ldc int, overwrite bool, pf prefetchRange, ops *TileOps, row, col int) {
	_ = c[(rows-1)*ldc+31]
	_ = a[(rows-1)*lda+k-1]
	_ = b[32*k-1]
	bias, res, resBias := ops.operands(rows, row, col)
	plain, stream := directOpsKernelsOf(rows)
	if pf == (prefetchRange{}) {
		plain(k, &a[0], lda, &b[0], &c[0], ldc, overwrite, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil)
		return
	}
	stream(k, &a[0], lda, &b[0], &c[0], ldc, overwrite, pf.off, pf.step, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil)
}

// directOpsKernelsOf is directKernelsOf for the kernels with ops.
func directOpsKernelsOf(rows int) (func(k int, a *float32, lda int, b, c *float32, ldc int, overwrite bool, bias, res *float32, ldr int, resBias *float32, flags int, floor, ceil float32),
	func(k int, a *float32, lda int, b, c *float32, ldc int, overwrite bool, pfOff, pfStep int, bias, res *float32, ldr int, resBias *float32, flags int, floor, ceil float32)) {
	switch rows {
	case 12:
		return sgemm12x32zdo, sgemm12x32zdfo
	case 8:
		return sgemm8x32zdo, sgemm8x32zdfo
	case 6:
		return sgemm6x32zdo, sgemm6x32zdfo
	case 4:
		return sgemm4x32zdo, sgemm4x32zdfo
	}
	panic("kernels: no direct kernel of that height")
}

// directRowsPackOpsF32 is directRowsPackF32 finishing the tile with ops
// (directRowsOpsF32).
func directRowsPackOpsF32(rows, k int, a []float32, lda int, src []float32, ldb int, b, c []float32, ldc int, overwrite bool, ops *TileOps, row, col int) {
	_ = c[(rows-1)*ldc+31]
	_ = a[(rows-1)*lda+k-1]
	_ = src[(k-1)*ldb+31]
	_ = b[32*k-1]
	bias, res, resBias := ops.operands(rows, row, col)
	switch rows {
	case 12:
		sgemm12x32zdpo(k, &a[0], lda, &src[0], ldb, &b[0], &c[0], ldc, overwrite, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil)
	case 8:
		sgemm8x32zdpo(k, &a[0], lda, &src[0], ldb, &b[0], &c[0], ldc, overwrite, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil)
	case 6:
		sgemm6x32zdpo(k, &a[0], lda, &src[0], ldb, &b[0], &c[0], ldc, overwrite, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil)
	case 4:
		sgemm4x32zdpo(k, &a[0], lda, &src[0], ldb, &b[0], &c[0], ldc, overwrite, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil)
	default:
		panic("kernels: no direct kernel of that height")
	}
}

// skinnyTileF32 computes the first cols columns of a 12×16 tile of C
// from twelve rows of A, lda apart, over all k steps of the packed
// 16-column B sliver b (sgemm12x16zs).
func skinnyTileF32(k int, a []float32, lda int, b, c []float32, ldc, cols int, overwrite bool) {
	_ = c[11*ldc+cols-1]
	_ = a[11*lda+k-1]
	_ = b[16*k-1]
	sgemm12x16zs(k, &a[0], lda, &b[0], &c[0], ldc, uint16(1)<<cols-1, overwrite)
}

// pairKernelF64 is pairKernelF32 for float64: B slivers of 8 columns.
func pairKernelF64(blocks, k int, a, b, c []float64, ldc int, overwrite bool) {
	_ = c[(6*blocks-1)*ldc+15]
	_ = a[blocks*6*k-1]
	_ = b[16*k-1]
	if blocks == 2 {
		dgemm12x16z(k, &a[0], &b[0], &c[0], ldc, overwrite)
	} else {
		dgemm6x16z(k, &a[0], &b[0], &c[0], ldc, overwrite)
	}
}

// directTapsPairF32 computes a 12×32 tile of a direct convolution with
// sgemm12x32tapsz: runs holds (offset, k) pairs, whose offsets are from
// a[0], the first pixel's window; the twelve pixels' windows are lda
// apart; b holds two B slivers kb steps apart; pf is the tile's share of
// the prefetch of the next pair (nextPairShare).
func directTapsPairF32(runs []int, a []float32, lda int, b, c []float32, ldc int, overwrite bool, kb int, pf prefetchRange) {
	_ = c[11*ldc+31]
	_ = b[32*kb-1]
	_ = a[11*lda+directRunsEnd(runs, kb)-1]
	sgemm12x32tapsz(&runs[0], len(runs)/2, &a[0], lda, &b[0], &c[0], ldc, overwrite, kb, pf.off, pf.step)
}

// directTapsPairOpsF32 is directTapsPairF32 finishing the tile with ops
// as it stores it: the tile is rows [row, row+12), columns [col, col+32)
// of the matrix ops' operands describe.
func directTapsPairOpsF32(runs []int, a []float32, lda int, b, c []float32, ldc int, overwrite bool, kb int, pf prefetchRange, ops *TileOps, row, col int) {
	_ = c[11*ldc+31]
	_ = b[32*kb-1]
	_ = a[11*lda+directRunsEnd(runs, kb)-1]
	bias, res, resBias := ops.operands(12, row, col)
	sgemm12x32tapszo(&runs[0], len(runs)/2, &a[0], lda, &b[0], &c[0], ldc, overwrite, kb, pf.off, pf.step, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil)
}

// directRunsEnd checks a direct tile's (offset, k) runs against its K
// block (the assembly trusts them) and returns how far past the first
// pixel's window start they read.
func directRunsEnd(runs []int, kb int) int {
	steps, end := 0, 0
	for r := 0; r+1 < len(runs); r += 2 {
		steps += runs[r+1]
		end = max(end, runs[r]+runs[r+1])
	}
	if steps > kb || len(runs) < 2 {
		panic("kernels: direct tap runs past the K block")
	}
	return end
}

// kernelTapsF32 runs a tile's tap runs; the runs' row pointers come from
// slices of the image (or zeros), each at least k long, and b holds
// every run's steps. With pf it runs the kernel with that prefetch
// stream (kernelTapsPairF32's).
func kernelTapsF32(runs []tapRun, b, c []float32, ldc int, overwrite bool, pf prefetchRange) {
	if useAsm {
		_ = c[5*ldc+15]
		if len(runs) > 0 {
			last := runs[len(runs)-1]
			_ = b[(last.q+last.k)*sgemmNR-1]
			if pf != (prefetchRange{}) {
				sgemm6x16tapsf(&runs[0].k, len(runs), &b[0], &c[0], ldc, overwrite, pf.off, pf.step)
				return
			}
			sgemm6x16taps(&runs[0].k, len(runs), &b[0], &c[0], ldc, overwrite)
			return
		}
	}
	kernelTapsGo(runs, b, c, ldc, overwrite)
}

// kernelTapsOpsF32 is kernelTapsF32 (with its stream pf) finishing the
// 6×16 tile with ops as it stores it: the tile is rows [row, row+6),
// columns [col, col+16) of the matrix ops' operands describe.
func kernelTapsOpsF32(runs []tapRun, b, c []float32, ldc int, overwrite bool, pf prefetchRange, ops *TileOps, row, col int) {
	_ = c[5*ldc+15]
	if len(runs) == 0 {
		panic("kernels: a taps tile with no runs")
	}
	last := runs[len(runs)-1]
	_ = b[(last.q+last.k)*sgemmNR-1]
	bias, res, resBias := ops.operandsOf(sgemmMR, sgemmNR, row, col)
	sgemm6x16tapsfo(&runs[0].k, len(runs), &b[0], &c[0], ldc, overwrite, pf.off, pf.step, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil)
}

// kernelTaps8F32 is kernelTapsF32 for the first 8 columns of the tile
// only, stored in place (the AVX2 6×8 kernel: the same sums as the 6×16
// kernel's for those columns), reporting false where it does not run.
func kernelTaps8F32(runs []tapRun, b, c []float32, ldc int, overwrite bool) bool {
	if !useAsm || len(runs) == 0 {
		return false
	}
	_ = c[5*ldc+7]
	last := runs[len(runs)-1]
	_ = b[(last.q+last.k)*sgemmNR-1]
	sgemm6x8taps(&runs[0].k, len(runs), &b[0], &c[0], ldc, overwrite)
	return true
}

// kernelTapsPairF32 is kernelTapsF32 over two B slivers at once, with
// the AVX-512 kernel: b holds the first sliver's kb steps, then the
// second's, and the tile is 6×32. Every two steps the kernel prefetches
// a line pfOff bytes from b's start, pfStep bytes further each time
// (pf: a range the kernel reads nothing of, any address).
func kernelTapsPairF32(runs []tapRun, b, c []float32, ldc, kb int, overwrite bool, pf prefetchRange) {
	_ = c[5*ldc+31]
	_ = b[2*kb*sgemmNR-1]
	sgemm6x32tapsz(tapRunsArg(runs, kb), len(runs), &b[0], &c[0], ldc, overwrite, kb, pf.off, pf.step)
}

// tapRunsArg checks a 6-row tile's tap runs against its K block (the
// assembly trusts them) and returns the kernels' runs argument (nil for
// none).
func tapRunsArg(runs []tapRun, kb int) *int {
	if len(runs) == 0 {
		return nil
	}
	if last := runs[len(runs)-1]; last.q+last.k > kb {
		panic("kernels: tap runs past the K block")
	}
	return &runs[0].k
}

// kernelTapsPairOpsF32 is kernelTapsPairF32 finishing the tile with
// ops as it stores it: the tile is rows [row, row+6), columns [col,
// col+32) of the matrix ops' operands describe.
func kernelTapsPairOpsF32(runs []tapRun, b, c []float32, ldc, kb int, overwrite bool, pf prefetchRange, ops *TileOps, row, col int) {
	_ = c[5*ldc+31]
	_ = b[2*kb*sgemmNR-1]
	bias, res, resBias := ops.operands(sgemmMR, row, col)
	sgemm6x32tapszo(tapRunsArg(runs, kb), len(runs), &b[0], &c[0], ldc, overwrite, kb, pf.off, pf.step, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil)
}

// packRows16F32 packs k rows of 16 float32, ldb apart, into dst,
// reporting false when the vector copy is not available.
func packRows16F32(k int, src []float32, ldb int, dst []float32) bool {
	if !useAsm || k == 0 {
		return false
	}
	_ = src[(k-1)*ldb+15]
	_ = dst[k*16-1]
	packRows16(k, &src[0], ldb, &dst[0])
	return true
}

// laneMasks is sixteen all-ones lanes then sixteen zeros: the sixteen
// from laneMasks[16-w] on select the first w.
var laneMasks = [32]int32{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}

// packRowsPartialF32 packs k rows of w < 16 values, ldb apart, into
// 16-wide rows of dst, zeros past the w, reporting false where the
// assembly does not run.
func packRowsPartialF32(k int, src []float32, ldb int, dst []float32, w int) bool {
	if !useAsm || k == 0 || w <= 0 || w >= 16 {
		return false
	}
	_ = src[(k-1)*ldb+w-1]
	_ = dst[k*16-1]
	packRowsMasked16(k, &src[0], ldb, &dst[0], &laneMasks[16-w])
	return true
}

// Prefetch asks for x's cache lines to be brought into L1 ahead of use:
// rows of 4 KiB, each its own page, start where the hardware prefetcher
// (which stays within a page) has nothing to go on.
func Prefetch(x []float32) {
	if len(x) > 0 {
		prefetchT0((*byte)(unsafe.Pointer(&x[0])), 4*len(x))
	}
}

// kernelS8 runs the s8 micro-kernel on kp packed steps (pairs of k).
func kernelS8(kp int, a, b []int16, c []int32, ldc int, overwrite bool) {
	if useAsm {
		_ = c[(s8MR-1)*ldc+s8NR-1]
		_ = a[kp*2*s8MR-1]
		_ = b[kp*2*s8NR-1]
		s8gemm6x16(kp, &a[0], &b[0], &c[0], ldc, overwrite)
		return
	}
	kernelS8Go(kp, a, b, c, ldc, overwrite)
}

// kernelQuad computes a (6·blocks)×32 tile, blocks (1 or 2) A slivers by
// two B slivers of kq packed quad steps, from the column biases bias, with
// the VNNI kernel where it runs (gemm_quad.go).
func kernelQuad(blocks, kq int, a, b []byte, c []int32, ldc int, overwrite bool, bias []int32) {
	if !useAsm || !useAVX512 || !useVNNI {
		kernelQuadGo(blocks, kq, a, b, c, ldc, overwrite, bias)
		return
	}
	_ = c[(q8MR*blocks-1)*ldc+q8Tile-1]
	_ = a[blocks*4*q8MR*kq-1]
	_ = b[2*4*q8NR*kq-1]
	_ = bias[q8Tile-1]
	if blocks == 2 {
		q8gemm12x32z(kq, &a[0], (*int8)(unsafe.Pointer(&b[0])), &c[0], ldc, overwrite, &bias[0])
	} else {
		q8gemm6x32z(kq, &a[0], (*int8)(unsafe.Pointer(&b[0])), &c[0], ldc, overwrite, &bias[0])
	}
}

// packQuads16S8 packs quads·4 rows of 16 s8 (gemm_quad.go's B sliver),
// adding each column's values to sums, and returns the quads it packed:
// none where the VNNI code does not run.
func packQuads16S8(quads int, src []int8, ld int, dst []byte, sums *[q8NR]int32) int {
	if !useAsm || !useAVX512 || !useVNNI || quads == 0 {
		return 0
	}
	_ = src[(4*quads-1)*ld+q8NR-1]
	_ = dst[quads*4*q8NR-1]
	packQuads16(quads, &src[0], ld, &dst[0], &sums[0])
	return quads
}

// packQuads6Rows packs the first 16·chunks bytes of six rows of a
// row-major 8-bit A (src at row 0, rows lda apart), each xor flip, as
// gemm_quad.go's A sliver, and returns the chunks it packed: none where
// the VNNI code does not run.
func packQuads6Rows(chunks int, src []byte, lda int, dst []byte, flip byte) int {
	if !useAsm || !useAVX512 || !useVNNI || chunks == 0 {
		return 0
	}
	_ = src[5*lda+16*chunks-1]
	_ = dst[chunks*4*4*q8MR-1]
	packQuads6(chunks, &src[0], lda, &dst[0], uint32(flip)*0x01010101)
	return chunks
}

// packRows16S8 packs pairs of rows of 16 s8, ldb apart, interleaved and
// widened to s16, into dst, reporting false when the vector code is not
// available.
func packRows16S8(pairs int, src []int8, ldb int, dst []int16) bool {
	if !useAsm || pairs == 0 {
		return false
	}
	_ = src[(2*pairs-1)*ldb+15]
	_ = dst[pairs*2*s8NR-1]
	packPairs16S8(pairs, &src[0], ldb, &dst[0])
	return true
}

// packA6S8 packs the first 16·chunks values of six rows of a row-major s8
// A (src at row 0, rows lda apart) into dst, reporting false when the
// vector code is not available.
func packA6S8(chunks int, src []int8, lda int, dst []int16) bool {
	if !useAsm || chunks == 0 {
		return false
	}
	_ = src[5*lda+16*chunks-1]
	_ = dst[chunks*8*2*s8MR-1]
	packRows6S8(chunks, &src[0], lda, &dst[0])
	return true
}

// packA6F32 packs the first 8·chunks values of six rows of a row-major
// f32 A (src at row 0, rows lda apart) into dst as 6-value steps,
// reporting false when the vector code is not available.
func packA6F32(chunks int, src []float32, lda int, dst []float32) bool {
	if !useAsm || chunks == 0 {
		return false
	}
	_ = src[5*lda+8*chunks-1]
	_ = dst[chunks*8*6-1]
	packRows6F32(chunks, &src[0], 4*lda, &dst[0])
	return true
}

// depthwisePixelVec computes the whole vectors of one depthwise output
// pixel's channels (see depthwiseTaps) and returns how many channels it
// did. Every tap's slices must hold len(acc) values.
func depthwisePixelVec(acc, in, kernel []float32, offs, woffs []int) int {
	n := len(acc) &^ 7
	if !useAsm || n == 0 {
		return 0
	}
	for t, off := range offs {
		if off < 0 || off+n > len(in) || woffs[t] < 0 || woffs[t]+n > len(kernel) {
			panic("kernels: depthwise tap out of range")
		}
	}
	var o, wo *int
	if len(offs) > 0 {
		o, wo = &offs[0], &woffs[0]
	}
	done := 0
	if useAVX512 { // whole 16-lane vectors, then a last 8 on the AVX2 kernel
		if done = n &^ 15; done > 0 {
			depthwisePixel512(&acc[0], &in[0], &kernel[0], o, wo, len(offs), done)
		}
	}
	if done < n {
		depthwisePixel(&acc[done], &in[done], &kernel[done], o, wo, len(offs), n-done)
	}
	return n
}

// interleaveRowsBF16 packs the bf16 rows lo and hi, slivers pieces of NR
// values each, as the VDPBF16PS kernels' (lo, hi) words into dst, a piece
// every step words, reporting false when the vector code is not
// available.
func interleaveRowsBF16(slivers int, lo, hi []uint16, dst []uint32, step int) bool {
	if !useAsm || slivers == 0 {
		return false
	}
	_ = lo[slivers*bf16NR-1]
	_ = hi[slivers*bf16NR-1]
	_ = dst[(slivers-1)*step+bf16NR-1]
	interleaveBF16(slivers, &lo[0], &hi[0], &dst[0], step)
	return true
}

// rowsMasks are the lane masks of the rows kernels' last vector: entry
// c stores its first c lanes.
var rowsMasks = func() (m [8][8]int32) {
	for c := range m {
		for l := range c {
			m[c][l] = -1
		}
	}
	return m
}()

// rowsKernels and rowsOpsKernels are the rows kernels by
// 2·vecs + masked (rowsNarrowF32, rowsNarrowOpsF32).
var (
	rowsKernels = [...]func(k int, a *float32, lda int, b, c *float32, ldc, groups int, mask *int32, overwrite bool){
		2: sgemmRows12x8, 3: sgemmRows12x8m, 4: sgemmRows6x16, 5: sgemmRows6x16m,
		6: sgemmRows3x24, 7: sgemmRows3x24m, 8: sgemmRows2x32, 9: sgemmRows2x32m,
	}
	rowsOpsKernels = [...]func(k int, a *float32, lda int, b, c *float32, ldc, groups int, mask *int32, overwrite bool,
		bias, res *float32, ldr int, resBias *float32, flags int, floor, ceil float32){
		2: sgemmRows12x8o, 3: sgemmRows12x8mo, 4: sgemmRows6x16o, 5: sgemmRows6x16mo,
		6: sgemmRows3x24o, 7: sgemmRows3x24mo, 8: sgemmRows2x32o, 9: sgemmRows2x32mo,
	}
)

// rowsMaskOf is the lane mask of a rows kernel's last vector for cols
// columns of vecs vectors, nil where the last vector is whole.
func rowsMaskOf(vecs, cols int) *int32 {
	if cols == 8*vecs {
		return nil
	}
	return &rowsMasks[cols%8][0]
}

// rowsNarrowF32 runs the rows kernel of vecs vectors a row
// (sgemmRows12x8, 6x16, 3x24 or 2x32; masked where cols is not 8·vecs)
// over groups groups of rowsOf(vecs) rows: C (cols columns, ldc apart)
// = A·B, or += unless overwrite; a's rows are lda apart, b holds the
// packed 16-column slivers of k steps that cover the columns.
func rowsNarrowF32(vecs, k int, a []float32, lda int, b, c []float32, ldc, groups, cols int, overwrite bool) {
	rows := rowsOf(vecs)
	_ = a[(groups*rows-1)*lda+k-1]
	_ = b[16*k*((vecs+1)/2)-1]
	_ = c[(groups*rows-1)*ldc+cols-1]
	kern, mask := rowsKernels[2*vecs+btoi(cols != 8*vecs)], rowsMaskOf(vecs, cols)
	kern(k, &a[0], lda, &b[0], &c[0], ldc, groups, mask, overwrite)
}

// rowsNarrowOpsF32 is rowsNarrowF32 finishing every row with ops (its
// rows from row of ops' matrix, columns from 0) before the store.
func rowsNarrowOpsF32(vecs, k int, a []float32, lda int, b, c []float32, ldc, groups, cols int, overwrite bool, ops *TileOps, row int) {
	rows := rowsOf(vecs)
	_ = a[(groups*rows-1)*lda+k-1]
	_ = b[16*k*((vecs+1)/2)-1]
	_ = c[(groups*rows-1)*ldc+cols-1]
	bias, res, resBias := ops.operandsOf(groups*rows, cols, row, 0)
	kern, mask := rowsOpsKernels[2*vecs+btoi(cols != 8*vecs)], rowsMaskOf(vecs, cols)
	kern(k, &a[0], lda, &b[0], &c[0], ldc, groups, mask, overwrite, bias, res, ops.LdRes, resBias, ops.Flags, ops.Floor, ops.Ceil)
}
