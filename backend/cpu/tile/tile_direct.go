package tile

import (
	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// A small fusion's call: a recurrent step's gate fusion runs a hundred
// elements a call, hundreds of times a model call, and its code takes
// ~0.15 µs of it. Where every input the code reads is an f32 operand in
// place (at its displacement, for contiguous slices) and the one output
// is f32, nothing need be gathered, pooled or chunked: the call takes
// the operands' slices as they are and hands them to jit.Func.RunF32.
// The code and its span are those of the general path (jitProg.run over
// one chunk), so the bits are too.

// directInputs marks j as run directly (see above) when it qualifies,
// recording how long each operand it reads in place must be.
func (j *jitProg) directInputs(p *Prog) {
	prog := j.prog
	if j.gathers > 0 || len(prog.OutputTypes) != 1 || prog.OutputTypes[0] != jit.F32 {
		return
	}
	for _, t := range prog.InputTypes {
		if t != jit.F32 {
			return
		}
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

// directRun reports whether Run computes the fusion with one direct call
// (direct inputs, a length generated code runs, one chunk, one thread).
func (p *Prog) directRun(threads int) bool {
	return p.jit != nil && p.jit.direct && p.RunsJIT() && p.n <= jitChunk &&
		(threads == 1 || p.n*p.ops < kernels.MinParallelWork)
}

// runDirect computes the fusion from its operand literals with one call
// of its code, or reports false, having done nothing, where an operand or
// out is not f32 of the length the code reads.
func (p *Prog) runDirect(args []*hlo.Literal, out *hlo.Literal) bool {
	j := p.jit
	dst, ok := out.Data().([]float32)
	if !ok || len(dst) < p.n {
		return false
	}
	var ins [jit.MaxInputs][]float32
	for k := range j.inputs {
		in := &j.inputs[k]
		if in.param >= len(args) {
			return false
		}
		x, ok := args[in.param].Data().([]float32)
		if !ok || len(x) < j.need[k] {
			return false
		}
		ins[k] = x[in.off:]
	}
	var scalars [jit.MaxScalars]float32
	for k, a := range j.scalars {
		if a >= len(args) {
			return false
		}
		x, ok := args[a].Data().([]float32)
		if !ok || len(x) == 0 {
			return false
		}
		scalars[k] = x[0]
	}
	j.f.RunF32(dst[:p.n], ins[:len(j.inputs)], scalars[:len(j.scalars)])
	return true
}

// spanDirect computes output elements [lo, hi) into out (from element
// 0) from operands read in place with one call, or reports false, having
// done nothing, where an operand is not f32 or [lo, hi) is more than a
// chunk (an epilogue's span of a block).
func (j *jitProg) spanDirect(params []operand, out []float32, lo, hi int) bool {
	if !j.direct || hi-lo > jitChunk || hi <= lo {
		return false
	}
	var ins [jit.MaxInputs][]float32
	for k := range j.inputs {
		in := &j.inputs[k]
		x := params[in.param].f32
		if x == nil || len(x) < j.need[k] {
			return false
		}
		ins[k] = x[in.off+lo:]
	}
	var scalars [jit.MaxScalars]float32
	for k, a := range j.scalars {
		scalars[k] = params[a].at(0)
	}
	j.f.RunF32(out[lo:hi], ins[:len(j.inputs)], scalars[:len(j.scalars)])
	return true
}
