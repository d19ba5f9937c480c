package tile

import (
	"fmt"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Row programs: a fusion may hold row reductions of its own values and
// read their results back along the rows, as softmax does (the row's
// maximum subtracted, the sum of exponentials divided by). Its tiles are
// then whole rows, so each tile first folds its rows into one value per
// row (a reduce slot) and spreads them back (a spread slot) before the
// ops that read them: the input is read from memory once, not once per
// reduction, and what the reductions and the rest share (the
// exponentials) is computed once.

// maxRowLen bounds the rows of a row program: a tile holds at least one
// row per slot, and a few of them should stay in L1 and L2.
const maxRowLen = 4096

// rowTileSize is the elements a row program's tile aims at: whole rows,
// more of them than tileSize would hold, since each tile pays a kernel
// call per reduction and a generated-code call per segment. Since the
// first segment prefetches the next tile as it goes (tile_seg.go), a
// tile's slots live in L2 rather than L1, and larger tiles pay: softmax
// over 4096×1024 on 2 threads, medians of 40 runs in five alternations,
// median of those: 2.46 ms with tiles of 4096 elements, 2.38 with 8192,
// 2.22 with 16384, 2.33 with 32768 (2048: 2.97, 4096: 2.81 in another
// round). Without that prefetch: 3.97 with 512, 3.31 with 2048, 3.24
// with 4096, 3.20 with 8192.
const rowTileSize = 16384

// rowMode finds the row reductions among xs (not counting a reduction
// root, which CompileReduce handles) and makes p's tiles whole rows.
// They must all fold the same trailing dimensions of values of the
// program's shape.
func (p *Prog) rowMode(in *hlo.Instruction, xs []*hlo.Instruction, shape hlo.Shape) error {
	for _, x := range xs {
		if x.Opcode != hlo.OpReduce {
			continue
		}
		L, ok := RowLength(x, shape)
		if !ok || p.rowLen != 0 && L != p.rowLen {
			return fmt.Errorf("fusion %s: reduce %s is not a row reduction of the fusion's rows", in.Name, x.Name)
		}
		p.rowLen = L
	}
	if p.rowLen > 0 {
		p.tile = rowTile(p.n/p.rowLen, p.rowLen)
	}
	return nil
}

// rowTile is the tile of a row program over rows rows of rowLen: whole
// rows, at most rowTileSize elements (one row at least), in tiles of
// equal rows and an even number of them where there are several, so that
// the threads share them evenly. A layer norm over 128 rows of 384 took
// tiles of 42 rows: four tiles, the last of two rows, so one thread
// computed three of the four tiles' worth; in four tiles of 32 rows two
// threads share it (0.072 → 0.055 ms; attention's softmax over 12×128
// rows of 128, twelve tiles either way, 0.117 → 0.100 ms).
func rowTile(rows, rowLen int) int {
	per := max(1, rowTileSize/rowLen)
	tiles := (rows + per - 1) / per
	if tiles > 1 && tiles%2 == 1 {
		tiles++
	}
	return max(1, (rows+tiles-1)/max(tiles, 1)) * rowLen
}

// RowLength is the length of the rows reduce x folds when it is a row
// reduction of a value of the given shape.
func RowLength(x *hlo.Instruction, shape hlo.Shape) (int, bool) {
	if _, ok := RowReduce(x); !ok || !x.Operands[0].Shape.SameDims(shape) {
		return 0, false
	}
	L := 1
	for _, d := range x.Dimensions() {
		L *= int(shape.Dims[d])
	}
	return L, L > 0 && L <= maxRowLen
}

// readsRowValues reports whether broadcast x spreads row values.
func (p *Prog) readsRowValues(x *hlo.Instruction, index map[*hlo.Instruction]int) bool {
	k, ok := index[x.Operands[0]]
	return ok && p.rowValued(k)
}

// rowValued: slot k holds one value per row of the tile.
func (p *Prog) rowValued(k int) bool {
	s := &p.slots[k]
	return s.kind == slotReduce || s.kind == slotOp && s.rows
}

// markRowOp marks an elementwise op on row values (not of the program's
// shape); its operands must be row values or splats.
func (p *Prog) markRowOp(in, x *hlo.Instruction, s *slot) error {
	if p.rowLen == 0 || x.Shape.SameDims(p.shape) {
		return nil
	}
	for _, a := range s.args[:s.nargs] {
		if !p.rowValued(a) && p.slots[a].kind != slotSplat {
			return fmt.Errorf("fusion %s: %s %s mixes row values with other operands", in.Name, x.Opcode, x.Name)
		}
	}
	s.rows = true
	return nil
}

// rowSlot compiles a row reduction or the broadcast of one.
func (p *Prog) rowSlot(in, x *hlo.Instruction, index map[*hlo.Instruction]int, s *slot) error {
	if x.Opcode == hlo.OpReduce {
		op, _ := RowReduce(x)
		init, ok := index[x.Operands[1]]
		if p.rowLen == 0 || !ok || p.slots[init].kind != slotSplat {
			return fmt.Errorf("fusion %s: reduce %s has no row-program form", in.Name, x.Name)
		}
		s.kind, s.op, s.nargs = slotReduce, op, 2
		s.args[0], s.args[1] = index[x.Operands[0]], init
		return nil
	}
	// The broadcast must put the row values' dimensions first, in order:
	// row r of the reduction is then row r of the tile.
	for i, d := range x.Dimensions() {
		if d != int64(i) {
			return fmt.Errorf("fusion %s: broadcast %s does not spread a reduction along its rows", in.Name, x.Name)
		}
	}
	s.kind, s.nargs = slotRowBcast, 1
	s.args[0] = index[x.Operands[0]]
	return nil
}

// reduceRows folds each of the tile's n/rowLen rows of its operand,
// from the initial value, into buf.
func (p *Prog) reduceRows(s *slot, buf []float32, view [][]float32, n int) []float32 {
	L := p.rowLen
	src, init := view[s.args[0]], view[s.args[1]][0]
	rows := buf[:n/L]
	if L >= foldKernelMin && foldTileRows(s.op, init, rows, src, L) {
		return rows
	}
	for r := range rows {
		rows[r] = fold(s.op, init, src[r*L:(r+1)*L])
	}
	return rows
}

// foldTileRows is fold over every L-long row of src into rows, one kernel
// call for all of them (fold's own results for L ≥ foldKernelMin, bit for bit):
// short rows paid fold's call layers for each (softmax over attention's
// 128-wide rows, 2 threads, medians of four alternations: 1.52 →
// 1.27–1.37 ms). It reports false for ops fold has no kernel for.
func foldTileRows(op hlo.Opcode, init float32, rows, src []float32, L int) bool {
	switch op {
	case hlo.OpAdd:
		kernels.SumRowsF32(rows, src, len(rows), L)
		for r, v := range rows {
			rows[r] = init + v
		}
	case hlo.OpMaximum:
		kernels.MaxRowsF32(rows, src, len(rows), L)
		for r, v := range rows {
			rows[r] = kernels.NaNMax(init, v)
		}
	case hlo.OpMinimum:
		kernels.MinRowsF32(rows, src, len(rows), L)
		for r, v := range rows {
			rows[r] = kernels.NaNMin(init, v)
		}
	default:
		return false
	}
	return true
}

// spreadRows fills each row of dst with its row's value.
func (p *Prog) spreadRows(rows, dst []float32) []float32 {
	L := p.rowLen
	for r, v := range rows {
		kernels.Fill(dst[r*L:(r+1)*L], v)
	}
	return dst
}
