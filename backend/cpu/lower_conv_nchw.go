package cpu

import (
	"slices"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// lowerConvNCHW runs a convolution of channels-first images (ONNX's
// NCHW image, OIHW kernel, NCHW result, 1-D or 2-D) as GEMMs of the
// kernel with the image's implicit im2col matrix, writing the result's
// [channels, pixels] planes as they lie (kernels.ConvNCHWF32): the
// channels-last path copies the image and the result to and from
// channels-last, and its products have the output channels (a detection
// head's 24) as N, the pixels as M. Input dilation (ConvTranspose, at
// stride 1) runs phase by phase without the holes. Depthwise
// convolutions keep their own kernel.
func (c *compiler) lowerConvNCHW(in *hlo.Instruction) (kernelFunc, bool) {
	return c.convNCHW(in, in.Operands[1], []int{0, 1}, nil)
}

// convNCHW runs channels-first convolution d, its image and kernel
// operands ops of the kernel function's, kernel the kernel's
// instruction; e (nil: none) finishes the output's [channels, pixels]
// rows as they are final (lower_epilogue.go).
func (c *compiler) convNCHW(d, kernel *hlo.Instruction, ops []int, e *tile.Epilogue) (kernelFunc, bool) {
	p, kr, ok := planConvNCHW(d)
	if !ok {
		return nil, false
	}
	return c.nchwKernel(kernel, kr, ops, e, p.OutH*p.OutW, func(src, w, c []float32, threads int, epi kernels.Epilogue) {
		kernels.ConvNCHWEpilogueF32(p, src, w, c, threads, epi)
	}), true
}

// nchwKernel is the kernel function of a channels-first convolution
// whose output rows are pixels long: it makes its operands f32 and its
// kernel (operand ops[1], instruction kernel) laid out by kr, binds
// epilogue e and runs conv.
func (x *compiler) nchwKernel(kernel *hlo.Instruction, kr *relayout, ops []int, e *tile.Epilogue, pixels int,
	conv func(src, w, c []float32, threads int, epi kernels.Epilogue)) kernelFunc {
	threads := x.threads
	cw := constantWeights(kernel)
	var bound epilogueBinding
	return func(out *hlo.Literal, args []*hlo.Literal) error {
		src, releaseIn := tile.AsF32(args[ops[0]], threads)
		defer releaseIn()
		w, _, releaseW := cw.weights(args[ops[1]], kr, threads)
		defer releaseW()
		c, finish := tile.F32Into(out, threads)
		var epi kernels.Epilogue
		if e != nil {
			var err error
			if epi, _, err = bound.bind(e, args, c, pixels, false); err != nil {
				return err
			}
		}
		conv(src, w, c, threads, epi)
		finish()
		return nil
	}
}

// nchwMaxOut is the output channels (of a group) from which a
// convolution with a window goes channels-last: with fewer, the direct
// kernel's N is too narrow (ppocr's 96->24 3×3 head, 20 GFLOP/s
// channels-last against 88 here).
const nchwMaxOut = 32

// planConvNCHW describes a channels-first convolution to the kernel,
// with the copy of its kernel into [out, spatial..., in] order (nil for
// a 1×1 kernel, already in that order).
func planConvNCHW(in *hlo.Instruction) (*kernels.ConvNCHW, *relayout, bool) {
	l, r, o := in.Operands[0].Shape, in.Operands[1].Shape, in.Shape
	if !onKernels(l.DType, r.DType, o.DType) {
		return nil, nil, false
	}
	p, ok := nchwGeometry(in)
	if !ok || p.Groups == p.InChannels && p.Groups > 1 || nchwGoesChannelsLast(p) { // depthwise: its own kernel
		return nil, nil, false
	}
	if p.KH*p.KW == 1 {
		return p, nil, true
	}
	return p, nchwKernelRelayout(in.ConvDims(), r), true
}

// nchwGeometry describes a 1-D or 2-D convolution whose image, kernel
// and result lie channels-first (any element types), or reports false.
func nchwGeometry(in *hlo.Instruction) (*kernels.ConvNCHW, bool) {
	dn := in.ConvDims()
	l, r, o := in.Operands[0].Shape, in.Operands[1].Shape, in.Shape
	if dn == nil {
		return nil, false
	}
	ns := len(dn.InputSpatial)
	if ns < 1 || ns > 2 || l.Rank() != ns+2 || r.Rank() != ns+2 || o.Rank() != ns+2 || !nchwLayout(dn) {
		return nil, false
	}
	if bg, ok := in.Int("batch_group_count"); ok && bg != 1 {
		return nil, false
	}
	groups := 1
	if g, ok := in.Int("feature_group_count"); ok {
		groups = int(g)
	}
	p := &kernels.ConvNCHW{Batch: int(l.Dims[0]), InChannels: int(l.Dims[1]), OutChannels: int(o.Dims[1]), Groups: groups,
		InH: 1, InW: 1, OutH: 1, OutW: 1, KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, LhsH: 1, LhsW: 1}
	if groups < 1 || p.InChannels%groups != 0 || p.OutChannels%groups != 0 || int(r.Dims[1]) != p.InChannels/groups ||
		!nchwSpatial(p, in.Window(), ns, l, r, o) {
		return nil, false
	}
	return p, true
}

// nchwLayout reports whether image, kernel and result all lie
// channels-first: batch (or output channel) 0, feature 1, then the
// spatial dimensions in order.
func nchwLayout(dn *hlo.ConvDimNumbers) bool {
	first := func(a, b int64, sp []int64) bool {
		if a != 0 || b != 1 {
			return false
		}
		for d, s := range sp {
			if s != int64(d+2) {
				return false
			}
		}
		return true
	}
	return first(dn.InputBatch, dn.InputFeature, dn.InputSpatial) && first(dn.KernelOutput, dn.KernelInput, dn.KernelSpatial) &&
		first(dn.OutputBatch, dn.OutputFeature, dn.OutputSpatial)
}

// nchwSpatial fills in p's sizes, strides, padding and dilations for
// the ns spatial dimensions of window w (nil: unit), or reports false
// for a window the kernel does not run: reversed, or dilating the input
// at a stride.
func nchwSpatial(p *kernels.ConvNCHW, w *hlo.Window, ns int, l, r, o hlo.Shape) bool {
	for d := range ns {
		wd := hlo.WindowDim{Size: r.Dims[2+d], Stride: 1, LhsDilation: 1, RhsDilation: 1}
		if w != nil && d < len(w.Dims) {
			wd = w.Dims[d]
		}
		lhs := int(max(wd.LhsDilation, 1))
		if wd.Reversal || lhs != 1 && max(wd.Stride, 1) != 1 {
			return false
		}
		// The last spatial dimension is the width; a 1-D convolution's
		// height is 1.
		in, out, k, ld := &p.InW, &p.OutW, &p.KW, &p.LhsW
		st, pad, dil := &p.StrideW, &p.PadW, &p.DilW
		if ns == 2 && d == 0 {
			in, out, k, ld = &p.InH, &p.OutH, &p.KH, &p.LhsH
			st, pad, dil = &p.StrideH, &p.PadH, &p.DilH
		}
		*in, *out, *k, *ld = int(l.Dims[2+d]), int(o.Dims[2+d]), int(r.Dims[2+d]), lhs
		*st, *pad, *dil = int(max(wd.Stride, 1)), int(wd.PadLo), int(max(wd.RhsDilation, 1))
	}
	return true
}

// nchwGoesChannelsLast reports whether convolution p runs faster
// copied channels-last than on this kernel.
func nchwGoesChannelsLast(p *kernels.ConvNCHW) bool {
	groups := p.Groups
	if p.StrideW != 1 && p.InChannels/groups < kernels.DirectMinChannels {
		// A strided first layer (an RGB image): its sliver rows are
		// gathers of a few channels each; copied channels-last, the
		// direct kernel reads its rows of taps as long runs (a ResNet
		// stem 6x faster).
		return true
	}
	pointwise := p.KH*p.KW == 1 && p.StrideH == 1 && p.StrideW == 1 && p.PadH == 0 && p.PadW == 0 &&
		p.InH == p.OutH && p.InW == p.OutW
	// Enough channels on both sides: the channels-last direct kernel
	// beats this one's packing by more than its two copies cost
	// (BenchmarkConvNCHW, 3×3 of 32-256 channels at stride 1 and 2:
	// 1.5-2x the GFLOP/s before the copies).
	return !pointwise && p.LhsH == 1 && p.LhsW == 1 && p.OutChannels/groups >= nchwMaxOut &&
		p.InChannels/groups >= kernels.DirectMinChannels
}

// nchwKernelRelayout is the copy of OIHW kernel r into [out,
// spatial..., in] order.
func nchwKernelRelayout(dn *hlo.ConvDimNumbers, r hlo.Shape) *relayout {
	order := append([]int64{0}, dn.KernelSpatial...)
	order = append(order, 1)
	dims := make([]int64, len(order))
	src := make([]int, len(order))
	rs := hlo.RowMajorStrides(r.Dims)
	for i, d := range order {
		dims[i], src[i] = r.Dims[d], rs[d]
	}
	kr := &relayout{b: newBox(0, dims, hlo.RowMajorStrides(dims), slices.Clone(src))}
	kr.empty = !kr.b.finish()
	return kr
}

// lowerConvDepthwiseNCHW runs a depthwise convolution of a channels-first
// image into a channels-first result strip by strip
// (kernels.ConvDepthwiseNCHWF32), its kernel copied channels-minor
// (once, for a constant).
func (c *compiler) lowerConvDepthwiseNCHW(in *hlo.Instruction) (kernelFunc, bool) {
	return c.convDepthwiseNCHW(in, in.Operands[1], []int{0, 1}, nil)
}

// planConvDepthwiseNCHW describes a depthwise convolution of a
// channels-first image into a channels-first result to
// kernels.ConvDepthwiseNCHWF32, with the copy of its kernel.
func planConvDepthwiseNCHW(in *hlo.Instruction) (*kernels.Conv, *relayout, bool) {
	p, relayIn, _, ok := planConv(in)
	if !ok || relayIn == nil || relayIn.empty {
		return nil, nil, false
	}
	q := *p
	if kr := relayIn.kernel; kr != nil {
		c := relayIn.channelsLast
		q.KernelSpatialStrides, q.KernelInStride, q.KernelOutStride = c.KernelSpatialStrides, c.KernelInStride, c.KernelOutStride
	}
	dn := in.ConvDims()
	if !kernels.CanConvDepthwiseNCHW(&q) || dn.OutputBatch != 0 || dn.OutputFeature != 1 ||
		!slices.Equal(dn.OutputSpatial, []int64{2, 3}) {
		return nil, nil, false
	}
	return &q, relayIn.kernel, true
}

// convDepthwiseNCHW is convNCHW for a depthwise convolution.
func (c *compiler) convDepthwiseNCHW(d, kernel *hlo.Instruction, ops []int, e *tile.Epilogue) (kernelFunc, bool) {
	q, kr, ok := planConvDepthwiseNCHW(d)
	if !ok {
		return nil, false
	}
	return c.nchwKernel(kernel, kr, ops, e, q.OutSpatial[0]*q.OutSpatial[1], func(src, w, c []float32, threads int, epi kernels.Epilogue) {
		kernels.ConvDepthwiseNCHWEpilogueF32(q, src, w, c, threads, epi)
	}), true
}
