package cpu

import (
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Integer convolution fusion: a channels-first s32 convolution of 8-bit
// values widened, zero points subtracted or not, becomes a kCustom fusion
// run on the 8-bit GEMM (lowerInt8ConvFusion, kernels.ConvInt8NCHW), as
// the integer dot fusion does for dots. That is how ONNX's ConvInteger
// and QLinearConv arrive:
//
//	convolution(convert(x8) - broadcast(zx), convert(w8) - broadcast(zw))
//
// with x8 u8 or s8 [N, C, H, W] (or [N, C, W]), zx one value, w8 s8 or u8
// (or an s32 constant whose values fit 8 bits) [O, C/G, KH, KW] and zw
// one value or one per output channel. Anything else (another layout,
// input dilation, a zero point varying over the image) keeps the generic
// loop.

// fuseInt8Convs rewrites c, returning the number of fusions made. (An
// s32 constant kernel, zero points folded in by the standard passes,
// splits back into 8-bit values less one zero point per output channel,
// as a dot's constant operand does: fusion_int8_const.go.)
func fuseInt8Convs(m *hlo.Module, c *hlo.Computation, names *hlo.NameSet) (int, error) {
	return fuseInt8Products(m, c, names, int8ConvOperands)
}

// int8ConvOperands reports whether cv is an integer convolution the
// fusion takes and returns its image and kernel operands.
func int8ConvOperands(cv *hlo.Instruction) (x, w int8Operand, ok bool) {
	if cv.Opcode != hlo.OpConvolution || cv.Shape.DType != hlo.S32 || len(cv.Operands) != 2 ||
		len(cv.ControlPredecessors) > 0 || cv.Operands[0] == cv.Operands[1] {
		return x, w, false
	}
	if _, ok := planInt8Conv(cv); !ok {
		return x, w, false
	}
	rank := int64(cv.Shape.Rank())
	// A zero point may vary only along dimensions the sums do not run
	// over: for the image, none the kernel takes one value (below); for
	// the kernel, its output channels.
	notBatch, notOut := make([]int64, 0, rank), make([]int64, 0, rank)
	for d := int64(1); d < rank; d++ {
		notBatch, notOut = append(notBatch, d), append(notOut, d)
	}
	x, okX := int8OperandOf(cv.Operands[0], notBatch)
	w, okW := int8OperandOf(cv.Operands[1], notOut)
	oneZero := x.zp == nil || x.zp.Operands[0].Shape.Rank() == 0
	if x.split != nil && x.split.z != nil && x.split.z.Shape().Rank() != 0 {
		oneZero = false // a constant image split per example
	}
	if !okX || !okW || x.wide == w.wide || !oneZero {
		return x, w, false
	}
	return x, w, true
}

// planInt8Conv describes cv's geometry to the kernel (zero points and
// image type unset), or reports false where the kernel does not run it:
// not channels-first, input dilation, negative padding, a reversed
// window, batch groups.
func planInt8Conv(cv *hlo.Instruction) (*kernels.ConvInt8, bool) {
	if !plainArray(cv.Operands[0].Shape) || !plainArray(cv.Operands[1].Shape) || !plainArray(cv.Shape) {
		return nil, false
	}
	p, ok := nchwGeometry(cv)
	if !ok || p.LhsH != 1 || p.LhsW != 1 || p.PadH < 0 || p.PadW < 0 {
		return nil, false
	}
	return &kernels.ConvInt8{Batch: p.Batch, InChannels: p.InChannels, OutChannels: p.OutChannels, Groups: p.Groups,
		InH: p.InH, InW: p.InW, OutH: p.OutH, OutW: p.OutW, KH: p.KH, KW: p.KW,
		StrideH: p.StrideH, StrideW: p.StrideW, PadH: p.PadH, PadW: p.PadW, DilH: p.DilH, DilW: p.DilW}, true
}
