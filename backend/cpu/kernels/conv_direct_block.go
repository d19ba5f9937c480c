package kernels

import "unsafe"

// How the direct convolution (conv_direct.go) cuts its blocks of output
// rows between the 12-row kernel and slivers of six.

// block computes output rows [lo, hi), columns [jc, jc+nb) of one K block
// from packed kernel slivers bp. Like the packed GEMM it sweeps a block
// of MC output rows for each B sliver, so the sliver stays in L1 and the
// block's image rows in L2; the tap runs of the block's slivers are
// worked out once. With last (the final K block) each MC block goes to
// the epilogue while it is in cache.
func (d *directConv) block(bp, c []float32, ldc, lo, hi, jc, nb, pc, kb int, first, last bool) {
	br := d.blockCuts(ldc, hi-lo, nb, pc, kb)
	for ic := lo; ic < hi; {
		mb := min(br.mc, hi-ic)
		if br.batch && ic%br.step != 0 {
			// Batch groups: blocks aligned to whole groups, so that the
			// rows of a thread's first partial group are a block alone.
			mb = min(hi, (ic+br.step-1)/br.step*br.step) - ic
		}
		key := cutKey{c0: d.im.c0, from: ic, to: ic + mb, pc: pc, kb: kb}
		cut := &br
		if bc := d.cuts.get(key); bc != nil {
			// (The cached cut is read only: br's own buffers stay
			// br's, for the blocks it cuts itself.)
			own := br
			own.groups, own.slivers = bc.groups, bc.slivers
			cut = &own
		} else {
			br.cut(ic, ic+mb)
			d.cuts.put(key, br.groups, br.slivers)
		}
		var ops *TileOps
		if last && cut.finishes(d.ops, nb) {
			ops = d.ops
		}
		d.tiles(cut, bp, c, ldc, jc, nb, kb, first, ops)
		if last && ops == nil {
			d.epi(ic, jc, mb, nb)
		}
		ic += mb
	}
}

// blockCuts is how block cuts its blocks of output rows: into 12-row
// groups for the 12-row kernel and slivers of up to six rows with their
// own tap runs.
type blockCuts struct {
	im     *im2col
	pc, kb int
	mode   int
	// offs are the K block's runs for the 12-row kernel (runOffsets),
	// nil where that kernel is not used.
	offs []int
	// mc is the rows of a block, step those of a group and cld a
	// group's distance between C rows.
	mc, step, cld int
	batch         bool // groups of examples (batchGroups, with offs)
	// whole says the K block is all of K: a tile is written once, so
	// groups may overlap (their rows get the same bits twice).
	whole   bool
	groups  []tapGroup
	slivers []sliverRuns
	runs    [][]tapRun // the slivers' runs, reused across blocks
}

// blockCuts decides how block cuts m rows of C (row length ldc) for
// output columns of width nb and K block [pc, pc+kb).
func (d *directConv) blockCuts(ldc, m, nb, pc, kb int) blockCuts {
	br := blockCuts{im: d.im, pc: pc, kb: kb, mode: d.im.groupMode(), cld: ldc, step: 2 * sgemmMR,
		whole: pc == 0 && kb == d.im.taps*d.im.cin}
	if br.mode != noGroups && useAsm && useAVX512 && directTaps {
		br.offs = d.im.runOffsets(pc, kb)
	}
	br.mc = balancedBlock(m, gemmMC, sgemmMR)
	if br.batch = br.offs != nil && br.mode == batchGroups; br.batch {
		// Blocks of whole groups of examples: 12 examples at every pixel.
		br.step = 2 * sgemmMR * d.im.pixels
		br.mc, br.cld = max(1, gemmMC/br.step)*br.step, d.im.pixels*ldc
	}
	return br
}

// directOverlapMaxK is the longest K block for which a run of pixels
// ends in a group overlapping the one before rather than in slivers
// (cut). 2 threads, CPU µs: a 3-channel 3×3 first layer (K 27) 560 →
// 226; ResNet's 56×56 64-channel 3×3 (K 576) 1891 → 2371, recomputing
// 6 of its rows' 54 interior pixels.
const directOverlapMaxK = 64

// cut cuts rows [from, to) into groups and slivers.
func (br *blockCuts) cut(from, to int) {
	br.groups, br.slivers = br.groups[:0], br.slivers[:0]
	switch {
	case br.offs != nil && br.mode == rowGroups:
		// Twelve pixels of one output row whose windows lie inside
		// the image go to the 12-row kernel (one offset per tap for
		// all of them); the rest in slivers of six with their own
		// runs. A run's last pixels short of twelve go to a group
		// overlapping the one before when the K block is all of K
		// and short: those pixels are computed twice, to the same
		// bits, where slivers cost more in their runs' building than
		// in arithmetic (a 3-channel first layer: a fifth of its
		// time). With a long K the recomputed pixels cost more.
		// (Scanning row by row for the next group instead left
		// slivers of one or two rows, which run at a third of the
		// speed: forward 261 → 190 GFLOP/s.)
		for i := from; i < to; {
			n := br.im.regularRun(i, to)
			if n >= br.step {
				for ; n >= br.step; n -= br.step {
					br.groups = append(br.groups, br.im.group(i, br.mode))
					i += br.step
				}
				if n > 0 && br.whole && br.kb <= directOverlapMaxK {
					br.groups = append(br.groups, br.im.group(i+n-br.step, br.mode))
					i += n
				}
				continue
			}
			next := min(i+sgemmMR, to)
			br.addSlivers(from, i, next)
			i = next
		}
	case br.batch:
		// Twelve examples at one pixel (a kernel gradient's input
		// channels at one kernel tap): rows pixels apart in C, an
		// example apart in the image. The block's rows before its
		// first whole example and after its last whole group go in
		// slivers.
		pixels := br.im.pixels
		i := min(to, (from+pixels-1)/pixels*pixels)
		br.addSlivers(from, from, i)
		for ; i+br.step <= to; i += br.step {
			for px := range pixels {
				br.groups = append(br.groups, br.im.group(i+px, br.mode))
			}
		}
		br.addSlivers(from, i, to)
	default:
		br.addSlivers(from, from, to)
	}
}

// addSlivers cuts rows [from, to) of a block from row lo into slivers
// of six and works out their runs. A short last sliver, where the K
// block is all of K, is six rows ending at to instead, overlapping the
// rows before (computed twice, to the same bits): a short one runs
// through a scratch tile on the AVX2 kernel (a block ending with an
// output row left one row there).
func (br *blockCuts) addSlivers(lo, from, to int) {
	for i := from; i < to; i += sgemmMR {
		if i+sgemmMR > to && br.whole && to-sgemmMR >= lo {
			i = to - sgemmMR
		}
		rows, s := min(sgemmMR, to-i), len(br.slivers)
		if s == len(br.runs) { // room for a run per tap the K block touches
			br.runs = append(br.runs, make([]tapRun, 0, br.kb/br.im.cin+2))
		}
		br.runs[s] = br.im.tapRuns(br.runs[s][:0], i, rows, br.pc, br.kb)
		br.slivers = append(br.slivers, sliverRuns{row: i, rows: rows, runs: br.runs[s]})
	}
}

// finishes reports whether the kernels can finish each tile of br's
// block with ops (nil: none) as they store it, columns nb wide: every
// tile one of a 12-row group or of a 6-row sliver, 32 columns wide (16
// on AVX2), C's rows where the matrix has them (not batchGroups').
func (br *blockCuts) finishes(ops *TileOps, nb int) bool {
	width := 2 * sgemmNR // the AVX-512 kernels' pairs of slivers
	if !useAVX512 {
		width = sgemmNR // AVX2: one sliver
	}
	if ops == nil || !useAsm || nb%width != 0 || br.batch {
		return false
	}
	for _, sl := range br.slivers {
		if sl.rows != sgemmMR {
			return false
		}
	}
	return true
}

// tiles computes the tiles of C at br's groups and slivers, columns
// [jc, jc+nb), of one K block; with ops (the final one, where
// br.finishes) it finishes them too.
func (d *directConv) tiles(br *blockCuts, bp, c []float32, ldc, jc, nb, kb int, first bool, ops *TileOps) {
	if !useAsm || !useAVX512 {
		// (No 12-row groups without AVX-512.) The whole tiles of each B
		// sliver prefetch their shares of the next one, as the AVX-512
		// kernels do the next pair.
		full := 0
		for _, sl := range br.slivers {
			if sl.rows == sgemmMR {
				full++
			}
		}
		for j := 0; j < nb; j += sgemmNR {
			next, call := min(nb-j-sgemmNR, sgemmNR), 0
			for _, sl := range br.slivers {
				var pf prefetchRange
				if sl.rows == sgemmMR && directStreams {
					pf = nextShare(1, next, kb, full, call)
					call++
				}
				if ops != nil { // (every tile whole: finishes)
					kernelTapsOpsF32(sl.runs, bp[j*kb:(j+sgemmNR)*kb], c[sl.row*ldc+jc+j:], ldc, first, pf, ops, sl.row, jc+j)
					continue
				}
				directTile(sl.runs, bp, c, ldc, sl.row, sl.rows, jc, j, min(sgemmNR, nb-j), kb, first, pf)
			}
		}
		return
	}
	// Two B slivers at a time; the last tile, narrower where nb is not
	// whole pairs (an output of 8, 12 or 24 channels), stores only its
	// columns.
	// The tiles that run a prefetching kernel, which share the next
	// pair's prefetch: the 12-row groups and the slivers of six rows.
	full := len(br.groups)
	for _, sl := range br.slivers {
		if sl.rows == sgemmMR {
			full++
		}
	}
	for j := 0; j < nb; j += 2 * sgemmNR {
		cols := min(2*sgemmNR, nb-j)
		pair := bp[j*kb : (j+(cols+sgemmNR-1)/sgemmNR*sgemmNR)*kb]
		next := min(nb-j-cols, 2*sgemmNR) // the next pair's columns
		call := 0
		for _, g := range br.groups {
			pf := nextPairShare(next, kb, full, call)
			call++
			switch {
			case ops != nil:
				directTapsPairOpsF32(br.offs, d.im.in[g.org:], g.lda, pair, c[g.row*ldc+jc+j:], br.cld, first, kb, pf, ops, g.row, jc+j)
				continue
			case cols == 2*sgemmNR:
				directTapsPairF32(br.offs, d.im.in[g.org:], g.lda, pair, c[g.row*ldc+jc+j:], br.cld, first, kb, pf)
				continue
			}
			directTapsColsF32(br.offs, d.im.in[g.org:], g.lda, pair, c[g.row*ldc+jc+j:], br.cld, first, kb, cols)
		}
		for _, sl := range br.slivers {
			switch {
			case sl.rows < sgemmMR:
				for h := 0; h < cols; h += sgemmNR {
					directTile(sl.runs, bp, c, ldc, sl.row, sl.rows, jc, j+h, min(sgemmNR, cols-h), kb, first, prefetchRange{})
				}
			case cols == 2*sgemmNR:
				pf := nextPairShare(next, kb, full, call)
				if ops != nil {
					kernelTapsPairOpsF32(sl.runs, pair, c[sl.row*ldc+jc+j:], ldc, kb, first, pf, ops, sl.row, jc+j)
				} else {
					kernelTapsPairF32(sl.runs, pair, c[sl.row*ldc+jc+j:], ldc, kb, first, pf)
				}
				call++
			default:
				kernelTapsColsF32(sl.runs, pair, c[sl.row*ldc+jc+j:], ldc, kb, cols, first)
			}
		}
	}
}

// prefetchRange is a taps kernel's prefetch stream: it starts off bytes
// from the kernel's B operand and moves step bytes every two k steps.
type prefetchRange struct{ off, step int }

// nextPairShare is the prefetch stream of the call-th of calls tiles
// over one pair of B slivers (kb steps each) that asks for its share of
// the next pair's cols columns (none: a stream standing on the pair's
// own first line). Without it the first tile of each pair waited on
// memory for every line of the pair: 24 chained 7×7×256 3×3
// convolutions (57 MB of weights), one thread, 13.5 → 10.3 ms; eight
// (19 MB, from L3) 3.59 → 3.30 ms; ResNet-50 (halfwidth) on two threads
// 4% faster, MiniLM 10%.
func nextPairShare(cols, kb, calls, call int) prefetchRange {
	return nextShare(2, cols, kb, calls, call)
}

// nextShare is nextPairShare for tiles over groups of slivers B slivers
// each (2: the AVX-512 kernels' pairs; 1: the AVX2 kernels' single
// sliver), cols the next group's columns.
func nextShare(slivers, cols, kb, calls, call int) prefetchRange {
	if cols <= 0 {
		return prefetchRange{}
	}
	bytes := (cols + sgemmNR - 1) / sgemmNR * sgemmNR * kb * 4
	return streamShare(slivers*sgemmNR*kb*4, bytes, kb, calls, call)
}

// panelShare is nextPairShare for the first pair of slivers of the next
// panel, next, read after the pair at b (kb steps deep, next's depth
// taken as the same: its last K slice may be shallower, when the stream
// runs on past it).
func panelShare(b, next []float32, kb, calls, call int) prefetchRange {
	return panelShareOf(2, b, next, kb, calls, call)
}

// panelShareOf is panelShare for groups of slivers B slivers (nextShare).
func panelShareOf(slivers int, b, next []float32, kb, calls, call int) prefetchRange {
	if len(next) == 0 || len(b) == 0 {
		return prefetchRange{}
	}
	from := int(uintptr(unsafe.Pointer(&next[0])) - uintptr(unsafe.Pointer(&b[0])))
	return streamShare(from, min(len(next), slivers*sgemmNR*kb)*4, kb, calls, call)
}

// streamShare is the call-th of calls tiles' share of a prefetch of
// bytes bytes from, from the tiles' B operand: the calls split it in
// equal shares, at most a line every two steps each (a tile's kb/2
// prefetches).
func streamShare(from, bytes, kb, calls, call int) prefetchRange {
	if bytes <= 0 || calls <= 0 || kb < 2 {
		return prefetchRange{}
	}
	per := kb / 2 // prefetches a tile
	step := min(64, (bytes+calls*per-1)/(calls*per))
	return prefetchRange{off: from + call*per*step, step: step}
}

// sliverRuns is a sliver of up to six output rows from row and its tap
// runs.
type sliverRuns struct {
	row, rows int
	runs      []tapRun
}

// directTaps lets tests turn the 12-row kernel off.
var directTaps = true

// directStreams lets tests and benchmarks turn the AVX2 taps kernel's
// prefetch streams off.
var directStreams = true

// runOffsets returns K block [pc, pc+kb)'s tap runs for the 12-row
// kernel as (offset from a window's origin, k) pairs, or nil where the
// taps have no fixed offsets (input dilation).
func (im *im2col) runOffsets(pc, kb int) []int {
	if im.tapOffsets == nil {
		return nil
	}
	var offs []int
	for q := 0; q < kb; {
		off, k := im.runAt(pc+q, kb-q)
		offs = append(offs, off, k)
		q += k
	}
	return offs
}

// runAt returns the interior run at column col of the K dimension, at
// most k long: its offset from a window's origin and its length, to the
// end of its tap's channels or, merging (rowRun), of its kernel row.
func (im *im2col) runAt(col, k int) (off, n int) {
	tap, ch := col/im.cin, col%im.cin
	if im.rowRun > im.cin {
		kx := im.p.Kernel[len(im.p.Kernel)-1]
		start := tap - tap%kx // the row's first tap
		into := col - start*im.cin
		return im.tapOffsets[start] + into, min(im.rowRun-into, k)
	}
	return im.tapOffsets[tap] + ch, min(im.cin-ch, k)
}

// regular reports whether output rows [i, i+n) are pixels of one output
// row (the last spatial dimension running) whose windows lie wholly
// inside the image.
func (im *im2col) regular(i, n int) bool {
	p := im.p
	ns := len(p.OutSpatial)
	if im.flat {
		return i+n <= p.Batch*im.pixels
	}
	if ns == 0 {
		return false
	}
	rem := i % im.pixels
	for d := ns - 1; d >= 0; d-- {
		o, size := rem%p.OutSpatial[d], p.OutSpatial[d]
		rem /= size
		first, last := o, o
		if d == ns-1 {
			if o+n > size {
				return false
			}
			last = o + n - 1
		}
		if first*p.Stride[d]-p.PadLo[d] < 0 ||
			last*p.Stride[d]-p.PadLo[d]+(p.Kernel[d]-1)*p.RhsDil[d] >= p.InSpatial[d] {
			return false
		}
	}
	return true
}

// regularRun is how many output rows from i, up to to, are pixels of
// one output row whose windows lie wholly inside the image (regular's
// condition), 0 where row i's does not.
func (im *im2col) regularRun(i, to int) int {
	p := im.p
	ns := len(p.OutSpatial)
	if im.flat {
		return min(to, p.Batch*im.pixels) - i
	}
	if ns == 0 {
		return 0
	}
	rem := i % im.pixels
	n := 0
	for d := ns - 1; d >= 0; d-- {
		o, size := rem%p.OutSpatial[d], p.OutSpatial[d]
		rem /= size
		if o*p.Stride[d]-p.PadLo[d] < 0 || o*p.Stride[d]-p.PadLo[d]+(p.Kernel[d]-1)*p.RhsDil[d] >= p.InSpatial[d] {
			return 0
		}
		if d == ns-1 {
			// The last pixel of the row whose window ends inside.
			hi := min(size-1, (p.InSpatial[d]-1-(p.Kernel[d]-1)*p.RhsDil[d]+p.PadLo[d])/p.Stride[d])
			n = min(hi-o+1, to-i)
		}
	}
	return n
}

// The ways rows of the output make 12-row groups for the direct kernel:
// none; twelve pixels along an output row (rowGroups); twelve examples
// at one pixel, when an output row is shorter than twelve pixels and
// every pixel's window lies inside the image (batchGroups: a kernel
// gradient, whose "pixels" are the kernel's taps and "examples" the
// input channels).
const (
	noGroups = iota
	rowGroups
	batchGroups
)

// groupMode is how convolution im.p's rows make 12-row groups.
func (im *im2col) groupMode() int {
	p := im.p
	ns := len(p.OutSpatial)
	switch {
	case im.flat:
		return rowGroups
	case ns == 0:
		return noGroups
	case p.OutSpatial[ns-1] >= 2*sgemmMR:
		return rowGroups
	case p.Batch < 2*sgemmMR || 2*sgemmMR*im.pixels > gemmMC:
		// (A group of examples spans 12 pixels' rows: more than an MC
		// block's when an example has more than ten.)
		return noGroups
	}
	for px := range im.pixels {
		if !im.regular(px, 1) {
			return noGroups
		}
	}
	return batchGroups
}

// tapGroup is a group of twelve output rows for the 12-row kernel: the
// first row, its window's origin in the image, and the distance to the
// window of the group's next row.
type tapGroup struct{ row, org, lda int }

// group returns the group whose first row is output row i: its windows
// a pixel apart along the last spatial dimension, or (batchGroups) an
// example apart.
func (im *im2col) group(i, mode int) tapGroup {
	p := im.p
	if im.flat { // (a tenth of a small pointwise product in the divisions below)
		return tapGroup{row: i, org: i*p.InChannels + im.c0, lda: p.InChannels}
	}
	b, rem := i/im.pixels, i%im.pixels
	g := tapGroup{row: i, org: b*p.InBatchStride + im.c0}
	for d := len(p.OutSpatial) - 1; d >= 0; d-- {
		o := rem % p.OutSpatial[d]
		rem /= p.OutSpatial[d]
		g.org += (o*p.Stride[d] - p.PadLo[d]) * p.InSpatialStrides[d]
	}
	if mode == batchGroups {
		g.lda = p.InBatchStride
	} else {
		last := len(p.OutSpatial) - 1
		g.lda = p.Stride[last] * p.InSpatialStrides[last]
	}
	return g
}
