package cpu

import (
	"slices"
	"sync"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// lowerConv maps an f32 (or narrow-float) convolution onto
// kernels.ConvF32, which reads its operands through strides, so most
// dimension numbers cost nothing. Two layouts are copied first:
//
//   - an input whose feature dimension is not innermost, when there are
//     enough channels for the direct kernel: its packers would otherwise
//     gather one float per cache line. Backprop makes such inputs: the
//     kernel gradient is a convolution whose "features" are the batch's
//     examples (JAX's and autodiff's b↔f swapped dimension numbers), and
//     a copy to channels-last made that convolution 2-3x faster;
//   - an output not in (batch, spatial..., feature) order, which the
//     kernel cannot write: it goes through a scratch buffer and a copy.
//
// Window reversal and batch groups go to the generic kernel.
func (c *compiler) lowerConv(in *hlo.Instruction) (kernelFunc, bool) {
	if k, ok := c.lowerConvNCHW(in); ok {
		return k, true
	}
	if k, ok := c.lowerConvDepthwiseNCHW(in); ok {
		return k, true
	}
	p, relayIn, relayOut, ok := planConv(in)
	if !ok {
		return nil, false
	}
	threads := c.threads
	cw := constantWeights(in.Operands[1])
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		src, w, cache, operands := convOperands(ops[0], ops[1], relayIn, cw, threads)
		defer operands.release()
		if f, narrow, _ := tile.KernelType(out.DType()); narrow && relayOut == nil {
			// Each block of the f32 result is rounded into out as soon as
			// it is final, while it is in cache, not in a pass after.
			dst, round := roundingBlocks(f, out, p.OutChannels)
			defer kernels.PutF32(dst)
			return kernels.ConvPackedF32(relayIn.conv(p), src, w, dst, threads, round, cache)
		}
		c, finish := tile.F32Into(out, threads)
		dst := c
		if relayOut != nil {
			dst = kernels.GetF32(len(c))
			defer kernels.PutF32(dst)
		}
		err := kernels.ConvPackedF32(relayIn.conv(p), src, w, dst, threads, nil, cache)
		if relayOut != nil {
			relayOut.copy(c, dst, threads)
		}
		finish()
		return err
	}, true
}

// roundingBlocks returns pooled f32 scratch for a convolution's result
// (put it back with kernels.PutF32) and the epilogue rounding each final
// block of it, rows ldc apart, into out's narrow format f while the block
// is in cache, not in a pass after.
func roundingBlocks(f minifloat.Format, out *hlo.Literal, ldc int) ([]float32, kernels.Epilogue) {
	bits := out.Data().([]uint16)
	dst := kernels.GetF32(len(bits))
	return dst, func(i, j, rows, cols int) {
		for r := i; r < i+rows; r++ {
			o := r*ldc + j
			tile.EncodeNarrow(f, bits[o:o+cols], dst[o:o+cols])
		}
	}
}

// convOperands returns a convolution's input and kernel as f32 (the input
// relaid out if relayIn says so) and the kernel's panel cache; release
// hands back the scratch they took.
func convOperands(in, kernel *hlo.Literal, relayIn *relayout, cw *constWeights, threads int) (src, w []float32, cache *kernels.ConvKernelCache, release operandRelease) {
	src, release.in = tile.AsF32(in, threads)
	var kr *relayout
	if relayIn != nil {
		kr = relayIn.kernel
	}
	w, cache, release.w = cw.weights(kernel, kr, threads)
	if relayIn != nil && !relayIn.empty {
		buf := kernels.GetF32(len(src))
		relayIn.copy(buf, src, threads)
		release.in()
		src, release.in = buf, func() { kernels.PutF32(buf) }
	}
	return src, w, cache, release
}

// operandRelease hands back what convOperands took for the input and for
// the kernel (a value, not a closure over both: a closure was an
// allocation every call).
type operandRelease struct{ in, w func() }

func (r operandRelease) release() { r.in(); r.w() }

// constWeights keeps what a convolution derives from its kernel operand
// across calls. For a constant: its values as f32 (widened once if
// narrow) and its packed panels (a model's weights are constants:
// widening and packing them on every call was a tenth of
// ssd_mobilenet's time). For any kernel, the direct kernel's cuts of its
// output rows, which depend on the shapes and the image's address only
// (kernels.NewConvCutCache).
type constWeights struct {
	mu       sync.Mutex
	lit      *hlo.Literal // the literal f32 came from
	f32      []float32    // relaid out when the plan copies the kernel
	cache    kernels.ConvKernelCache
	variable *kernels.ConvKernelCache // a kernel that is not a constant: cuts only
}

// constantWeights returns the keeper for kernel operand w: of its values
// and panels when it is a constant with its values (not elided), else of
// the cuts only.
func constantWeights(w *hlo.Instruction) *constWeights {
	if w.Opcode != hlo.OpConstant || w.Literal == nil || w.Literal.IsElided() {
		return &constWeights{variable: kernels.NewConvCutCache()}
	}
	return &constWeights{}
}

// weights returns the kernel's values as f32 and a cache for the
// convolution: for a constant, its values and panels kept across calls;
// for another kernel (or no keeper), its values widened into scratch for
// this call, which release hands back, and a cache of cuts only (nil
// without a keeper).
func (c *constWeights) weights(lit *hlo.Literal, kr *relayout, threads int) (w []float32, cache *kernels.ConvKernelCache, release func()) {
	if c == nil || c.variable != nil {
		w, release = tile.AsF32(lit, threads)
		if kr != nil {
			buf := kernels.GetF32(len(w))
			kr.copy(buf, w, threads)
			release()
			w, release = buf, func() { kernels.PutF32(buf) }
		}
		if c == nil {
			return w, nil, release
		}
		return w, c.variable, release
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lit != lit {
		if d, ok := lit.Data().([]float32); ok {
			c.f32 = d
		} else {
			f, _, _ := tile.KernelType(lit.DType())
			bits := lit.Data().([]uint16)
			c.f32 = make([]float32, len(bits))
			tile.DecodeNarrow(f, c.f32, bits)
		}
		if kr != nil {
			t := make([]float32, len(c.f32))
			kr.copy(t, c.f32, 1)
			c.f32 = t
		}
		c.lit = lit
	}
	return c.f32, &c.cache, func() {}
}

// planConv describes a convolution lowerConv takes to the kernel, with
// the copies its input and output need (nil: none).
func planConv(in *hlo.Instruction) (p *kernels.Conv, relayIn, relayOut *relayout, ok bool) {
	dn, w := in.ConvDims(), in.Window()
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	if dn == nil || !onKernels(l.DType, r.DType, in.Shape.DType) {
		return nil, nil, nil, false
	}
	if bg, ok := in.Int("batch_group_count"); ok && bg != 1 {
		return nil, nil, nil, false
	}
	if p, ok = convParams(in, dn, w, l, r); !ok {
		return nil, nil, nil, false
	}
	relayIn = inputRelayout(p, dn, l)
	if kr, q := kernelRelayout(relayIn.conv(p), dn, r); kr != nil {
		if relayIn == nil {
			relayIn = &relayout{empty: true, channelsLast: q}
		} else {
			relayIn.channelsLast = q
		}
		relayIn.kernel = kr
	}
	return p, relayIn, outputRelayout(dn, in.Shape), true
}

// kernelRelayout plans the copy of a depthwise convolution's kernel into
// (spatial..., input feature, output feature) order, the output channels
// innermost as the depthwise kernel reads them, when they are not
// already (ONNX's OIHW kernels); it returns the copy and p reading it,
// or nil.
func kernelRelayout(p *kernels.Conv, dn *hlo.ConvDimNumbers, r hlo.Shape) (*relayout, *kernels.Conv) {
	if p.Groups != p.InChannels || p.Groups <= 1 || p.InChannelStride != 1 || p.KernelOutStride == 1 {
		return nil, nil
	}
	kr, dst := permutedCopy(r, append(slices.Clone(dn.KernelSpatial), dn.KernelInput, dn.KernelOutput))
	kr.empty = !kr.b.finish()
	q := *p
	ns := len(dn.KernelSpatial)
	q.KernelSpatialStrides = slices.Clone(dst[:ns])
	q.KernelInStride, q.KernelOutStride = dst[ns], dst[ns+1]
	return kr, &q
}

// permutedCopy plans the copy of an array of shape s into the order of
// its dimensions listed in order, returning it and the copy's strides.
func permutedCopy(s hlo.Shape, order []int64) (*relayout, []int) {
	dims := make([]int64, len(order))
	src := make([]int, len(order))
	strides := hlo.RowMajorStrides(s.Dims)
	for i, d := range order {
		dims[i], src[i] = s.Dims[d], strides[d]
	}
	dst := hlo.RowMajorStrides(dims)
	return &relayout{b: newBox(0, dims, dst, src)}, dst
}

// convParams describes the convolution to the kernel with the operands'
// own strides.
func convParams(in *hlo.Instruction, dn *hlo.ConvDimNumbers, w *hlo.Window, l, r hlo.Shape) (*kernels.Conv, bool) {
	ns := len(dn.InputSpatial)
	groups := 1
	if g, ok := in.Int("feature_group_count"); ok {
		groups = int(g)
	}
	ls, rs := hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(r.Dims)
	p := &kernels.Conv{
		Batch: int(l.Dims[dn.InputBatch]), InChannels: int(l.Dims[dn.InputFeature]),
		OutChannels: int(in.Shape.Dims[dn.OutputFeature]), Groups: groups,
		InBatchStride: ls[dn.InputBatch], InChannelStride: ls[dn.InputFeature],
		KernelInStride: rs[dn.KernelInput], KernelOutStride: rs[dn.KernelOutput],
	}
	for d := range ns {
		var wd hlo.WindowDim
		if w != nil && d < len(w.Dims) {
			wd = w.Dims[d]
		} else {
			wd = hlo.WindowDim{Size: r.Dims[dn.KernelSpatial[d]], Stride: 1, LhsDilation: 1, RhsDilation: 1}
		}
		if wd.Reversal {
			return nil, false
		}
		p.InSpatial = append(p.InSpatial, int(l.Dims[dn.InputSpatial[d]]))
		p.OutSpatial = append(p.OutSpatial, int(in.Shape.Dims[dn.OutputSpatial[d]]))
		p.Kernel = append(p.Kernel, int(r.Dims[dn.KernelSpatial[d]]))
		p.Stride = append(p.Stride, int(max(wd.Stride, 1)))
		p.PadLo = append(p.PadLo, int(wd.PadLo))
		p.LhsDil = append(p.LhsDil, int(max(wd.LhsDilation, 1)))
		p.RhsDil = append(p.RhsDil, int(max(wd.RhsDilation, 1)))
		p.InSpatialStrides = append(p.InSpatialStrides, ls[dn.InputSpatial[d]])
		p.KernelSpatialStrides = append(p.KernelSpatialStrides, rs[dn.KernelSpatial[d]])
	}
	p.InSpatial, p.OutSpatial = slices.Clip(p.InSpatial), slices.Clip(p.OutSpatial)
	return p, true
}

// relayout is a copy of an f32 array into another dimension order, and
// for an input the convolution parameters that read the copy.
type relayout struct {
	b     box
	empty bool
	// channelsLast, for an input, is p with the copy's strides (and the
	// kernel copy's).
	channelsLast *kernels.Conv
	// kernel, for an input, is the copy of the kernel the convolution
	// reads (nil: none).
	kernel *relayout
	// fast, when set, is the copy for a channels-first image (NCHW to
	// NHWC or back), blocked so the channels-last side stays in cache:
	// the general box copy ran at about 1 GB/s on these.
	fast func(dst, src []float32, threads int)
}

func (r *relayout) copy(dst, src []float32, threads int) {
	if r.empty {
		return
	}
	if r.fast != nil {
		r.fast(dst, src, threads)
		return
	}
	splitCopy(kernels.Words(dst), kernels.Words(src), &r.b, threads)
}

// conv returns the parameters to run the kernel with: p itself when the
// input is read in place.
func (r *relayout) conv(p *kernels.Conv) *kernels.Conv {
	if r == nil {
		return p
	}
	return r.channelsLast
}

// inputRelayout plans the copy of an input whose feature dimension is not
// innermost into (batch, spatial..., feature) order; nil when the input
// is read in place.
func inputRelayout(p *kernels.Conv, dn *hlo.ConvDimNumbers, l hlo.Shape) *relayout {
	if p.InChannelStride == 1 {
		return nil
	}
	// Few channels are worth the copy only for the depthwise kernel or
	// the direct one's long runs of taps (a first layer's RGB image);
	// and the direct one stages such an image channels-last itself, with
	// its padding, in one pass (copying it here first was a third of a
	// 3-channel first layer).
	depthwise := p.Groups == p.InChannels && p.Groups > 1
	few := p.InChannels/p.Groups < kernels.DirectMinChannels && !depthwise
	if few && kernels.ConvRunsDirect(p) {
		return nil
	}
	r, dst := permutedCopy(l, append(append([]int64{dn.InputBatch}, dn.InputSpatial...), dn.InputFeature))
	q := *p
	q.InBatchStride, q.InChannelStride = dst[0], 1
	q.InSpatialStrides = slices.Clone(dst[1 : len(dst)-1])
	if few && !kernels.ConvRunsDirect(&q) {
		return nil
	}
	r.channelsLast = &q
	r.empty = !r.b.finish()
	if batch, c, n, ok := channelsFirst(l.Dims, dn.InputBatch, dn.InputFeature, dn.InputSpatial); ok {
		r.fast = func(dst, src []float32, threads int) { kernels.ChannelsLastF32(dst, src, batch, c, n, threads) }
	}
	return r
}

// channelsFirst reports whether dims with these batch, feature and
// spatial dimensions are in (batch, feature, spatial...) order, and their
// batch, channels and pixels.
func channelsFirst(dims []int64, b, f int64, sp []int64) (batch, c, n int, ok bool) {
	if b != 0 || f != 1 {
		return 0, 0, 0, false
	}
	n = 1
	for d, s := range sp {
		if s != int64(d+2) {
			return 0, 0, 0, false
		}
		n *= int(dims[s])
	}
	return int(dims[0]), int(dims[1]), n, true
}

// outputRelayout plans the copy of the kernel's (batch, spatial...,
// feature) result into the instruction's dimension order; nil when they
// agree.
func outputRelayout(dn *hlo.ConvDimNumbers, s hlo.Shape) *relayout {
	order := append(append([]int64{dn.OutputBatch}, dn.OutputSpatial...), dn.OutputFeature)
	if leading(order) {
		return nil
	}
	dims := make([]int64, len(order))
	dst := make([]int, len(order))
	os := hlo.RowMajorStrides(s.Dims)
	for i, d := range order {
		dims[i], dst[i] = s.Dims[d], os[d]
	}
	r := &relayout{b: newBox(0, dims, dst, hlo.RowMajorStrides(dims))}
	r.empty = !r.b.finish()
	if batch, c, n, ok := channelsFirst(s.Dims, dn.OutputBatch, dn.OutputFeature, dn.OutputSpatial); ok {
		r.fast = func(dst, src []float32, threads int) { kernels.ChannelsFirstF32(dst, src, batch, c, n, threads) }
	}
	return r
}
