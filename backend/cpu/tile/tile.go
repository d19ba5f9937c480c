package tile

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// A tile program computes a loop fusion tile by tile: the flat output
// index space is cut into tiles of tileSize elements; for each tile, each
// fused instruction runs one typed loop over the tile, reading its
// operands' tiles (parameters are read in place, scalars are splatted
// once per worker). Dispatch costs one switch per instruction per tile.

const tileSize = 512

type slotKind uint8

const (
	slotParam slotKind = iota // a full-size fusion operand, read in place
	slotSplat                 // one value everywhere (a scalar constant, parameter or broadcast)
	slotOp                    // computed per tile
	// slotRaw is a parameter or index op read only through index maps:
	// nothing to do per tile.
	slotRaw
	// slotGather reads a fusion parameter through an index map (a chain
	// of broadcasts, transposes, slices, reverses and reshapes): each tile
	// gathers its elements.
	slotGather
	// slotAlias is a broadcast of a scalar computed inside the fusion:
	// that scalar's slot already holds its value at every position of the
	// tile, so the broadcast reads it as it is.
	slotAlias
	// slotReduce and slotRowBcast belong to row programs (tile_row.go): a
	// row reduction inside the fusion, holding one value per row of the
	// tile, and its broadcast back along the rows.
	slotReduce
	slotRowBcast
)

type slot struct {
	kind  slotKind
	t     hlo.DType  // the instruction's element type; values are held as f32
	param int        // slotParam, and slotSplat of a scalar parameter (else -1)
	value float32    // slotSplat of a constant
	from  int        // slotSplat of a broadcast: the scalar's slot
	op    hlo.Opcode // slotOp
	dir   compareDir // slotOp of a compare
	rows  bool       // slotOp on row values (tile_row.go): one per row of the tile
	args  [3]int
	nargs int
	// slotGather: the parameter's affine index map.
	m affineMap
	// period is a slotGather's period when its map repeats along the
	// flat index (outer dimensions all broadcast: a bias row, a mask
	// over a row), else 0. When the tiles are whole periods, every tile
	// gathers the same values: the slot has a tile of its own, never
	// shared, gathered once a call (see fixedGather), or once a scratch
	// where the parameter is a constant (fromConstant).
	period int
	// fromConstant says the slot reads a fusion operand that is a
	// constant, the same values at every call: a layer norm's scale and
	// shift, gathered once a scratch rather than at every call of a
	// GEMM's epilogue (two 48 KB tiles a call for MiniLM's).
	fromConstant bool
	// buf is the scratch tile the slot's values live in (-1: none).
	buf int
	// skip: no tile needs the slot's values computed here (a row
	// broadcast that only generated segments read, as row scalars), or a
	// segment computes them (a reduction it folds, tile_fold.go).
	skip bool
	// fold is 1 + the scratch index of the ahead fold that computes this
	// reduction's values a tile early (tile_fold.go), or 0.
	fold int
	// dst is the program output whose storage an op slot computes its
	// tile straight into, when the runner passes that storage (-1: none).
	dst int
}

type Prog struct {
	slots []slot
	n     int
	pool  sync.Pool // of *scratch
	// gathered are the parameters read through index maps: a tile reads
	// them at other positions than its own, so no output may overwrite them.
	gathered []int
	nbufs    int // scratch tiles per worker
	ops      int // slots computed or gathered per element, for the work estimate
	hotOps   int // ops with the costly ones weighing costlyOp (runsAlone)
	// tile is the elements per tile: tileSize, or in a row program
	// (rowLen > 0, the length of the rows its reductions fold) whole rows.
	tile   int
	rowLen int
	shape  hlo.Shape // of the values computed element by element
	// outs are the slots whose values leave the program: the root's, or
	// a multi-output fusion's (tile_multi.go) in tuple order.
	outs []int
	// streamAhead says the tiles run in order (runTiles), so that a
	// segment may prefetch the next tile of what it reads (tile_seg.go).
	streamAhead bool
	// inPlaceParams are the operands read in place, which tiles prefetch
	// one tile ahead.
	inPlaceParams []int
	// jit is the program's generated code, if it has any (tile_jit.go);
	// segs are runs of its ops that have, when the whole program has not
	// (tile_seg.go), and segStart maps a slot to the segment starting
	// there (-1: none).
	jit      *jitProg
	segs     []segment
	segStart []int
	// nfolds is the reductions segments fold (tile_fold.go); headFolds
	// holds, for each that a segment folds ahead, the code folding it
	// over a tile no ahead fold reached (nil for the others).
	nfolds    int
	headFolds []*jit.Func
	// pipe pipelines the last two segments across tiles (tile_pipe.go).
	pipe *pipe
	// segReaders is slotReaders while compileSegments runs.
	segReaders [][]int
	// intOut is the integer type a loop fusion's result is stored as
	// (Invalid: its float type), converted as it is (tile_int.go).
	intOut hlo.DType
}

// CompileLoop turns a kLoop fusion of f32 elementwise instructions into a
// tile program, or reports why it cannot. Its root may convert the
// result to an integer type (IntResult): the program computes the float
// value and Run stores it converted.
func CompileLoop(in *hlo.Instruction) (*Prog, error) {
	fc := in.Computation("calls")
	if fc == nil || fc.Root == nil {
		return nil, fmt.Errorf("fusion %s has no fused computation", in.Name)
	}
	root, xs := fc.Root, fc.Instructions
	if !IntResult(root) {
		return compileSlots(in, xs, []*hlo.Instruction{root}, in.Shape)
	}
	v := root.Operands[0]
	p, err := compileSlots(in, slices.DeleteFunc(slices.Clone(xs), func(x *hlo.Instruction) bool { return x == root }),
		[]*hlo.Instruction{v}, v.Shape)
	if err != nil {
		return nil, err
	}
	p.intOut = root.Shape.DType
	return p, nil
}

// compileSlots compiles the instructions xs of a fused computation
// computing values of shape s tile by tile; roots are its outputs, and
// the last of xs must be one of them (anything after it would be dead).
func compileSlots(in *hlo.Instruction, xs []*hlo.Instruction, roots []*hlo.Instruction, shape hlo.Shape) (*Prog, error) {
	p := &Prog{n: int(shape.NumElements()), tile: tileSize, shape: shape}
	if err := p.rowMode(in, xs, shape); err != nil {
		return nil, err
	}
	index := map[*hlo.Instruction]int{}
	users := lazyUsers()
	for _, x := range xs {
		s := slot{param: -1, from: -1, dst: -1}
		switch {
		case x.Opcode == hlo.OpReduce || x.Opcode == hlo.OpBroadcast && p.readsRowValues(x, index):
			if err := p.rowSlot(in, x, index, &s); err != nil {
				return nil, err
			}
		case x.Opcode == hlo.OpParameter && x.Shape.Rank() == 0:
			s.kind, s.param = slotSplat, int(x.ParamNumber)
		case x.Opcode == hlo.OpParameter && x.Shape.SameDims(shape):
			s.kind, s.param = slotParam, int(x.ParamNumber)
		case x.Opcode == hlo.OpParameter && onlyIndexed(x, users(x)):
			s.kind, s.param = slotRaw, int(x.ParamNumber)
		case x.Opcode == hlo.OpConstant && x.Shape.Rank() == 0:
			s.kind, s.value = slotSplat, float32(x.Literal.GetFloat64(0))
		case x.Opcode == hlo.OpBroadcast && x.Operands[0].Shape.Rank() == 0:
			s.kind, s.from = slotSplat, index[x.Operands[0]]
			if src := &p.slots[s.from]; src.kind != slotSplat {
				s.kind = slotAlias
			} else if src.constant() {
				// A constant's broadcast is that constant: its tile is
				// filled once a worker, not on every call (begin).
				s.value, s.from = src.value, -1
			}
		case IndexOp(x):
			param, m, ok := mapOf(x)
			if !ok {
				return nil, fmt.Errorf("fusion %s: %s %s is not an affine view of a parameter", in.Name, x.Opcode, x.Name)
			}
			s.kind, s.param, s.m = slotGather, param, m
			s.fromConstant = param < len(in.Operands) && in.Operands[param].Opcode == hlo.OpConstant
			if onlyIndexed(x, users(x)) {
				s.kind = slotRaw // read through its users' maps
			} else if pr := m.period(); pr > 0 && pr < p.n {
				s.period = pr
			}
			p.gathered = append(p.gathered, param)
		case x.Opcode == hlo.OpIsFinite && Type(x.Operands[0].Shape.DType):
			if err := p.isFiniteSlot(in, x, index, &s); err != nil {
				return nil, err
			}
		case Computes(x.Opcode) && tileValue(x.Shape.DType):
			if err := p.opSlot(in, x, index, &s); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("fusion %s: %s %s has no tile form", in.Name, x.Opcode, x.Shape.HumanString())
		}
		// Integer operands are read converted (their values as f32), for
		// converts to read (tile_int.go); nothing computes on integers.
		if !tileValue(x.Shape.DType) && !(IntType(x.Shape.DType) && s.kind != slotOp && s.kind != slotReduce && s.kind != slotRowBcast) {
			return nil, fmt.Errorf("fusion %s: %s is %s", in.Name, x.Name, x.Shape.DType)
		}
		s.t = x.Shape.DType
		index[x] = len(p.slots)
		p.slots = append(p.slots, s)
	}
	if err := p.markOutputs(in, roots, index); err != nil {
		return nil, err
	}
	p.assignTiles()
	for _, s := range p.slots {
		if s.kind == slotOp || s.kind == slotGather || s.kind == slotReduce || s.kind == slotRowBcast {
			p.ops++
			p.hotOps++
		}
		if s.kind == slotOp && !Cheap(s.op) {
			p.hotOps += costlyOp - 1
		}
		if s.kind == slotParam && !slices.Contains(p.inPlaceParams, s.param) {
			p.inPlaceParams = append(p.inPlaceParams, s.param)
		}
	}
	return p, nil
}

// opSlot makes s the op slot computing x, whose operands' slots index
// gives.
func (p *Prog) opSlot(in, x *hlo.Instruction, index map[*hlo.Instruction]int, s *slot) error {
	s.kind, s.op, s.nargs = slotOp, x.Opcode, len(x.Operands)
	for k, o := range x.Operands {
		s.args[k] = index[o]
		if IntType(o.Shape.DType) && x.Opcode != hlo.OpConvert {
			return fmt.Errorf("fusion %s: %s reads the integers of %s", in.Name, x.Name, o.Name)
		}
	}
	if err := p.markRowOp(in, x, s); err != nil {
		return err
	}
	if x.Opcode == hlo.OpCompare {
		d, ok := compareDirOf(x)
		if !ok {
			return fmt.Errorf("fusion %s: compare %s has no tile form", in.Name, x.Name)
		}
		s.dir = d
	}
	return nil
}

// isFiniteSlot makes s the slot of is-finite x: |x| < +inf, a compare
// that is false for NaN and both infinities, as IsFinite is. The absolute
// value and the infinity get slots of their own before it. (Softmax as
// ONNX lowers it zeroes a row maximum that is not finite, a row value:
// inside the row program, the maximum is folded with the rest of the
// softmax instead of in a reduction fusion of its own.)
func (p *Prog) isFiniteSlot(in, x *hlo.Instruction, index map[*hlo.Instruction]int, s *slot) error {
	abs := slot{kind: slotOp, op: hlo.OpAbs, nargs: 1, param: -1, from: -1, dst: -1, t: x.Operands[0].Shape.DType}
	abs.args[0] = index[x.Operands[0]]
	if err := p.markRowOp(in, x, &abs); err != nil {
		return err
	}
	p.slots = append(p.slots, abs)
	p.slots = append(p.slots, slot{kind: slotSplat, value: float32(math.Inf(1)), param: -1, from: -1, dst: -1, t: hlo.F32})
	s.kind, s.op, s.dir, s.nargs = slotOp, hlo.OpCompare, cmpLT, 2
	s.args[0], s.args[1] = len(p.slots)-2, len(p.slots)-1
	return p.markRowOp(in, x, s)
}

// markOutputs records the output slots. An op slot computes its tile
// straight into the first output it is (a repeated root is copied).
func (p *Prog) markOutputs(in *hlo.Instruction, roots []*hlo.Instruction, index map[*hlo.Instruction]int) error {
	for k, r := range roots {
		i, ok := index[r]
		if !ok || !Type(r.Shape.DType) {
			return fmt.Errorf("fusion %s: output %s is not a float value of the program", in.Name, r.Name)
		}
		if s := &p.slots[i]; s.kind == slotOp && s.dst < 0 && !s.rows {
			s.dst = k
		}
		p.outs = append(p.outs, i)
	}
	if len(p.slots) == 0 || !slices.Contains(p.outs, len(p.slots)-1) {
		return fmt.Errorf("fusion %s: the last instruction is not an output", in.Name)
	}
	return nil
}

// assignTiles gives each slot that holds values a scratch tile, reusing
// the tiles of slots no later slot reads: a chain of ten ops then cycles
// through a few tiles that stay in L1 instead of ten (plus the streams in
// and out) that would not. An op may take the tile of an operand it
// reads last, which the kernels allow (dst may be an input).
func (p *Prog) assignTiles() {
	last := make([]int, len(p.slots))
	for i, s := range p.slots {
		last[i] = i
		for _, a := range s.args[:s.nargs] {
			last[a] = i
		}
	}
	for _, o := range p.outs { // outputs are read after the last slot
		last[o] = len(p.slots)
	}
	for i := len(p.slots) - 1; i >= 0; i-- { // an alias keeps its source's tile
		if s := p.slots[i]; s.kind == slotAlias {
			last[s.from] = max(last[s.from], last[i])
		}
	}
	var free []int
	for i := range p.slots {
		s := &p.slots[i]
		s.buf = -1
		var done []int // operand tiles this slot reads last
		if s.kind == slotOp || s.kind == slotReduce || s.kind == slotRowBcast {
			for k, a := range s.args[:s.nargs] {
				if last[a] == i && p.slots[a].buf >= 0 && !p.slots[a].ownTile() && !slices.Contains(s.args[:k], a) {
					done = append(done, p.slots[a].buf)
				}
			}
		}
		// Spreading row values over the rows would overwrite values not
		// yet spread if it shared their tile, so a spread's operand tile
		// is freed only after it has its own.
		if s.kind != slotRowBcast {
			free, done = append(free, done...), nil
		}
		switch s.kind {
		case slotSplat, slotGather, slotOp, slotReduce, slotRowBcast:
		case slotParam:
			if s.t == hlo.F32 {
				continue // read in place
			}
			// Narrow floats and predicates decode into a tile.
		default:
			continue
		}
		// Splats are filled once per worker, before the first tile, so
		// their tiles are never shared (nor periodic gathers').
		if n := len(free); n > 0 && !s.ownTile() {
			s.buf, free = free[n-1], free[:n-1]
		} else {
			s.buf = p.nbufs
			p.nbufs++
		}
		free = append(free, done...)
	}
}

// constant: a splat of a constant (not of a scalar operand or a slot).
func (s *slot) constant() bool { return s.kind == slotSplat && s.param < 0 && s.from < 0 }

// ownTile: the slot's tile is never shared, its values filled once per
// worker.
func (s *slot) ownTile() bool { return s.kind == slotSplat || s.kind == slotGather && s.period > 0 }

// fixedGather reports whether gather slot s holds the same values in
// every tile that starts a period: its map repeats with a period the
// tiles are whole multiples of (a last short tile is a prefix of the
// others).
func (p *Prog) fixedGather(s *slot) bool {
	return s.kind == slotGather && s.period > 0 && p.tile%s.period == 0
}

// InPlace lists the fusion operands the program may write its result
// over: those read only at the output's own positions (a tile reads its
// operands' tiles before it writes its output's), never through a map.
func (p *Prog) InPlace() []int {
	var ks []int
	for _, s := range p.slots {
		if s.kind == slotParam && !slices.Contains(p.gathered, s.param) {
			ks = append(ks, s.param)
		}
	}
	return ks
}

// jitMinElements is the fewest elements a fusion with generated code
// runs it for: below one vector the code works on a staged copy (a
// call's frame, the staging copies in and out: 0.3–0.4 µs), and the
// tile's kernels take a few nanoseconds an op.
const jitMinElements = 8

// RunsJIT reports whether Run computes the fusion with its generated
// code.
func (p *Prog) RunsJIT() bool { return p.jit != nil && p.n >= jitMinElements }

// Run computes the fusion into out (f32, bf16 or f16, or the integer
// type a quantizing fusion stores) from the operand values on at most
// threads goroutines.
func (p *Prog) Run(args []*hlo.Literal, out *hlo.Literal, threads int) error {
	if outs := [1]*hlo.Literal{out}; p.runSmall(args, outs[:], threads) {
		return nil
	}
	var small [8]operand
	params, err := newOperands(small[:0], args)
	if err != nil {
		return err
	}
	tiles := (p.n + p.tile - 1) / p.tile
	threads = max(1, min(threads, tiles/2))
	if p.runsAlone() {
		threads = 1 // small fusions run inline
	}
	if p.RunsJIT() {
		if a, ok := literalArray(out); ok {
			outs := [1]jit.Array{a}
			p.runJIT(params, outs[:], threads)
			return nil
		}
	}
	if threads == 1 {
		p.runTiles(params, out, 0, tiles)
		return nil
	}
	shared := slices.Clone(params) // the closure's copy, so small stays on the stack
	kernels.Parallel(threads, func(t int) {
		p.runTiles(shared, out, t*tiles/threads, (t+1)*tiles/threads)
	})
	return nil
}

// A fusion runs on the calling goroutine alone under
// kernels.MinParallelWork element-ops where a worker may be parked, and
// under hotSplitWork while an execution keeps the workers polling, its
// costly ops (tanh, erf, divisions, library calls: not Cheap) weighing
// costlyOp: a split hands half the arrays to another core, which costs
// about what 2.3 µs of one thread's work saves. Elementwise fusions on
// two threads against one (Zen 3, medians of 5,000 runs): x+y 8,192
// elements 2.5 against 1.3 µs, 16,384 2.3 against 2.3, 32,768 3.4
// against 4.8; max(x·y+z, 0) 4,096 2.2 against 1.3 µs, 8,192 2.6
// against 1.6; tanh(x)·y 8,192 3.6 against 4.8. The hot threshold had
// been a 32nd of the cold one (8,192), which split the first four.
const (
	hotSplitWork = 1 << 15
	costlyOp     = 4
)

// runsAlone reports whether the fusion runs on the calling goroutine.
func (p *Prog) runsAlone() bool {
	return kernels.RunsAloneBy(p.n*p.ops, kernels.MinParallelWork, p.n*p.hotOps, hotSplitWork)
}

// scratch is one worker's tile buffers, one per slot, pooled per program
// so a call allocates nothing.
type scratch struct {
	bufs, view [][]float32
	// dsts are the current tile of each output's storage, or nil where
	// the output is computed in scratch (see slot.dst).
	dsts [][]float32
	// Folded reductions (tile_fold.go), per fold: the partial results a
	// segment's code leaves, and an ahead fold's values for the tile
	// starting at aheadLo (-1: none yet). aheadEnd bounds the tiles a
	// segment may fold ahead into: this worker's.
	partials, ahead [][]float32
	aheadLo         []int
	aheadEnd        int
	// alt are the spare tiles of the pipe's held slots, pend the tile
	// whose last segment is still to run (tile_pipe.go).
	alt, gathered [][]float32
	pend          pending
	// sink takes the copy a head fold's code writes (foldHead).
	sink []float32
	// fixed says which periodic gathers' tiles hold the values of a tile
	// starting a period (see fixedGather); begin clears it but for
	// constants' (fromConstant). pipeFixed is the same for the pipe's
	// gathers (tile_pipe.go), by their index in pipe.gathers.
	fixed, pipeFixed []bool
}

func (p *Prog) getScratch() *scratch {
	if sc, ok := p.pool.Get().(*scratch); ok {
		return sc
	}
	// A tile per slot (less for a small fusion: a scalar program should
	// not touch kilobytes per call).
	size := min(p.tile, p.n)
	sc := &scratch{bufs: make([][]float32, p.nbufs), view: make([][]float32, len(p.slots)),
		dsts: make([][]float32, len(p.outs)), fixed: make([]bool, len(p.slots))}
	store := make([]float32, p.nbufs*size)
	for i := range sc.bufs {
		sc.bufs[i] = store[i*size : (i+1)*size]
	}
	for _, s := range p.slots {
		if s.constant() {
			kernels.Fill(sc.bufs[s.buf], s.value)
		}
	}
	if p.pipe != nil {
		for range p.pipe.held {
			sc.alt = append(sc.alt, make([]float32, size))
		}
		for range p.pipe.gathers {
			sc.gathered = append(sc.gathered, make([]float32, size))
		}
		sc.pipeFixed = make([]bool, len(p.pipe.gathers))
		sc.pend.views = make([][]float32, len(p.pipe.held))
	}
	for range p.nfolds {
		sc.partials = append(sc.partials, make([]float32, p.partialsLen()))
		sc.ahead = append(sc.ahead, make([]float32, p.tile/p.rowLen))
		sc.aheadLo = append(sc.aheadLo, -1)
	}
	return sc
}

func (p *Prog) runTiles(params []operand, out *hlo.Literal, from, to int) {
	sc := p.begin(params)
	defer p.pool.Put(sc)
	sc.aheadEnd = min(to*p.tile, p.n)
	outF32, _ := out.Data().([]float32)
	var outBits []uint16
	var outFmt minifloat.Format
	if outF32 == nil && p.intOut == hlo.Invalid {
		outBits = out.Data().([]uint16)
		outFmt, _ = minifloat.ByName(out.DType().String())
	}
	if p.pipe != nil && outF32 != nil && p.pipeRuns(params) {
		p.runPiped(sc, params, outF32, from*p.tile, min(to*p.tile, p.n))
		return
	}
	for tile := from; tile < to; tile++ {
		lo := tile * p.tile
		hi := min(lo+p.tile, p.n)
		if tile+1 < to {
			p.prefetch(params, hi, min(hi+p.tile, p.n))
		}
		if outF32 != nil {
			sc.dsts[0] = outF32[lo:hi]
			if v := p.computeTile(sc, params, lo, hi, sc.dsts); &v[0] != &outF32[lo] {
				copy(outF32[lo:hi], v)
			}
			continue
		}
		if p.intOut != hlo.Invalid {
			storeInts(out.Data(), lo, p.computeTile(sc, params, lo, hi, nil))
			continue
		}
		EncodeNarrow(outFmt, outBits[lo:hi], p.computeTile(sc, params, lo, hi, nil))
	}
}

// prefetch starts loading elements [lo, hi) of the operands read in
// place while the tile before them is computed.
func (p *Prog) prefetch(params []operand, lo, hi int) {
	for _, k := range p.inPlaceParams {
		if x := params[k].f32; x != nil {
			kernels.Prefetch(x[lo:hi])
		}
	}
}

// begin takes a worker's scratch and fills the splat slots whose value
// comes from a parameter (constant splats were filled when the scratch
// was made).
func (p *Prog) begin(params []operand) *scratch {
	sc := p.getScratch()
	sc.aheadEnd = 0
	for k := range sc.aheadLo {
		sc.aheadLo[k] = -1
	}
	bufs := sc.bufs
	for i := range sc.fixed {
		sc.fixed[i] = sc.fixed[i] && p.slots[i].fromConstant
	}
	if p.pipe != nil {
		for j, a := range p.pipe.gathers {
			sc.pipeFixed[j] = sc.pipeFixed[j] && p.slots[a].fromConstant
		}
	}
	for i := range p.slots {
		s := &p.slots[i]
		if s.kind != slotSplat || s.constant() {
			continue
		}
		if s.param >= 0 {
			kernels.Fill(bufs[s.buf], params[s.param].at(0))
		} else {
			kernels.Fill(bufs[s.buf], bufs[p.slots[s.from].buf][0])
		}
	}
	return sc
}

// computeTile computes elements [lo, hi) (at most a tile) of every slot
// and returns the last slot's: an op slot that is an output computes into
// dsts[slot.dst] when that is not nil, others into scratch, and parameters
// stay in their operand's storage. (dsts is nil or one tile per output.)
func (p *Prog) computeTile(sc *scratch, params []operand, lo, hi int, dsts [][]float32) []float32 {
	last := len(p.slots) - 1
	for i := 0; i < len(p.slots); i++ {
		if p.segStart != nil && p.segStart[i] >= 0 {
			g := &p.segs[p.segStart[i]]
			for _, k := range g.pre {
				p.computeSlot(k, sc, params, lo, hi, dsts)
			}
			p.runSegment(g, sc, params, lo, hi, dsts)
			i = g.end - 1
			continue
		}
		if !p.slots[i].skip {
			p.computeSlot(i, sc, params, lo, hi, dsts)
		}
	}
	return sc.view[last]
}

// computeSlot computes slot i's values for elements [lo, hi).
func (p *Prog) computeSlot(i int, sc *scratch, params []operand, lo, hi int, dsts [][]float32) {
	bufs, view := sc.bufs, sc.view
	s := &p.slots[i] // not a copy: a slot is over a hundred bytes
	switch s.kind {
	case slotParam:
		var buf []float32
		if s.buf >= 0 {
			buf = bufs[s.buf]
		}
		view[i] = params[s.param].tile(lo, hi, buf)
	case slotSplat:
		view[i] = bufs[s.buf][:hi-lo]
	case slotAlias:
		view[i] = view[s.from]
	case slotGather:
		if p.fixedGather(s) && lo%s.period == 0 {
			// The values of every tile starting a period: gathered once
			// (for the whole tile) until a tile starting elsewhere (an
			// epilogue's part rows) takes the buffer.
			if !sc.fixed[i] {
				gather(&params[s.param], bufs[s.buf], 0, s.m)
				sc.fixed[i] = true
			}
			view[i] = bufs[s.buf][:hi-lo]
			break
		}
		sc.fixed[i] = false
		view[i] = gather(&params[s.param], bufs[s.buf][:hi-lo], lo, s.m)
	case slotOp:
		d := bufs[s.buf][:hi-lo]
		if s.rows {
			d = d[:(hi-lo)/p.rowLen]
		}
		if s.dst >= 0 && s.dst < len(dsts) && dsts[s.dst] != nil {
			d = dsts[s.dst]
		}
		switch {
		case s.op == hlo.OpCompare:
			compareTile(s.dir, d, view[s.args[0]], view[s.args[1]])
		default:
			applyOp(s.op, d, view[s.args[0]], view[s.args[1]], view[s.args[2]])
		}
		roundTo(s.t, d)
		view[i] = d
	case slotReduce:
		if !p.foldedAhead(i, sc, lo, hi) && !p.foldHead(i, sc, lo, hi) {
			view[i] = p.reduceRows(s, bufs[s.buf], view, hi-lo)
		}
	case slotRowBcast:
		view[i] = p.spreadRows(view[s.args[0]], bufs[s.buf][:hi-lo])
	}
}

// onlyIndexed reports whether every user of x (users) reads it through
// an index map (so x itself needs no tile).
func onlyIndexed(x *hlo.Instruction, users []*hlo.Instruction) bool {
	for _, u := range users {
		if !IndexOp(u) || u.Opcode == hlo.OpBroadcast && u.Operands[0].Shape.Rank() == 0 {
			return false
		}
	}
	return len(users) > 0
}

// lazyUsers gives an instruction's users in its computation, the
// computation's user map built once on first asking: built per
// instruction, it made compiling a fusion quadratic in its size (a GRU
// unrolled over 100 steps spent a sixth of its compile there).
func lazyUsers() func(x *hlo.Instruction) []*hlo.Instruction {
	var of *hlo.Computation
	var m map[*hlo.Instruction][]*hlo.Instruction
	return func(x *hlo.Instruction) []*hlo.Instruction {
		if m == nil || x.Parent != of {
			of, m = x.Parent, x.Parent.Users()
		}
		return m[x]
	}
}
