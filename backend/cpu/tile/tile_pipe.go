package tile

import (
	"slices"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/kernels"
)

// Pipelined segments: a row program's last segment (softmax's divide,
// layer norm's scale and shift), which writes the program's output, runs
// for one tile inside the loop of the segment before it for the next
// tile (jit.Concat). On its own each tile's last segment only streams its
// results out to memory while nothing else goes on, and the segment
// before only reads and computes: softmax over 4096×1024 on one thread
// spent 0.93 ms in the one and 1.2 in the other, one after the other.
//
// The next tile's slots would overwrite the tiles the last segment still
// has to read, so those slots (held) get two tiles each, swapped at every
// tile. A worker's first tile runs the segment before alone, and its
// last tile's last segment runs alone after it; so does a tile whose next
// has fewer rows. The code is the same instructions either way, and the
// folds leave their partial results alike, so which tiles pair up (which
// the thread count decides) changes no bit.

// usePipe turns pipelining on (off: tests compare the bits without).
var usePipe = true

// pipe is a program's pair of pipelined segments.
type pipe struct {
	g1, g2 int // p.segs indices: the segment before, and the last
	// f is g1's code followed by g2's, fAhead g1's ahead fold's followed
	// by g2's.
	f, fAhead *jit.Func
	// held are the slots g2 reads that a tile computes (before g2): their
	// views of a tile must survive the next tile's.
	held []int
	// gathers are g2's own gathers (layer norm's scale and shift, spread
	// along the rows), gathered for the pending tile into tiles of their
	// own just before its segment runs.
	gathers []int
}

// pending is the tile whose last segment has yet to run (lo < 0: none),
// with its held slots' views and its output's storage.
type pending struct {
	lo, hi int
	views  [][]float32
	dst    []float32
}

// compilePipe pipelines the last two segments, where the last writes the
// program's one output and reads only views, the tiles of slots before
// it and the row values of reductions.
func (p *Prog) compilePipe() {
	n := len(p.segs)
	if !useJIT || !usePipe || !p.streamAhead || p.rowLen == 0 || n < 2 || len(p.outs) != 1 {
		return
	}
	g1, g2 := &p.segs[n-2], &p.segs[n-1]
	if !g1.rows || g2.end != len(p.slots) || len(g2.folds) > 0 || g2.fAhead != nil ||
		len(g2.outs) != 1 || g2.outs[0] != p.outs[0] || p.slots[g2.outs[0]].dst != 0 {
		return
	}
	var gathers []int
	for _, k := range g2.pre {
		switch p.slots[k].kind {
		case slotGather:
			gathers = append(gathers, k)
		case slotParam, slotSplat, slotRaw:
		default:
			return
		}
	}
	held, ok := p.heldBy(g2)
	if !ok {
		return
	}
	pp := &pipe{g1: n - 2, g2: n - 1, held: held, gathers: gathers}
	if pp.f = p.concat(g1, g1.prog, g1.f, g2); pp.f == nil {
		return
	}
	if g1.fAhead != nil {
		if pp.fAhead = p.concat(g1, g1.progAhead, g1.fAhead, g2); pp.fAhead == nil {
			return
		}
	}
	p.pipe = pp
}

// heldBy lists the slots before segment g whose tiles g reads: its
// inputs but parameters and splats, and its row values. Each must have a
// tile of its own, neither a splat's nor another's of them.
func (p *Prog) heldBy(g *segment) ([]int, bool) {
	var held []int
	bufs := map[int]bool{}
	for k, a := range append(slices.Clone(g.ins), g.rowIns...) {
		s := &p.slots[a]
		switch {
		case k < len(g.ins) && (s.kind == slotSplat || s.kind == slotParam || s.kind == slotGather && a >= g.start):
			continue // the same every tile, read in place, or gathered for the tile
		case a >= g.start || s.kind != slotOp && s.kind != slotReduce || s.buf < 0 || bufs[s.buf]:
			return nil, false
		}
		held, bufs[s.buf] = append(held, a), true
	}
	for _, s := range p.slots {
		if s.kind == slotSplat && bufs[s.buf] {
			return nil, false
		}
	}
	return held, true
}

// concat compiles segment g1's program prog (compiled as f) followed by
// g2's, with g1's outputs to scratch tiles stored through the caches.
// The folds must leave their partial results as f's do.
func (p *Prog) concat(g1 *segment, prog *jit.Program, f *jit.Func, g2 *segment) *jit.Func {
	a := *prog
	a.CachedOutputs = nil
	for k, o := range g1.outs {
		if p.slots[o].dst < 0 {
			a.CachedOutputs = append(a.CachedOutputs, k)
		}
	}
	c, err := jit.Concat(&a, g2.prog)
	if err != nil {
		return nil
	}
	cf, err := jit.Compile(c)
	if err != nil || cf.FoldWidth() != f.FoldWidth() {
		return nil
	}
	return cf
}

// pipeRuns reports whether this call's tiles run pipelined: the last
// segment's parameters are f32 in memory.
func (p *Prog) pipeRuns(params []operand) bool {
	g2 := &p.segs[p.pipe.g2]
	for _, a := range g2.ins {
		if s := &p.slots[a]; s.kind == slotParam && params[s.param].f32 == nil {
			return false
		}
	}
	return true
}

// runPiped computes elements [from, to) into out, pipelined, in tiles
// from from on (whole rows: from and to are multiples of the row length).
func (p *Prog) runPiped(sc *scratch, params []operand, out []float32, from, to int) {
	pp := p.pipe
	sc.pend.lo = -1
	for lo := from; lo < to; lo += p.tile {
		hi := min(lo+p.tile, to)
		if hi < to {
			p.prefetch(params, hi, min(hi+p.tile, to))
		}
		if sc.pend.lo >= 0 {
			// The pending tile's held values stay where they are; this
			// tile computes its own into the spare tiles.
			for k, a := range pp.held {
				b := p.slots[a].buf
				sc.bufs[b], sc.alt[k] = sc.alt[k], sc.bufs[b]
			}
		}
		sc.dsts[0] = out[lo:hi]
		p.computeHead(sc, params, lo, hi, sc.dsts)
		sc.pend.lo, sc.pend.hi, sc.pend.dst = lo, hi, out[lo:hi]
		for k, a := range pp.held {
			sc.pend.views[k] = sc.view[a]
		}
	}
	if sc.pend.lo >= 0 {
		p.runPending(sc, params)
	}
}

// computeHead computes the slots of elements [lo, hi) before the last
// segment, which it leaves pending; segment g1 runs with the pending
// tile's last segment when the two have as many rows.
func (p *Prog) computeHead(sc *scratch, params []operand, lo, hi int, dsts [][]float32) {
	pp := p.pipe
	for i := 0; i < p.segs[pp.g2].start; i++ {
		if p.segStart[i] >= 0 {
			g := &p.segs[p.segStart[i]]
			for _, k := range g.pre {
				p.computeSlot(k, sc, params, lo, hi, dsts)
			}
			switch {
			case p.segStart[i] != pp.g1:
				p.runSegment(g, sc, params, lo, hi, dsts)
			case sc.pend.lo >= 0 && sc.pend.hi-sc.pend.lo == hi-lo:
				p.runMerged(g, sc, params, lo, hi, dsts)
			default:
				if sc.pend.lo >= 0 {
					p.runPending(sc, params)
				}
				p.runSegment(g, sc, params, lo, hi, dsts)
			}
			i = g.end - 1
			continue
		}
		if !p.slots[i].skip {
			p.computeSlot(i, sc, params, lo, hi, dsts)
		}
	}
}

// pendingArrays appends the pending tile's arrays for the last segment:
// its output's storage, its inputs, its row values.
func (p *Prog) pendingArrays(sc *scratch, params []operand, outs, ins []jit.Array, rows [][]float32) ([]jit.Array, []jit.Array, [][]float32) {
	pp, pd := p.pipe, &sc.pend
	g2 := &p.segs[pp.g2]
	n := pd.hi - pd.lo
	outs = append(outs, jit.Array{F32: pd.dst})
	for _, a := range g2.ins {
		s := &p.slots[a]
		switch {
		case s.kind == slotParam:
			ins = append(ins, jit.Array{F32: params[s.param].f32[pd.lo:pd.hi]})
		case s.kind == slotSplat:
			ins = append(ins, jit.Array{F32: sc.bufs[s.buf][:n]})
		case s.kind == slotGather:
			j := slices.Index(pp.gathers, a)
			if p.fixedGather(s) && pd.lo%s.period == 0 {
				// Every tile starting a period reads the same values:
				// gathered once (a constant's, once a scratch).
				if !sc.pipeFixed[j] {
					gather(&params[s.param], sc.gathered[j], 0, s.m)
					sc.pipeFixed[j] = true
				}
				ins = append(ins, jit.Array{F32: sc.gathered[j][:n]})
				continue
			}
			sc.pipeFixed[j] = false
			ins = append(ins, jit.Array{F32: gather(&params[s.param], sc.gathered[j][:n], pd.lo, s.m)})
		default:
			ins = append(ins, jit.Array{F32: pd.views[slices.Index(pp.held, a)]})
		}
	}
	for _, r := range g2.rowIns {
		rows = append(rows, pd.views[slices.Index(pp.held, r)])
	}
	return outs, ins, rows
}

// runMerged runs segment g (g1) over the tile [lo, hi) and the last
// segment over the pending tile, in one call.
func (p *Prog) runMerged(g *segment, sc *scratch, params []operand, lo, hi int, dsts [][]float32) {
	var r rowArrays
	c, f, ahead, _ := p.rowArgs(&r, g, p.pipe.f, p.pipe.fAhead, sc, params, lo, hi, dsts)
	c.outs, c.ins, c.rows = p.pendingArrays(sc, params, c.outs, c.ins, c.rows)
	f.RunRowsFold(c.outs, c.ins, r.scalars[:len(c.rows)], c.rows, c.folds, p.n >= kernels.StreamMin)
	p.finishFolds(g, f, sc, hi-lo, hi, ahead)
	sc.pend.lo = -1
}

// runPending runs the last segment over the pending tile, alone.
func (p *Prog) runPending(sc *scratch, params []operand) {
	g2 := &p.segs[p.pipe.g2]
	var r rowArrays
	outs, ins, rows := p.pendingArrays(sc, params, r.outs[:0], r.ins[:0], r.rows[:0])
	stream := p.n >= kernels.StreamMin
	if g2.rows {
		g2.f.RunRowsFold(outs, ins, r.scalars[:len(rows)], rows, nil, stream)
	} else {
		g2.f.Run(outs, ins, nil, stream)
	}
	sc.pend.lo = -1
}
