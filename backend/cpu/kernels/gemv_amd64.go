//go:build amd64 && !purego

package kernels

//go:generate go run ./_gemvgen

// gemvRuns says whether GemvF32 runs: it has AVX2 and AVX-512 kernels.
var gemvRuns = useAsm

// gemvStrip is GemvStrip on this CPU. Each k step of a kernel reads one
// row of its block of B; in B's plain rows those rows lie n apart, and
// the hardware streams a block of B fastest where they are consecutive:
// a strip as wide as the kernel's block. On AVX2 (32 columns for one and
// two rows) that held at every size measured (Zen 3, µs a product, plain
// rows → strips of 32 → of 128): 2×128·128×512 (a BiLSTM's step) 7.2 →
// 4.7 → 6.1, 1×96·96×288 (a GRU's) 1.70 → 1.54 → 1.8,
// 1×1024·1024×1000 (ResNet's classifier) 220–275 → 101 → 159–170,
// 4×128·128×512 8.7 → 7.9 → 11.2. On AVX-512 (128 columns) strips were
// measured to help only a B that does not stay in L2 (ResNet's
// classifier, two threads: 0.197–0.217 → 0.164–0.173 ms a call), and
// they are kept to that.
func gemvStrip(k, n int) int {
	switch {
	case !gemvRuns:
		return 0
	case useAVX512:
		if 4*k*n >= 1<<20 && n > 128 {
			return 128
		}
		return 0
	case n > 32:
		return 32
	}
	return 0
}

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
	wide, ww := gemvWide(r)
	j := 0
	if useAVX512 {
		mid, one := gemv1x4z, gemv1x1z
		switch r {
		case 2:
			mid, one = gemv2x4z, gemv2x1z
		case 4:
			mid, one = gemv4x4z, gemv4x1z
		}
		j = gemvBlocks(wide, ww, 0, n, k, a, lda, b, ldb, c, ldc, false)
		j = gemvBlocks(mid, 64, j, n, k, a, lda, b, ldb, c, ldc, true)
		j = gemvBlocks(one, 16, j, n, k, a, lda, b, ldb, c, ldc, true)
	} else {
		one := gemv1x1y
		switch r {
		case 2:
			one = gemv2x1y
		case 4:
			one = gemv4x1y
		}
		j = gemvBlocks(wide, ww, 0, n, k, a, lda, b, ldb, c, ldc, true)
		j = gemvBlocks(one, 8, j, n, k, a, lda, b, ldb, c, ldc, true)
	}
	if j < n {
		gemvTail(r, n, k, j, a, lda, b, ldb, c, ldc)
	}
}

// gemvWide returns the widest kernel for r rows and its columns.
func gemvWide(r int) (gemvKernel, int) {
	if useAVX512 {
		switch r {
		case 2:
			return gemv2x8z, 128
		case 4:
			return gemv4x4z, 64 // 4x8 would need 40 registers
		}
		return gemv1x8z, 128
	}
	switch r {
	case 2:
		return gemv2x4y, 32
	case 4:
		return gemv4x2y, 16
	}
	return gemv1x4y, 32
}

// gemvBlocks runs kernel f on the w-column blocks of C from column j on,
// and, where a partial block is left and at least w columns lie before
// it, once more on the last w columns (overlapping the block before); it
// returns the first column left.
func gemvBlocks(f gemvKernel, w, j, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, overlap bool) int {
	for ; j+w <= n; j += w {
		f(k, &a[0], lda, &b[j], ldb, &c[j], ldc)
	}
	if overlap && j < n && n >= w {
		f(k, &a[0], lda, &b[n-w], ldb, &c[n-w], ldc)
		j = n
	}
	return j
}
