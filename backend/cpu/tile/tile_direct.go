package tile

import (
	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// A small fusion's call: a recurrent step's gate fusion runs a hundred
// elements a call, hundreds of times a model call, and its code takes
// ~0.15 µs of it. Where every array the code reads and writes is f32,
// the call hands the operands' f32 slices as they are to
// jit.Func.RunF32 (every input read in place, at its displacement for
// contiguous slices) or, for gates read by rows, to the block code's
// RunStridedF32: no operand values, Arrays, gather buffers or chunks.
// The code and its spans are those of the general path (jitProg.run over
// one chunk, runRows, runStrided), so the bits are too.

// directInputs records whether j's arrays are all f32 and, if so and
// nothing is gathered, marks it as run flat (see above), recording how
// long each operand it reads in place must be.
func (j *jitProg) directInputs(p *Prog) {
	prog := j.prog
	for _, ts := range [][]jit.Type{prog.InputTypes, prog.OutputTypes} {
		for _, t := range ts {
			if t != jit.F32 {
				return
			}
		}
	}
	j.allF32 = true
	if j.gathers > 0 {
		return
	}
	var need [jit.MaxInputs]int
	for k, in := range j.inputs {
		need[k] = in.off + p.n
	}
	for _, v := range prog.Values {
		if v.Op == jit.Input {
			need[v.Arg] = max(need[v.Arg], j.inputs[v.Arg].off+v.Off+p.n)
		}
	}
	j.need, j.direct = need, true
}

// runSmall computes a small fusion (one chunk, on one thread) into outs
// from its operand literals with one direct call of its code, or reports
// false, having done nothing, where the program has no such call or an
// operand or output is not f32.
func (p *Prog) runSmall(args, outs []*hlo.Literal, threads int) bool {
	j := p.jit
	if j == nil || !j.allF32 || !p.RunsJIT() || p.n > jitChunk ||
		threads > 1 && !p.runsAlone() || len(outs) > jit.MaxOutputs {
		return false
	}
	var dsts [jit.MaxOutputs][]float32
	for k, o := range outs {
		d, ok := o.Data().([]float32)
		if !ok || len(d) < p.n {
			return false
		}
		dsts[k] = d[:p.n]
	}
	var small [8][]float32
	ps := small[:0]
	for _, a := range args {
		x, _ := a.Data().([]float32) // nil: not f32
		ps = append(ps, x)
	}
	if j.direct {
		return j.callFlat(ps, dsts[:len(outs)], 0)
	}
	b := j.rowsFor(p)
	if b == nil || !j.callRows(b, ps, dsts[:len(outs)], b.ldc, 0, 0, p.n/b.ldc, b.ldc) {
		return false
	}
	rowRuns.Add(1)
	return true
}

// callFlat computes output elements [lo, lo+len(dsts[0])) into dsts
// with one call of the flat code, reading the f32 operands ps (nil where
// one is not f32) in place, or reports false, having done nothing, where
// an operand the code reads is not f32 or not as long as it reads.
func (j *jitProg) callFlat(ps, dsts [][]float32, lo int) bool {
	var ins [jit.MaxInputs][]float32
	for k := range j.inputs {
		in := &j.inputs[k]
		if in.param >= len(ps) || len(ps[in.param]) < j.need[k] {
			return false
		}
		ins[k] = ps[in.param][in.off+lo:]
	}
	scalars, ok := j.scalarValues(ps)
	if !ok {
		return false
	}
	j.f.RunF32(dsts, ins[:len(j.inputs)], scalars[:len(j.scalars)])
	return true
}

// callRows runs block code b over rows rows of cols elements from row
// row and column col of the output's rows of b.ldc: outputs k's block
// starts at dsts[k] with rows outStride apart, input k's at element
// b.off[k] + row·b.rowStride[k] + col of its operand. It reports false,
// having done nothing, where an operand is not f32.
func (j *jitProg) callRows(b *jitBlocks, ps, dsts [][]float32, outStride, row, col, rows, cols int) bool {
	var ins [jit.MaxInputs][]float32
	for k := range j.inputs {
		in := &j.inputs[k]
		off := b.off[k] + row*b.rowStride[k] + col
		if in.param >= len(ps) || len(ps[in.param]) < off+(rows-1)*b.rowStride[k]+cols {
			return false
		}
		ins[k] = ps[in.param][off:]
	}
	scalars, ok := j.scalarValues(ps)
	if !ok {
		return false
	}
	var strides [jit.MaxOutputs]int
	for k := range dsts {
		strides[k] = outStride
	}
	b.f.RunStridedF32(dsts, ins[:len(j.inputs)], scalars[:len(j.scalars)], rows, cols,
		strides[:len(dsts)], b.rowStride[:len(j.inputs)])
	return true
}

// scalarValues are the values of the splatted operands, or false where
// one is not f32.
func (j *jitProg) scalarValues(ps [][]float32) ([jit.MaxScalars]float32, bool) {
	var scalars [jit.MaxScalars]float32
	for k, a := range j.scalars {
		if a >= len(ps) || len(ps[a]) == 0 {
			return scalars, false
		}
		scalars[k] = ps[a][0]
	}
	return scalars, true
}

// f32Operands are the f32 storage of params (nil where an operand is
// not f32), for callFlat and callRows.
func f32Operands(params []operand) [][]float32 {
	ps := make([][]float32, len(params))
	for k := range params {
		ps[k] = params[k].f32
	}
	return ps
}

// directOperands are the f32 storage of a direct epilogue's operands,
// C's last. A closure holds a value this small (at most 128 bytes, never
// assigned after) in itself: binding such an epilogue allocates only its
// closure, where operand values, their f32 slices and the closure were
// three allocations, which cost an LSTM step's projection more than its
// epilogue's code.
type directOperands [4][]float32

// bindDirect is Bind for an epilogue whose code runs flat (every input an
// f32 operand read in place, at most three besides C), or false where it
// is not one or an operand is not f32 or shorter than the code reads.
func (e *Epilogue) bindDirect(args []*hlo.Literal, c []float32, ldc int) (kernels.Epilogue, bool) {
	p := e.prog
	var ps directOperands
	if p.jit == nil || !p.jit.direct || len(p.outs) != 1 || e.cParam >= len(ps) || len(args) != e.cParam || len(c) < p.n {
		return nil, false
	}
	for i, a := range args {
		ps[i], _ = a.Data().([]float32) // nil where not f32: callFlat refuses
	}
	ps[e.cParam] = c
	if !p.jit.reads(ps) {
		return nil, false
	}
	return func(i, j, rows, cols int) {
		if j == 0 && cols == ldc { // whole rows: one span
			p.jit.spanOperands(ps, c, i*ldc, (i+rows)*ldc)
			return
		}
		if b := p.jit.stridedFor(p, ldc); b != nil { // part rows: a block a call
			p.jit.blockOperands(b, ps, c, i, rows, j, cols)
			return
		}
		for r := i; r < i+rows; r++ {
			p.jit.spanOperands(ps, c, r*ldc+j, r*ldc+j+cols)
		}
	}, true
}

// reads reports whether operands ps hold what the flat code reads: every
// input as long as it reads (need), every splatted scalar.
func (j *jitProg) reads(ps directOperands) bool {
	for k := range j.inputs {
		if in := &j.inputs[k]; in.param >= len(ps) || len(ps[in.param]) < j.need[k] {
			return false
		}
	}
	_, ok := j.scalarValues(ps[:])
	return ok
}

// spanOperands computes elements [lo, hi) of out with the flat code, a
// chunk a call, from operands that reads has checked.
func (j *jitProg) spanOperands(ps directOperands, out []float32, lo, hi int) {
	for ; lo < hi; lo += jitChunk {
		dsts := [1][]float32{out[lo:min(lo+jitChunk, hi)]}
		j.callFlat(ps[:], dsts[:], lo)
	}
}

// blockOperands is runStrided for operands that reads has checked.
func (j *jitProg) blockOperands(b *jitBlocks, ps directOperands, out []float32, row, rows, col, cols int) {
	stridedBlocks.Add(1)
	j.blocksF32(b, ps[:], out, row, rows, col, cols)
}

// blocksF32 computes columns [col, col+cols) of rows [row, row+rows) of
// out with block code b, a bounded number of elements a call, from f32
// operands ps, and returns the first row it did not compute: row+rows,
// or where callRows refused (an operand not f32).
func (j *jitProg) blocksF32(b *jitBlocks, ps [][]float32, out []float32, row, rows, col, cols int) int {
	per := max(1, jitChunk/cols)
	end := row + rows
	for ; row < end; row += per {
		dsts := [1][]float32{out[row*b.ldc+col:]}
		if !j.callRows(b, ps, dsts[:], b.ldc, row, col, min(per, end-row), cols) {
			return row
		}
	}
	return end
}
