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

// fuseInt8Convs rewrites c, returning the number of fusions made.
func fuseInt8Convs(m *hlo.Module, c *hlo.Computation, names *hlo.NameSet) (int, error) {
	split := false
	for _, cv := range c.Instructions {
		if cv.Opcode == hlo.OpConvolution && cv.Shape.DType == hlo.S32 {
			split = splitKernelConstant(c, cv, names) || split
		}
	}
	if split {
		if err := c.SortTopologically(); err != nil { // the split kernels were appended
			return 0, err
		}
	}
	return fuseInt8Products(m, c, names, int8ConvOperands)
}

// splitKernelConstant rewrites cv's kernel when it is an s32 constant
// whose values do not fit 8 bits but each output channel's do within an
// offset (the standard passes fold a constant kernel's zero points in:
// w − zw of a u8 kernel spans −255…255, each channel at most 256 values):
// it becomes convert(w8) − broadcast(zw) with w8 the s8 values less each
// channel's offset, zw minus the offsets, which the fusion then takes.
func splitKernelConstant(c *hlo.Computation, cv *hlo.Instruction, names *hlo.NameSet) bool {
	w := cv.Operands[1]
	if w.Opcode != hlo.OpConstant || w.Literal == nil || w.Literal.IsElided() || w.Shape.DType != hlo.S32 ||
		!plainArray(w.Shape) || w.Shape.Rank() < 3 || narrowType(w) != hlo.Invalid || len(w.ControlPredecessors) > 0 {
		return false
	}
	if _, ok := planInt8Conv(cv); !ok {
		return false
	}
	vals := w.Literal.Data().([]int32)
	outs := int(w.Shape.Dims[0])
	per := len(vals) / max(outs, 1)
	offs := make([]int32, outs)
	for o := range outs {
		lo, hi := vals[o*per], vals[o*per]
		for _, v := range vals[o*per : (o+1)*per] {
			lo, hi = min(lo, v), max(hi, v)
		}
		if int64(hi)-int64(lo) > 255 {
			return false
		}
		offs[o] = lo + 128 // w − offs[o] lies in [−128, 127]
	}
	w8 := hlo.NewLiteral(w.Shape.WithDType(hlo.S8))
	z := hlo.NewLiteral(hlo.ArrayShape(hlo.S32, int64(outs)))
	for o := range outs {
		for i := o * per; i < (o+1)*per; i++ {
			w8.SetInt64(i, int64(vals[i]-offs[o]))
		}
		z.SetInt64(o, -int64(offs[o])) // w = w8 − (−offs)
	}
	add := func(op hlo.Opcode, name string, s hlo.Shape, lit *hlo.Literal, attrs []hlo.Attr, operands ...*hlo.Instruction) *hlo.Instruction {
		return c.AddInstruction(&hlo.Instruction{Name: names.Unique(w.Name + name), Opcode: op, Shape: s, Literal: lit, Attrs: attrs, Operands: operands})
	}
	narrow := add(hlo.OpConstant, ".narrow", w8.Shape(), w8, nil)
	wide := add(hlo.OpConvert, ".widen", w.Shape.Clone(), nil, nil, narrow)
	zc := add(hlo.OpConstant, ".zero", z.Shape(), z, nil)
	zb := add(hlo.OpBroadcast, ".zeros", w.Shape.Clone(), nil, []hlo.Attr{{Name: "dimensions", Value: []int64{0}}}, zc)
	cv.Operands[1] = add(hlo.OpSubtract, ".split", w.Shape.Clone(), nil, nil, wide, zb)
	return true
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
	if !okX || !okW || x.wide == w.wide || x.zp != nil && x.zp.Operands[0].Shape.Rank() != 0 {
		return x, w, false
	}
	return x, w, true
}

// planInt8Conv describes cv's geometry to the kernel (zero points and
// image type unset), or reports false where the kernel does not run it:
// not channels-first, input dilation, negative padding, a reversed
// window, batch groups.
func planInt8Conv(cv *hlo.Instruction) (*kernels.ConvInt8, bool) {
	dn := cv.ConvDims()
	l, r, o := cv.Operands[0].Shape, cv.Operands[1].Shape, cv.Shape
	if dn == nil || !plainArray(l) || !plainArray(r) || !plainArray(o) {
		return nil, false
	}
	ns := len(dn.InputSpatial)
	if ns < 1 || ns > 2 || l.Rank() != ns+2 || r.Rank() != ns+2 || o.Rank() != ns+2 || !nchwLayout(dn) {
		return nil, false
	}
	if bg, ok := cv.Int("batch_group_count"); ok && bg != 1 {
		return nil, false
	}
	groups := 1
	if g, ok := cv.Int("feature_group_count"); ok {
		groups = int(g)
	}
	p := &kernels.ConvNCHW{Batch: int(l.Dims[0]), InChannels: int(l.Dims[1]), OutChannels: int(o.Dims[1]), Groups: groups,
		InH: 1, InW: 1, OutH: 1, OutW: 1, KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, LhsH: 1, LhsW: 1}
	if groups < 1 || p.InChannels%groups != 0 || p.OutChannels%groups != 0 || int(r.Dims[1]) != p.InChannels/groups ||
		!nchwSpatial(p, cv.Window(), ns, l, r, o) || p.LhsH != 1 || p.LhsW != 1 || p.PadH < 0 || p.PadW < 0 {
		return nil, false
	}
	return &kernels.ConvInt8{Batch: p.Batch, InChannels: p.InChannels, OutChannels: p.OutChannels, Groups: groups,
		InH: p.InH, InW: p.InW, OutH: p.OutH, OutW: p.OutW, KH: p.KH, KW: p.KW,
		StrideH: p.StrideH, StrideW: p.StrideW, PadH: p.PadH, PadW: p.PadW, DilH: p.DilH, DilW: p.DilW}, true
}
