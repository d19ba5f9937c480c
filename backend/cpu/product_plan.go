package cpu

import (
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// Product planning shared by output fusion (fusion_epilogue.go), which
// asks whether a product and its epilogue will lower together, and by
// their lowering (lower_epilogue.go), which checks the same before it
// commits: both ask here, so the fusion policy and the kernels that
// carry it out agree without either calling into the other. The plans
// themselves (planDot, planConv, planConvNCHW, ...) stay beside the
// lowering they configure.

// kOutput is the fusion kind of a product with its epilogue: output
// fusion makes it, the lowering dispatches on it.
const kOutput = "kOutput"

// outputProducer: a product whose kernel can hand its output blocks to
// an epilogue.
func outputProducer(d *hlo.Instruction) bool {
	for _, o := range d.Operands {
		if o.Shape.DType != hlo.F32 {
			return false
		}
	}
	if d.Shape.DType != hlo.F32 || d.Shape.IsDynamic() {
		return false
	}
	switch d.Opcode {
	case hlo.OpDot:
		_, ok := planDot(d)
		return ok
	case hlo.OpConvolution:
		if convNCHWProducer(d) {
			return true
		}
		_, _, relayOut, ok := planConv(d)
		return ok && relayOut == nil
	}
	return false
}

// convNCHWProducer reports whether convolution d runs on a
// channels-first kernel (lower_conv_nchw.go), whose output is the matrix
// [batch·channels, pixels] an epilogue finishes by rows of channels.
func convNCHWProducer(d *hlo.Instruction) bool {
	if _, _, ok := planConvNCHW(d); ok {
		return true
	}
	_, _, ok := planConvDepthwiseNCHW(d)
	return ok
}

// epilogueFits reports whether program p can finish product d's blocks
// as the kernel hands them over: it reads d (its parameter k) only at
// the output's own positions, and a row program (softmax over the
// product's rows) only gets whole rows.
func epilogueFits(d *hlo.Instruction, p *tile.Prog, k int) bool {
	if p.Gathers(k) {
		return false
	}
	if p.RowLen() == 0 {
		return true
	}
	switch d.Opcode {
	case hlo.OpDot:
		g, _ := planDot(d)
		return p.RowLen() == g.n && kernels.GemmWholeRows(g.n)
	case hlo.OpConvolution:
		if convNCHWProducer(d) {
			return false // its rows are channels, not the fusion's rows
		}
		c, _, _, _ := planConv(d)
		return p.RowLen() == c.OutChannels && kernels.ConvWholeRows(c)
	}
	return false
}

// runsInline reports whether product d's kernel runs on one goroutine
// of threads (more than one), and so would its epilogue, within an
// execution: the GEMM and the channels-last convolutions split from a
// hotShare of their cold sizes on while an execution keeps the workers
// polling (kernels.GemmRunsInline); the channels-first kernels keep
// their cold sizes. A batch of products each too small to split runs on
// every thread where the workers take whole products (runBatch), and so
// does the epilogue (wholeBatchEpilogue).
func runsInline(d *hlo.Instruction, threads int) bool {
	if d.Opcode == hlo.OpDot {
		g, _ := planDot(d)
		return kernels.GemmRunsInline(g.m, g.n, g.k, true) && batchThreads(g.batch, g.m, g.n, g.k, threads) == 1
	}
	if p, _, ok := planConvNCHW(d); ok {
		return kernels.ConvNCHWRunsInline(p)
	}
	if q, _, ok := planConvDepthwiseNCHW(d); ok {
		return kernels.ConvDepthwiseNCHWRunsInline(q)
	}
	p, relayIn, _, _ := planConv(d)
	return kernels.ConvRunsInline(relayIn.conv(p), true)
}
