package kernels

// Skinny products: at most one NR-wide sliver of columns (n ≤ 16), as in
// a classifier layer (x·W with 10 classes) and its weight gradient
// (xᵀ·g). Packing A there costs as much as the arithmetic, since each
// packed value is used for a single sliver, so:
//
//   - a row-major A is read in place: each MR-row sliver of A is six row
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
	if n > sgemmNR || m < sgemmMR || k < 8 {
		return false
	}
	if 2*m*n*k < skinnyParallelFlops {
		threads = 1
	}
	switch {
	case a.Col == 1:
		gemmRowsDirect(m, n, k, a, b, c, ldc, accumulate, threads, epi)
		return true
	case a.Row == 1 && !accumulate && m >= 4*sgemmNR:
		// Cᵀ (n×m) = Bᵀ (n×k) · Aᵀ (k×m), Aᵀ row-major.
		ct := getBuf[float32](n * m)
		defer putBuf(ct)
		bt := Strided[float32]{Data: b.Data, Row: b.Col, Col: b.Row}
		at := Strided[float32]{Data: a.Data, Row: a.Col, Col: 1}
		gemm(n, m, k, bt, at, ct, m, false, threads, sgemmMR, sgemmNR, kernelF32, nil, true)
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
			done := from * sgemmMR // rows before done have been finished
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
				directTile(runs, bp, c, ldc, i, rows, 0, 0, n, kb, first)
				if last && epi != nil && ((i+rows-done)*n >= skinnyEpilogueMin || s == to-1) {
					epi(done, 0, i+rows-done, n)
					done = i + rows
				}
			}
		})
	}
}
