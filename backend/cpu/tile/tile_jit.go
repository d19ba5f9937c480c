package tile

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// A loop fusion of f32 elementwise ops over same-shaped f32 operands and
// scalars is also compiled to machine code (package jit): one loop whose
// values stay in registers, instead of a pass through L1 per op. The
// tile program stays the definition and the fallback: the generated code
// runs each op's kernel instructions, so the results are the same bits.

// useJIT turns generated code on (tests compare with it off).
var useJIT = jit.Available

var jitCompares = [...]jit.Op{cmpEQ: jit.CmpEQ, cmpNE: jit.CmpNE, cmpLT: jit.CmpLT, cmpLE: jit.CmpLE, cmpGT: jit.CmpGT, cmpGE: jit.CmpGE}

// jitOpOf is the generated-code op computing op slot s.
func jitOpOf(s *slot) (jit.Op, bool) {
	if s.op == hlo.OpCompare {
		return jitCompares[s.dir], true
	}
	r := row(s.op)
	return r.jit, r.jitOK
}

// jitProg is a tile program's generated code and how to feed it.
type jitProg struct {
	f    *jit.Func
	prog *jit.Program // what f runs
	// inputs are the arrays the code reads, in its order; scalars the
	// fusion operands it reads splatted.
	inputs  []jitInput
	scalars []int
	gathers int  // inputs gathered per chunk
	shared  bool // some inputs are read displaced (compileJITForm's shared form)
	// allF32 says every array of the code is f32 (calls may then pass
	// slices, tile_direct.go); direct that the flat code reads them all
	// in place, need[k] being the elements input k's operand must hold.
	allF32, direct bool
	need           [jit.MaxInputs]int
	pool           sync.Pool // of *[]float32: a worker's gather buffers
	// blocks runs GEMM epilogues over blocks of part rows, made on first
	// use (see stridedFor).
	blocksOnce sync.Once
	blocks     *jitBlocks
	// rows runs a loop fusion with gathers as rows (see runRows), made on
	// first use; nil where it cannot.
	rowsOnce sync.Once
	rows     *jitBlocks
}

// jitBlocks is a program's code for blocks of rows (jit.Program.Strided)
// and, for each input, where a row of the output's block reads it: input
// k's element for output element (i, j) of a C with rows ldc long is
// off[k] + i·rowStride[k] + j. Operands read in place have C's shape;
// gathered ones qualify when their index map is one along C's rows (a
// bias broadcast over them, stride 0).
type jitBlocks struct {
	f              *jit.Func
	ldc            int
	off, rowStride [jit.MaxInputs]int
}

// jitInput is an array the generated code reads: a fusion operand in
// place, or (gather ≥ 0) the values the tile program's slot gather reads
// through an index map, gathered into a buffer chunk by chunk.
type jitInput struct {
	param, gather int
	// off is where an operand read in place starts being read: the
	// program's values read it further on (jit.Value.Off) where it is
	// sliced (contiguous views of it, compileJIT's shared form).
	off int
}

// run computes elements [lo, hi) of the outputs with the generated code;
// outs hold the elements from base on.
func (j *jitProg) run(p *Prog, params []operand, outs []jit.Array, base, lo, hi int, stream bool) {
	var insArr [jit.MaxInputs]jit.Array
	var outsArr [jit.MaxOutputs]jit.Array
	chunkOuts := outsArr[:len(outs)]
	ins := insArr[:len(j.inputs)]
	scalarArr, chunk, bufp := j.begin(params)
	defer j.end(bufp)
	bufs := buffersOf(bufp)
	// Calls of a bounded length: generated code cannot be preempted, so
	// a garbage collection waits for the call in progress to return.
	for c := lo; c < hi; c += chunk {
		e := min(c+chunk, hi)
		j.arrays(p, params, ins, bufs, c, e)
		for k, o := range outs {
			chunkOuts[k] = o.Slice(c-base, e-base)
		}
		j.f.Run(chunkOuts, ins, scalarArr[:len(j.scalars)], stream)
	}
}

// arrays sets ins to the inputs' elements [c, e): operands read in place
// are sliced, gathered ones gathered into bufs.
func (j *jitProg) arrays(p *Prog, params []operand, ins []jit.Array, bufs []float32, c, e int) {
	g := 0
	for k := range j.inputs {
		in := &j.inputs[k]
		if in.gather < 0 {
			o := &params[in.param]
			if j.shared {
				o.arrayFrom(&ins[k], in.off+c) // read past e (jit.Value.Off)
			} else {
				o.arrayFrom(&ins[k], c)
				ins[k] = ins[k].Slice(0, e-c)
			}
			continue
		}
		buf := bufs[g*jitGatherChunk : g*jitGatherChunk+e-c]
		ins[k] = jit.Array{}
		ins[k].F32 = gather(&params[in.param], buf, c, p.slots[in.gather].m)
		g++
	}
}

// runBlock computes columns [col, col+cols) of rows [row, row+rows) of
// a single f32 output whose rows are ldc apart (a GEMM epilogue's block
// of part rows): one span a row, all through one jit.Runner and one set
// of gather buffers. Calling run for each row set those up every time,
// which cost mlp_b256's bias-and-ReLU epilogues more than their
// arithmetic.
func (j *jitProg) runBlock(p *Prog, params []operand, ps [][]float32, out []float32, row, rows, col, cols, ldc int) {
	var insArr [jit.MaxInputs]jit.Array
	ins := insArr[:len(j.inputs)]
	if b := j.stridedFor(p, ldc); b != nil {
		j.runStrided(b, params, ps, out, row, rows, col, cols)
		return
	}
	scalarArr, chunk, bufp := j.begin(params)
	defer j.end(bufp)
	bufs := buffersOf(bufp)
	r := j.f.Runner(scalarArr[:len(j.scalars)])
	defer r.Close()
	for i := row; i < row+rows; i++ {
		for c, hi := i*ldc+col, i*ldc+col+cols; c < hi; c += chunk {
			e := min(c+chunk, hi)
			j.arrays(p, params, ins, bufs, c, e)
			r.Run([]jit.Array{{F32: out[c:e]}}, ins)
		}
	}
}

// gathersRows reports whether the program (j: its code, or nil) runs
// rows rows ldc long with its block code: where it has gathers and block
// code, a bias along the rows is read in place, row after row, where a
// span gathers it into a buffer as long as the span (a channels-last
// convolution's epilogue: a few channels, many pixels), a copy for every
// element. Rows shorter than 16 are each half a 16-lane vector, masked:
// many of them go faster as a span (8 × 100: 0.52 µs, 0.64 by rows).
func (j *jitProg) gathersRows(p *Prog, rows, ldc int) bool {
	return j != nil && j.gathers > 0 && (ldc >= 16 || rows < 64) && j.stridedFor(p, ldc) != nil
}

// stridedFor returns the program's code for blocks of a C with rows ldc
// long, or nil where an input cannot be read by rows (a gather along the
// rows, a transpose, a bf16 or f16 operand gathered as f32) or the generator
// refuses the program: runBlock then goes row by row.
func (j *jitProg) stridedFor(p *Prog, ldc int) *jitBlocks {
	j.blocksOnce.Do(func() { j.blocks = j.blocksFor(p, ldc) })
	if j.blocks == nil || j.blocks.ldc != ldc {
		return nil
	}
	return j.blocks
}

// blocksFor makes the program's code for blocks of rows ldc long, or
// returns nil (stridedFor).
func (j *jitProg) blocksFor(p *Prog, ldc int) *jitBlocks {
	b := &jitBlocks{ldc: ldc}
	for k, in := range j.inputs {
		if in.gather < 0 { // C's shape, read in place (from in.off)
			b.off[k], b.rowStride[k] = in.off, ldc
			continue
		}
		rs, cs, ok := rowsAndColumns(p.slots[in.gather].m, ldc)
		if !ok || cs != 1 || rs < 0 || p.slots[in.gather].t != hlo.F32 {
			return nil
		}
		b.off[k], b.rowStride[k] = p.slots[in.gather].m.off, rs
	}
	f, err := jit.Compile(j.stridedProg())
	if err != nil {
		return nil
	}
	b.f = f
	return b
}

// stridedProg is the program's form for blocks of rows (blocksFor).
func (j *jitProg) stridedProg() *jit.Program {
	prog := *j.prog
	prog.Strided, prog.PrefetchInputs, prog.PrefetchAhead = true, nil, 0
	return &prog
}

// recordStrided compiles the program's form for blocks of rows while the
// code book records (jit.Record): runs compile it on first use, which a
// model compiled ahead of time, whose book is recorded as it compiles,
// may never reach. (Where the generator refuses it, runs do without.)
func (j *jitProg) recordStrided() {
	if jit.Recording() {
		_, _ = jit.Compile(j.stridedProg()) // the book keeps it
	}
}

// runRows computes a small loop fusion whose gathers read rows of their
// operands (slices along the last dimension: an LSTM step's gates, each
// a quarter of every row of the projections) with the block code, each
// operand read in place by its row stride, not gathered first. It
// reports false, having done nothing, where the program has no such
// form or outs are not all f32.
func (j *jitProg) runRows(p *Prog, params []operand, outs []jit.Array) bool {
	for k := range outs {
		if outs[k].F32 == nil {
			return false
		}
	}
	b := j.rowsFor(p)
	if b == nil {
		return false
	}
	var insArr [jit.MaxInputs]jit.Array
	var strides [jit.MaxOutputs]int
	ins := insArr[:len(j.inputs)]
	scalars := j.scalarsOf(params)
	for k, in := range j.inputs {
		o := &params[in.param]
		if in.gather >= 0 && o.f32 == nil {
			return false
		}
		o.arrayFrom(&ins[k], b.off[k])
	}
	for k := range outs {
		strides[k] = b.ldc
	}
	rowRuns.Add(1)
	r := b.f.Runner(scalars[:len(j.scalars)])
	defer r.Close()
	r.RunStrided(outs, ins, p.n/b.ldc, b.ldc, strides[:len(outs)], b.rowStride[:len(ins)])
	return true
}

// rowsFor returns the block code runRows runs the program with, made on
// first use, or nil where it has none: only a small program whose
// gathers read rows of their operands has.
func (j *jitProg) rowsFor(p *Prog) *jitBlocks {
	if j.gathers == 0 || p.n > jitChunk {
		return nil
	}
	j.rowsOnce.Do(func() {
		var ldc int
		for _, in := range j.inputs {
			if in.gather >= 0 {
				// (A scalar spread over the output has an empty map: no
				// rows to read, so ldc stays 0 and there is no row form.)
				if m := p.slots[in.gather].m; len(m.dims) > 0 {
					ldc = m.dims[len(m.dims)-1]
				}
				break
			}
		}
		if ldc >= 16 && ldc < p.n && p.n%ldc == 0 { // short rows: mostly tails
			j.rows = j.blocksFor(p, ldc)
		}
	})
	return j.rows
}

// scalarsOf are the values of the splatted operands.
func (j *jitProg) scalarsOf(params []operand) [jit.MaxScalars]float32 {
	var scalars [jit.MaxScalars]float32
	for k, a := range j.scalars {
		scalars[k] = params[a].at(0)
	}
	return scalars
}

// runStrided is runBlock with the block's code: one call per block of
// rows (a bounded number of elements, as run's chunks are).
func (j *jitProg) runStrided(b *jitBlocks, params []operand, ps [][]float32, out []float32, row, rows, col, cols int) {
	stridedBlocks.Add(1)
	per := max(1, jitChunk/cols)
	if j.allF32 { // straight from the slices (tile_direct.go)
		end := row + rows
		if row = j.blocksF32(b, ps, out, row, rows, col, cols); row == end {
			return
		}
		rows = end - row
	}
	var insArr [jit.MaxInputs]jit.Array
	ins := insArr[:len(j.inputs)]
	scalars := j.scalarsOf(params)
	r := b.f.Runner(scalars[:len(j.scalars)])
	defer r.Close()
	outs := [1]jit.Array{}
	outStride := [1]int{b.ldc}
	for i := row; i < row+rows; i += per {
		n := min(per, row+rows-i)
		for k, in := range j.inputs {
			params[in.param].arrayFrom(&ins[k], b.off[k]+i*b.rowStride[k]+col)
		}
		outs[0] = jit.Array{F32: out[i*b.ldc+col:]}
		r.RunStrided(outs[:], ins, n, cols, outStride[:], b.rowStride[:len(ins)])
	}
}

// rowRuns counts runRows' runs (tests check the path taken).
var rowRuns atomic.Int64

// stridedBlocks counts runStrided's calls (tests check the path taken).
var stridedBlocks atomic.Int64

// rowsAndColumns returns the strides of an index map over a row-major
// array with rows ldc long along its rows and along its columns, where
// the map is affine in each: the map's output dimensions split into
// outer ones (rows) and inner ones whose sizes multiply to ldc
// (columns), and each group collapses to one dimension.
func rowsAndColumns(m affineMap, ldc int) (rowStride, colStride int, ok bool) {
	p, n := len(m.dims), 1
	for p > 0 && n < ldc {
		p--
		n *= m.dims[p]
	}
	if n != ldc {
		return 0, 0, false
	}
	if colStride, ok = collapseDims(m.dims[p:], m.strides[p:]); !ok {
		return 0, 0, false
	}
	rowStride, ok = collapseDims(m.dims[:p], m.strides[:p])
	return rowStride, colStride, ok
}

// collapseDims returns the stride of dimensions as one, row-major, if they
// are one: each stride is the next non-unit inner one's times its size.
func collapseDims(dims, strides []int) (int, bool) {
	stride, next, seen := 0, 0, false
	for d := len(dims) - 1; d >= 0; d-- {
		if dims[d] == 1 {
			continue
		}
		if seen && strides[d] != next {
			return 0, false
		}
		if !seen {
			stride, seen = strides[d], true
		}
		next = strides[d] * dims[d]
	}
	return stride, true
}

// arrayFrom sets *a to the operand's storage from element lo on, as
// the generated code reads it (f32 values, bf16 or f16 bits, as its
// format says, or s32 values; compileJIT took no other type). (Through a
// pointer: copies of the Arrays built and returned cost a small call
// more than its code.)
func (o *operand) arrayFrom(a *jit.Array, lo int) {
	*a = jit.Array{}
	switch {
	case o.f32 != nil:
		a.F32 = o.f32[lo:]
	case o.bits != nil && *o.format == minifloat.F16:
		a.F16 = o.bits[lo:]
	case o.bits != nil:
		a.BF16 = o.bits[lo:]
	default:
		a.I32 = o.i32[lo:]
	}
}

// literalArray is an f32, bf16 or f16 literal's storage (or an 8-bit
// integer one's) as an array.
func literalArray(l *hlo.Literal) (jit.Array, bool) {
	switch d := l.Data().(type) {
	case []float32:
		return jit.Array{F32: d}, true
	case []uint16:
		switch l.DType() {
		case hlo.BF16:
			return jit.Array{BF16: d}, true
		case hlo.F16:
			return jit.Array{F16: d}, true
		}
	case []uint8:
		return jit.Array{U8: d}, true
	case []int8:
		return jit.Array{S8: d}, true
	}
	return jit.Array{}, false
}

// begin returns what a call's chunks share: the values of the splatted
// scalars, the chunk length, and the gather buffers (nil without
// gathers), which end returns to the pool.
func (j *jitProg) begin(params []operand) (scalars [jit.MaxScalars]float32, chunk int, bufs *[]float32) {
	scalars = j.scalarsOf(params)
	if j.gathers == 0 {
		return scalars, jitChunk, nil
	}
	return scalars, jitGatherChunk, j.buffers()
}

// end returns the gather buffers to the pool: the pointer the pool gave
// (or buffers made), so a call allocates nothing.
func (j *jitProg) end(bufs *[]float32) {
	if bufs != nil {
		j.pool.Put(bufs)
	}
}

// buffersOf is the gather buffers bufs points to (none: nil).
func buffersOf(bufs *[]float32) []float32 {
	if bufs == nil {
		return nil
	}
	return *bufs
}

// buffers returns a worker's gather buffers, one chunk per gathered input.
func (j *jitProg) buffers() *[]float32 {
	if b, ok := j.pool.Get().(*[]float32); ok {
		return b
	}
	b := make([]float32, j.gathers*jitGatherChunk)
	return &b
}

// jitChunk is the elements per call of generated code (≈ 0.1 ms of the
// heaviest fusions); with gathered inputs a call takes jitGatherChunk,
// so their buffers stay in L1 and L2.
const (
	jitChunk       = 1 << 16
	jitGatherChunk = 1 << 12
)

// runJIT is run for a program with generated code: the outputs (in the
// program's order) split into one range per worker.
func (p *Prog) runJIT(params []operand, outs []jit.Array, threads int) {
	stream := p.n >= kernels.StreamMin
	if threads == 1 {
		if !stream && p.jit.runRows(p, params, outs) {
			return
		}
		p.jit.run(p, params, outs, 0, 0, p.n, stream)
		return
	}
	// Ranges start on multiples of 16 elements, 64 bytes: a cache line
	// is never written by two workers. The closure gets its own copies of
	// params and outs, so the caller's stay on its stack.
	shared, sharedOuts := slices.Clone(params), slices.Clone(outs)
	kernels.Parallel(threads, func(t int) {
		lo := t * p.n / threads &^ 15
		hi := (t + 1) * p.n / threads &^ 15
		if t == threads-1 {
			hi = p.n
		}
		p.jit.run(p, shared, sharedOuts, 0, lo, hi, stream)
	})
}
