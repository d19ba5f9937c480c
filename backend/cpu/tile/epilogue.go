package tile

import (
	"slices"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// An epilogue finishes a product's output blocks (a kOutput fusion): the
// product runs into the fusion's buffer C, and the kernel hands each block
// of C to the fused elementwise chain's program as soon as the block is
// final. The program reads the product's value from C in place (one more
// parameter, numbered after the fusion's operands) and writes its result
// over it: every element is read before it is written and no other
// element is read, so each block is finished on its own, and per element
// the ops are those of the separate fusion in the same order, so the bits
// are the same whatever the blocks and thread count.

// Epilogue is a compiled epilogue: its program reads C as parameter
// cParam.
type Epilogue struct {
	prog   *Prog
	cParam int
	ops    *opsForm // the epilogue as kernels.TileOps (nil: not of that form)
}

// NewEpilogue compiles what fusion in computes from its product d, an
// instruction of fused computation fc: the instructions reachable from the
// root without passing through d, with d a parameter read at the output's
// own positions.
func NewEpilogue(in *hlo.Instruction, fc *hlo.Computation, d *hlo.Instruction) (*Epilogue, error) {
	cParam := len(in.Operands)
	ec := withoutProduct(fc, d, cParam)
	p, err := compileSlots(in, ec.Instructions, []*hlo.Instruction{ec.Root}, in.Shape)
	if err != nil {
		return nil, err
	}
	// A row program's spans are whole rows, all final (Bind), run in
	// order: its segments may fold ahead, and its last two run pipelined.
	p.streamAhead = p.rowLen > 0
	p.Generate()
	return &Epilogue{prog: p, cParam: cParam, ops: matchOps(ec, cParam, in.Shape)}, nil
}

// withoutProduct copies what fc's root needs of fc, with d replaced by
// parameter cParam.
func withoutProduct(fc *hlo.Computation, d *hlo.Instruction, cParam int) *hlo.Computation {
	needed := map[*hlo.Instruction]bool{}
	var mark func(x *hlo.Instruction)
	mark = func(x *hlo.Instruction) {
		if needed[x] {
			return
		}
		needed[x] = true
		if x != d {
			for _, o := range x.Operands {
				mark(o)
			}
		}
	}
	mark(fc.Root)
	ec := &hlo.Computation{Name: fc.Name + ".epilogue"}
	copies := map[*hlo.Instruction]*hlo.Instruction{}
	for _, x := range fc.Instructions {
		if !needed[x] {
			continue
		}
		cp := *x
		cp.Operands = make([]*hlo.Instruction, len(x.Operands))
		for k, o := range x.Operands {
			cp.Operands[k] = copies[o]
		}
		if x == d {
			cp = hlo.Instruction{Name: d.Name, Opcode: hlo.OpParameter, Shape: d.Shape, ParamNumber: int64(cParam)}
		}
		copies[x] = ec.AddInstruction(&cp)
	}
	ec.Root = copies[fc.Root]
	return ec
}

// Prog is the epilogue's program (parameter CParam is the product).
func (e *Epilogue) Prog() *Prog { return e.prog }

// CParam is the parameter through which the program reads the product.
func (e *Epilogue) CParam() int { return e.cParam }

// Bind makes the kernel's per-block epilogue for one execution: args are
// the fusion's operands, c the product's (and the fusion's) buffer, ldc
// its row length.
func (e *Epilogue) Bind(args []*hlo.Literal, c []float32, ldc int) (kernels.Epilogue, error) {
	if epi, ok := e.bindDirect(args, c, ldc); ok {
		return epi, nil
	}
	params := make([]operand, e.cParam+1)
	for i, a := range args {
		o, err := newOperand(a)
		if err != nil {
			return nil, err
		}
		params[i] = o
	}
	params[e.cParam] = operand{f32: c}
	ps := f32Operands(params)
	p := e.prog
	return func(i, j, rows, cols int) {
		var sc *scratch
		if p.jit == nil {
			sc = p.begin(params)
			defer p.pool.Put(sc)
		}
		if j == 0 && cols == ldc && !p.jit.gathersRows(p, rows, ldc) { // whole rows (always, for a row program): one span
			p.runSpan(sc, params, ps, c, i*ldc, (i+rows)*ldc)
			return
		}
		if p.jit != nil {
			p.jit.runBlock(p, params, ps, c, i, rows, j, cols, ldc)
			return
		}
		for r := i; r < i+rows; r++ {
			p.runSpan(sc, params, ps, c, r*ldc+j, r*ldc+j+cols)
		}
	}, nil
}

// runSpan computes output elements [lo, hi) into out: with the program's
// generated code when it has some (one call where its arrays are all
// f32 operands read in place, ps their storage), else a tile at a time
// (sc is then the worker's scratch).
func (p *Prog) runSpan(sc *scratch, params []operand, ps [][]float32, out []float32, lo, hi int) {
	if p.jit != nil {
		if p.jit.direct && hi-lo <= jitChunk && len(p.outs) == 1 {
			dsts := [1][]float32{out[lo:hi]}
			if p.jit.callFlat(ps, dsts[:], lo) {
				return
			}
		}
		outs := [1]jit.Array{{F32: out}}
		p.jit.run(p, params, outs[:], 0, lo, hi, false)
		return
	}
	// Every row of the span is final: its segments may fold the next
	// tile's rows ahead, and the last segment run pipelined, as the
	// fusion's own tiles do (Run); without either the softmax after
	// attention's scores took 0.39 ms where the fusion alone took 0.36.
	sc.aheadEnd = hi
	if p.pipe != nil && p.pipeRuns(params) {
		p.runPiped(sc, params, out, lo, hi)
		return
	}
	for lo < hi {
		h := min(lo+p.tile, hi)
		sc.dsts[0] = out[lo:h]
		if v := p.computeTile(sc, params, lo, h, sc.dsts); &v[0] != &out[lo] {
			copy(out[lo:h], v)
		}
		lo = h
	}
}

// Loop compiles a kLoop fusion to run as a kernel: its tiles stream in
// order (so reads of in-place operands may run ahead of the writes), with
// generated code where the ops have it.
func Loop(in *hlo.Instruction) (*Prog, error) {
	p, err := CompileLoop(in)
	if err != nil {
		return nil, err
	}
	p.streamAhead = true
	p.Generate()
	return p, nil
}

// Reduce compiles a fusion whose root is a row reduction to run as a
// kernel.
func Reduce(in *hlo.Instruction) (*ReduceProg, error) {
	p, err := CompileReduce(in)
	if err != nil {
		return nil, err
	}
	p.prod.compileSegments() // (computeTile runs it, never whole-program code)
	return p, nil
}

// Multi compiles a fusion with several outputs to run as a kernel.
func Multi(in *hlo.Instruction) (*Prog, error) {
	p, err := CompileMulti(in)
	if err != nil {
		return nil, err
	}
	p.Generate()
	return p, nil
}

// Work is the program's elements times its ops: what decides whether it
// runs on several threads (kernels.MinParallelWork).
func (p *Prog) Work() int { return p.n * p.ops }

// Gathers reports whether the program reads fusion operand param through
// an index map rather than at the output's own positions.
func (p *Prog) Gathers(param int) bool { return slices.Contains(p.gathered, param) }

// RowLen is the length of the rows a row program reduces (0: none).
func (p *Prog) RowLen() int { return p.rowLen }
