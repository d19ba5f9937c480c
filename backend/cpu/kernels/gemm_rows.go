package kernels

// Narrow products on AVX2: at most 16 columns, as in a pointwise
// convolution with few output channels (MobileNet's 8-channel
// projections, a classifier's 10 classes). The 6×16 kernels take a
// call, a packed six-row sliver of A and, for fewer than 16 columns, a
// scratch tile copied out, for every six rows: with few input channels
// (K of 8) that per-tile work is most of the time (2304 pixels 8→8 on
// one thread: 40–45 µs, 7 GFLOP/s, where ONNX Runtime takes 13 µs). The
// rows kernels (sgemmRows12x8, sgemmRows6x16; rowsKernel in the
// generator) walk many groups of rows in one call, A read where it lies
// and B's one packed sliver from L1, C's last vector stored under a mask.
// Each element's sums are the 6×16 kernels' (from zero in k order, K
// slices of gemmKC added into C), so the bits do not depend on which
// kernel ran. AVX-512 hosts keep their 12×16 skinny kernel.

// rowsNarrowOn lets tests and benchmarks turn the rows kernels off.
var rowsNarrowOn = true

// rowsNarrowTakes reports whether gemmRowsNarrow runs products of n
// columns here, A's rows lda elements apart. Twelve rows a multiple of
// 4 KiB apart share one L1 set, of eight ways: on the Zen 3 host the
// 12-row kernel lost there (two threads, µs, 6×16 kernels → rows
// kernel: 512×8×1024 119 → 186, 512×1×1024 268 → 349, 512×8×2048
// 247 → 362) and won with rows 3 KiB apart (512×8×768 58 → 47); the
// 6-row one won at any stride (512×16×2048 287 → 233).
func rowsNarrowTakes(n, lda int) bool {
	return rowsNarrowOn && useAsm && !useAVX512 && n >= 1 && n <= rowsMaxCols && (n > 8 || lda%1024 != 0)
}

// rowsMaxCols is the widest product the rows kernels compute: four
// vectors a row.
const rowsMaxCols = 32

// rowsOf is the rows of a rows kernel's group with vecs vectors a row
// (rowsOf in the generator): twelve accumulators, eight with four
// vectors.
func rowsOf(vecs int) int { return [...]int{1: 12, 2: 6, 3: 3, 4: 2}[vecs] }

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rowsNarrowChunk is about how many C elements a thread computes (every
// K slice) before it hands them to the epilogue: its rows of A stay in
// L2 across the slices and C's in L1 for the epilogue.
const rowsNarrowChunk = 2048

// gemmRowsNarrow computes C = A·B (C += A·B if accumulate) for C m×n,
// n ≤ rowsMaxCols (rowsNarrowTakes), A row-major and read in place;
// panel(pc, kb) is B's rows [pc, pc+kb) packed as 16-column slivers
// (kb×16 each, one after the other).
// Threads take contiguous runs of row groups. Where ops (nil: none) fits
// C, the kernels finish every whole group with it as they store it and
// epi (nil: none) gets only the rows of a last, partial group; without,
// epi gets every row once final.
func gemmRowsNarrow(m, n, k int, a Strided[float32], panel func(pc, kb int) []float32, c []float32, ldc int, accumulate bool, threads int, epi Epilogue, ops *TileOps) {
	if 2*m*n*k < skinnyParallelFlops {
		threads = 1
	}
	rowsNarrowRun(m, n, k, a, panel, c, ldc, accumulate, threads, epi, ops)
}

// rowsNarrowRun is gemmRowsNarrow on up to threads threads, however small.
func rowsNarrowRun(m, n, k int, a Strided[float32], panel func(pc, kb int) []float32, c []float32, ldc int, accumulate bool, threads int, epi Epilogue, ops *TileOps) {
	if m == 0 {
		return
	}
	vecs := (n + 7) / 8
	g := rowsOf(vecs) // rows a group
	groups := m / g
	per := max(1, rowsNarrowChunk/(g*n)) // groups a chunk
	threads = max(1, min(threads, groups))
	if epi == nil || !ops.fits(c[:m*ldc-ldc+n], ldc, n) {
		ops = nil
	}
	fin := epi
	if ops != nil {
		fin = nil
	}
	parallel(threads, func(t int) {
		from, to := t*groups/threads, (t+1)*groups/threads
		done := rowsFinisher{epi: fin, n: n, done: from * g}
		for g0 := from; g0 < to; g0 += per {
			gs := min(per, to-g0)
			i := g0 * g
			for pc := 0; pc < k; pc += gemmKC {
				kb := min(gemmKC, k-pc)
				as, bp, cs, first := a.Data[i*a.Row+pc:], panel(pc, kb), c[i*ldc:], !accumulate && pc == 0
				if ops != nil && pc+kb == k {
					rowsNarrowOpsF32(vecs, kb, as, a.Row, bp, cs, ldc, gs, n, first, ops, i)
				} else {
					rowsNarrowF32(vecs, kb, as, a.Row, bp, cs, ldc, gs, n, first)
				}
			}
			done.upTo((g0+gs)*g, g0+gs == to)
		}
		if t == threads-1 && m > groups*g {
			rowsNarrowTail(m, n, k, a, panel, c, ldc, groups*g, accumulate)
			if epi != nil {
				epi(groups*g, 0, m-groups*g, n)
			}
		}
	})
}

// rowsNarrowTail computes C's rows [i0, m), fewer than a group, through
// scratch: those rows of A copied into a zeroed group, their C rows
// (where accumulating) into a scratch tile that is copied back. Each
// row's sums are those a whole group computes.
func rowsNarrowTail(m, n, k int, a Strided[float32], panel func(pc, kb int) []float32, c []float32, ldc, i0 int, accumulate bool) {
	vecs := (n + 7) / 8
	g := rowsOf(vecs)
	rows := m - i0
	as := getBuf[float32](g * k)
	defer putBuf(as)
	clear(as)
	for r := range rows {
		copy(as[r*k:(r+1)*k], a.Data[(i0+r)*a.Row:][:k])
	}
	var tile [12 * sgemmNR]float32
	if accumulate {
		for r := range rows {
			copy(tile[r*n:(r+1)*n], c[(i0+r)*ldc:][:n])
		}
	}
	for pc := 0; pc < k; pc += gemmKC {
		kb := min(gemmKC, k-pc)
		rowsNarrowF32(vecs, kb, as[pc:], k, panel(pc, kb), tile[:], n, 1, n, !accumulate && pc == 0)
	}
	for r := range rows {
		copy(c[(i0+r)*ldc:][:n], tile[r*n:(r+1)*n])
	}
}

// packedSlices packs B for the rows kernels: its K slices of gemmKC one
// after the other, each as slivers 16-column slivers written by pack
// (dst, the slice's first step, its depth), into a getBuf buffer the
// caller hands back; panel reads slice [pc, pc+kb) from it.
func packedSlices(k, slivers int, pack func(dst []float32, pc, kb int)) (bp []float32, panel func(pc, kb int) []float32) {
	bp = getBuf[float32](k * sgemmNR * slivers)
	for pc := 0; pc < k; pc += gemmKC {
		pack(bp[pc*sgemmNR*slivers:], pc, min(gemmKC, k-pc))
	}
	return bp, func(pc, kb int) []float32 { return bp[pc*sgemmNR*slivers : (pc+kb)*sgemmNR*slivers] }
}
