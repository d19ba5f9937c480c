package cpu

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// Lowering of kOutput fusions (fusion_epilogue.go): the product's kernel
// runs into the fusion's buffer and hands each block to the epilogue
// (tile.Epilogue) as soon as the block is final. Whether a fusion is one
// the kernels can finish is asked of product_plan.go, as fusion asked
// it when it made the fusion.

// lowerOutputFusion lowers a kOutput fusion, naming the lowering.
func (c *compiler) lowerOutputFusion(in *hlo.Instruction) (kernelFunc, string, error) {
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
		return c.gemmEpilogue(g, ops, e, c.constantRHS(in.Operands[ops[1]], &g)), "gemm+epilogue", nil
	}
	if k, ok := c.convNCHW(d, in.Operands[ops[1]], ops, e); ok {
		return k, "conv_nchw+epilogue", nil
	}
	if k, ok := c.convDepthwiseNCHW(d, in.Operands[ops[1]], ops, e); ok {
		return k, "conv_dw_nchw+epilogue", nil
	}
	p, relayIn, _, _ := planConv(d)
	return c.convEpilogue(p, relayIn, ops, e, constantWeights(in.Operands[ops[1]])), "conv+epilogue", nil
}

// gemmEpilogue runs a (batched) product finished by e, its B packed
// ahead where pw keeps it.
func (x *compiler) gemmEpilogue(g gemmPlan, ops []int, e *tile.Epilogue, pw *packedWeights) kernelFunc {
	var bound epilogueBinding
	return func(out *hlo.Literal, args []*hlo.Literal) error {
		c := out.Data().([]float32)
		epi, tops, err := bound.bind(e, args, c, g.n, true)
		if err != nil {
			return err
		}
		la, releaseA := tile.AsF32(args[ops[0]], x.threads)
		defer releaseA()
		lb, releaseB := pw.values(args[ops[1]], x.threads)
		defer releaseB()
		if rg, rows, ok := pw.rowsB(args[ops[1]], &g, lb); ok && gemvDot(rg, la, rows, c, x.threads) {
			epi(0, 0, g.batch*g.m, g.n)
			return nil
		}
		if gemvDot(&g, la, lb, c, x.threads) {
			epi(0, 0, g.batch*g.m, g.n)
			return nil
		}
		whole := e.Prog().RowLen() > 0
		if packed := pw.gemmB(args[ops[1]], &g, lb); packed != nil {
			a, b := g.a, g.b
			a.Data, b.Data = la, lb
			return kernels.GemmPackedFinishedF32(g.m, g.n, g.k, a, b, packed, c, g.n, x.threads, epi, tops, whole)
		}
		if whole && tops == nil && wholeBatchEpilogue(&g, x.threads, la, lb, c, epi) {
			return nil
		}
		runBatch(g.batch, g.m, g.n, g.k, x.threads, func(i, threads int) {
			a, b := g.product(i, la, lb)
			kernels.GemmFinishedF32(g.m, g.n, g.k, a, b, c[i*g.m*g.n:], g.n, threads, shiftRows(epi, i*g.m), tops.FromRow(i*g.m), whole)
		})
		return nil
	}
}

// wholeBatchEpilogue runs a batch of products each worker takes whole
// (attention's scores, one product a head) and then the epilogue once
// over the rows of all the products the worker took, where the epilogue
// needs whole rows (a row program: the softmax). Handed each product's
// row blocks as they became final, the program paid its setup, its row
// tiles' gathers and its folds' finishing for every block of 12 rows:
// MiniLM's attention (scores, softmax, and the product by the values)
// over 12 heads of 128×128, one thread, 0.448 → 0.400 ms, and 0.355
// with the span's tiles folding ahead and pipelined (tile.Epilogue.Bind)
// as the softmax's own fusion runs them. The products' rows stay in L2
// meanwhile (768 KB there). It reports false, running nothing, where the
// batch is one product or the workers would split products rather than
// batches.
func wholeBatchEpilogue(g *gemmPlan, threads int, la, lb, c []float32, epi kernels.Epilogue) bool {
	t := batchThreads(g.batch, g.m, g.n, g.k, threads)
	if g.batch < 2 || t == 1 && threads > 1 {
		return false
	}
	mn := g.m * g.n
	kernels.Parallel(t, func(w int) {
		lo, hi := w*g.batch/t, (w+1)*g.batch/t
		for i := lo; i < hi; i++ {
			a, b := g.product(i, la, lb)
			kernels.GemmF32(g.m, g.n, g.k, a, b, c[i*mn:], g.n, false, 1)
		}
		epi(lo*g.m, 0, (hi-lo)*g.m, g.n)
	})
	return true
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
func (c *compiler) convEpilogue(p *kernels.Conv, relayIn *relayout, ops []int, e *tile.Epilogue, cw *constWeights) kernelFunc {
	threads := c.threads
	var bound epilogueBinding
	return func(out *hlo.Literal, args []*hlo.Literal) error {
		c := out.Data().([]float32)
		src, w, cache, operands := convOperands(args[ops[0]], args[ops[1]], relayIn, cw, threads)
		defer operands.release()
		epi, ops, err := bound.bind(e, args, c, p.OutChannels, true)
		if err != nil {
			return err
		}
		return kernels.ConvFinishedF32(relayIn.conv(p), src, w, c, threads, epi, ops, cache)
	}
}

// compileEpilogue compiles what fusion in computes from its product d,
// if the product's kernel can hand it its blocks.
func compileEpilogue(in *hlo.Instruction, fc *hlo.Computation, d *hlo.Instruction) (*tile.Epilogue, error) {
	e, err := tile.NewEpilogue(in, fc, d)
	if err != nil {
		return nil, err
	}
	if !epilogueFits(d, e.Prog(), e.CParam()) {
		return nil, fmt.Errorf("fusion %s: the epilogue reads %s other than element for element", in.Name, d.Name)
	}
	return e, nil
}
