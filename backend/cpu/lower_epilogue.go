package cpu

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Lowering of kOutput fusions (fusion_epilogue.go): the product runs into
// the fusion's buffer C, and the kernel hands each block of C to the
// epilogue, the fused elementwise chain's tile program, as soon as the
// block is final. The program reads the product's value from C in place
// (it is one more parameter, numbered after the fusion's operands) and
// writes its result over it: every element is read before it is written
// and no other element is read, so each block is finished on its own,
// and per element the ops are those of the separate fusion in the same
// order, so the bits are the same whatever the blocks and thread count.

// epilogue is a compiled epilogue: prog reads C as parameter cParam.
type epilogue struct {
	prog   *tileProg
	cParam int
}

// lowerOutputFusion lowers a kOutput fusion, naming the lowering.
func (x *Executable) lowerOutputFusion(in *hlo.Instruction) (kernelFunc, string, error) {
	fc := in.Computation("calls")
	if fc == nil || fc.Root == nil {
		return nil, "", fmt.Errorf("fusion %s has no fused computation", in.Name)
	}
	i := slices.IndexFunc(fc.Instructions, func(x *hlo.Instruction) bool {
		return x.Opcode == hlo.OpDot || x.Opcode == hlo.OpConvolution
	})
	if i < 0 || !outputProducer(fc.Instructions[i]) || in.Shape.DType != hlo.F32 {
		return nil, "", fmt.Errorf("fusion %s: no product the kernels can finish", in.Name)
	}
	d := fc.Instructions[i]
	ops := make([]int, len(d.Operands)) // fusion operands the product reads
	for k, o := range d.Operands {
		if o.Opcode != hlo.OpParameter {
			return nil, "", fmt.Errorf("fusion %s: %s reads %s, not a parameter", in.Name, d.Name, o.Name)
		}
		ops[k] = int(o.ParamNumber)
	}
	e, err := compileEpilogue(in, fc, d)
	if err != nil {
		return nil, "", err
	}
	if d.Opcode == hlo.OpDot {
		g, _ := planDot(d)
		return x.gemmEpilogue(g, ops, e), "gemm+epilogue", nil
	}
	if k, ok := x.convNCHW(d, in.Operands[ops[1]], ops, e); ok {
		return k, "conv_nchw+epilogue", nil
	}
	if k, ok := x.convDepthwiseNCHW(d, in.Operands[ops[1]], ops, e); ok {
		return k, "conv_dw_nchw+epilogue", nil
	}
	p, relayIn, _, _ := planConv(d)
	return x.convEpilogue(p, relayIn, ops, e, constantWeights(in.Operands[ops[1]])), "conv+epilogue", nil
}

// gemmEpilogue runs a (batched) product finished by e.
func (x *Executable) gemmEpilogue(g gemmPlan, ops []int, e *epilogue) kernelFunc {
	return func(out *hlo.Literal, args []*hlo.Literal) error {
		c := out.Data().([]float32)
		epi, err := e.bind(args, c, g.n)
		if err != nil {
			return err
		}
		la, releaseA := asF32(args[ops[0]], x.threads)
		defer releaseA()
		lb, releaseB := asF32(args[ops[1]], x.threads)
		defer releaseB()
		if gemvDot(&g, la, lb, c, x.threads) {
			epi(0, 0, g.batch*g.m, g.n)
			return nil
		}
		runBatch(g.batch, g.m, g.n, g.k, x.threads, func(i, threads int) {
			a, b := g.a, g.b // Execute may run concurrently
			ao, bo := g.offsets(i)
			a.Data, b.Data = la[ao:], lb[bo:]
			kernels.GemmEpilogueF32(g.m, g.n, g.k, a, b, c[i*g.m*g.n:], g.n, threads, shiftRows(epi, i*g.m), e.prog.rowLen > 0)
		})
		return nil
	}
}

// shiftRows makes one product of a batch's epilogue: its C starts at
// row r0 of the batch's.
func shiftRows(epi kernels.Epilogue, r0 int) kernels.Epilogue {
	if r0 == 0 {
		return epi
	}
	return func(i, j, rows, cols int) { epi(r0+i, j, rows, cols) }
}

// convEpilogue runs a convolution with a channels-last output (the
// matrix [pixels, channels]) finished by e.
func (x *Executable) convEpilogue(p *kernels.Conv, relayIn *relayout, ops []int, e *epilogue, cw *constWeights) kernelFunc {
	threads := x.threads
	return func(out *hlo.Literal, args []*hlo.Literal) error {
		c := out.Data().([]float32)
		src, w, cache, release := convOperands(args[ops[0]], args[ops[1]], relayIn, cw, threads)
		defer release()
		epi, err := e.bind(args, c, p.OutChannels)
		if err != nil {
			return err
		}
		return kernels.ConvPackedF32(relayIn.conv(p), src, w, c, threads, epi, cache)
	}
}

// compileEpilogue compiles what the fusion computes from product d: its
// instructions reachable from the root without passing through d, with d
// a parameter read at the output's own positions.
func compileEpilogue(in *hlo.Instruction, fc *hlo.Computation, d *hlo.Instruction) (*epilogue, error) {
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
	cParam := len(in.Operands)
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
	p, err := compileSlots(in, ec.Instructions, []*hlo.Instruction{ec.Root}, in.Shape)
	if err != nil {
		return nil, err
	}
	p.generate()
	if !epilogueFits(d, p, cParam) {
		return nil, fmt.Errorf("fusion %s: the epilogue reads %s other than element for element", in.Name, d.Name)
	}
	return &epilogue{prog: p, cParam: cParam}, nil
}

// bind makes the kernel's per-block epilogue for one execution: args are
// the fusion's operands, c the product's (and the fusion's) buffer, ldc
// its row length.
func (e *epilogue) bind(args []*hlo.Literal, c []float32, ldc int) (kernels.Epilogue, error) {
	params := make([]operand, e.cParam+1)
	for i, a := range args {
		o, err := newOperand(a)
		if err != nil {
			return nil, err
		}
		params[i] = o
	}
	params[e.cParam] = operand{f32: c}
	p := e.prog
	return func(i, j, rows, cols int) {
		var sc *scratch
		if p.jit == nil {
			sc = p.begin(params)
			defer p.pool.Put(sc)
		}
		if j == 0 && cols == ldc { // whole rows (always, for a row program): one span
			p.runSpan(sc, params, c, i*ldc, (i+rows)*ldc)
			return
		}
		if p.jit != nil {
			p.jit.runBlock(p, params, c, i, rows, j, cols, ldc)
			return
		}
		for r := i; r < i+rows; r++ {
			p.runSpan(sc, params, c, r*ldc+j, r*ldc+j+cols)
		}
	}, nil
}

// runSpan computes output elements [lo, hi) into out: with the program's
// generated code when it has some, else a tile at a time (sc is then the
// worker's scratch).
func (p *tileProg) runSpan(sc *scratch, params []operand, out []float32, lo, hi int) {
	if p.jit != nil {
		outs := [1]jit.Array{{F32: out}}
		p.jit.run(p, params, outs[:], lo, hi, false)
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
