package kernels

// Skinny products: at most one NR-wide sliver of columns (n ≤ 16), as in
// a classifier layer (x·W with 10 classes) and its weight gradient
// (xᵀ·g). Packing A there costs as much as the arithmetic, since each
// packed value is used for a single sliver, so:
//
//   - on AVX2, a row-major A goes to the rows kernels (gemm_rows.go),
//     which also take products of up to 32 columns;
//   - a row-major A is read in place: with AVX-512 and more than one
//     thread, twelve rows at a time by one packed 16-column B sliver
//     over the whole depth (gemmRowsSkinny); otherwise each MR-row sliver of A is six row
//     pointers for the taps micro-kernel (the direct convolution's), with
//     only B packed;
//   - a transposed A (column-major, the weight gradient) is turned around:
//     Cᵀ = Bᵀ·Aᵀ makes Aᵀ the row-major right operand, packed with
//     contiguous copies, and the small Bᵀ the left one; Cᵀ goes through a
//     scratch buffer into C.
//
// Small products (skinnyParallelFlops) run on one thread: waking the pool
// costs more than they do.

// gemmSkinnyF32 computes C = A·B (or C += A·B) by one of the skinny
// paths, reporting false when none applies.
func gemmSkinnyF32(m, n, k int, a, b Strided[float32], c []float32, ldc int, accumulate bool, threads int, epi Epilogue) bool {
	if a.Col == 1 && k >= 1 && rowsNarrowTakes(n, a.Row) && n > sgemmNR && skinnyWide {
		gemmRowsPacking(m, n, k, a, b, c, ldc, accumulate, threads, epi)
		return true
	}
	if n > sgemmNR || m < sgemmMR || k < 8 {
		return false
	}
	if 2*m*n*k < skinnyParallelFlops {
		threads = 1
	}
	switch {
	case a.Col == 1 && useAVX512 && wideFor(m, n, k) && m >= skinnyRows && (threads > 1 || skinnyZAlways) && skinnyZ:
		gemmRowsSkinny(m, n, k, a, b, c, ldc, accumulate, threads, epi)
		return true
	case a.Col == 1 && rowsNarrowTakes(n, a.Row):
		gemmRowsPacking(m, n, k, a, b, c, ldc, accumulate, threads, epi)
		return true
	case a.Col == 1:
		gemmRowsDirect(m, n, k, a, b, c, ldc, accumulate, threads, epi)
		return true
	case a.Row == 1 && !accumulate && m >= 4*sgemmNR:
		// Cᵀ (n×m) = Bᵀ (n×k) · Aᵀ (k×m), Aᵀ row-major.
		// B, the small one, is scaled where it holds subnormals
		// (gemm_subnormal.go).
		ct := getBuf[float32](n * m)
		defer putBuf(ct)
		bt := Strided[float32]{Data: b.Data, Row: b.Col, Col: b.Row}
		at := Strided[float32]{Data: a.Data, Row: a.Col, Col: 1}
		scaled := false
		if bs := scaleSubnormals(b, k, n); bs != nil {
			gemm(n, m, k, Strided[float32]{Data: bs, Row: 1, Col: n}, at, ct, m, false, threads, sgemmMR, sgemmNR, kernelF32, nil, true)
			putBuf(bs)
			if scaled = allFinite(ct); scaled {
				unscale(ct)
			}
		}
		if !scaled {
			gemm(n, m, k, bt, at, ct, m, false, threads, sgemmMR, sgemmNR, kernelF32, nil, true)
		}
		for i := range n {
			row := ct[i*m : (i+1)*m]
			for j, v := range row {
				c[j*ldc+i] = v
			}
		}
		if epi != nil { // C is final only once turned around
			epi(0, 0, m, n)
		}
		return true
	}
	return false
}

// skinnyParallelFlops is the work from which a skinny product splits its
// slivers across the threads: a quarter of gemmParallelFlops, as a
// skinny product runs at a fraction of the packed GEMM's rate (mlp_b256's
// classifier, 256×512×10: 56 µs on one thread, 47 GFLOP/s), so 2 MFLOP
// already outlasts handing half to a worker (mlp_b256: 1.52 against 1.57
// ms on the Intel host, four alternations).
const skinnyParallelFlops = gemmParallelFlops / 4

// skinnyEpilogueMin is the elements of C (4 KiB, in L1) a skinny product
// computes before finishing them: a sliver is only 6×n ≤ 96, too little
// to pay for an epilogue call each.
const skinnyEpilogueMin = 1024

// skinnyZ lets tests and benchmarks run the 6-row path where
// gemmRowsSkinny would run; skinnyZAlways runs gemmRowsSkinny on one
// thread too.
//
// A product small enough for one thread keeps the AVX2 kernel: a burst
// of 512-bit FMAs lowers the core's clock for what follows (a scalar loop
// run after each 100×10×784 product took 75 µs against 71 after the
// AVX2 one), and in the dense example's training step, whose other
// kernels are mostly 256-bit or scalar, that cost the step more than the
// faster product saved (0.235 against 0.230 ms, four alternations).
var skinnyZ, skinnyZAlways = true, false

// skinnyRows is the rows of a gemmRowsSkinny tile.
const skinnyRows = 12

// gemmRowsSkinny is the product with A read in place twelve rows at a
// time (m ≥ 12) and B packed once, whole: the threads take whole groups
// of rows and never wait for one another. Each group runs its K slices
// (gemmKC deep, each summed from zero and added to C, as every other
// kernel does) back to back, so its C tile stays in L1. A last group of
// fewer than twelve rows is computed as the twelve rows ending at m into
// a scratch tile, of which only its own rows are kept.
func gemmRowsSkinny(m, n, k int, a, b Strided[float32], c []float32, ldc int, accumulate bool, threads int, epi Epilogue) {
	bp := getBuf[float32](k * sgemmNR)
	defer putBuf(bp)
	packB(bp, b, 0, 0, k, n, sgemmNR, 0, 1)
	groups := (m + skinnyRows - 1) / skinnyRows
	threads = max(1, min(threads, groups))
	parallel(threads, func(t int) {
		from, to := t*groups/threads, (t+1)*groups/threads
		fin := rowsFinisher{epi: epi, n: n, done: from * skinnyRows}
		for g := from; g < to; g++ {
			i := g * skinnyRows
			rows := min(skinnyRows, m-i)
			if rows == skinnyRows {
				skinnySlices(k, a.Data[i*a.Row:], a.Row, bp, c[i*ldc:], ldc, n, accumulate)
			} else {
				skinnyTail(m, n, k, a, bp, c, ldc, rows, accumulate)
			}
			fin.upTo(i+rows, g == to-1)
		}
	})
}

// skinnySlices runs one twelve-row tile over all K slices.
func skinnySlices(k int, a []float32, lda int, bp, c []float32, ldc, n int, accumulate bool) {
	for pc := 0; pc < k; pc += gemmKC {
		kb := min(gemmKC, k-pc)
		skinnyTileF32(kb, a[pc:], lda, bp[pc*sgemmNR:], c, ldc, n, !accumulate && pc == 0)
	}
}

// skinnyTail computes C's last rows (fewer than twelve) from the twelve
// rows of A ending at m, through a scratch tile that holds those rows of
// C while they accumulate: the same sums in the same order as a whole
// tile's.
func skinnyTail(m, n, k int, a Strided[float32], bp, c []float32, ldc, rows int, accumulate bool) {
	var tile [skinnyRows * sgemmNR]float32
	i0 := m - skinnyRows
	keep := func(f func(row, t []float32)) {
		for r := skinnyRows - rows; r < skinnyRows; r++ {
			f(c[(i0+r)*ldc:(i0+r)*ldc+n], tile[r*sgemmNR:r*sgemmNR+n])
		}
	}
	if accumulate {
		keep(func(row, t []float32) { copy(t, row) })
	}
	skinnySlices(k, a.Data[i0*a.Row:], a.Row, bp, tile[:], sgemmNR, n, accumulate)
	keep(func(row, t []float32) { copy(row, t) })
}

// rowsFinisher hands a thread's final rows of an n-column C to epi
// (nil: none) in runs of at least skinnyEpilogueMin elements.
type rowsFinisher struct {
	epi     Epilogue
	n, done int // rows before done have been finished
}

// upTo records rows up to end as final, finishing those not yet
// finished once there are enough of them, or at the thread's last.
func (f *rowsFinisher) upTo(end int, lastOfThread bool) {
	if f.epi != nil && ((end-f.done)*f.n >= skinnyEpilogueMin || lastOfThread) {
		f.epi(f.done, 0, end-f.done, f.n)
		f.done = end
	}
}

// gemmRowsDirect is the product with A read in place through row
// pointers and B packed per K block.
func gemmRowsDirect(m, n, k int, a, b Strided[float32], c []float32, ldc int, accumulate bool, threads int, epi Epilogue) {
	bp := getBuf[float32](gemmKC * sgemmNR)
	defer putBuf(bp)
	slivers := (m + sgemmMR - 1) / sgemmMR
	threads = max(1, min(threads, slivers))
	for pc := 0; pc < k; pc += gemmKC {
		kb := min(gemmKC, k-pc)
		packB(bp, b, pc, 0, kb, n, sgemmNR, 0, 1)
		first, last := !accumulate && pc == 0, pc+kb == k
		parallel(threads, func(t int) {
			runs := make([]tapRun, 1)
			from, to := t*slivers/threads, (t+1)*slivers/threads
			fin := rowsFinisher{epi: epi, n: n, done: from * sgemmMR}
			for s := from; s < to; s++ {
				i := s * sgemmMR
				rows := min(sgemmMR, m-i)
				run := &runs[0]
				run.k, run.q = kb, 0
				for r := range sgemmMR {
					run.rows[r] = &zeros[0]
					if r < rows {
						run.rows[r] = &a.Data[(i+r)*a.Row+pc]
					}
				}
				directTile(runs, bp, c, ldc, i, rows, 0, 0, n, kb, first, prefetchRange{})
				if last {
					fin.upTo(i+rows, s == to-1)
				}
			}
		})
	}
}

// skinnyWide lets tests and benchmarks keep products of 17 to 32
// columns off the rows kernels.
var skinnyWide = true

// gemmRowsPacking is gemmRowsNarrow with B packed for the call: its K
// slices one after the other, each as the slivers that cover n columns.
// Products of 17 to 32 columns on two threads, µs, 6×16 kernels → rows
// kernels (Zen 3): 3136×24×96 188 → 107, 256×24×512 143 → 83, 100×20×784
// 101 → 63, 128×32×128 25 → 20, 512×32×1024 311 → 257.
func gemmRowsPacking(m, n, k int, a, b Strided[float32], c []float32, ldc int, accumulate bool, threads int, epi Epilogue) {
	slivers := (n + sgemmNR - 1) / sgemmNR
	bp, panel := packedSlices(k, slivers, func(dst []float32, pc, kb int) {
		packB(dst, b, pc, 0, kb, n, sgemmNR, 0, slivers)
	})
	defer putBuf(bp)
	gemmRowsNarrow(m, n, k, a, panel, c, ldc, accumulate, threads, epi, nil)
}
