package kernels

import "fmt"

// A right operand packed once for many products. A model's weights are
// the B of every call of its layers: packing them on every call read and
// wrote the whole matrix for one use of each value per row block of A —
// an eighth of the time of a transformer's 128×384·384×1536 product, and
// two waits for all threads per K slice where the threads share the
// packed B. Packed ahead, each call reads the slivers in place.

// PackedB is B (k×n) packed for GemmPackedF32: for each K slice of the
// GEMM's blocking, every NR-wide column sliver, k-major, as the GEMM's own
// packer lays them out, zero-padded to whole slivers.
type PackedB struct {
	k, n   int
	panels [][]float32 // by K slice
}

// PackBF32 packs B (k×n, read through its strides) for GemmPackedF32.
func PackBF32(k, n int, b Strided[float32]) (*PackedB, error) {
	if k < 0 || n < 0 {
		return nil, fmt.Errorf("kernels: PackBF32: negative size %d×%d", k, n)
	}
	if k > 0 && n > 0 && (len(b.Data) <= (k-1)*b.Row+(n-1)*b.Col || b.Row < 0 || b.Col < 0) {
		return nil, fmt.Errorf("kernels: PackBF32: %d values cannot hold a %d×%d operand with strides %d, %d", len(b.Data), k, n, b.Row, b.Col)
	}
	p := &PackedB{k: k, n: n}
	slivers := (n + sgemmNR - 1) / sgemmNR
	for pc := 0; pc < k; pc += gemmKC {
		kb := min(gemmKC, k-pc)
		panel := make([]float32, slivers*sgemmNR*kb)
		packB(panel, b, pc, 0, kb, n, sgemmNR, 0, slivers)
		p.panels = append(p.panels, panel)
	}
	return p, nil
}

// panel returns the slivers of K slice pc from column jc (a multiple of
// NR) on (all of them: nb is the caller's business).
func (p *PackedB) panel(pc, jc, kb, _ int) []float32 {
	return p.panels[pc/gemmKC][jc/sgemmNR*sgemmNR*kb:]
}

// GemmPackedEpilogueF32 is GemmEpilogueF32 with B also given packed
// ahead (PackBF32 of b): the blocked GEMM reads the packed panels, the
// paths that do not pack B (one row, a few columns) read b in place. Its
// bits are GemmEpilogueF32's.
func GemmPackedEpilogueF32(m, n, k int, a, b Strided[float32], packed *PackedB, c []float32, ldc int, threads int, epi Epilogue, wholeRows bool) error {
	if packed == nil || packed.k != k || packed.n != n {
		return fmt.Errorf("kernels: GemmPackedEpilogueF32: a %d×%d product given a packed B of another shape", k, n)
	}
	gemmF32From(m, n, k, a, b, packed, c, ldc, false, threads, epi, nil, wholeRows)
	return nil
}

// GemmPackedFinishedF32 is GemmPackedEpilogueF32 with ops (nil: none),
// what epi computes in the form the direct kernels apply as they store a
// tile (TileOps): blocks they finish so never reach epi.
func GemmPackedFinishedF32(m, n, k int, a, b Strided[float32], packed *PackedB, c []float32, ldc int, threads int, epi Epilogue, ops *TileOps, wholeRows bool) error {
	if packed == nil || packed.k != k || packed.n != n {
		return fmt.Errorf("kernels: GemmPackedFinishedF32: a %d×%d product given a packed B of another shape", k, n)
	}
	gemmF32From(m, n, k, a, b, packed, c, ldc, false, threads, epi, ops, wholeRows)
	return nil
}
