package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// Convolutions. Conv lowers to one HLO convolution, channels-last between
// transposes (see ConvChannelsLast), with the bias as a broadcast add;
// a depthwise Conv (one input channel per group) too, unless
// ConvDepthwiseSlices has it sum shifted slices times per-channel weights
// instead. ConvTranspose
// is a convolution of the stride-dilated input with the flipped kernel, or,
// when its windows do not overlap (kernel ≤ stride), one matrix product
// laid out as tiles.

func init() {
	Register(Op{Name: "Conv", Lower: lowerConv, Types: convFloatTypes})
	Register(Op{Name: "ConvTranspose", Lower: lowerConvTranspose, Types: convFloatTypes})
}

// ConvChannelsLast makes convolutions run channels-last (N...C): the
// input transposed there, the convolution and its bias, the result
// transposed back. The cpu backend's convolution kernels want channels
// innermost (they copy NC... operands to that layout themselves), and the
// optimizer cancels the transpose pairs between consecutive convolutions
// where only elementwise ops with scalar operands separate them (ReLU,
// residual adds): ResNet-50 ran ~30% faster so than with NC... dimension
// numbers.
var ConvChannelsLast = true

// ConvDepthwiseSlices lowers depthwise convolutions (one input channel per
// group) as sums of shifted slices times per-channel weights, elementwise
// work that fuses into one loop, instead of one grouped convolution. That
// was the faster form while the cpu backend ran grouped convolutions as
// many tiny ones; with its depthwise kernels the convolution is the faster
// (PaddleOCR's det and cls, 2 threads on Zen 4: 43 -> 29 ms and 5.8 -> 4.3 ms
// best runs), so it is off.
var ConvDepthwiseSlices = false

// convGeneralOnly turns the special lowerings (tiles, depthwise) off, for tests that compare them with the general convolution.
var convGeneralOnly = false

// convFloatTypes are the element types of the float-only ops of this
// family.
var convFloatTypes = []onnx.ElemType{onnx.Float, onnx.Double, onnx.Float16, onnx.BFloat16}

// convSpatialAttrs are the per-spatial-dimension attributes shared by
// convolutions and pools, with their defaults filled in.
type convSpatialAttrs struct {
	kernel, strides, dilations []int64
	padLo, padHi               []int64
	autoPad                    string
}

// convOnes is n ones.
func convOnes(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// convReadAttrs reads strides, dilations and explicit pads for n spatial
// dimensions with the given kernel; auto_pad is resolved by the caller
// (convAutoPads) since pools and convolutions size their outputs apart.
func convReadAttrs(c *Ctx, n int, kernel []int64) (*convSpatialAttrs, error) {
	a := &convSpatialAttrs{kernel: kernel, autoPad: c.Node.Str("auto_pad", "NOTSET")}
	if len(kernel) != n {
		return nil, c.Errorf("kernel has %d spatial dimensions, input %d", len(kernel), n)
	}
	a.strides = c.Node.Ints("strides")
	if len(a.strides) == 0 {
		a.strides = convOnes(n)
	}
	a.dilations = c.Node.Ints("dilations")
	if len(a.dilations) == 0 {
		a.dilations = convOnes(n)
	}
	if len(a.strides) != n || len(a.dilations) != n {
		return nil, c.Errorf("strides %v or dilations %v do not have %d entries", a.strides, a.dilations, n)
	}
	for i := range n {
		if a.strides[i] <= 0 || a.dilations[i] <= 0 || kernel[i] <= 0 {
			return nil, c.Errorf("strides %v, dilations %v and kernel %v must be positive", a.strides, a.dilations, kernel)
		}
	}
	a.padLo, a.padHi = make([]int64, n), make([]int64, n)
	if p := c.Node.Ints("pads"); len(p) > 0 {
		if len(p) != 2*n {
			return nil, c.Errorf("pads %v do not have %d entries", p, 2*n)
		}
		for i := range n {
			a.padLo[i], a.padHi[i] = p[i], p[i+n]
			if p[i] < 0 || p[i+n] < 0 {
				return nil, c.Unsupported("negative pads %v", p)
			}
		}
	}
	switch a.autoPad {
	case "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "":
	default:
		return nil, c.Errorf("unknown auto_pad %q", a.autoPad)
	}
	return a, nil
}

// effKernel is the extent of a dilated kernel dimension.
func (a *convSpatialAttrs) effKernel(i int) int64 { return (a.kernel[i]-1)*a.dilations[i] + 1 }

// sameAutoPads sets the pads of auto_pad SAME_UPPER / SAME_LOWER (output
// ceil(in/stride)) and zero pads for VALID; NOTSET keeps the explicit pads.
func (a *convSpatialAttrs) sameAutoPads(in []int64) {
	switch a.autoPad {
	case "SAME_UPPER", "SAME_LOWER":
		for i := range in {
			out := (in[i] + a.strides[i] - 1) / a.strides[i]
			total := max((out-1)*a.strides[i]+a.effKernel(i)-in[i], 0)
			small, big := total/2, total-total/2
			if a.autoPad == "SAME_UPPER" {
				a.padLo[i], a.padHi[i] = small, big
			} else {
				a.padLo[i], a.padHi[i] = big, small
			}
		}
	case "VALID":
		for i := range in {
			a.padLo[i], a.padHi[i] = 0, 0
		}
	}
}

// convDims are the dimension numbers of ONNX convolutions: input and
// output N, C, spatial...; kernel O, I, spatial....
func convDims(n int) *xb.ConvDims {
	sp := make([]int64, n)
	for i := range sp {
		sp[i] = int64(i + 2)
	}
	return &xb.ConvDims{
		InputBatch: 0, InputFeature: 1, InputSpatial: sp,
		KernelOutput: 0, KernelInput: 1, KernelSpatial: append([]int64(nil), sp...),
		OutputBatch: 0, OutputFeature: 1, OutputSpatial: append([]int64(nil), sp...),
	}
}

// convAddBias adds a per-channel bias (dimension 1) to y.
func convAddBias(y, bias *xb.Op) *xb.Op {
	if bias == nil {
		return y
	}
	if bias.DType() != y.DType() {
		bias = xb.Convert(bias, y.DType())
	}
	return xb.Add(y, xb.BroadcastInDim(bias, y.Dims(), 1))
}

func lowerConv(c *Ctx) error {
	x, w := c.Input(0), c.Input(1)
	if x == nil || w == nil {
		return c.Errorf("Conv needs X and W")
	}
	xd, wd := x.Dims(), w.Dims()
	if len(xd) < 3 || len(wd) != len(xd) {
		return c.Unsupported("input %v and kernel %v", xd, wd)
	}
	n := len(xd) - 2
	group := c.Node.Int("group", 1)
	if group <= 0 || xd[1]%group != 0 || wd[0]%group != 0 || wd[1]*group != xd[1] {
		return c.Errorf("group %d does not fit input %v and kernel %v", group, xd, wd)
	}
	if ks := c.Node.Ints("kernel_shape"); len(ks) > 0 {
		for i := range ks {
			if i >= n || ks[i] != wd[i+2] {
				return c.Errorf("kernel_shape %v does not match W %v", ks, wd)
			}
		}
	}
	a, err := convReadAttrs(c, n, wd[2:])
	if err != nil {
		return err
	}
	a.sameAutoPads(xd[2:])
	if w.DType() != x.DType() {
		w = xb.Convert(w, x.DType())
	}
	pad := make([][2]int64, n)
	for i := range n {
		pad[i] = [2]int64{a.padLo[i], a.padHi[i]}
		if xd[i+2]+a.padLo[i]+a.padHi[i] < a.effKernel(i) {
			return c.Errorf("the kernel %v (dilations %v) does not fit the padded input %v", wd, a.dilations, xd)
		}
	}
	t := x.DType()
	bias := c.Input(2)
	if mmWiden(t) { // float16/bfloat16: in float32, rounded once, bias included (as ONNX Runtime)
		x, w = xb.Convert(x, hlo.F32), xb.Convert(w, hlo.F32)
		if bias != nil {
			bias = xb.Convert(bias, hlo.F32)
		}
	}
	cfg := xb.ConvConfig{Strides: a.strides, Padding: pad, RhsDilation: a.dilations, FeatureGroupCount: group}
	chanLast := ConvChannelsLast
	if group > 1 && group == xd[1] && wd[1] == 1 && numElems(a.kernel) <= convDepthwiseLimit && ConvDepthwiseSlices && !convGeneralOnly {
		c.Set(0, convRound(convDepthwise(c.B, x, w, a, chanLast, bias), t))
		return nil
	}
	if chanLast {
		c.Set(0, convRound(convChannelsLast(x, w, cfg, bias), t))
		return nil
	}
	cfg.Dims = convDims(n)
	y := xb.Conv(x, w, cfg)
	c.Set(0, convRound(convAddBias(y, bias), t))
	return nil
}

// convRound converts y back to the operands' element type t where the
// convolution ran wider.
func convRound(y *xb.Op, t hlo.DType) *xb.Op {
	if y.DType() == t {
		return y
	}
	return xb.Convert(y, t)
}

// lowerConvTranspose: the gradient of a convolution with respect to its
// input: the input dilated by the strides, convolved with the spatially
// flipped kernel whose input and output features are swapped (per group),
// padded by the kernel's extent less the ONNX pads.
func lowerConvTranspose(c *Ctx) error {
	x, w := c.Input(0), c.Input(1)
	if x == nil || w == nil {
		return c.Errorf("ConvTranspose needs X and W")
	}
	xd, wd := x.Dims(), w.Dims()
	if len(xd) < 3 || len(wd) != len(xd) {
		return c.Unsupported("input %v and kernel %v", xd, wd)
	}
	n := len(xd) - 2
	group := c.Node.Int("group", 1)
	if group <= 0 || xd[1]%group != 0 || wd[0] != xd[1] {
		return c.Errorf("group %d does not fit input %v and kernel %v", group, xd, wd)
	}
	a, err := convReadAttrs(c, n, wd[2:])
	if err != nil {
		return err
	}
	outPad := c.Node.Ints("output_padding")
	if len(outPad) == 0 {
		outPad = make([]int64, n)
	}
	if len(outPad) != n {
		return c.Errorf("output_padding %v does not have %d entries", outPad, n)
	}
	in := xd[2:]
	// full[i] is the output extent with no pads at all.
	full := make([]int64, n)
	for i := range n {
		full[i] = a.strides[i]*(in[i]-1) + outPad[i] + a.effKernel(i)
	}
	outShape := c.Node.Ints("output_shape")
	if len(outShape) > n {
		outShape = outShape[len(outShape)-n:] // some exporters give N and C too
	}
	if len(outShape) != 0 && len(outShape) != n {
		return c.Errorf("output_shape %v does not have %d entries", outShape, n)
	}
	auto := a.autoPad == "SAME_UPPER" || a.autoPad == "SAME_LOWER"
	if len(outShape) == 0 && auto {
		outShape = make([]int64, n)
		for i := range n {
			outShape[i] = in[i] * a.strides[i]
		}
	}
	if a.autoPad == "VALID" {
		for i := range n {
			a.padLo[i], a.padHi[i] = 0, 0
		}
	}
	if len(outShape) != 0 {
		for i := range n {
			total := full[i] - outShape[i]
			half := floorDiv(total, 2)
			if a.autoPad == "SAME_UPPER" {
				a.padLo[i], a.padHi[i] = half, total-half
			} else {
				a.padLo[i], a.padHi[i] = total-half, half
			}
		}
	}
	if y := convTransposeTiles(x, w, a, group, outPad, c.Input(2)); y != nil && !convGeneralOnly {
		c.Set(0, y)
		return nil
	}
	// The kernel as a forward convolution's: [C, M/g, k...] to
	// [M, C/g, k...], flipped.
	cIn, mg := wd[0], wd[1]
	k := w
	if k.DType() != x.DType() {
		k = xb.Convert(k, x.DType())
	}
	spatial := make([]int64, n)
	for i := range n {
		spatial[i] = int64(i + 2)
	}
	k = xb.Reverse(k, spatial...)
	if group == 1 {
		k = xb.Transpose(k, append([]int64{1, 0}, spatial...)...)
	} else {
		g := group
		r := append([]int64{g, cIn / g, mg}, wd[2:]...)
		k = xb.Reshape(k, r...)
		perm := []int64{0, 2, 1}
		for i := range n {
			perm = append(perm, int64(i+3))
		}
		k = xb.Transpose(k, perm...)
		k = xb.Reshape(k, append([]int64{g * mg, cIn / g}, wd[2:]...)...)
	}
	// Padding of the dilated input: ek-1-lo before, ek-1-hi+outPad after;
	// negative amounts (pads beyond the kernel's extent) are cropped from
	// the result instead.
	pad := make([][2]int64, n)
	cropLo, cropHi := make([]int64, n), make([]int64, n)
	for i := range n {
		lo := a.effKernel(i) - 1 - a.padLo[i]
		hi := a.effKernel(i) - 1 - a.padHi[i] + outPad[i]
		if lo < 0 {
			cropLo[i], lo = -lo, 0
		}
		if hi < 0 {
			cropHi[i], hi = -hi, 0
		}
		pad[i] = [2]int64{lo, hi}
		if full[i]-a.padLo[i]-a.padHi[i] <= 0 {
			return c.Errorf("output size %d along spatial axis %d", full[i]-a.padLo[i]-a.padHi[i], i)
		}
	}
	t := x.DType()
	if mmWiden(t) { // float16/bfloat16: in float32, rounded once, bias included (as ONNX Runtime)
		x, k = xb.Convert(x, hlo.F32), xb.Convert(k, hlo.F32)
	}
	cfg := xb.ConvConfig{Padding: pad, LhsDilation: a.strides, RhsDilation: a.dilations, FeatureGroupCount: group}
	bias := c.Input(2)
	var y *xb.Op
	if ConvChannelsLast && group == 1 {
		// Channels-last as Conv is: the transposes around it cancel
		// against its neighbours', where a channels-first result left
		// the elementwise ops after it reading two layouts at once
		// (HiFi-GAN's residual sums after each upsampling: 280 → 195 ms
		// with the CPU backend's transposed path; in f16, whose sums
		// fuse into epilogues of up to 13 inputs, 250 → 203 ms). Not
		// grouped: the backend's channels-first path is the faster
		// there (30 against 47 µs for 6²×8 in 2 groups).
		y, bias = convChannelsLast(x, k, cfg, bias), nil
	} else {
		cfg.Dims = convDims(n)
		y = xb.Conv(x, k, cfg)
	}
	if y.Poisoned() {
		return c.B.Err()
	}
	crop := false
	for i := range n {
		crop = crop || cropLo[i] != 0 || cropHi[i] != 0
	}
	if crop {
		yd := y.Dims()
		starts, limits := make([]int64, len(yd)), append([]int64(nil), yd...)
		for i := range n {
			starts[i+2] = cropLo[i]
			limits[i+2] = yd[i+2] - cropHi[i]
		}
		y = xb.Slice(y, starts, limits, nil)
	}
	c.Set(0, convRound(convAddBias(y, bias), t))
	return nil
}

// convChannelsLast convolves NC... x with an OI... kernel through the
// channels-last layout: x transposed to N...C, the convolution and its
// bias there, and the result transposed back. Between consecutive
// convolutions the optimizer sinks the transposes below elementwise ops
// and cancels the pairs, so a chain of convolutions stays channels-last.
func convChannelsLast(x, w *xb.Op, cfg xb.ConvConfig, bias *xb.Op) *xb.Op {
	n := x.Rank() - 2
	sp := make([]int64, n)
	toLast := []int64{0}
	toFirst := []int64{0, int64(n + 1)}
	for i := range n {
		sp[i] = int64(i + 1)
		toLast = append(toLast, int64(i+2))
		toFirst = append(toFirst, int64(i+1))
	}
	toLast = append(toLast, 1)
	ksp := make([]int64, n)
	for i := range n {
		ksp[i] = int64(i + 2)
	}
	cfg.Dims = &xb.ConvDims{
		InputBatch: 0, InputFeature: int64(n + 1), InputSpatial: sp,
		KernelOutput: 0, KernelInput: 1, KernelSpatial: ksp,
		OutputBatch: 0, OutputFeature: int64(n + 1), OutputSpatial: append([]int64(nil), sp...),
	}
	y := xb.Conv(xb.Transpose(x, toLast...), w, cfg)
	if bias != nil {
		if bias.DType() != y.DType() {
			bias = xb.Convert(bias, y.DType())
		}
		y = xb.Add(y, xb.BroadcastInDim(bias, y.Dims(), int64(n+1)))
	}
	return xb.Transpose(y, toFirst...)
}

// convDepthwiseLimit is the largest kernel (in elements) of a depthwise
// convolution lowered as shifted slices times per-channel weights.
const convDepthwiseLimit = 64

// convDepthwise is a depthwise convolution (one input channel per group,
// W [C*m, 1, k...]) as a sum over kernel offsets of the strided slice of
// the padded input that offset reads, times that offset's weight per
// channel: elementwise work that fuses into one loop, where a grouped
// convolution runs C tiny convolutions. chanLast does it in the
// channels-last layout (between transposes that cancel with those of
// neighbouring convolutions).
func convDepthwise(b *xb.Builder, x, w *xb.Op, a *convSpatialAttrs, chanLast bool, bias *xb.Op) *xb.Op {
	xd, wd := x.Dims(), w.Dims()
	n := len(xd) - 2
	ch, m := xd[1], wd[0]/xd[1]
	// Narrow floats accumulate in f32, as convolutions do.
	outType := x.DType()
	if spatialNarrow(outType) {
		x = xb.Convert(x, hlo.F32)
	}
	out := make([]int64, n)
	for i := range n {
		out[i] = (xd[i+2]+a.padLo[i]+a.padHi[i]-a.effKernel(i))/a.strides[i] + 1
	}
	// Axis positions in the working layout.
	chAxis := int64(1)
	spAxis := func(i int) int64 { return int64(i + 2) }
	perm, back := []int64{0, 1}, []int64{0, 1}
	if chanLast {
		chAxis = int64(n + 1)
		spAxis = func(i int) int64 { return int64(i + 1) }
		perm, back = []int64{0}, []int64{0, int64(n + 1)}
		for i := range n {
			perm = append(perm, int64(i+2))
			back = append(back, int64(i+1))
		}
		perm = append(perm, 1)
		x = xb.Transpose(x, perm...)
	} else {
		for i := range n {
			perm = append(perm, int64(i+2))
		}
	}
	cfg := make(hlo.PaddingConfig, n+2)
	padded := false
	for i := range n {
		cfg[spAxis(i)] = hlo.PadDim{Lo: a.padLo[i], Hi: a.padHi[i]}
		padded = padded || a.padLo[i] != 0 || a.padHi[i] != 0
	}
	if padded {
		x = xb.Pad(x, b.ScalarOf(x.DType(), 0), cfg)
	}
	pd := x.Dims()
	// Output dims in the working layout, before and after the multiplier.
	sliceDims := make([]int64, n+2)
	sliceDims[0], sliceDims[chAxis] = xd[0], ch
	for i := range n {
		sliceDims[spAxis(i)] = out[i]
	}
	outDims := append([]int64(nil), sliceDims...)
	outDims[chAxis] = ch * m
	k := numElems(a.kernel)
	wk := xb.Reshape(w, wd[0], k)
	if wk.DType() != x.DType() {
		wk = xb.Convert(wk, x.DType())
	}
	var acc *xb.Op
	idx := int64(0)
	poolOffsets(a.kernel, func(j []int64) {
		starts, limits, strides := make([]int64, n+2), append([]int64(nil), pd...), make([]int64, n+2)
		for d := range strides {
			strides[d] = 1
		}
		for i := range n {
			ax := spAxis(i)
			starts[ax] = j[i] * a.dilations[i]
			limits[ax] = starts[ax] + (out[i]-1)*a.strides[i] + 1
			strides[ax] = a.strides[i]
		}
		v := xb.Slice(x, starts, limits, strides)
		if m > 1 {
			// Output channel c*m+q reads input channel c.
			wide := append([]int64(nil), sliceDims[:chAxis+1]...)
			wide = append(wide, m)
			wide = append(wide, sliceDims[chAxis+1:]...)
			var mapping []int64
			for d := range int64(n + 2) {
				if d <= chAxis {
					mapping = append(mapping, d)
				} else {
					mapping = append(mapping, d+1)
				}
			}
			v = xb.Reshape(xb.BroadcastInDim(v, wide, mapping...), outDims...)
		}
		wj := xb.Reshape(xb.SliceAxis(wk, 1, idx, idx+1), wd[0])
		idx++
		t := xb.Mul(v, xb.BroadcastInDim(wj, outDims, chAxis))
		if acc == nil {
			acc = t
		} else {
			acc = xb.Add(acc, t)
		}
	})
	if bias != nil {
		if bias.DType() != acc.DType() {
			bias = xb.Convert(bias, acc.DType())
		}
		acc = xb.Add(acc, xb.BroadcastInDim(bias, outDims, chAxis))
	}
	if acc.DType() != outType {
		acc = xb.Convert(acc, outType)
	}
	if chanLast {
		acc = xb.Transpose(acc, back...)
	}
	return acc
}

// convTransposeTiles is a ConvTranspose whose kernel windows do not
// overlap (group 1, no dilation, kernel ≤ stride: the upsampling heads of
// segmentation models) as one matrix product, [N, in..., C] × [C, M·K],
// whose blocks are laid out as the output's tiles by a transpose; then
// the pads cut (or output_padding extends) the ends. The convolution with
// a dilated input would multiply mostly zeros. It returns nil where it
// does not apply.
func convTransposeTiles(x, w *xb.Op, a *convSpatialAttrs, group int64, outPad []int64, bias *xb.Op) *xb.Op {
	xd, wd := x.Dims(), w.Dims()
	n := len(xd) - 2
	if group != 1 || wd[0] != xd[1] {
		return nil
	}
	for i := range n {
		target := a.strides[i]*(xd[i+2]-1) + a.kernel[i] + outPad[i] - a.padLo[i] - a.padHi[i]
		if a.dilations[i] != 1 || a.kernel[i] > a.strides[i] || target <= 0 {
			return nil
		}
	}
	nb, ch, m := xd[0], xd[1], wd[1]
	if w.DType() != x.DType() {
		w = xb.Convert(w, x.DType())
	}
	// The kernel padded to the stride: each input position owns a whole
	// s... tile of the output.
	cfg := make(hlo.PaddingConfig, n+2)
	tiles := false
	for i := range n {
		cfg[i+2].Hi = a.strides[i] - a.kernel[i]
		tiles = tiles || cfg[i+2].Hi != 0
	}
	if tiles {
		w = xb.Pad(w, x.Builder().ScalarOf(w.DType(), 0), cfg)
	}
	k := numElems(a.strides)
	in := xd[2:]
	s := numElems(in)
	// The product's columns ordered by tile position, then channel:
	// [C, M, s...] to [C, s..., M] (folded where the weights are
	// constant), so that with the channels innermost, as the CPU backend
	// lays activations out, each output row of a tile is one contiguous
	// run of s_last·M values where channel-major columns left runs of
	// one (PP-OCR det's 2×2 upsampling of 80²×24: its relayout 500 → 170–230 µs).
	wperm := []int64{0}
	for i := range n {
		wperm = append(wperm, int64(i+2))
	}
	wperm = append(wperm, 1)
	y := xb.DotGeneral(xb.Reshape(x, nb, ch, s), xb.Reshape(xb.Transpose(w, wperm...), ch, k*m), xb.DotDims{
		LhsContracting: []int64{1}, RhsContracting: []int64{0},
	}) // [N, S, K*M]
	// [N, in_0..in_{n-1}, s_0..s_{n-1}, M] to [N, M, in_0, s_0, in_1, s_1, ...].
	split := append([]int64{nb}, in...)
	split = append(split, a.strides...)
	split = append(split, m)
	y = xb.Reshape(y, split...)
	perm := []int64{0, int64(2*n + 1)}
	full := []int64{nb, m}
	for i := range n {
		perm = append(perm, int64(i+1), int64(n+1+i))
		full = append(full, in[i]*a.strides[i])
	}
	y = xb.Reshape(xb.Transpose(y, perm...), full...)
	// Cut the pads and the tiles' tail beyond the kernel; output_padding
	// extends the end with zeros.
	crop := make(hlo.PaddingConfig, n+2)
	cut := false
	for i := range n {
		target := a.strides[i]*(in[i]-1) + a.kernel[i] + outPad[i] - a.padLo[i] - a.padHi[i]
		crop[i+2] = hlo.PadDim{Lo: -a.padLo[i], Hi: target + a.padLo[i] - full[i+2]}
		cut = cut || crop[i+2].Lo != 0 || crop[i+2].Hi != 0
	}
	if cut {
		y = xb.Pad(y, x.Builder().ScalarOf(y.DType(), 0), crop)
	}
	return convAddBias(y, bias)
}

// floorDiv is a/b rounded toward -inf (Python's //) for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
