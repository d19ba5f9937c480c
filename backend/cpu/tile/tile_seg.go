package tile

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
	// rows: the code runs row by row (row scalars or folds).
	rows bool
	// folds are the reductions the code folds (tile_fold.go), those over
	// the segment's values first; fAhead is the code that also folds the
	// next tile's rows of the parameters aheadParams, which f does not.
	folds       []segFold
	fAhead      *jit.Func
	aheadParams []int
	// prog and progAhead are f's and fAhead's programs (tile_pipe.go
	// concatenates them with the next segment's).
	prog, progAhead *jit.Program
}

// Generate gives p generated code: for the whole program, or failing
// that for its segments.
func (p *Prog) Generate() {
	if p.jit = p.compileJIT(); p.jit == nil {
		p.compileSegments()
		p.compilePipe()
	}
}

// isSegOp reports whether slot i is an op a segment computes.
func (p *Prog) isSegOp(i int) bool {
	s := &p.slots[i]
	return s.kind == slotOp && !s.rows && p.hasCode(s)
}

// inRun reports whether slot i may sit in a segment: an op it computes,
// or a view it gets first.
func (p *Prog) inRun(i int) bool {
	switch p.slots[i].kind {
	case slotParam, slotSplat, slotGather, slotRaw:
		return true
	}
	return p.isSegOp(i)
}

// compileSegments finds the runs holding two or more ops and compiles
// each (shortened from its end until it fits the generator's limits).
func (p *Prog) compileSegments() {
	if !useJIT {
		return
	}
	folded := map[int]bool{} // reduce slots a segment folds
	p.segReaders = p.slotReaders()
	defer func() { p.segReaders = nil }()
	for i := 0; i < len(p.slots); {
		for i < len(p.slots) && !p.isSegOp(i) {
			i++
		}
		j := i
		for j < len(p.slots) && p.inRun(j) && j-i < maxSegmentSlots {
			j++
		}
		for end := j; end > i; end-- {
			if !p.isSegOp(end - 1) {
				continue
			}
			if g, ok := p.segment(i, end, folded); ok {
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

// segment compiles slots [start, end) as one function, if it fits, with
// the reductions it can fold that no other segment does (marked in
// folded).
func (p *Prog) segment(start, end int, folded map[int]bool) (segment, bool) {
	g := segment{start: start, end: end}
	prog := &jit.Program{}
	value, ops, rebuf := p.segValues(&g, prog)
	after, ahead := p.foldsOf(start, end, folded)
	p.segResults(&g, prog, value, after)
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
	if !segFits(&g, prog, ops, len(after)) {
		return g, false
	}
	streamed := p.streamInputs(prog, g.ins)
	f, err := jit.Compile(prog)
	if err != nil {
		return g, false
	}
	g.f, g.prog, g.rows, g.streams = f, prog, prog.RowLen > 0, streamed
	p.claimSegment(&g, rebuf, after, folded)
	p.foldAhead(&g, prog, ahead, folded)
	return g, true
}

// segValues adds to prog the values of segment g's ops, and the inputs
// they read from slots before it, returning each slot's value, the ops
// counted and the views before the ops that need tiles of their own.
func (p *Prog) segValues(g *segment, prog *jit.Program) (value map[int]int, ops int, rebuf []int) {
	value = map[int]int{} // slot → jit value
	for i := g.start; i < g.end; i++ {
		if !p.isSegOp(i) {
			if p.clobbers(i, g.start) {
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
				p.segInput(g, prog, a)
			}
			args[k] = value[a]
		}
		value[i], _ = p.jitOp(prog, s, args)
	}
	return value, ops, rebuf
}

// segInput adds the value reading slot a, computed before segment g.
func (p *Prog) segInput(g *segment, prog *jit.Program, a int) {
	if p.rowScalar(a) {
		// Row values read back along the rows: a scalar the code takes
		// afresh for each row, no spread tile.
		prog.RowScalars = append(prog.RowScalars, prog.Scalars)
		prog.Values = append(prog.Values, jit.Value{Op: jit.Splat, Arg: prog.Scalars})
		prog.Scalars++
		g.rowIns = append(g.rowIns, p.slots[a].args[0])
		g.spreads = append(g.spreads, a)
		return
	}
	if s := &p.slots[a]; s.constant() {
		// A constant is the code's own (a register or an operand in
		// memory): no tile of copies streamed in beside the arrays.
		prog.Values = append(prog.Values, jit.Value{Op: jit.Const, Value: s.value})
		return
	}
	prog.Values = append(prog.Values, jit.Value{Op: jit.Input, Arg: len(g.ins)})
	g.ins = append(g.ins, a)
}

// segResults gives prog the folds of reduce slots after and, as
// outputs, the values of segment g's ops read after it.
func (p *Prog) segResults(g *segment, prog *jit.Program, value map[int]int, after []int) {
	for _, r := range after {
		prog.RowFolds = append(prog.RowFolds, jit.RowFold{Op: p.foldOp(r), Value: value[p.slots[r].args[0]]})
	}
	for i := g.start; i < g.end; i++ {
		if p.isSegOp(i) && p.readAfterSlot(i, g.end, after) {
			g.outs = append(g.outs, i)
			prog.Outputs = append(prog.Outputs, value[i])
		}
	}
	prog.Inputs = len(g.ins)
	if len(prog.RowScalars) > 0 || len(prog.RowFolds) > 0 {
		prog.RowLen = p.rowLen
	}
}

// segFits reports whether segment g, of ops ops and folds folds, is
// worth its call and fits the generator's limits. One op is a segment
// only where it saves spreading row values.
func segFits(g *segment, prog *jit.Program, ops, folds int) bool {
	if ops < 2 && len(g.rowIns) == 0 && folds == 0 || len(g.outs) == 0 {
		return false
	}
	return prog.Scalars <= jit.MaxScalars && len(g.ins) <= jit.MaxInputs && len(g.outs) <= jit.MaxOutputs &&
		len(g.ins)+len(g.outs) <= jit.MaxArrays
}

// claimSegment records in p what compiled segment g takes over: its
// streamed parameters are no longer read in place, slots rebuf and the
// reductions after it that it folds get tiles of their own.
func (p *Prog) claimSegment(g *segment, rebuf, after []int, folded map[int]bool) {
	for _, k := range g.streams {
		p.inPlaceParams = slices.DeleteFunc(p.inPlaceParams, func(q int) bool { return q == k })
	}
	for _, k := range rebuf {
		p.slots[k].buf = p.nbufs
		p.nbufs++
	}
	for _, r := range after {
		g.folds = append(g.folds, segFold{slot: r, k: p.nfolds})
		p.headFolds = append(p.headFolds, nil)
		p.nfolds++
		folded[r] = true
		// Its values are written when the segment runs: a tile of its
		// own keeps them from what assignTiles put between.
		p.slots[r].skip, p.slots[r].buf = true, p.nbufs
		p.nbufs++
	}
}

// foldAhead gives segment g, whose program is prog, code that also folds
// the reduce slots ahead over the next tile's rows of their parameters,
// read as inputs after prog's (tile_fold.go). Those rows are read by the
// loop itself, so prog's prefetching of the same parameters is dropped.
func (p *Prog) foldAhead(g *segment, prog *jit.Program, ahead []int, folded map[int]bool) {
	if len(ahead) == 0 {
		return
	}
	q := *prog
	q.Values = slices.Clone(prog.Values)
	q.RowFolds = slices.Clone(prog.RowFolds)
	q.RowLen = p.rowLen
	var params []int
	for _, r := range ahead {
		k := p.slots[p.slots[r].args[0]].param
		q.Values = append(q.Values, jit.Value{Op: jit.Input, Arg: q.Inputs})
		q.Inputs++
		q.RowFolds = append(q.RowFolds, jit.RowFold{Op: p.foldOp(r), Value: len(q.Values) - 1})
		params = append(params, k)
	}
	q.PrefetchInputs = slices.DeleteFunc(slices.Clone(prog.PrefetchInputs), func(in int) bool {
		return slices.Contains(params, p.slots[g.ins[in]].param)
	})
	if q.Inputs > jit.MaxInputs || q.Inputs+len(q.Outputs) > jit.MaxArrays {
		return
	}
	f, err := jit.Compile(&q)
	// The sums must not depend on which code ran a tile (which the thread
	// count decides): both leave their partial results alike, and the
	// tiles no ahead fold reaches fold in f's way too.
	if err != nil || f.FoldWidth() != g.f.FoldWidth() {
		return
	}
	heads := make([]*jit.Func, len(ahead))
	for j := range ahead {
		if heads[j], err = f.FoldCode(len(prog.RowFolds) + j); err != nil {
			return
		}
	}
	g.fAhead, g.progAhead, g.aheadParams = f, &q, params
	for j, r := range ahead {
		g.folds = append(g.folds, segFold{slot: r, ahead: true, k: p.nfolds})
		p.headFolds = append(p.headFolds, heads[j])
		p.nfolds++
		p.slots[r].fold = p.nfolds
		folded[r] = true
	}
}

// streamInputs has the segment's code prefetch the next tile of each
// operand it reads in place that no earlier segment prefetches, as it
// goes (jit.Program.PrefetchInputs), and returns those parameters. A row
// program's tiles are otherwise fetched at once when the tile before
// starts (Prog.prefetch), a burst that stalls the core until enough
// of it has arrived; spread over the segment's loop, the fetches overlap
// its arithmetic. Only for programs whose tiles run in order
// (streamAhead).
func (p *Prog) streamInputs(prog *jit.Program, ins []int) []int {
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
func (p *Prog) clobbers(k, start int) bool {
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
// row values the code can take as a per-row scalar. (Rows of any length:
// the code ends each in a partial vector of its own, so a vector never
// straddles two; where it cannot, bf16 arrays, the segment is refused.)
func (p *Prog) rowScalar(a int) bool {
	return p.slots[a].kind == slotRowBcast && p.rowLen > 0
}

// skipSpreads marks the row-broadcast slots that only segments read,
// as row scalars: nothing needs their tiles.
func (p *Prog) skipSpreads() {
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
func (p *Prog) readsAsRowScalar(m, a int) bool {
	for _, g := range p.segs {
		if m >= g.start && m < g.end && slices.Contains(g.spreads, a) && p.isSegOp(m) {
			return true
		}
	}
	return false
}

// readAfterSlot reports whether slot i's value is needed from slot end
// on: read by a later slot (but the reductions folded, which read it in
// the segment), or an output of the program.
func (p *Prog) readAfterSlot(i, end int, folded []int) bool {
	if slices.Contains(p.outs, i) {
		return true
	}
	rs := p.segReaders[i]
	for k := len(rs) - 1; k >= 0 && rs[k] >= end; k-- {
		if !slices.Contains(folded, rs[k]) {
			return true
		}
	}
	return false
}

// maxSegmentSlots bounds the run of slots compileSegments tries as one
// segment. It shortens a run that does not fit one slot at a time, each
// try building the run's code, so its work grows with the square of the
// run's length: a fused computation of thousands of ops (a deep call
// graph inlined) took minutes. Longer runs are cut into segments of at
// most this many slots, which compile well under a millisecond.
const maxSegmentSlots = 256

// slotReaders lists, for each slot, the slots that read it (as an
// argument, or as the slot an alias or splat views), in order: what
// readAfterSlot asks of every slot of every segment tried, at the cost
// of one pass.
func (p *Prog) slotReaders() [][]int {
	readers := make([][]int, len(p.slots))
	for m := range p.slots {
		s := &p.slots[m]
		for k, a := range s.args[:s.nargs] {
			if !slices.Contains(s.args[:k], a) {
				readers[a] = append(readers[a], m)
			}
		}
		if (s.kind == slotAlias || s.kind == slotSplat) && s.from >= 0 && !slices.Contains(s.args[:s.nargs], s.from) {
			readers[s.from] = append(readers[s.from], m)
		}
	}
	return readers
}

// runSegment computes segment g over the tile [lo, hi): its outputs go
// where the slots' own values would (their scratch tile, or the program
// output's storage), and the reductions it folds get their values.
func (p *Prog) runSegment(g *segment, sc *scratch, params []operand, lo, hi int, dsts [][]float32) {
	n := hi - lo
	if g.rows {
		var r rowArrays
		c, f, ahead, all := p.rowArgs(&r, g, g.f, g.fAhead, sc, params, lo, hi, dsts)
		// Outputs all bound for the program's result, far larger than the
		// caches, bypass them: nothing reads them again here, and a
		// streaming store saves reading each line before writing it.
		f.RunRowsFold(c.outs, c.ins, r.scalars[:len(c.rows)], c.rows, c.folds, all && p.n >= kernels.StreamMin)
		p.finishFolds(g, f, sc, n, hi, ahead)
		return
	}
	var insArr [jit.MaxInputs]jit.Array
	var outsArr [jit.MaxOutputs]jit.Array
	ins, outs := insArr[:len(g.ins)], outsArr[:len(g.outs)]
	for k, a := range g.ins {
		ins[k] = jit.Array{F32: sc.view[a]}
	}
	p.segOutputs(g, sc, n, dsts, outs)
	g.f.Run(outs, ins, nil, false)
}

// rowArrays is room for the arrays of one call of a row segment's code,
// on the caller's stack.
type rowArrays struct {
	ins     [jit.MaxInputs]jit.Array
	outs    [jit.MaxOutputs]jit.Array
	rows    [jit.MaxScalars][]float32
	folds   [jit.MaxRowFolds][]float32
	scalars [jit.MaxScalars]float32 // all row scalars: set per row
}

// rowCall is one call's arrays, in a rowArrays.
type rowCall struct {
	ins, outs   []jit.Array
	rows, folds [][]float32
}

// rowArgs sets the arrays (in r) for row segment g over the tile
// [lo, hi) and picks its code: f, or fAhead when the tile folds the next
// one's rows (ahead). all reports whether every output goes to the
// program's output storage.
func (p *Prog) rowArgs(r *rowArrays, g *segment, f, fAhead *jit.Func, sc *scratch, params []operand, lo, hi int, dsts [][]float32) (c rowCall, code *jit.Func, ahead, all bool) {
	n := hi - lo
	c = rowCall{ins: r.ins[:len(g.ins)], outs: r.outs[:len(g.outs)], rows: r.rows[:len(g.rowIns)], folds: r.folds[:0]}
	for k, a := range g.ins {
		c.ins[k] = jit.Array{F32: sc.view[a]}
	}
	for k, a := range g.rowIns {
		c.rows[k] = sc.view[a]
	}
	all = p.segOutputs(g, sc, n, dsts, c.outs)
	code, ahead = f, p.canFoldAhead(g, params, hi+n <= sc.aheadEnd)
	if ahead {
		code = fAhead
		for _, k := range g.aheadParams {
			c.ins = append(c.ins, jit.Array{F32: params[k].f32[hi : hi+n]})
		}
	}
	for _, fd := range g.folds {
		if !fd.ahead || ahead {
			c.folds = append(c.folds, sc.partials[fd.k])
		}
	}
	return c, code, ahead, all
}

// segOutputs sets outs to where g's outputs go (their scratch tiles, or
// the program output's storage) and points the slots' views there. It
// reports whether they all go to the program's output.
// canFoldAhead reports whether segment g's tile folds the next tile's
// rows: it has code for that, the next tile is this worker's and as long
// (room), and the parameters are f32 in memory.
func (p *Prog) canFoldAhead(g *segment, params []operand, room bool) bool {
	if g.fAhead == nil || !room {
		return false
	}
	for _, k := range g.aheadParams {
		if params[k].f32 == nil {
			return false
		}
	}
	return true
}

func (p *Prog) segOutputs(g *segment, sc *scratch, n int, dsts [][]float32, outs []jit.Array) bool {
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
