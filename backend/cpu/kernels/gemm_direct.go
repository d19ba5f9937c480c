package kernels

// Direct A: with AVX-512, the f32 GEMM can skip packing A when A is
// row-major. The pair kernels broadcast one A value per row and step
// whichever way A is laid out, so the direct kernels read each row where
// it lies instead (base registers every three rows, the row stride as the
// index): the same FMAs in the same order, the same bits. Packing A costs
// 5–7% of a product of an MLP layer's size (256×512×784) on two threads,
// where the column split has each thread pack all of A.

// directA lets tests and benchmarks turn the direct kernels off.
var directA = true

// directBlock returns the aBlock that reads a in place, or nil where the
// direct kernels do not apply: no assembly, a layout other than f32 6×16
// slivers, or A not row-major. On AVX2 it is macroKernelDirectAVX2's,
// and only for a product whose columns are split between threads in
// several chunks each (columns: the caller's gemmFrom asks below
// chunkedFlops), each of which packed all of A: there it gained, two
// threads, 128×384×1536 137–155 → 158–162 GFLOP/s, 128×384×384 151–163
// → 162–167, 784×256×64 153–158 → 163; on one thread (and so under
// the row split, where each thread packs its own rows) the six rows'
// streams cost what packing saved, or more: 128×1536×384 87–90 → 82–86,
// 3136×128×32 71–75 → 65–72; and on products of one chunk a thread,
// neutral or a little slower (1024×768×3072 on two threads 168–170 →
// 162–169). On AVX-512, rows a multiple of 4 KiB apart (all twelve in
// one L1 set) do not hurt: 1024³ and 2048³ on two threads gained as
// much as the MLP's shapes.
func directBlock[T float32 | float64](a, b Strided[T], mr, nr int, columns, wide bool) aBlock[T] {
	af, ok := any(a).(Strided[float32])
	bf, _ := any(b).(Strided[float32])
	if ok && directA && useAsm && !useAVX512 && columns && mr == sgemmMR && nr == sgemmNR && af.Col == 1 {
		blk, _ := any(aBlock[float32]{
			run: func(ap, bp, c []float32, ldc, ic, pc, jc, mb, nb, kb int, overwrite, _ bool, pf bPrefetch[float32], ops *TileOps) int {
				return macroKernelDirectAVX2(af, ap, bp, c, ldc, ic, pc, jc, mb, nb, kb, overwrite, pf, ops)
			},
			rowStep: sgemmMR,
		}).(aBlock[T])
		return blk
	}
	if !ok || !directA || pairKernel[float32](mr, nr, wide) == nil || nr != sgemmNR || af.Col != 1 {
		return aBlock[T]{}
	}
	blk, _ := any(aBlock[float32]{
		run: func(ap, bp, c []float32, ldc, ic, pc, jc, mb, nb, kb int, overwrite, packB bool, pf bPrefetch[float32], ops *TileOps) int {
			return macroKernelDirect(af, bf, ap, bp, c, ldc, ic, pc, jc, mb, nb, kb, overwrite, packB, pf, ops)
		},
		packsB: bf.Col == 1 && directPackB,
		// Shares of whole 4-row tiles (the least direct kernel): 128
		// rows split 64 and 64 on two threads, where slivers of six
		// gave one thread 66 and a 6-row tile, the other 62 (a
		// transformer's products finished by a layer norm, which split
		// rows).
		rowStep: 4,
	}).(aBlock[T])
	return blk
}

// directPackB lets tests and benchmarks turn packing B in the kernels off.
var directPackB = true

// macroKernelDirect is macroKernel for A's block read in place: rows
// [ic, ic+mb) and K slice [pc, pc+kb) of a. The rows run on direct
// kernels of 12 rows, and of 8, 6 or 4 for the rest (directHeight); a
// last one to three rows run through the scratch tile as in macroKernel,
// and columns past the last whole pair of B slivers take the packed path
// for the whole block. With packB, bp's whole sliver pairs are still to
// be packed from b (row-major): the first tile of each pair packs it.
// With ops, where the block's columns are whole pairs of slivers, the
// direct kernels finish their tiles with ops, and it returns the rows
// they took (all but the last one to three, which the scratch tile
// computes and the epilogue finishes): ResNet's pointwise convolutions
// of 49 pixels leave one.
func macroKernelDirect(a, b Strided[float32], ap, bp, c []float32, ldc, ic, pc, jc, mb, nb, kb int, overwrite, packB bool, pf bPrefetch[float32], ops *TileOps) int {
	defer flushEnd(flushStart()) // flushing subnormals (denormals.go)
	const mr, nr = sgemmMR, sgemmNR
	full := 0 // rows the direct kernels take
	for full+4 <= mb {
		full += directHeight(mb - full)
	}
	// Last rows, r < 4 of them, run as the 6-row tile that ends with
	// them, rows [ic+mb-6, ic+mb) read in place, into the scratch tile,
	// of which its last r rows are kept: packing the r rows instead cost
	// more than the product of its tile where C's columns come in chunks
	// (once a chunk).
	r, overlap := mb-full, ic+mb >= mr
	if ops != nil && nb%(2*nr) != 0 {
		ops = nil
	}
	if r > 0 && !overlap {
		packA(ap, a, ic+full, pc, r, kb, mr)
	}
	// The tiles of a pair of B slivers each prefetch a share of the next
	// pair (nextPairShare) where B's panels come from memory (pf.cold: a
	// model's weights, MiniLM's, ResNet's last stages).
	tiles := 0
	for i := 0; i < full; i += directHeight(mb - i) {
		tiles++
	}
	if r > 0 && overlap {
		tiles++
	}
	j := 0
	for ; j+2*nr <= nb; j += 2 * nr {
		bs := bp[j*kb : (j+2*nr)*kb]
		if packB && full == 0 {
			packBRows(bp, b, pc, jc, kb, nb, nr, j/nr, j/nr+2)
		}
		cols, call := min(nb-j-2*nr, 2*nr), 0
		share := func() prefetchRange {
			switch {
			case !pf.cold:
				return prefetchRange{}
			case cols > 0:
				return nextPairShare(cols, kb, tiles, call)
			}
			return panelShare(bs, pf.next, kb, tiles, call)
		}
		for i := 0; i < full; {
			h := directHeight(mb - i)
			as, cs := a.Data[(ic+i)*a.Row+pc:], c[(ic+i)*ldc+jc+j:]
			switch {
			case packB && i == 0 && ops != nil:
				directRowsPackOpsF32(h, kb, as, a.Row, b.Data[pc*b.Row+jc+j:], b.Row, bs, cs, ldc, overwrite, ops, ic+i, jc+j)
			case packB && i == 0:
				directRowsPackF32(h, kb, as, a.Row, b.Data[pc*b.Row+jc+j:], b.Row, bs, cs, ldc, overwrite)
			case ops != nil:
				directRowsOpsF32(h, kb, as, a.Row, bs, cs, ldc, overwrite, share(), ops, ic+i, jc+j)
			default:
				directRowsF32(h, kb, as, a.Row, bs, cs, ldc, overwrite, share())
			}
			i += h
			call++
		}
		if r > 0 {
			tile := ap[len(ap)-edgeTile:][:2*mr*nr]
			if overlap {
				directRowsF32(mr, kb, a.Data[(ic+mb-mr)*a.Row+pc:], a.Row, bs, tile, 2*nr, true, share())
				addTile(tile[(mr-r)*2*nr:], c[(ic+full)*ldc+jc+j:], r, 2*nr, 2*nr, ldc, overwrite)
			} else {
				pairKernelF32(1, kb, ap[:mr*kb], bs, tile, 2*nr, true)
				addTile(tile, c[(ic+full)*ldc+jc+j:], r, 2*nr, 2*nr, ldc, overwrite)
			}
		}
	}
	if j < nb {
		packA(ap, a, ic, pc, mb, kb, mr)
		for ; j < nb; j += nr {
			for i := 0; i < mb; i += mr {
				microTile(ap, bp, c, ldc, ic, jc, i, j, mb, nb, kb, mr, nr, kernelF32, overwrite)
			}
		}
	}
	if ops == nil {
		return 0
	}
	return full
}

// directHeight is the height of the direct kernel that takes the next of
// left ≥ 4 rows: 12 while what stays can still be cut into kernels (an
// even number of at least 4 rows, or 12 or 13 left), else the kernel that
// leaves 4 to 7 rows or none, so that at most 3 rows (an odd left) are
// left to the scratch tile.
func directHeight(left int) int {
	switch {
	case left >= 16 || left == 12 || left == 13:
		return 12
	case left >= 14:
		return 8 // then 6 or 7
	case left >= 10:
		return 6 // then 4 or 5
	case left >= 8:
		return 8
	case left >= 6:
		return 6
	default:
		return 4
	}
}

// macroKernelDirectAVX2 is macroKernelAVX2 with A's block read in place
// (rows [ic, ic+mb), K slice [pc, pc+kb) of a) by the AVX2 direct
// kernel, 6×16 tiles: under the column split each thread packed all of
// A for its columns, as often as it took a chunk of them. The last r <
// 6 rows run as the 6-row tile that ends with them, read in place into
// the scratch tile, of which its last r rows are kept (packed, where the
// block has fewer than six rows above its end); a last sliver short of
// 16 columns runs every tile through the scratch tile. With ops, where
// the columns are whole slivers, the whole tiles finish themselves and
// it returns the rows they took.
func macroKernelDirectAVX2(a Strided[float32], ap, bp, c []float32, ldc, ic, pc, jc, mb, nb, kb int, overwrite bool, pf bPrefetch[float32], ops *TileOps) int {
	defer flushEnd(flushStart()) // flushing subnormals (denormals.go)
	const mr, nr = sgemmMR, sgemmNR
	full := mb / mr * mr
	r, overlap := mb-full, ic+mb >= mr
	if nb%nr != 0 {
		ops = nil
	}
	if r > 0 && !overlap {
		packA(ap, a, ic+full, pc, r, kb, mr)
	}
	tile := ap[len(ap)-edgeTile:][:mr*nr]
	for j := 0; j < nb; j += nr {
		bs := bp[j*kb : (j+nr)*kb]
		cols := min(nr, nb-j)
		share := sliverStreams(pf.cold, bs, pf.next, j, nb, kb, full/mr)
		for i := 0; i < full; i += mr {
			as, cs := a.Data[(ic+i)*a.Row+pc:], c[(ic+i)*ldc+jc+j:]
			if cols < nr {
				directRowsStreamF32(kb, as, a.Row, bs, tile, nr, true, prefetchRange{}, nil, 0, 0)
				addTile(tile, cs, mr, cols, nr, ldc, overwrite)
				continue
			}
			directRowsStreamF32(kb, as, a.Row, bs, cs, ldc, overwrite, share(i/mr), ops, ic+i, jc+j)
		}
		if r == 0 {
			continue
		}
		cs := c[(ic+full)*ldc+jc+j:]
		if overlap {
			directRowsStreamF32(kb, a.Data[(ic+mb-mr)*a.Row+pc:], a.Row, bs, tile, nr, true, prefetchRange{}, nil, 0, 0)
			addTile(tile[(mr-r)*nr:], cs, r, cols, nr, ldc, overwrite)
			continue
		}
		kernelF32(kb, ap[:mr*kb], bs, tile, nr, true)
		addTile(tile, cs, r, cols, nr, ldc, overwrite)
	}
	if ops == nil {
		return 0
	}
	return full
}
