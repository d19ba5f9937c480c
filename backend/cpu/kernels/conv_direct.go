package kernels

import "unsafe"

// Direct convolution for channels-last images: the GEMM's A operand is
// never packed. Six output pixels form a sliver; for each kernel tap, the
// six input pixels under it are six contiguous runs of channels in the
// image, which the rows micro-kernel reads through six pointers. Only the
// kernel (B) is packed, once per K block. This removes im2col packing,
// which cost a third of the time of a 3x3, 64-channel convolution.
//
// With AVX-512, twelve pixels of one output row whose windows lie inside
// the image go to a 12-row kernel instead: their windows are the same
// distance apart, so each tap's run is one offset for all twelve, the
// same for every such group of a K block. Building six row pointers per
// tap and sliver was a quarter of the time of the CNN's 32-channel
// layers, whose slivers each serve a single pair of B slivers; the
// 12-row kernel also does twice the FMAs per broadcast loaded
// (BenchmarkConvTraining forward 222–227 → 261–262 GFLOP/s, the ResNet
// layer 273–279 → 288–292).

// DirectMinChannels is the channel count below which a tap's run is too
// short to feed the micro-kernel well; such convolutions pack instead.
const DirectMinChannels = 16

func canConvDirect(p *Conv) bool {
	if p.InChannels/p.Groups < DirectMinChannels {
		return fewChannelsDirect(p)
	}
	return p.InChannelStride == 1
}

// mergedRun is the length of a window's row of taps as one run of the
// image (the taps along the last spatial dimension, each cin channels),
// or 0 where they are not contiguous: feature groups, a dilated kernel,
// pixels further apart than their channels, input dilation.
func mergedRun(p *Conv) int {
	last := len(p.Kernel) - 1
	if last < 0 || p.Groups != 1 || p.RhsDil[last] != 1 || p.InSpatialStrides[last] != p.InChannels {
		return 0
	}
	for _, l := range p.LhsDil {
		if l != 1 {
			return 0
		}
	}
	return p.Kernel[last] * p.InChannels
}

// tapRun is one kernel tap's slice of a K block: k steps starting at
// column q of the block, and the six rows' channel runs.
//
// The layout is what sgemm6x16taps reads: k, the six row pointers, then
// q (8 machine words).
type tapRun struct {
	k    int
	rows [sgemmMR]*float32 // k channels from each
	q    int
}

func convDirect(p *Conv, in, kernel, out []float32, threads, g int, epi Epilogue, ops *TileOps, cache *ConvKernelCache) {
	cin, cout := p.InChannels/p.Groups, p.OutChannels/p.Groups
	pixels, taps := 1, 1
	for d := range p.OutSpatial {
		pixels *= p.OutSpatial[d]
		taps *= p.Kernel[d]
	}
	m, n, k := p.Batch*pixels, cout, taps*cin
	if m == 0 || n == 0 {
		return
	}
	if cin < DirectMinChannels {
		if convDirectBands(p, in, kernel, out, threads, epi, ops, cache) {
			return
		}
		if q, staged := stageImage(p, in, threads); staged != nil {
			defer putBuf(staged)
			p, in = q, staged
		}
	}
	im := &im2col{p: p, in: in, cin: cin, c0: g * cin, pixels: pixels, taps: taps, tapOffsets: offsetsOfTaps(p, taps)}
	if cin < DirectMinChannels {
		im.rowRun = mergedRun(p)
	}
	im.flat = denseMatrix(p)
	d := &directConv{im: im, kernel: kernel, co0: g * cout, cin: cin, epi: epi, ops: ops, cache: cache, cuts: cache.cutsFor(in)}
	c := out[g*cout:]
	ldc := p.OutChannels
	// A convolution split only while the pool is hot (runsAlone) splits
	// its rows: splitting K changes the sums' order, and columns the rows
	// its epilogue is handed (ConvWholeRows), which compile-time choices
	// made with the cold threshold.
	cold := directRunsInline(m, n, k)
	if runsAlone(2*m*n*k, directParallelFlops) {
		threads = 1
	}
	kBlocks := (k + gemmKC - 1) / gemmKC
	if threads > 1 && !cold && kBlocks >= 8*threads && m*n <= directSplitKMax {
		d.splitK(m, n, k, c, ldc, threads)
		if epi != nil {
			parallel(threads, func(t int) { // the output is final only once summed
				lo, hi := t*m/threads, (t+1)*m/threads
				epi(lo, 0, hi-lo, n)
			})
		}
		return
	}
	if threads > 1 && !cold && directSplitsColumns(m, n) {
		d.columns(m, n, k, c, ldc, threads)
		return
	}
	threads = max(1, min(threads, (m+sgemmMR-1)/sgemmMR))
	per := ((m+threads-1)/threads + sgemmMR - 1) / sgemmMR * sgemmMR
	nc := min(gemmNC, (n+sgemmNR-1)/sgemmNR*sgemmNR)
	kc := directDepth(k)
	scratch := getBuf[float32](kc * nc)
	defer putBuf(scratch)
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			bp := d.panel(scratch, jc, pc, kb, nb, threads)
			parallel(threads, func(t int) {
				d.block(bp, c, ldc, t*per, min(m, (t+1)*per), jc, nb, pc, kb, pc == 0, d.epi != nil && pc+kb == k)
			})
		}
	}
}

// directColumnStep is the output columns a thread's share of a
// column split comes in: the 16-lane kernels take B's slivers in pairs.
const directColumnStep = 2 * sgemmNR

// directSplitsColumns reports whether a direct convolution of m output
// rows and n columns splits its columns rather than its rows between
// threads: where the kernel outweighs the image's rows (ResNet's last
// stage: 49 pixels by 256 or 1024 channels), each thread then reads half
// of the kernel instead of all of it, and 49 rows, cut in 12-row
// groups, left one thread 36 and the other 13. Two threads: four chained
// 7×7×256 3×3 convolutions 1.03–1.12 → 0.96–1.02 ms, alternated; in
// ResNet-50 (halfwidth) each of that stage's 0.37–0.42 → 0.32–0.36 ms.
func directSplitsColumns(m, n int) bool {
	return n >= 2*directColumnStep && m < n && m <= directColumnMaxRows
}

// directColumnMaxRows bounds the rows of a column split: with more, the
// row split balances well enough, and each thread's pass over all rows
// would reread the image.
const directColumnMaxRows = 256

// columns runs the convolution with the threads splitting its output
// columns in directColumnStep steps, each thread over every row. Its
// blocks span parts of rows, so ConvWholeRows says no for it.
func (d *directConv) columns(m, n, k int, c []float32, ldc, threads int) {
	steps := (n + directColumnStep - 1) / directColumnStep
	threads = min(threads, steps)
	kc := directDepth(k)
	parallel(threads, func(t int) {
		j0, j1 := t*steps/threads*directColumnStep, min(n, (t+1)*steps/threads*directColumnStep)
		nc := min(gemmNC, j1-j0)
		scratch := getBuf[float32](kc * ((nc + sgemmNR - 1) / sgemmNR * sgemmNR))
		defer putBuf(scratch)
		for jc := j0; jc < j1; jc += nc {
			nb := min(nc, j1-jc)
			for pc := 0; pc < k; pc += kc {
				kb := min(kc, k-pc)
				bp := d.panel(scratch, jc, pc, kb, nb, 1)
				d.block(bp, c, ldc, 0, m, jc, nb, pc, kb, pc == 0, d.epi != nil && pc+kb == k)
			}
		}
	})
}

// directParallelFlops is the work below which a direct convolution runs
// on one thread: a pointwise product of 8 channels over 4608 pixels (0.6
// MFLOP, some 15 µs) lost more to waking the second than it gained.
const directParallelFlops = 1 << 21

// directRunsInline reports whether a direct convolution's group of m
// output rows, n columns and depth k runs on the calling goroutine.
func directRunsInline(m, n, k int) bool { return 2*m*n*k < directParallelFlops }

// directKCMax is the longest K a direct convolution takes as one block:
// its kernel sliver, 16 columns of directKCMax floats, is 256 KiB, half
// of L2.
const directKCMax = 16 * gemmKC

// directDepth is the K block of a direct convolution of depth k: all of
// it up to directKCMax, else the fewest blocks of equal depth. Each block
// passes over the whole output, read and written back (from memory, for
// a batch's activations), which costs more than a kernel sliver that
// outgrows L1 and is read from L2: ResNet's 3x3 layers at batch 32, 2
// threads, medians of 7 runs, GFLOP/s with blocks of 256 (the sliver in
// L1) against K whole: 56²×64 (K 576) 104 → 142, 28²×128 (1152)
// 127 → 152, 14²×256 (2304) 129 → 142, 7²×512 (4608, two blocks here)
// 127 → 141.
func directDepth(k int) int {
	blocks := (k + directKCMax - 1) / directKCMax
	return (k + blocks - 1) / blocks
}

// directSplitKMax bounds the output (in elements) for which a direct
// convolution splits its K blocks between threads, each summing into a
// private copy of the output: kernel gradients have a small output and a
// long K (every example at every position), where splitting the rows
// instead cost two fork-joins per K block.
const directSplitKMax = 1 << 18

// directConv is one feature group of a direct convolution.
type directConv struct {
	im       *im2col
	kernel   []float32
	co0, cin int
	// epi finishes output blocks (nil: none); splitK's partial sums
	// never reach it.
	epi Epilogue
	// ops, where set, is epi as the kernels apply it to the tiles of the
	// final K block (blockCuts.finishes says which blocks).
	ops   *TileOps
	cache *ConvKernelCache // packed panels kept across calls (nil: none)
	cuts  *cutSet          // blocks' cuts kept across calls on this image (nil: none)
}

// panel returns the packed kernel slivers of K block [pc, pc+kb),
// output columns [jc, jc+nb): from the cache, or packed (into scratch
// without one; into a new panel the cache keeps with one).
func (d *directConv) panel(scratch []float32, jc, pc, kb, nb, threads int) []float32 {
	key := panelKey(d.co0, jc, pc, kb, nb)
	if bp := d.cache.get(key); bp != nil {
		return bp
	}
	slivers := (nb + sgemmNR - 1) / sgemmNR
	bp := scratch[:slivers*sgemmNR*kb]
	if d.cache.keepsPanels() {
		bp = make([]float32, slivers*sgemmNR*kb)
	}
	parallel(threads, func(t int) {
		packConvKernel(bp, d.im.p, d.kernel, d.co0+jc, d.cin, pc, kb, nb, t*slivers/threads, (t+1)*slivers/threads)
	})
	d.cache.put(key, bp)
	return bp
}

// splitK gives each thread a contiguous range of K blocks and a private
// output (thread 0 writes c itself), then adds the private outputs into
// c in thread order, so the result depends only on the thread count.
func (d *directConv) splitK(m, n, k int, c []float32, ldc, threads int) {
	kBlocks := (k + gemmKC - 1) / gemmKC
	nc := (n + sgemmNR - 1) / sgemmNR * sgemmNR
	priv := make([][]float32, threads)
	for t := 1; t < threads; t++ {
		priv[t] = getBuf[float32](m * n)
		defer putBuf(priv[t])
	}
	parallel(threads, func(t int) {
		dst, ld := c, ldc
		if t > 0 {
			dst, ld = priv[t][:m*n], n
		}
		scratch := getBuf[float32](gemmKC * nc)
		defer putBuf(scratch)
		from, to := t*kBlocks/threads, (t+1)*kBlocks/threads
		for b := from; b < to; b++ {
			pc := b * gemmKC
			kb := min(gemmKC, k-pc)
			bp := d.panel(scratch, 0, pc, kb, n, 1)
			d.block(bp, dst, ld, 0, m, 0, n, pc, kb, b == from, false)
		}
	})
	for t := 1; t < threads; t++ {
		for i := range m {
			row := c[i*ldc : i*ldc+n]
			for j, v := range priv[t][i*n : (i+1)*n] {
				row[j] += v
			}
		}
	}
}

// tapRuns lists the runs of K block [pc, pc+kb) for output rows
// [i, i+rows): rows past the end and taps in padding read zeros. A row
// whose whole window lies inside the image finds each tap at its origin
// plus the tap's precomputed offset; only rows at the border test bounds
// tap by tap (that test, for every row, was a tenth of a CNN step).
func (im *im2col) tapRuns(runs []tapRun, i, rows, pc, kb int) []tapRun {
	p := im.p
	ns := len(p.InSpatial)
	var org [sgemmMR][8]int
	var base, start [sgemmMR]int
	var inside [sgemmMR]bool
	var kpos [8]int
	interior := im.tapOffsets != nil
	// Row i's batch and output position by division, the next rows' by
	// stepping: the divisions for every row were a tenth of a CNN step.
	var pos [8]int
	b, rem := i/im.pixels, i%im.pixels
	for d := ns - 1; d >= 0; d-- {
		pos[d], rem = rem%p.OutSpatial[d], rem/p.OutSpatial[d]
	}
	for r := range rows {
		if r > 0 {
			d := ns - 1
			for ; d >= 0; d-- {
				if pos[d]++; pos[d] < p.OutSpatial[d] {
					break
				}
				pos[d] = 0
			}
			if d < 0 {
				b++
			}
		}
		base[r] = b*p.InBatchStride + im.c0
		in := im.tapOffsets != nil
		for d := range ns {
			o := pos[d]*p.Stride[d] - p.PadLo[d]
			org[r][d] = o
			in = in && o >= 0 && o+(p.Kernel[d]-1)*p.RhsDil[d] < p.InSpatial[d]
		}
		inside[r], interior = in, interior && in
		if in {
			start[r] = base[r]
			for d := range ns {
				start[r] += org[r][d] * p.InSpatialStrides[d]
			}
		}
	}
	if interior {
		return im.interiorRuns(runs, rows, &start, pc, kb)
	}
	for q := 0; q < kb; {
		col := pc + q
		tap, ch := col/im.cin, col%im.cin
		run := tapRun{q: q, k: min(im.cin-ch, kb-q)}
		tapPosition(p, tap, &kpos)
		for r := range sgemmMR {
			run.rows[r] = &zeros[0]
			switch {
			case r >= rows:
			case inside[r]:
				off := start[r] + im.tapOffsets[tap] + ch
				run.rows[r] = &im.in[off : off+run.k][0]
			default:
				if off, ok := im.tapOffset(true, base[r], &org[r], &kpos); ok {
					run.rows[r] = &im.in[off+ch : off+ch+run.k][0]
				}
			}
		}
		runs = append(runs, run)
		q += run.k
	}
	return runs
}

// interiorRuns is tapRuns for slivers whose every tap lies inside the
// image (all of a valid convolution, most of a padded one): a row's run
// starts at its origin (start) plus the tap's precomputed offset, with no
// bounds to test and no division per tap.
func (im *im2col) interiorRuns(runs []tapRun, rows int, start *[sgemmMR]int, pc, kb int) []tapRun {
	for q := 0; q < kb; {
		off, k := im.runAt(pc+q, kb-q)
		run := tapRun{q: q, k: k}
		for r := range sgemmMR {
			run.rows[r] = &zeros[0]
			if r < rows {
				run.rows[r] = &im.in[start[r]+off : start[r]+off+run.k][0]
			}
		}
		runs = append(runs, run)
		q += run.k
	}
	return runs
}

// offsetsOfTaps returns each kernel tap's offset in the image from a
// window's origin, or nil when input dilation makes taps skip positions
// (those convolutions take the general path).
func offsetsOfTaps(p *Conv, taps int) []int {
	for _, l := range p.LhsDil {
		if l != 1 {
			return nil
		}
	}
	out := make([]int, taps)
	for t := range out {
		rem, off := t, 0
		for d := len(p.Kernel) - 1; d >= 0; d-- {
			off += rem % p.Kernel[d] * p.RhsDil[d] * p.InSpatialStrides[d]
			rem /= p.Kernel[d]
		}
		out[t] = off
	}
	return out
}

// directTile computes the MR×NR tile of C at rows [i, i+rows), columns
// jc+j.. from one B sliver; a partial tile goes through a scratch tile.
//
// With pf, a whole tile's kernel runs pf's prefetch stream.
func directTile(runs []tapRun, bp, c []float32, ldc, i, rows, jc, j, cols, kb int, first bool, pf prefetchRange) {
	// A sliver's last 8 columns (24 output channels: 16 + 8) in place
	// on the 6×8 kernel, not 16 into scratch and 8 of them copied. Zen 3,
	// two threads, alternated: the OCR models' 3×3 96→24 heads at 80²
	// 2367 → 2032 µs, 40² 516 → 436; their 3→8 stem 139 → 82.
	if rows == sgemmMR && cols == 8 && kernelTaps8F32(runs, bp[j*kb:j*kb+kb*sgemmNR], c[i*ldc+jc+j:], ldc, first) {
		return
	}
	var scratch [sgemmMR * sgemmNR]float32
	dst, ld := c[i*ldc+jc+j:], ldc
	full := rows == sgemmMR && cols == sgemmNR
	if !full {
		dst, ld = scratch[:], sgemmNR
	}
	kernelTapsF32(runs, bp[j*kb:j*kb+kb*sgemmNR], dst, ld, first || !full, pf)
	if full {
		return
	}
	for r := range rows {
		row := c[(i+r)*ldc+jc+j : (i+r)*ldc+jc+j+cols]
		for q := range row {
			if first {
				row[q] = scratch[r*sgemmNR+q]
			} else {
				row[q] += scratch[r*sgemmNR+q]
			}
		}
	}
}

// kernelTapsGo is the portable taps micro-kernel: the runs' products
// summed into one tile in the same order as the assembly.
func kernelTapsGo(runs []tapRun, b, c []float32, ldc int, overwrite bool) {
	var acc [sgemmMR * sgemmNR]float32
	for _, run := range runs {
		bs := b[run.q*sgemmNR : (run.q+run.k)*sgemmNR]
		for i, ap := range run.rows {
			a := unsafe.Slice(ap, run.k)
			row := acc[i*sgemmNR : i*sgemmNR+sgemmNR]
			for p, ai := range a {
				bp := bs[p*sgemmNR : p*sgemmNR+sgemmNR]
				for j, bj := range bp {
					row[j] += ai * bj
				}
			}
		}
	}
	storeAcc(acc[:], c, sgemmMR, sgemmNR, ldc, overwrite)
}

// ConvRunsDirect reports whether convolution p runs on the direct
// kernel (a channels-last image with enough channels, or a few-channel
// one whose rows of taps are long runs, in any layout: the kernel stages
// it channels-last itself): a backend copying an image channels-last
// first does so only where the copy lands there, and not for a
// few-channel image the kernel takes as it is.
func ConvRunsDirect(p *Conv) bool { return canConvDirect(p) && !pointwiseAsGemm(p) }
