package cpu

import (
	"slices"

	"github.com/axle-ml/axle/hlo"

	"github.com/axle-ml/axle/backend/cpu/kernels"

	"github.com/axle-ml/axle/backend/cpu/jit"
)

// Segments: when a tile program as a whole has no generated code (a row
// program, with its reductions; an op like log that the generator does
// not take; the producer of a reduction fusion), its runs of consecutive
// f32 ops that do have it still run as generated code, one call per run
// per tile: the run reads the tiles of the slots before it and writes
// only the values read after it, instead of one pass through L1 per op.
// Softmax's subtract and exponential become one pass, layer norm's
// centring, scaling and shifting another.

// segment is a run of slots [start, end) whose op slots are computed by
// one function reading the views of slots ins and writing slots outs.
// The other slots in the run (pre: parameters, splats and gathers, which
// the instruction order puts between the ops) get their views first. In
// a row program the row-broadcast slots spreads are read as row scalars
// instead, from the row values of slots rowIns.
type segment struct {
	start, end      int
	f               *jit.Func
	ins, outs       []int
	pre             []int
	rowIns, spreads []int
	// streams are the parameters whose next tile the code prefetches.
	streams []int
}

// generate gives p generated code: for the whole program, or failing
// that for its segments.
func (p *tileProg) generate() {
	if p.jit = p.compileJIT(); p.jit == nil {
		p.compileSegments()
	}
}

// isSegOp reports whether slot i is an op a segment computes.
func (p *tileProg) isSegOp(i int) bool {
	s := &p.slots[i]
	return s.kind == slotOp && !s.rows && p.hasCode(s)
}

// inRun reports whether slot i may sit in a segment: an op it computes,
// or a view it gets first.
func (p *tileProg) inRun(i int) bool {
	switch p.slots[i].kind {
	case slotParam, slotSplat, slotGather, slotRaw:
		return true
	}
	return p.isSegOp(i)
}

// compileSegments finds the runs holding two or more ops and compiles
// each (shortened from its end until it fits the generator's limits).
func (p *tileProg) compileSegments() {
	if !useJIT {
		return
	}
	for i := 0; i < len(p.slots); {
		for i < len(p.slots) && !p.isSegOp(i) {
			i++
		}
		j := i
		for j < len(p.slots) && p.inRun(j) {
			j++
		}
		for end := j; end > i; end-- {
			if !p.isSegOp(end - 1) {
				continue
			}
			if g, ok := p.segment(i, end); ok {
				if p.segStart == nil {
					p.segStart = slices.Repeat([]int{-1}, len(p.slots))
				}
				p.segStart[i] = len(p.segs)
				p.segs = append(p.segs, g)
				break
			}
		}
		i = max(j, i+1)
	}
	p.skipSpreads()
}

// segment compiles slots [start, end) as one function, if it fits.
func (p *tileProg) segment(start, end int) (segment, bool) {
	g := segment{start: start, end: end}
	prog := &jit.Program{}
	value := map[int]int{} // slot → jit value
	ops := 0
	var rebuf []int // slots that need tiles of their own
	for i := start; i < end; i++ {
		if !p.isSegOp(i) {
			if p.clobbers(i, start) {
				rebuf = append(rebuf, i)
			}
			g.pre = append(g.pre, i)
			continue
		}
		ops++
		s := &p.slots[i]
		args := make([]int, s.nargs)
		for k, a := range s.args[:s.nargs] {
			if _, ok := value[a]; !ok { // a slot before the segment
				value[a] = len(prog.Values)
				if p.rowScalar(a) {
					// Row values read back along the rows: a scalar the
					// code takes afresh for each row, no spread tile.
					prog.RowScalars = append(prog.RowScalars, prog.Scalars)
					prog.Values = append(prog.Values, jit.Value{Op: jit.Splat, Arg: prog.Scalars})
					prog.Scalars++
					g.rowIns = append(g.rowIns, p.slots[a].args[0])
					g.spreads = append(g.spreads, a)
				} else {
					prog.Values = append(prog.Values, jit.Value{Op: jit.Input, Arg: len(g.ins)})
					g.ins = append(g.ins, a)
				}
			}
			args[k] = value[a]
		}
		value[i], _ = p.jitOp(prog, s, args)
	}
	for i := start; i < end; i++ {
		if p.isSegOp(i) && p.readAfterSlot(i, end) {
			g.outs = append(g.outs, i)
			prog.Outputs = append(prog.Outputs, value[i])
		}
	}
	prog.Inputs = len(g.ins)
	if len(prog.RowScalars) > 0 {
		prog.RowLen = p.rowLen
	}
	// The row values are read here, not where the skipped spread would
	// have read them, so assignTiles's liveness ends too early for them:
	// any slot computed between the spread and the segment's end (a
	// gather feeding it, an output, a view computed ahead) could have been
	// given their tile. A tile of their own is safe from all of them.
	for _, r := range g.rowIns {
		if !slices.Contains(rebuf, r) {
			rebuf = append(rebuf, r)
		}
	}
	// One op is a segment only where it saves spreading row values.
	if ops < 2 && len(g.rowIns) == 0 || len(g.outs) == 0 || prog.Scalars > jit.MaxScalars || len(g.ins) > jit.MaxInputs || len(g.outs) > jit.MaxOutputs || len(g.ins)+len(g.outs) > jit.MaxArrays {
		return g, false
	}
	streamed := p.streamInputs(prog, g.ins)
	f, err := jit.Compile(prog)
	if err != nil {
		return g, false
	}
	g.streams = streamed
	for _, k := range streamed {
		p.inPlaceParams = slices.DeleteFunc(p.inPlaceParams, func(q int) bool { return q == k })
	}
	for _, k := range rebuf {
		p.slots[k].buf = p.nbufs
		p.nbufs++
	}
	g.f = f
	return g, true
}

// streamInputs has the segment's code prefetch the next tile of each
// operand it reads in place that no earlier segment prefetches, as it
// goes (jit.Program.PrefetchInputs), and returns those parameters. A row
// program's tiles are otherwise fetched at once when the tile before
// starts (tileProg.prefetch), a burst that stalls the core until enough
// of it has arrived; spread over the segment's loop, the fetches overlap
// its arithmetic. Only for programs whose tiles run in order
// (streamAhead).
func (p *tileProg) streamInputs(prog *jit.Program, ins []int) []int {
	if !p.streamAhead {
		return nil
	}
	var params []int
	for k, a := range ins {
		s := &p.slots[a]
		if s.kind == slotParam && s.t == hlo.F32 && slices.Contains(p.inPlaceParams, s.param) && !slices.Contains(params, s.param) {
			prog.PrefetchInputs = append(prog.PrefetchInputs, k)
			params = append(params, s.param)
		}
	}
	prog.PrefetchAhead = p.tile
	return params
}

// clobbers reports whether view slot k, computed before the segment's
// ops, would overwrite a tile an op before it in the segment still reads:
// the tile program computes k after those ops, so assignTiles may have
// given k the tile of a value they read last. Such a slot gets a tile of
// its own.
func (p *tileProg) clobbers(k, start int) bool {
	b := p.slots[k].buf
	if b < 0 {
		return false
	}
	for m := start; m < k; m++ {
		s := &p.slots[m]
		for _, a := range s.args[:s.nargs] {
			if p.slots[a].buf == b {
				return true
			}
		}
	}
	return false
}

// rowScalar reports whether slot a, read by a segment, is a spread of
// row values the code can take as a per-row scalar: rows a multiple of
// 8 long, so that a vector never straddles two.
func (p *tileProg) rowScalar(a int) bool {
	return p.slots[a].kind == slotRowBcast && p.rowLen > 0 && p.rowLen%8 == 0
}

// skipSpreads marks the row-broadcast slots that only segments read,
// as row scalars: nothing needs their tiles.
func (p *tileProg) skipSpreads() {
	inSeg := map[int]bool{} // spread slot → read as a row scalar somewhere
	for _, g := range p.segs {
		for _, a := range g.spreads {
			inSeg[a] = true
		}
	}
	for a := range inSeg {
		if slices.Contains(p.outs, a) {
			continue
		}
		skip := true
		for m := a + 1; m < len(p.slots) && skip; m++ {
			s := &p.slots[m]
			if !slices.Contains(s.args[:s.nargs], a) && !((s.kind == slotAlias || s.kind == slotSplat) && s.from == a) {
				continue
			}
			skip = p.segStart != nil && p.readsAsRowScalar(m, a)
		}
		p.slots[a].skip = skip
	}
}

// readsAsRowScalar reports whether slot m lies in a segment that reads
// slot a as a row scalar.
func (p *tileProg) readsAsRowScalar(m, a int) bool {
	for _, g := range p.segs {
		if m >= g.start && m < g.end && slices.Contains(g.spreads, a) && p.isSegOp(m) {
			return true
		}
	}
	return false
}

// readAfterSlot reports whether slot i's value is needed from slot end
// on: read by a later slot, or an output of the program.
func (p *tileProg) readAfterSlot(i, end int) bool {
	if slices.Contains(p.outs, i) {
		return true
	}
	for m := end; m < len(p.slots); m++ {
		s := &p.slots[m]
		if slices.Contains(s.args[:s.nargs], i) || (s.kind == slotAlias || s.kind == slotSplat) && s.from == i {
			return true
		}
	}
	return false
}

// runSegment computes segment g over a tile of n elements: its outputs
// go where the slots' own values would (their scratch tile, or the
// program output's storage).
func (p *tileProg) runSegment(g *segment, sc *scratch, n int, dsts [][]float32) {
	var insArr [jit.MaxInputs]jit.Array
	var outsArr [jit.MaxOutputs]jit.Array
	ins, outs := insArr[:len(g.ins)], outsArr[:len(g.outs)]
	for k, a := range g.ins {
		ins[k] = jit.Array{F32: sc.view[a]}
	}
	if len(g.rowIns) > 0 {
		var rowArr [jit.MaxScalars][]float32
		var scalars [jit.MaxScalars]float32 // all row scalars: set per row
		rows := rowArr[:len(g.rowIns)]
		for k, a := range g.rowIns {
			rows[k] = sc.view[a]
		}
		// Outputs all bound for the program's result, far larger than the
		// caches, bypass them: nothing reads them again here, and a
		// streaming store saves reading each line before writing it.
		stream := p.segOutputs(g, sc, n, dsts, outs) && p.n >= kernels.StreamMin
		g.f.RunRows(outs, ins, scalars[:len(g.rowIns)], rows, stream)
		return
	}
	p.segOutputs(g, sc, n, dsts, outs)
	g.f.Run(outs, ins, nil, false)
}

// segOutputs sets outs to where g's outputs go (their scratch tiles, or
// the program output's storage) and points the slots' views there. It
// reports whether they all go to the program's output.
func (p *tileProg) segOutputs(g *segment, sc *scratch, n int, dsts [][]float32, outs []jit.Array) bool {
	all := true
	for k, o := range g.outs {
		s := &p.slots[o]
		d := sc.bufs[s.buf][:n]
		if s.dst >= 0 && s.dst < len(dsts) && dsts[s.dst] != nil {
			d = dsts[s.dst]
		} else {
			all = false
		}
		outs[k] = jit.Array{F32: d}
		sc.view[o] = d
	}
	return all
}
