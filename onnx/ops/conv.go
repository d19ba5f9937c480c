package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// Convolutions: Conv and ConvTranspose lower to one HLO convolution each,
// in ONNX's own layouts (NC... input, OI... kernel), with the bias as a
// broadcast add.

func init() {
	Register(Op{Name: "Conv", Lower: lowerConv, Types: convFloatTypes})
	Register(Op{Name: "ConvTranspose", Lower: lowerConvTranspose, Types: convFloatTypes})
}

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
	if mmWiden(t) { // float16/bfloat16: in float32, rounded once, bias included (as ONNX Runtime)
		x, w = xb.Convert(x, hlo.F32), xb.Convert(w, hlo.F32)
	}
	y := xb.Conv(x, w, xb.ConvConfig{
		Dims: convDims(n), Strides: a.strides, Padding: pad, RhsDilation: a.dilations,
		FeatureGroupCount: group,
	})
	c.Set(0, convRound(convAddBias(y, c.Input(2)), t))
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
	y := xb.Conv(x, k, xb.ConvConfig{
		Dims: convDims(n), Padding: pad, LhsDilation: a.strides, RhsDilation: a.dilations,
		FeatureGroupCount: group,
	})
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
	c.Set(0, convRound(convAddBias(y, c.Input(2)), t))
	return nil
}

// floorDiv is a/b rounded toward -inf (Python's //) for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
