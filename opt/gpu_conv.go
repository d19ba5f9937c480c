package opt

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
)

// convConfig is the part of XLA's CudnnConvBackendConfig a rewrite needs.
type convConfig struct {
	ConvResultScale *pbFloat       `json:"conv_result_scale"`
	SideInputScale  pbFloat        `json:"side_input_scale"`
	LeakyReluAlpha  pbFloat        `json:"leakyrelu_alpha"`
	Activation      activationMode `json:"activation_mode"`
	Reordered       bool           `json:"reordered_int8_nchw_vect"`
	Graph           *string        `json:"serialized_graph"`
}

// activationMode is stream_executor.dnn.ActivationMode, by name or number.
type activationMode string

var activationNames = []string{"kNone", "kSigmoid", "kRelu", "kRelu6", "kReluX", "kTanh", "kBandPass", "kElu", "kLeakyRelu", "kGeluExact"}

func (a *activationMode) UnmarshalJSON(b []byte) error {
	var n pbInt
	if err := n.UnmarshalJSON(b); err == nil && n >= 0 && int(n) < len(activationNames) {
		*a = activationMode(activationNames[n])
		return nil
	}
	if len(b) < 2 || b[0] != '"' {
		return fmt.Errorf("activation_mode %s is not an ActivationMode", b)
	}
	*a = activationMode(b[1 : len(b)-1])
	return nil
}

// rewriteConv rebuilds a cuDNN convolution call from the window,
// dim_labels and feature_group_count the call carries. The window and
// dim_labels are always those of the forward convolution input ⊛ filter →
// output; which of the three the call's operands and result are depends on
// its kind (XLA's gpu_conv_runner): forward takes (input, filter), backward
// input takes (output, filter) and returns the input's gradient, backward
// filter takes (input, output) and returns the filter's gradient. The
// fused forward computes
//
//	act(conv_result_scale·conv(input, filter) + side_input_scale·side_input + broadcast(bias))
//
// with operands (input, filter, bias[, side_input]).
func rewriteConv(c *gpuCall) ([]*hlo.Instruction, error) {
	var cfg convConfig
	if err := c.backendConfig("cudnn_conv_backend_config", &cfg); err != nil {
		return nil, err
	}
	if cfg.Reordered || cfg.Graph != nil {
		return nil, fmt.Errorf("%s: reordered int8 filters and serialized graphs are not supported", c.target)
	}
	w, dn := c.in.Window(), c.in.ConvDims()
	if w == nil || dn == nil {
		return nil, fmt.Errorf("%s needs window and dim_labels attributes", c.target)
	}
	fgc, _ := c.in.Int("feature_group_count")
	bgc, _ := c.in.Int("batch_group_count")
	fgc, bgc = max(fgc, 1), max(bgc, 1)
	ops := c.in.Operands
	wantOps := 2
	if c.target == "__cudnn$convBiasActivationForward" {
		wantOps = 3
		if len(ops) == 4 {
			wantOps = 4
		}
	}
	if len(ops) != wantOps {
		return nil, fmt.Errorf("%s takes %d operands, has %d", c.target, wantOps, len(ops))
	}
	ct := computeType(c.out.DType)
	if ct.IsInteger() {
		ct = hlo.F32
	}
	x, y := c.to(ops[0], ct), c.to(ops[1], ct)
	var r *hlo.Instruction
	var err error
	switch c.target {
	case "__cudnn$convBackwardInput":
		r, err = c.convBackwardInput(x, y, w, dn, fgc, bgc)
	case "__cudnn$convBackwardFilter":
		r, err = c.convBackwardFilter(x, y, w, dn, fgc, bgc)
	default:
		r = c.conv(x, y, w, dn, fgc, bgc)
	}
	if err != nil {
		return nil, err
	}
	if c.err != nil {
		return nil, c.err
	}
	if !sameDims(r.Shape.Dims, c.out.Dims) {
		return nil, fmt.Errorf("%s: the convolution of its operands is %v, but the call returns %s", c.target, r.Shape.Dims, c.out.HumanString())
	}
	r = c.scale(r, valueOr(cfg.ConvResultScale, 1))
	if c.target == "__cudnn$convBiasActivationForward" {
		if r, err = c.biasActivation(r, ops, dn, cfg); err != nil {
			return nil, err
		}
	} else if cfg.Activation != "" && cfg.Activation != "kNone" {
		return nil, fmt.Errorf("%s: activation %s needs __cudnn$convBiasActivationForward", c.target, cfg.Activation)
	}
	return []*hlo.Instruction{c.saturate(r, c.out.DType)}, c.err
}

// conv builds the convolution lhs ⊛ rhs.
func (c *gpuCall) conv(lhs, rhs *hlo.Instruction, w *hlo.Window, dn *hlo.ConvDimNumbers, fgc, bgc int64) *hlo.Instruction {
	attrs := []hlo.Attr{{Name: "window", Value: w}, {Name: "dim_labels", Value: dn}}
	if fgc != 1 {
		attrs = append(attrs, hlo.Attr{Name: "feature_group_count", Value: fgc})
	}
	if bgc != 1 {
		attrs = append(attrs, hlo.Attr{Name: "batch_group_count", Value: bgc})
	}
	return c.add(hlo.OpConvolution, []*hlo.Instruction{lhs, rhs}, attrs...)
}

// checkPlainWindow refuses what cuDNN's backward convolutions never carry
// and the gradient formulas below do not cover.
func (c *gpuCall) checkPlainWindow(w *hlo.Window, bgc int64) error {
	for _, d := range w.Dims {
		if d.LhsDilation != 1 || d.Reversal {
			return fmt.Errorf("%s: a window with input dilation or reversal is not supported", c.target)
		}
	}
	if bgc != 1 {
		return fmt.Errorf("%s: batch_group_count %d is not supported", c.target, bgc)
	}
	return nil
}

// convBackwardInput computes the input gradient of the forward convolution
// (w, dn): the output gradient dy convolved with the spatially reversed
// filter, its input and output feature roles swapped, over dy dilated by
// the stride and padded so every input position sees the window positions
// that read it (the transposed convolution, as JAX's conv VJP writes it).
func (c *gpuCall) convBackwardInput(dy, filter *hlo.Instruction, w *hlo.Window, dn *hlo.ConvDimNumbers, fgc, bgc int64) (*hlo.Instruction, error) {
	if err := c.checkPlainWindow(w, bgc); err != nil {
		return nil, err
	}
	if fgc != 1 {
		var err error
		if filter, err = c.regroupFilter(filter, dn, fgc); err != nil {
			return nil, err
		}
	}
	nw := &hlo.Window{Dims: make([]hlo.WindowDim, len(w.Dims))}
	for i, d := range w.Dims {
		in := c.out.Dims[dn.InputSpatial[i]]
		out := dy.Shape.Dims[dn.OutputSpatial[i]]
		k := filter.Shape.Dims[dn.KernelSpatial[i]]
		kDil := (k-1)*d.RhsDilation + 1
		outDil := (out-1)*d.Stride + 1
		lo := kDil - d.PadLo - 1
		nw.Dims[i] = hlo.WindowDim{Size: k, Stride: 1, LhsDilation: d.Stride, RhsDilation: d.RhsDilation,
			PadLo: lo, PadHi: in + kDil - 1 - outDil - lo}
	}
	ndn := &hlo.ConvDimNumbers{
		InputBatch: dn.OutputBatch, InputFeature: dn.OutputFeature, InputSpatial: dn.OutputSpatial,
		KernelInput: dn.KernelOutput, KernelOutput: dn.KernelInput, KernelSpatial: dn.KernelSpatial,
		OutputBatch: dn.InputBatch, OutputFeature: dn.InputFeature, OutputSpatial: dn.InputSpatial,
	}
	rev := c.withShape(hlo.OpReverse, filter.Shape, []*hlo.Instruction{filter},
		hlo.Attr{Name: "dimensions", Value: append([]int64{}, dn.KernelSpatial...)})
	return c.conv(dy, rev, nw, ndn, fgc, 1), nil
}

// regroupFilter prepares a grouped filter for the input gradient: the
// transposed convolution's output features are the forward's input
// features, so each group's block of output features (O = G·Og) moves into
// the input-feature dimension (I becomes G·I, group major), as JAX's conv
// VJP reshapes it: split O into (G, Og), move G before I, merge it into I.
func (c *gpuCall) regroupFilter(f *hlo.Instruction, dn *hlo.ConvDimNumbers, g int64) (*hlo.Instruction, error) {
	o, i := dn.KernelOutput, dn.KernelInput
	dims := f.Shape.Dims
	if dims[o]%g != 0 {
		return nil, fmt.Errorf("%s: %d output features do not split into %d groups", c.target, dims[o], g)
	}
	// split: dims with O replaced by (G, O/G).
	split := append(append(append([]int64{}, dims[:o]...), g, dims[o]/g), dims[o+1:]...)
	r := c.withShape(hlo.OpReshape, hlo.ArrayShape(f.Shape.DType, split...), []*hlo.Instruction{f})
	// Without the G axis (index o of split) the axes are the filter's own
	// dimensions in order; G goes back in just before dimension I.
	var perm []int64
	for j := range int64(len(split)) {
		if j != o {
			perm = append(perm, j)
		}
	}
	perm = append(perm[:i], append([]int64{o}, perm[i:]...)...)
	tdims := make([]int64, len(perm))
	for j, p := range perm {
		tdims[j] = split[p]
	}
	tr := c.withShape(hlo.OpTranspose, hlo.ArrayShape(f.Shape.DType, tdims...), []*hlo.Instruction{r},
		hlo.Attr{Name: "dimensions", Value: perm})
	merged := append([]int64{}, dims...)
	merged[o], merged[i] = dims[o]/g, dims[i]*g
	return c.withShape(hlo.OpReshape, hlo.ArrayShape(f.Shape.DType, merged...), []*hlo.Instruction{tr}), nil
}

// convBackwardFilter computes the filter gradient of the forward
// convolution (w, dn): the input convolved with the output gradient as the
// window, batch and feature roles exchanged, the stride becoming the
// window dilation and the dilation the stride; feature groups become batch
// groups (JAX's conv VJP for the right-hand side).
func (c *gpuCall) convBackwardFilter(x, dy *hlo.Instruction, w *hlo.Window, dn *hlo.ConvDimNumbers, fgc, bgc int64) (*hlo.Instruction, error) {
	if err := c.checkPlainWindow(w, bgc); err != nil {
		return nil, err
	}
	nw := &hlo.Window{Dims: make([]hlo.WindowDim, len(w.Dims))}
	for i, d := range w.Dims {
		in := x.Shape.Dims[dn.InputSpatial[i]]
		out := dy.Shape.Dims[dn.OutputSpatial[i]]
		k := c.out.Dims[dn.KernelSpatial[i]]
		kDil := (k-1)*d.RhsDilation + 1
		outDil := (out-1)*d.Stride + 1
		nw.Dims[i] = hlo.WindowDim{Size: out, Stride: d.RhsDilation, LhsDilation: 1, RhsDilation: d.Stride,
			PadLo: d.PadLo, PadHi: outDil - in + kDil - d.PadLo - 1}
	}
	ndn := &hlo.ConvDimNumbers{
		InputBatch: dn.InputFeature, InputFeature: dn.InputBatch, InputSpatial: dn.InputSpatial,
		KernelInput: dn.OutputBatch, KernelOutput: dn.OutputFeature, KernelSpatial: dn.OutputSpatial,
		OutputBatch: dn.KernelInput, OutputFeature: dn.KernelOutput, OutputSpatial: dn.KernelSpatial,
	}
	return c.conv(x, dy, nw, ndn, 1, fgc), nil
}

// biasActivation applies the fused forward's side input, bias and
// activation to the scaled convolution r.
func (c *gpuCall) biasActivation(r *hlo.Instruction, ops []*hlo.Instruction, dn *hlo.ConvDimNumbers, cfg convConfig) (*hlo.Instruction, error) {
	ct := r.Shape.DType
	if len(ops) == 4 && cfg.SideInputScale != 0 {
		side := c.to(ops[3], ct)
		if !sameDims(side.Shape.Dims, r.Shape.Dims) {
			return nil, fmt.Errorf("%s: side input is %s, want the result's dimensions %v", c.target, ops[3].Shape.HumanString(), r.Shape.Dims)
		}
		r = c.binary(hlo.OpAdd, r, c.scale(side, float64(cfg.SideInputScale)))
	}
	bias := c.to(ops[2], ct)
	if bias.Shape.Rank() != 1 || bias.Shape.Dims[0] != r.Shape.Dims[dn.OutputFeature] {
		return nil, fmt.Errorf("%s: bias is %s, want a vector of the %d output features", c.target, ops[2].Shape.HumanString(), r.Shape.Dims[dn.OutputFeature])
	}
	r = c.binary(hlo.OpAdd, r, c.broadcast(bias, r.Shape.Dims, []int64{dn.OutputFeature}))
	switch cfg.Activation {
	case "", "kNone":
	case "kRelu":
		r = c.binary(hlo.OpMaximum, r, c.splat(r, 0))
	case "kRelu6":
		r = c.add(hlo.OpClamp, []*hlo.Instruction{c.splat(r, 0), r, c.splat(r, 6)})
	case "kTanh":
		r = c.unary(hlo.OpTanh, r)
	case "kSigmoid":
		r = c.unary(hlo.OpLogistic, r)
	case "kElu", "kLeakyRelu":
		neg := c.unary(hlo.OpExpm1, r)
		if cfg.Activation == "kLeakyRelu" {
			neg = c.scale(r, float64(cfg.LeakyReluAlpha))
		}
		pos := c.add(hlo.OpCompare, []*hlo.Instruction{r, c.splat(r, 0)}, hlo.Attr{Name: "direction", Value: hlo.Enum("GT")})
		r = c.add(hlo.OpSelect, []*hlo.Instruction{pos, r, neg})
	case "kGeluExact":
		erf := c.unary(hlo.OpErf, c.scale(r, 1/math.Sqrt2))
		r = c.binary(hlo.OpMultiply, c.scale(r, 0.5), c.binary(hlo.OpAdd, c.splat(r, 1), erf))
	default:
		return nil, fmt.Errorf("%s: activation %s is not supported", c.target, cfg.Activation)
	}
	return r, nil
}
