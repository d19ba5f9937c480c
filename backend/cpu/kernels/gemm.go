package kernels

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/axle-ml/axle/internal/pages"
)

// GEMM in the BLIS / OpenBLAS design. C (m×n) = A (m×k) · B (k×n):
//
//	for each NC-wide column block of B and C (jc)
//	  for each KC-deep slice of the shared dimension (pc)
//	    pack B[pc:pc+KC, jc:jc+NC] into NR-wide slivers, k-major      (stays in L3)
//	    for each MC-high row block of A and C (ic), split across threads
//	      pack A[ic:ic+MC, pc:pc+KC] into MR-high slivers, k-major    (stays in L2)
//	      for each NR sliver of B, each MR sliver of A: micro-kernel   (C tile in registers)
//
// The micro-kernel keeps an MR×NR tile of C in registers for the whole
// KC loop: per step it loads one NR-wide row of packed B and broadcasts MR
// values of packed A, MR·NR/8 FMAs for MR+2 loads. Packing reads A and B
// through arbitrary row and column strides, so transposed operands cost
// nothing extra, and pads partial slivers with zeros so the kernel never
// sees an edge; edge tiles of C are computed into a scratch tile.

// Blocking for Zen 3 (32 KiB L1d, 512 KiB L2 per core, 32 MiB L3): a
// packed A block of MC×KC f32 is 120 KiB, a KC-deep B sliver 16 KiB.
const (
	sgemmMR, sgemmNR = 6, 16
	dgemmMR, dgemmNR = 6, 8
	gemmKC           = 256
	gemmMC           = 120
	gemmNC           = 3072
)

// Strided is a 2-D view: element (i, j) is Data[i*Row + j*Col].
type Strided[T float32 | float64 | int8 | uint8] struct {
	Data     []T
	Row, Col int
}

func (s Strided[T]) at(i, j int) T { return s.Data[i*s.Row+j*s.Col] }

// GemmF32 sets C = A·B (or adds A·B to C when accumulate is true) for A
// m×k and B k×n given as strided views and C row-major with row stride
// ldc. threads > 1 splits the rows of C across that many goroutines; each
// element's sum is accumulated in the same order whatever the thread
// count, so results do not depend on it.
func GemmF32(m, n, k int, a, b Strided[float32], c []float32, ldc int, accumulate bool, threads int) {
	gemmF32(m, n, k, a, b, c, ldc, accumulate, threads, nil, true)
}

// Epilogue finishes a block of C whose values are final: rows [i,
// i+rows) and columns [j, j+cols), rewritten in place. A kernel calls it
// once for every element of C, block by block, as soon as the block is
// final: mostly right after its last K slice, on the goroutine that
// computed it, so the block is still in cache (paths that sum or turn C
// around at the end call it after that). Blocks are disjoint, and
// different ones may be finished concurrently.
type Epilogue func(i, j, rows, cols int)

// GemmEpilogueF32 sets C = A·B like GemmF32 and hands every block of C to
// epi (nil: none) as soon as it is final: an elementwise consumer of the
// product (bias, activation) then reads C from cache instead of memory.
// With wholeRows, every block spans whole rows of C when
// GemmWholeRows(n) (a row program's epilogue: softmax over the rows);
// otherwise the threads may split C's columns and hand over parts of
// rows.
func GemmEpilogueF32(m, n, k int, a, b Strided[float32], c []float32, ldc int, threads int, epi Epilogue, wholeRows bool) {
	gemmF32(m, n, k, a, b, c, ldc, false, threads, epi, wholeRows)
}

// GemmFinishedF32 is GemmEpilogueF32 with ops (nil: none), what epi
// computes in the form the direct kernels apply as they store a tile
// (TileOps): blocks they finish so never reach epi.
func GemmFinishedF32(m, n, k int, a, b Strided[float32], c []float32, ldc int, threads int, epi Epilogue, ops *TileOps, wholeRows bool) {
	gemmF32From(m, n, k, a, b, nil, c, ldc, false, threads, epi, ops, wholeRows)
}

// GemmWholeRows reports whether GemmEpilogueF32 hands its epilogue only
// whole rows of an n-column C: it does when one column block spans them.
func GemmWholeRows(n int) bool { return n <= gemmNC }

func gemmF32(m, n, k int, a, b Strided[float32], c []float32, ldc int, accumulate bool, threads int, epi Epilogue, wholeRows bool) {
	gemmF32From(m, n, k, a, b, nil, c, ldc, accumulate, threads, epi, nil, wholeRows)
}

// gemmF32From is gemmF32 reading the blocked path's B from packed where
// it is not nil (b is the operand it was packed from), with ops (nil:
// none) epi as the direct kernels apply it (TileOps).
func gemmF32From(m, n, k int, a, b Strided[float32], packed *PackedB, c []float32, ldc int, accumulate bool, threads int, epi Epilogue, ops *TileOps, wholeRows bool) {
	if m == 1 && n > sgemmNR && b.Row == 1 && (epi == nil || !wholeRows || !GemmWholeRows(n)) {
		// One row times a B stored transposed (weights kept [n, k], as
		// ONNX's Gemm with transB and an LSTM's have them): as cᵀ =
		// Bᵀ·aᵀ, Bᵀ is a row-major n×k left operand the skinny path
		// reads in place, where the GEMM packed all of B for one row
		// (silero's 1×128 by 128×512: 118 µs, most of it packing).
		bt := Strided[float32]{Data: b.Data, Row: b.Col, Col: 1}
		at := Strided[float32]{Data: a.Data, Row: a.Col, Col: 1}
		var te Epilogue
		if epi != nil {
			te = func(i, j, rows, cols int) { epi(j, i, cols, rows) }
		}
		if gemmSkinnyF32(n, 1, k, bt, at, c, 1, accumulate, threads, te) {
			return
		}
	}
	if gemmSkinnyF32(m, n, k, a, b, c, ldc, accumulate, threads, epi) {
		return
	}
	if packed != nil {
		src := bSource[float32]{panel: packed.panel, peek: packed.panel}
		gemmFrom(m, n, k, a, b, src, c, ldc, accumulate, threads, sgemmMR, sgemmNR, kernelF32, epi, ops, wholeRows)
		return
	}
	pb := func(dst []float32, pc, jc, kb, nb, from, to int) { packB(dst, b, pc, jc, kb, nb, sgemmNR, from, to) }
	gemmFrom(m, n, k, a, b, bSource[float32]{pack: pb}, c, ldc, accumulate, threads, sgemmMR, sgemmNR, kernelF32, epi, ops, wholeRows)
}

// GemmF64 is GemmF32 for float64 (6×8 micro-kernel).
func GemmF64(m, n, k int, a, b Strided[float64], c []float64, ldc int, accumulate bool, threads int) {
	gemm(m, n, k, a, b, c, ldc, accumulate, threads, dgemmMR, dgemmNR, kernelF64, nil, true)
}

// microKernel computes an MR×NR tile: C += A·B, or C = A·B when
// overwrite (the first k block of a non-accumulating GEMM, so C need not
// be cleared first).
type microKernel[T float32 | float64] func(k int, a, b, c []T, ldc int, overwrite bool)

func gemm[T float32 | float64](m, n, k int, a, b Strided[T], c []T, ldc int, accumulate bool, threads, mr, nr int, kern microKernel[T], epi Epilogue, wholeRows bool) {
	pb := func(dst []T, pc, jc, kb, nb, from, to int) { packB(dst, b, pc, jc, kb, nb, nr, from, to) }
	gemmFrom(m, n, k, a, b, bSource[T]{pack: pb}, c, ldc, accumulate, threads, mr, nr, kern, epi, nil, wholeRows)
}

// gemmFrom is gemm with B taken from src: packed per call from b, or
// read from panels packed before (b is then only a guide to its layout),
// and ops (nil: none) what epi computes as the direct kernels apply it.
func gemmFrom[T float32 | float64](m, n, k int, a, b Strided[T], src bSource[T], c []T, ldc int, accumulate bool, threads, mr, nr int, kern microKernel[T], epi Epilogue, ops *TileOps, wholeRows bool) {
	pa := func(dst []T, ic, pc, mb, kb int) { packA(dst, a, ic, pc, mb, kb, mr) }
	wide := wideFor(m, n, k)
	blk := packedBlock(pa, mr, nr, kern, wide)
	// An epilogue that needs whole rows keeps the rows split; others take
	// part rows (each block's rows, one call per row, from the generated
	// code's epilogue: a cost the split pays for where B is wide, as in
	// a transformer's MLP up-projection with its GELU, 1024×3072×768:
	// 109 GFLOP/s with rows split against 156 with columns, the product
	// alone).
	t := splitThreads(m, n, k, threads, mr)
	cols := t > 1 && columnSplit && (epi == nil || !wholeRows) && (n+nr-1)/nr >= 4*t
	if d := directBlock(a, b, mr, nr, cols && 2*m*n*k < chunkedFlops, wide); d.run != nil {
		blk = d
	} else {
		blk.packsA = !useAVX512
	}
	// The direct kernels, and on AVX2 the packed ones (macroKernelAVX2),
	// finish their tiles with ops.
	if cf, ok := any(c).([]float32); ok && epi != nil && !accumulate && ops.fits(cf, ldc, n) {
		blk.ops = ops
	}
	if src.panel != nil {
		blk.packsB = false // B is packed already
	}
	if cols {
		gemmColumnsFrom(m, n, k, blk, src, c, ldc, accumulate, t, mr, nr, epi)
		return
	}
	gemmCoreFrom(m, n, k, blk, src, c, ldc, accumulate, threads, mr, nr, epi)
}

// aBlock computes blocks of C. run computes the (ic, jc) block's product
// over the K slice [pc, pc+kb) from A and bp, the slice's packed B
// slivers of the block's columns: ap is the calling thread's A buffer
// (MC×KC plus edgeTile). overwrite sets C rather than adding to it. When
// packsB, run can also pack B's whole pairs of slivers into bp itself as
// it first reads them (packB true), and the caller packs only the rest.
// pf says what of B run's kernels prefetch.
//
// With ops (the final K slice of a product whose epilogue TileOps
// describes; blk.ops is what the drivers pass then), run may finish the
// block's first rows too, and returns how many it did: only the rest go
// to the epilogue.
type aBlock[T float32 | float64] struct {
	run    func(ap, bp, c []T, ldc, ic, pc, jc, mb, nb, kb int, overwrite, packB bool, pf bPrefetch[T], ops *TileOps) int
	packsB bool
	ops    *TileOps
	// rowStep, where set, is the multiple of rows a thread's share of a
	// row split may be (mr otherwise: packed A comes in slivers of mr).
	rowStep int
	// packsA says run packs its rows of A for every block, so that a
	// column split packs all of A once for each chunk of columns (set
	// where that was measured to outweigh the chunks' balance: AVX2).
	packsA bool
	// kc, where set, is the depth of the K slices the driver packs and
	// runs (gemmKC otherwise); the packing buffers grow with it.
	kc int
	// wide says run's kernels are the AVX-512 pair kernels (wideFor),
	// which take MC blocks in twelve-row cuts.
	wide bool
}

// depth is the K slice depth of blocks of blk.
func (blk aBlock[T]) depth() int {
	if blk.kc > 0 {
		return blk.kc
	}
	return gemmKC
}

// bPrefetch is what a block's kernels prefetch of B. Where B's panels
// were packed before the product (cold: a model's weights, read from
// memory), the tiles of each pair of slivers ask for the next pair, and
// those of the last pair for next, the first pair of the panel the
// thread reads after the block (nil: none or unknown). B packed by the
// product itself is in cache already, and its prefetches cost more than
// they bring (1024³ on two threads, 1%).
type bPrefetch[T float32 | float64] struct {
	cold bool
	next []T
}

// packedBlock is the aBlock of the BLIS design: pack A's block with pa,
// then run the micro-kernels over it.
// Its kernels are the AVX-512 pair kernels where wide (wideFor).
func packedBlock[T float32 | float64](pa aPacker[T], mr, nr int, kern microKernel[T], wide bool) aBlock[T] {
	return aBlock[T]{wide: wide, run: func(ap, bp, c []T, ldc, ic, pc, jc, mb, nb, kb int, overwrite, _ bool, pf bPrefetch[T], ops *TileOps) int {
		pa(ap, ic, pc, mb, kb)
		if done, ok := macroKernelAVX2(ap, bp, c, ldc, ic, jc, mb, nb, kb, mr, nr, overwrite, pf, ops, wide); ok {
			return done
		}
		macroKernel(ap, bp, c, ldc, ic, jc, mb, nb, kb, mr, nr, kern, overwrite, wide)
		return 0
	}}
}

// macroKernelAVX2 is macroKernel on the AVX2 kernel (f32, no AVX-512
// pair kernels: it reports false otherwise), which it improves on in
// two ways. Where B's panels were packed before the product (pf.cold: a
// model's weights, which come from memory), the whole tiles of each B
// sliver ask for their shares of the next sliver, and those of the last
// sliver for pf.next's first, with the kernel's prefetch stream
// (nextShare), as the AVX-512 direct kernels do for pairs of slivers:
// the tiles of a sliver no longer wait on memory for each of its lines.
// And with ops, where the block's columns are whole slivers, its whole
// tiles are finished with ops as they are stored (the epilogue's pass
// over C saved), and it returns the rows they took: all but the last
// mb%6, which go to the epilogue.
func macroKernelAVX2[T float32 | float64](ap, bp, c []T, ldc, ic, jc, mb, nb, kb, mr, nr int, overwrite bool, pf bPrefetch[T], ops *TileOps, wide bool) (int, bool) {
	apf, ok := any(ap).([]float32)
	if !ok || !useAsm || mr != sgemmMR || nr != sgemmNR || pairKernel[T](mr, nr, wide) != nil {
		return 0, false
	}
	if nb%nr != 0 {
		ops = nil
	}
	bpf, cf := any(bp).([]float32), any(c).([]float32)
	next, _ := any(pf.next).([]float32)
	defer flushEnd(flushStart()) // flushing subnormals (denormals.go)
	tiles := mb / mr             // the whole ones, which run the stream
	for j := 0; j < nb; j += nr {
		bs := bpf[j*kb : (j+nr)*kb]
		cols := min(nr, nb-j)
		share := sliverStreams(pf.cold, bs, next, j, nb, kb, tiles)
		i0 := 0
		if ops != nil && tiles > 0 && gemmTileCalls { // whole tiles in one call (cols == nr here)
			kernelStreamOpsTilesF32(kb, apf[:tiles*mr*kb], bs, cf[ic*ldc+jc+j:], ldc, overwrite, share(0), ops, ic, jc+j, tiles)
			i0 = tiles * mr
		}
		for i := i0; i < mb; i += mr {
			as := apf[i*kb : (i+mr)*kb]
			off := (ic+i)*ldc + jc + j
			if i+mr > mb || cols < nr { // through the scratch tile
				microTile(apf, bpf, cf, ldc, ic, jc, i, j, mb, nb, kb, mr, nr, kernelF32, overwrite)
				continue
			}
			switch pf := share(i / mr); {
			case ops != nil:
				kernelStreamOpsF32(kb, as, bs, cf[off:], ldc, overwrite, pf, ops, ic+i, jc+j)
			case pf != prefetchRange{}:
				kernelStreamF32(kb, as, bs, cf[off:], ldc, overwrite, pf)
			default:
				kernelF32(kb, as, bs, cf[off:], ldc, overwrite)
			}
		}
	}
	if ops == nil {
		return 0, true
	}
	return tiles * mr, true
}

// sliverStreams returns the prefetch stream of the call-th of the tiles
// whole tiles over B sliver bs, columns [j, j+16) of nb (kb steps): its
// share of the next sliver, or of next's first where bs is the last (no
// stream unless cold: a B packed by the product is in cache already).
func sliverStreams(cold bool, bs, next []float32, j, nb, kb, tiles int) func(call int) prefetchRange {
	return func(call int) prefetchRange {
		switch {
		case !cold || !gemmStreams:
			return prefetchRange{}
		case j+sgemmNR < nb:
			return nextShare(1, min(nb-j-sgemmNR, sgemmNR), kb, tiles, call)
		}
		return panelShareOf(1, bs, next, kb, tiles, call)
	}
}

// gemmStreams lets tests and benchmarks turn the AVX2 GEMM kernels'
// prefetch streams off.
var gemmStreams = true

// gemmTileCalls lets tests run the AVX2 macro-kernel's whole tiles with
// ops a call each instead of a column of them a call.
var gemmTileCalls = true

// finalOps is the ops blk's run may finish a block with: blk.ops for the
// final K slice (fin), none before it.
func (blk aBlock[T]) finalOps(fin bool) *TileOps {
	if !fin {
		return nil
	}
	return blk.ops
}

// bFrom is the first sliver of an nb-wide block that the caller packs
// when blk packs B's whole sliver pairs itself (every sliver otherwise).
func (blk aBlock[T]) bFrom(nb, nr int) int {
	if !blk.packsB {
		return 0
	}
	return nb / (2 * nr) * 2
}

// aPacker packs rows [ic, ic+mb) and columns [pc, pc+kb) of the left
// operand into MR-high k-major slivers; bPacker packs rows [pc, pc+kb)
// and NR-wide column slivers [from, to) of columns [jc, jc+nb) of the
// right operand. A GEMM reads its operands only through them, so
// convolution runs on the same driver with an im2col packer that reads
// the image directly.
type (
	aPacker[T float32 | float64] func(dst []T, ic, pc, mb, kb int)
	bPacker[T float32 | float64] func(dst []T, pc, jc, kb, nb, from, to int)
)

// gemmCore drives the blocked product; epi (nil: none) finishes each
// (ic, jc) block after its last K slice.
func gemmCore[T float32 | float64](m, n, k int, blk aBlock[T], pb bPacker[T], c []T, ldc int, accumulate bool, threads, mr, nr int, epi Epilogue) {
	gemmCoreFrom(m, n, k, blk, bSource[T]{pack: pb}, c, ldc, accumulate, threads, mr, nr, epi)
}

// bSource is where a blocked product gets its packed B: pack fills a
// buffer with the slivers asked for, or, where set, panel returns the
// slivers of K slice pc (kb deep) for the nb columns from jc on, packed
// before in pack's layout (PackedB, a constant kernel's cached panels),
// which the product then reads in place.
//
// peek, where set, returns such a panel only if it is packed already
// (nil otherwise): what the product asks for the panel it reads next, to
// prefetch its first slivers.
type bSource[T float32 | float64] struct {
	pack  bPacker[T]
	panel func(pc, jc, kb, nb int) []T
	peek  func(pc, jc, kb, nb int) []T
}

// nextPanel is the panel a thread reads after K slice [pc, pc+kb) of
// columns [jc, jc+nb) of its columns [jc, to): the next K slice's, or
// the first of the next columns', or nil (none, or no peek).
func (src bSource[T]) nextPanel(pc, kb, k, jc, nb, to, kc int) []T {
	switch {
	case src.peek == nil:
		return nil
	case pc+kb < k:
		return src.peek(pc+kb, jc, min(kc, k-pc-kb), nb)
	case jc+nb < to:
		return src.peek(0, jc+nb, min(kc, k), min(gemmNC, to-jc-nb))
	}
	return nil
}

// gemmCoreFrom is gemmCore with B from src.
func gemmCoreFrom[T float32 | float64](m, n, k int, blk aBlock[T], src bSource[T], c []T, ldc int, accumulate bool, threads, mr, nr int, epi Epilogue) {
	if m <= 0 || n <= 0 {
		return
	}
	if k <= 0 {
		if !accumulate {
			for i := range m {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		if epi != nil {
			epi(0, 0, m, n)
		}
		return
	}
	threads = splitThreads(m, n, k, threads, mr)
	// Rows per thread, a multiple of MR so slivers never straddle threads
	// (of blk.rowStep where A is read in place).
	step := mr
	if blk.rowStep > 0 {
		step = blk.rowStep
	}
	per := ((m+threads-1)/threads + step - 1) / step * step
	nc := min(gemmNC, (n+nr-1)/nr*nr)
	kc := blk.depth()
	// Packing buffers come from a pool: fresh memory costs a page fault
	// per 4 KiB on first touch, more than packing itself.
	var bp []T // B's packing buffer: none where its panels were packed before
	if src.panel == nil {
		bp = getBuf[T](kc * nc)
		defer putBuf(bp)
	}
	aps := make([][]T, threads)
	for t := range aps {
		aps[t] = getBuf[T](gemmMC*kc + edgeTile)
		defer putBuf(aps[t])
	}
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			slivers := (nb + nr - 1) / nr
			// One thread packs B as it goes where its block can (the
			// threads share one packed B otherwise).
			from := 0
			if threads == 1 {
				from = blk.bFrom(nb, nr)
			}
			bpc, pf := bp, bPrefetch[T]{cold: src.panel != nil, next: src.nextPanel(pc, kb, k, jc, nb, n, kc)}
			if src.panel != nil {
				bpc = src.panel(pc, jc, kb, nb)
			} else {
				parallel(threads, func(t int) {
					src.pack(bp, pc, jc, kb, nb, from+t*(slivers-from)/threads, from+(t+1)*(slivers-from)/threads)
				})
			}
			parallel(threads, func(t int) {
				lo, hi := t*per, min(m, (t+1)*per)
				mc := balancedBlock(hi-lo, gemmMC, blockRows[T](mr, nr, blk.wide))
				for ic := lo; ic < hi; ic += mc {
					mb := min(mc, hi-ic)
					fin := epi != nil && pc+kb == k
					done := blk.run(aps[t], bpc, c, ldc, ic, pc, jc, mb, nb, kb, !accumulate && pc == 0, from > 0 && ic == lo, pf, blk.finalOps(fin))
					if fin && done < mb {
						epi(ic+done, jc, mb-done, nb)
					}
				}
			})
		}
	}
}

// splitThreads is how many threads a product of this size runs on.
func splitThreads(m, n, k, threads, mr int) int {
	if runsAlone(2*m*n*k, gemmParallelFlops) {
		return 1
	}
	return max(1, min(threads, (m+mr-1)/mr))
}

// columnSplit lets tests run the row split where gemm would split columns.
var columnSplit = true

// gemmColumns is gemmCore with C's columns, not its rows, split across
// the threads: each packs the B slivers of its own columns and all of A,
// so the threads never wait for one another before the end. Splitting
// rows shares one packed B and so needs every thread to finish packing
// before any computes, twice per KC slice; on a product of 256³ those
// waits cost as much as packing A again on each thread. The columns come
// in chunks (claims): a thread that falls behind hands its last ones to
// the others. Which thread computes a column does not change its bits.
func gemmColumns[T float32 | float64](m, n, k int, blk aBlock[T], pb bPacker[T], c []T, ldc int, accumulate bool, threads, mr, nr int, epi Epilogue) {
	gemmColumnsFrom(m, n, k, blk, bSource[T]{pack: pb}, c, ldc, accumulate, threads, mr, nr, epi)
}

// gemmColumnsFrom is gemmColumns with B from src.
func gemmColumnsFrom[T float32 | float64](m, n, k int, blk aBlock[T], src bSource[T], c []T, ldc int, accumulate bool, threads, mr, nr int, epi Epilogue) {
	slivers := (n + nr - 1) / nr
	kc := blk.depth()
	ch := chunksOf(slivers, threads, columnChunk(slivers, threads, 2*m*n*k, blk.packsA))
	q := newClaims(ch.n, threads)
	defer q.put()
	parallel(threads, func(t int) {
		nc := min(gemmNC, ch.widest()*nr)
		var bp []T
		if src.panel == nil {
			bp = getBuf[T](kc * nc)
			defer putBuf(bp)
		}
		ap := getBuf[T](gemmMC*kc + edgeTile)
		defer putBuf(ap)
		mc := balancedBlock(m, gemmMC, blockRows[T](mr, nr, blk.wide))
		for cn, ok := q.next(t); ok; cn, ok = q.next(t) {
			if chunkHook != nil {
				chunkHook(t)
			}
			s0, s1 := ch.slivers(cn)
			j0, j1 := s0*nr, min(n, s1*nr)
			for jc := j0; jc < j1; jc += nc {
				nb := min(nc, j1-jc)
				for pc := 0; pc < k; pc += kc {
					kb := min(kc, k-pc)
					from := blk.bFrom(nb, nr)
					bpc, pf := bp, bPrefetch[T]{cold: src.panel != nil, next: src.nextPanel(pc, kb, k, jc, nb, j1, kc)}
					if src.panel != nil {
						bpc = src.panel(pc, jc, kb, nb)
					} else {
						src.pack(bp, pc, jc, kb, nb, from, (nb+nr-1)/nr)
					}
					for ic := 0; ic < m; ic += mc {
						mb := min(mc, m-ic)
						fin := epi != nil && pc+kb == k
						done := blk.run(ap, bpc, c, ldc, ic, pc, jc, mb, nb, kb, !accumulate && pc == 0, from > 0 && ic == 0, pf, blk.finalOps(fin))
						if fin && done < mb {
							epi(ic+done, jc, mb-done, nb)
						}
					}
				}
			}
		}
	})
}

// columnChunk is how many B slivers wide the chunks of C's columns that
// gemmColumns hands out are, for a product of flops: about
// chunksPerThread a thread, whole pairs of slivers (the AVX-512 kernels'
// width); one a thread for products of chunkedFlops or more, and
// packedChunksPerThread where each chunk packs all of A again (packsA:
// no direct kernels, as on AVX2). On a Zen 3 with AVX2, two threads,
// GFLOP/s, medians of seven alternations in each of three runs, four
// chunks a thread → one:
// 256×512×784 123/140/123 → 146/169/141, 256×512×512 124/157/126 →
// 158/166/149, 128×384×1536 113/139/130 → 126/159/153, 128×384×384
// 122/147/143 → 134/155/146; 128×1536×384 127/158/133 → 128/145/130.
func columnChunk(slivers, threads, flops int, packsA bool) int {
	per := chunksPerThread
	if packsA {
		per = packedChunksPerThread
	}
	if flops >= chunkedFlops {
		per = 1
	}
	w := max(1, slivers/(threads*per))
	return (w + 1) &^ 1
}

// columnChunks cuts a product's slivers into n chunks of whole pairs
// (the AVX-512 kernels' width), as even as pairs allow, n a multiple of
// the threads where there are pairs enough: each thread then owns as
// many pairs as another, give or take one. Cut at a fixed width, 72
// slivers (a ViT's 1152 query-key-value columns) in chunks of ten made
// eight chunks, one of two slivers: 40 against 32 slivers a thread, and
// 197×1152×384 ran at 174 GFLOP/s on two threads where a balanced split
// ran at 200.
type columnChunks struct {
	n, pairs, last int // chunks, pairs of slivers, slivers in all
}

// chunksOf cuts slivers into chunks about width slivers wide.
func chunksOf(slivers, threads, width int) columnChunks {
	pairs := (slivers + 1) / 2
	n := (slivers + width - 1) / width
	if n > threads {
		n = (n + threads - 1) / threads * threads
	}
	return columnChunks{n: max(1, min(n, pairs)), pairs: pairs, last: slivers}
}

// slivers is chunk c's slivers [s0, s1).
func (ch columnChunks) slivers(c int) (s0, s1 int) {
	return 2 * (c * ch.pairs / ch.n), min(ch.last, 2*((c+1)*ch.pairs/ch.n))
}

// widest is the most slivers a chunk has.
func (ch columnChunks) widest() int { return 2 * ((ch.pairs + ch.n - 1) / ch.n) }

// chunkedFlops bounds the products whose columns come in several chunks a
// thread. A chunk reuses each block of A over fewer B slivers: 2048³ on
// two threads lost 4% (293–313 against 322–327 GFLOP/s, three
// alternations), while the host's slow spells (about 0.75 ms) matter
// little to a product of several milliseconds a thread.
const chunkedFlops = 1 << 30

// chunkHook, where tests set it, is called by thread t before each chunk.
var chunkHook func(t int)

// chunksPerThread is the share of the work a thread can hand over when it
// falls behind: finer shares balance better and cost a pass over A each.
var chunksPerThread = 4

// packedChunksPerThread is chunksPerThread where each chunk packs all of
// A again (columnChunk).
var packedChunksPerThread = 1

// gemmParallelFlops is the work below which a product runs on the
// calling goroutine: waking a parked worker takes tens of microseconds on
// these machines, as long as a whole 1-MFLOP product takes.
const gemmParallelFlops = 1 << 23

// GemmRunsInline reports whether an m×k by k×n product runs on the
// calling goroutine alone, whatever the thread count: with hot, within
// an execution that keeps the pool's workers polling (Busy), as every
// execution on several threads that splits work does; else whenever.
func GemmRunsInline(m, n, k int, hot bool) bool { return below(2*m*n*k, gemmParallelFlops, hot) }

// blockRows is the multiple of rows an MC block is cut to: two slivers
// where the AVX-512 kernels take them in pairs (a block of an odd number
// of slivers ends in one on the half-size kernel: 1024 rows cut into
// blocks of 114 put 5% of the work there), one otherwise.
func blockRows[T float32 | float64](mr, nr int, wide bool) int {
	if pairKernel[T](mr, nr, wide) != nil {
		return 2 * mr
	}
	return mr
}

// balancedBlock splits n rows into the fewest blocks of at most limit,
// all about the same size and a multiple of mr: a last block of a few
// rows would load each B sliver into L1 for almost no work.
func balancedBlock(n, limit, mr int) int {
	if n <= 0 {
		return limit
	}
	blocks := (n + limit - 1) / limit
	return min(limit, ((n+blocks-1)/blocks+mr-1)/mr*mr)
}

// bufPools pool scratch buffers by size class: class c holds buffers of
// exactly 1<<c elements. One pool for all sizes handed a request
// whatever buffer came first, and one too small was dropped and a new
// one made (fresh memory: a page fault per 4 KiB): a model whose
// products pack blocks of several sizes did that on every run.
var bufPools struct{ f32, f64 [bits.UintSize]sync.Pool }

// bufClass is the size class of a request for n elements.
func bufClass(n int) int { return bits.Len(uint(max(n, 1) - 1)) }

// getBuf returns a buffer of n elements (contents undefined).
func getBuf[T float32 | float64](n int) []T {
	b, _ := getBufFresh[T](n)
	return b
}

// getBufFresh is getBuf, reporting whether the buffer is newly made.
func getBufFresh[T float32 | float64](n int) ([]T, bool) {
	c := bufClass(n)
	if b := takeKept[T](c); b != nil {
		return (*b)[:n], false
	}
	if b, ok := bufPool[T](c).Get().(*[]T); ok {
		return (*b)[:n], false
	}
	return make([]T, n, 1<<c), true
}

// bufPool is the pool of T's size class c.
func bufPool[T float32 | float64](c int) *sync.Pool {
	var z T
	if any(z) == any(float64(0)) {
		return &bufPools.f64[c]
	}
	return &bufPools.f32[c]
}

// putBuf returns a buffer from getBuf to its pool.
func putBuf[T float32 | float64](b []T) {
	c := bufClass(cap(b))
	if cap(b) != 1<<c {
		return // not one of getBuf's
	}
	if !keep(&b, c) {
		bufPool[T](c).Put(&b)
	}
}

// kept holds, per type and size class, as many buffers as WarmGemm
// asked for, out of the garbage collector's reach: a sync.Pool drops
// what it holds at the second collection after the Put, which a
// process's start easily reaches before the first run (making a model's
// arguments: 3 MB for mlp_b256), and that first run then paged in fresh
// scratch after all. want is read without the lock on every get.
var kept struct {
	mu       sync.Mutex
	f32, f64 [bits.UintSize]keptClass
}

type keptClass struct {
	want atomic.Int32
	free []any // *[]T
}

func keptOf[T float32 | float64](c int) *keptClass {
	var z T
	if any(z) == any(float64(0)) {
		return &kept.f64[c]
	}
	return &kept.f32[c]
}

// takeKept takes a kept buffer of class c, or returns nil.
func takeKept[T float32 | float64](c int) *[]T {
	k := keptOf[T](c)
	if k.want.Load() == 0 {
		return nil
	}
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if len(k.free) == 0 {
		return nil
	}
	b := k.free[len(k.free)-1].(*[]T)
	k.free = k.free[:len(k.free)-1]
	return b
}

// keep holds b in class c's kept buffers if the class wants more.
func keep[T float32 | float64](b *[]T, c int) bool {
	k := keptOf[T](c)
	if k.want.Load() == 0 {
		return false
	}
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if len(k.free) >= int(k.want.Load()) {
		return false
	}
	k.free = append(k.free, b)
	return true
}

// WarmGemm puts in the pools the packing buffers an f32 product with n
// columns takes on threads threads, their pages touched, unless they are
// there: a compiler calls it for each product it lowers, so that a
// process's first run of a model does not pay the page faults of fresh
// scratch (about 1.5 µs per 4 KiB here: a first 1024³ product took
// 1.4 ms more than the next; a second executable's first run, reusing
// the pooled buffers, did not). The buffers it warms are kept out of the
// garbage collector's reach (kept), as many per size class as the most
// one call asked for.
func WarmGemm(n, threads int) {
	warmBufs[float32](gemmKC*min(gemmNC, (max(n, 1)+sgemmNR-1)/sgemmNR*sgemmNR), 1)
	warmBufs[float32](gemmMC*gemmKC+edgeTile, max(threads, 1))
}

// warmBufs makes sure count buffers of n elements are in getBuf's pool,
// touching each page of the ones it makes.
func warmBufs[T float32 | float64](n, count int) {
	k := keptOf[T](bufClass(n))
	for w := k.want.Load(); w < int32(count) && !k.want.CompareAndSwap(w, int32(count)); w = k.want.Load() {
	}
	bufs := make([][]T, count)
	for i := range bufs {
		var fresh bool
		if bufs[i], fresh = getBufFresh[T](n); !fresh {
			continue
		}
		var z T
		all := bufs[i][:cap(bufs[i])]
		// Map the pages now: in one call where the kernel allows it,
		// else by a first touch of each (a fault each).
		pages.Populate(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(all))), len(all)*int(unsafe.Sizeof(z))))
		for j := 0; j < len(all); j += 4096 / int(unsafe.Sizeof(z)) {
			all[j] = 0
		}
	}
	for _, b := range bufs {
		putBuf(b)
	}
}

// packA copies A[ic:ic+mb, pc:pc+kb] into MR-high slivers, each stored
// k-major (MR values per step), zero-padding the last sliver.
func packA[T float32 | float64](dst []T, a Strided[T], ic, pc, mb, kb, mr int) {
	o := 0
	for s := 0; s < mb; s += mr {
		rows := min(mr, mb-s)
		if rows == 6 && mr == 6 && a.Col == 1 {
			packRows6(dst[o:o+6*kb], a, ic+s, pc, kb)
			o += 6 * kb
			continue
		}
		if a.Row == 1 && rows == 6 && mr == 6 {
			// A transposed (the weight gradient xᵀ·g): a sliver's rows
			// are contiguous at every k, one 6-element move per step.
			for p := range kb {
				at := ic + s + (pc+p)*a.Col
				d, v := dst[o:o+6:o+6], a.Data[at:at+6:at+6]
				d[0], d[1], d[2], d[3], d[4], d[5] = v[0], v[1], v[2], v[3], v[4], v[5]
				o += 6
			}
			continue
		}
		if a.Row == 1 {
			for p := range kb {
				at := ic + s + (pc+p)*a.Col
				copy(dst[o:o+rows], a.Data[at:at+rows])
				clear(dst[o+rows : o+mr])
				o += mr
			}
			continue
		}
		for p := range kb {
			col := (pc + p) * a.Col
			for r := range rows {
				dst[o+r] = a.Data[(ic+s+r)*a.Row+col]
			}
			clear(dst[o+rows : o+mr])
			o += mr
		}
	}
}

// packRows6 is packA's common case: six full rows of a row-major A, read
// as contiguous row slices and interleaved six values per step.
func packRows6[T float32 | float64](dst []T, a Strided[T], i, pc, kb int) {
	if d, ok := any(dst).([]float32); ok {
		// Whole chunks of eight steps by the vector transpose.
		src := any(a.Data).([]float32)[i*a.Row+pc:]
		if chunks := kb / 8; packA6F32(chunks, src, a.Row, d) {
			done := 8 * chunks
			dst, pc, kb = dst[6*done:], pc+done, kb-done
			if kb == 0 {
				return
			}
		}
	}
	row := func(r int) []T { o := (i+r)*a.Row + pc; return a.Data[o : o+kb] }
	r0 := row(0)
	r1, r2, r3, r4, r5 := row(1)[:len(r0)], row(2)[:len(r0)], row(3)[:len(r0)], row(4)[:len(r0)], row(5)[:len(r0)]
	dst = dst[:6*len(r0)]
	for p := range r0 {
		d := (*[6]T)(dst[6*p:])
		d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
	}
}

// packB copies B[pc:pc+kb, jc:jc+nb] into NR-wide slivers, each stored
// k-major (NR values per step), zero-padding the last sliver.
// Only slivers [from, to) (in units of NR columns) are packed, so threads
// can share the work.
func packB[T float32 | float64](dst []T, b Strided[T], pc, jc, kb, nb, nr, from, to int) {
	to = min(to, (nb+nr-1)/nr)
	if from >= to {
		return
	}
	if b.Col == 1 {
		packBRows(dst, b, pc, jc, kb, nb, nr, from, to)
		return
	}
	if b.Row == 1 {
		packBCols(dst, b, pc, jc, kb, nb, nr, from, to)
		return
	}
	o := from * nr * kb
	for s := from * nr; s < to*nr; s += nr {
		cols := min(nr, nb-s)
		for p := range kb {
			row := (pc + p) * b.Row
			for j := range cols {
				dst[o+j] = b.Data[row+(jc+s+j)*b.Col]
			}
			clear(dst[o+cols : o+nr])
			o += nr
		}
	}
}

// packBCols packs a B whose columns are contiguous (a transposed
// operand: attention's keys, Q·Kᵀ) column by column: each column's kb
// values are read front to back and dealt into the sliver 16 apart,
// rather than gathered 16 columns at a time a column stride apart.
func packBCols[T float32 | float64](dst []T, b Strided[T], pc, jc, kb, nb, nr, from, to int) {
	d32, _ := any(dst).([]float32)
	s32, _ := any(b.Data).([]float32)
	for sl := from; sl < to; sl++ {
		c0, c1 := sl*nr, min(sl*nr+nr, nb)
		d := dst[sl*kb*nr : (sl+1)*kb*nr]
		if c1-c0 < nr {
			clear(d)
		}
		if c1-c0 == 16 && nr == 16 && d32 != nil {
			// Sixteen columns' 16×16 blocks transposed in registers
			// (attention's Kᵀ, 0.5 ns a value four columns at a time),
			// the last k%16 rows below.
			if p := packCols16Vec(d32[sl*kb*nr:(sl+1)*kb*nr], s32[(jc+c0)*b.Col+pc:], b.Col, kb); p > 0 {
				for j := c0; j < c1 && p < kb; j += 4 {
					packCols4(d[p*nr+j-c0:], b, jc+j, pc+p, kb-p, nr)
				}
				continue
			}
		}
		j := c0
		for ; j+4 <= c1; j += 4 {
			packCols4(d[j-c0:], b, jc+j, pc, kb, nr)
		}
		for ; j < c1; j++ {
			src := b.Data[(jc+j)*b.Col+pc:]
			src = src[:kb]
			col := d[j-c0:]
			for p, v := range src {
				col[p*nr] = v
			}
		}
	}
}

// packCols4 deals four columns of a column-contiguous B (from column j,
// rows [pc, pc+kb)) into a sliver nr wide: four adjacent values a row,
// where one column at a time stored one value per 64-byte line (the
// attention scores' Kᵀ packed at 1 ns a value, a third of the product).
func packCols4[T float32 | float64](d []T, b Strided[T], j, pc, kb, nr int) {
	s0 := b.Data[j*b.Col+pc:][:kb]
	s1 := b.Data[(j+1)*b.Col+pc:][:kb]
	s2 := b.Data[(j+2)*b.Col+pc:][:kb]
	s3 := b.Data[(j+3)*b.Col+pc:][:kb]
	for p := range s0 {
		row := d[p*nr : p*nr+4]
		row[0], row[1], row[2], row[3] = s0[p], s1[p], s2[p], s3[p]
	}
}

// packBRows packs a row-major B row by row: each row of the block is read
// once, front to back, and dealt out NR values to each sliver.
func packBRows[T float32 | float64](dst []T, b Strided[T], pc, jc, kb, nb, nr, from, to int) {
	// Sliver by sliver, so the writes are sequential; a full sliver row
	// is two vector moves (or an unrolled move) rather than a call to copy.
	d32, _ := any(dst).([]float32)
	s32, _ := any(b.Data).([]float32)
	for sl := from; sl < to; sl++ {
		c0, c1 := min(sl*nr, nb), min(sl*nr+nr, nb)
		d := dst[sl*kb*nr : (sl+1)*kb*nr]
		src := b.Data[pc*b.Row+jc+c0:]
		if c1-c0 == 16 && nr == 16 && d32 != nil &&
			packRows16F32(kb, s32[pc*b.Row+jc+c0:], b.Row, d32[sl*kb*nr:(sl+1)*kb*nr]) {
			continue
		}
		if c1-c0 == 16 && nr == 16 {
			for p := range kb {
				s, o := src[p*b.Row:p*b.Row+16:p*b.Row+16], d[p*16:p*16+16:p*16+16]
				o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7] = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
				o[8], o[9], o[10], o[11], o[12], o[13], o[14], o[15] = s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15]
			}
			continue
		}
		// A partial sliver (the edge, or all of a narrow B): masked
		// moves, or zero it once, then move each row's few values with a
		// loop, not a call.
		w := c1 - c0
		if nr == 16 && d32 != nil && packRowsPartialF32(kb, s32[pc*b.Row+jc+c0:], b.Row, d32[sl*kb*nr:(sl+1)*kb*nr], w) {
			continue
		}
		clear(d)
		for p := range kb {
			o, s := d[p*nr:p*nr+w], src[p*b.Row:p*b.Row+w]
			for q := range o {
				o[q] = s[q]
			}
		}
	}
}

// edgeTile is the room for one MR×2NR tile that the A packing buffers
// keep after their MC×KC block: macroKernel's scratch tile (a local
// array would escape to the heap through the kernel's func value, an
// allocation per call).
const edgeTile = 2 * sgemmMR * sgemmNR

// macroKernel runs the micro-kernel over every MR×NR tile of a packed
// block; tiles past the edge of C go through a scratch tile, the
// edgeTile elements at the end of ap's buffer. With AVX-512 it takes
// two B slivers (and two A slivers) at a time where they are whole.
func macroKernel[T float32 | float64](ap, bp, c []T, ldc, ic, jc, mb, nb, kb, mr, nr int, kern microKernel[T], overwrite, wide bool) {
	defer flushEnd(flushStart()) // flushing subnormals (denormals.go)
	j := 0
	if pair := pairKernel[T](mr, nr, wide); pair != nil {
		for ; j+2*nr <= nb; j += 2 * nr {
			bs := bp[j*kb : (j+2*nr)*kb]
			i := 0
			for ; i+mr <= mb; i += mr {
				blocks := 1
				if i+2*mr <= mb {
					blocks = 2
				}
				pair(blocks, kb, ap[i*kb:(i+blocks*mr)*kb], bs, c[(ic+i)*ldc+jc+j:], ldc, overwrite)
				i += (blocks - 1) * mr
			}
			if i < mb { // a last partial A sliver, through the scratch tile
				tile := ap[len(ap)-edgeTile:][:2*mr*nr]
				pair(1, kb, ap[i*kb:(i+mr)*kb], bs, tile, 2*nr, true)
				addTile(tile, c[(ic+i)*ldc+jc+j:], mb-i, 2*nr, 2*nr, ldc, overwrite)
			}
		}
	}
	for ; j < nb; j += nr {
		for i := 0; i < mb; i += mr {
			microTile(ap, bp, c, ldc, ic, jc, i, j, mb, nb, kb, mr, nr, kern, overwrite)
		}
	}
}

// narrowFlops is where a CPU whose policy narrows the GEMM (wideGemm
// false: Zen 4, which runs a 512-bit operation as two 256-bit halves)
// moves a product to the AVX2 kernels. Measured on Zen 4 (2026-12-07, two
// threads, one process, the two alternated 15 times, wide/narrow time):
// the AVX-512 kernels are ahead on every product below it, 256³ 0.78,
// 256×512×784 (an MLP's layer) 0.85, 128×768×768 0.84, 128×3072×768
// 0.89, 512³ 0.88, 640³ 0.92, 896³ 0.96, 1024×1024×512 0.99; at 2·1024³
// and above the AVX2 ones mostly are, 1024³ 1.08, 2048³ 1.09, 1000³ 1.05,
// though 1100³, 1536³ and 2000³ gave 0.97–0.98.
const narrowFlops = 1 << 31

// wideFor says whether a product of m×k by k×n may run on the AVX-512
// GEMM kernels (where the CPU has them): always unless the CPU's policy
// narrows the GEMM, and then below narrowFlops.
func wideFor(m, n, k int) bool { return wideGemm || 2*m*n*k < narrowFlops }

// pairKernel returns the AVX-512 kernel for T's layout, or nil where
// there is none or not wide: it computes a (6·blocks)×2NR tile from
// blocks (1 or 2) A slivers and two B slivers, each the kernel's packing.
func pairKernel[T float32 | float64](mr, nr int, wide bool) func(blocks, k int, a, b, c []T, ldc int, overwrite bool) {
	if !useAsm || !useAVX512 || !wide || mr != 6 {
		return nil
	}
	var f any
	var z T
	switch any(z).(type) {
	case float32:
		if nr == sgemmNR {
			f = pairKernelF32
		}
	case float64:
		if nr == dgemmNR {
			f = pairKernelF64
		}
	}
	k, _ := f.(func(blocks, k int, a, b, c []T, ldc int, overwrite bool))
	return k
}

// microTile runs the micro-kernel on the tile at row i and column j of
// the block, through the scratch tile where it crosses C's edge.
func microTile[T float32 | float64](ap, bp, c []T, ldc, ic, jc, i, j, mb, nb, kb, mr, nr int, kern microKernel[T], overwrite bool) {
	bs := bp[j*kb : (j+nr)*kb]
	as := ap[i*kb : (i+mr)*kb]
	rows, cols := min(mr, mb-i), min(nr, nb-j)
	off := (ic+i)*ldc + jc + j
	if rows == mr && cols == nr {
		kern(kb, as, bs, c[off:], ldc, overwrite)
		return
	}
	tile := ap[len(ap)-edgeTile:][:mr*nr]
	kern(kb, as, bs, tile, nr, true)
	addTile(tile, c[off:], rows, cols, nr, ldc, overwrite)
}

// addTile writes (or adds) the first rows×cols of a scratch tile with
// rows ld long into C: the sum of one K slice, added as the kernels add
// theirs.
func addTile[T float32 | float64](tile, c []T, rows, cols, ld, ldc int, overwrite bool) {
	for r := range rows {
		row, t := c[r*ldc:r*ldc+cols], tile[r*ld:r*ld+cols]
		if overwrite {
			copy(row, t)
			continue
		}
		for q := range row {
			row[q] += t[q]
		}
	}
}

// kernelGo is the portable micro-kernel: C[mr×nr] += A·B over k steps,
// with the assembly kernel's summation order (one product added per step).
// Go has no float32 fused multiply-add, so the last bit can differ from
// the FMA kernel's.
func kernelGo[T float32 | float64](mr, nr, k int, a, b, c []T, ldc int, overwrite bool) {
	var acc [sgemmMR * sgemmNR]T
	for p := range k {
		ap, bp := a[p*mr:p*mr+mr], b[p*nr:p*nr+nr]
		for i, ai := range ap {
			row := acc[i*nr : i*nr+nr]
			for j, bj := range bp {
				row[j] += ai * bj
			}
		}
	}
	storeAcc(acc[:mr*nr], c, mr, nr, ldc, overwrite)
}

// storeAcc writes (or adds) an mr×nr accumulator tile into C.
func storeAcc[T float32 | float64 | int32](acc, c []T, mr, nr, ldc int, overwrite bool) {
	for i := range mr {
		row := c[i*ldc : i*ldc+nr]
		for j := range row {
			if overwrite {
				row[j] = acc[i*nr+j]
			} else {
				row[j] += acc[i*nr+j]
			}
		}
	}
}

// GemmBatchF32 runs GemmF32 for each of batch independent products: the
// b-th A, B and C start aStride, bStride and cStride elements after the
// previous ones (a dot's batch dimensions, flattened).
func GemmBatchF32(batch, m, n, k int, a Strided[float32], aStride int, b Strided[float32], bStride int,
	c []float32, ldc, cStride int, accumulate bool, threads int) {
	for i := range batch {
		ai := Strided[float32]{Data: a.Data[i*aStride:], Row: a.Row, Col: a.Col}
		bi := Strided[float32]{Data: b.Data[i*bStride:], Row: b.Row, Col: b.Col}
		GemmF32(m, n, k, ai, bi, c[i*cStride:], ldc, accumulate, threads)
	}
}
