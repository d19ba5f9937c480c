package tile

import (
	"slices"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/hlo"
)

// Folded reductions: a row program's reductions computed by its
// segments' generated code (jit.RowFold) instead of a kernel pass of
// their own over the tile.
//
//   - A reduction of a value a segment computes (softmax's sum of its
//     exponentials, layer norm's sum of squares) folds in that segment,
//     as the value is computed: no second pass over it, and the value
//     need not be stored if nothing else reads it.
//   - A reduction of a parameter the program reads in place (softmax's
//     maximum, layer norm's sum) folds in the first segment after it,
//     over the next tile's rows: the loop reads them from memory while it
//     writes this tile's results, and the next tile starts with its
//     reduction done. On its own, that pass read the tile while nothing
//     else went on (softmax over 4096×1024, one thread: the maximum's
//     pass 0.53 ms, the segment's 0.72, together 1.25; with the next
//     tile's rows read in the segment's loop instead, 1.0).
//
// A tile whose next is not this worker's, or is shorter, folds its own
// reductions as before, and so does a worker's first tile.

// segFold is a reduction a segment's code folds.
type segFold struct {
	slot  int  // the reduce slot
	ahead bool // over the next tile's rows of a parameter
	k     int  // its buffers in the scratch (partials, ahead)
}

// foldsOf finds the reductions segment g (slots [start, end)) can fold:
// reduces after it of values it computes, and, when tiles run in order,
// reduces before it of parameters read in place that no earlier segment
// folds. At most jit.MaxRowFolds in all.
func (p *Prog) foldsOf(start, end int, folded map[int]bool) (after, ahead []int) {
	if p.rowLen == 0 {
		return nil, nil
	}
	for r := range p.slots {
		if len(after)+len(ahead) == jit.MaxRowFolds {
			break
		}
		if folded[r] || !p.foldable(r) {
			continue
		}
		a := p.slots[r].args[0]
		switch {
		case r >= end && a >= start && a < end && p.isSegOp(a):
			after = append(after, r)
		case r < start && p.streamAhead && p.slots[a].kind == slotParam && slices.Contains(p.inPlaceParams, p.slots[a].param):
			ahead = append(ahead, r)
		}
	}
	return after, ahead
}

// foldable reports whether slot r is a row reduction generated code can
// fold: add, maximum or minimum of f32 values from a splat, and not an
// output of the program.
func (p *Prog) foldable(r int) bool {
	s := &p.slots[r]
	if s.kind != slotReduce || s.t != hlo.F32 || slices.Contains(p.outs, r) || p.slots[s.args[1]].kind != slotSplat {
		return false
	}
	a := &p.slots[s.args[0]]
	if a.t != hlo.F32 {
		return false
	}
	return s.op == hlo.OpAdd || s.op == hlo.OpMaximum || s.op == hlo.OpMinimum
}

// foldOp is the generated code's op for reduce slot r.
func (p *Prog) foldOp(r int) jit.Op {
	switch p.slots[r].op {
	case hlo.OpMaximum:
		return jit.Max
	case hlo.OpMinimum:
		return jit.Min
	}
	return jit.Add
}

// partialsLen is the floats a fold's partial results take for a tile:
// at most jit.MaxFoldWidth a row.
func (p *Prog) partialsLen() int { return p.tile / p.rowLen * jit.MaxFoldWidth }

// finishFolds reduces the partial results fn's call left for segment g's
// folds over n elements: an ahead fold's into the scratch's values for
// the tile starting at next, the others into their slots' tiles.
func (p *Prog) finishFolds(g *segment, fn *jit.Func, sc *scratch, n, next int, ahead bool) {
	rows, W := n/p.rowLen, fn.FoldWidth()
	for _, fd := range g.folds {
		if fd.ahead && !ahead {
			continue
		}
		s := &p.slots[fd.slot]
		init := sc.bufs[p.slots[s.args[1]].buf][0]
		dst := sc.ahead[fd.k][:rows]
		if !fd.ahead {
			dst = sc.bufs[s.buf][:rows]
			sc.view[fd.slot] = dst
		}
		foldPartials(s.op, init, dst, sc.partials[fd.k][:rows*W], W)
		if fd.ahead {
			sc.aheadLo[fd.k] = next
		}
	}
}

// foldedAhead sets reduce slot i's values for the tile at lo from an
// earlier segment's ahead fold, if one computed them.
func (p *Prog) foldedAhead(i int, sc *scratch, lo, hi int) bool {
	s := &p.slots[i]
	if s.fold == 0 || sc.aheadLo[s.fold-1] != lo {
		return false
	}
	rows := (hi - lo) / p.rowLen
	d := sc.bufs[s.buf][:rows]
	copy(d, sc.ahead[s.fold-1][:rows])
	sc.view[i] = d
	return true
}

// foldHead computes reduce slot i over the tile [lo, hi) with its head
// fold's code, if a segment folds it ahead and the tile is not the
// first: the same partial results, reduced the same way, as the ahead
// fold gives it on one thread, so a tile's bits do not depend on whether
// it was its thread's first (the row kernels sum in another order). The
// first tile, which no ahead fold reaches on any thread count, keeps the
// row kernels' bits, those of the same reduction outside a fusion.
func (p *Prog) foldHead(i int, sc *scratch, lo, hi int) bool {
	s := &p.slots[i]
	if lo == 0 || s.fold == 0 || p.headFolds[s.fold-1] == nil {
		return false
	}
	n := hi - lo
	fc, k := p.headFolds[s.fold-1], s.fold-1
	rows, W := n/p.rowLen, fc.FoldWidth()
	if len(sc.sink) < n {
		sc.sink = make([]float32, p.tile)
	}
	src := sc.view[s.args[0]][:n]
	part := sc.partials[k][:rows*W]
	fc.RunRowsFold([]jit.Array{{F32: sc.sink[:n]}}, []jit.Array{{F32: src}}, nil, nil, [][]float32{part}, false)
	dst := sc.bufs[s.buf][:rows]
	foldPartials(s.op, sc.view[s.args[1]][0], dst, part, W)
	sc.view[i] = dst
	return true
}

// foldPartials sets each row's value in dst from its W partial results
// in part, left by a segment's fold, from init.
func foldPartials(op hlo.Opcode, init float32, dst, part []float32, W int) {
	if !foldTileRows(op, init, dst, part, W) {
		panic("cpu: a folded reduction has no row kernel") // foldable admits none such
	}
}
