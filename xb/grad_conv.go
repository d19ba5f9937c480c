package xb

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// The gradients of a convolution are convolutions: the input's adjoint
// convolves the output adjoint with the spatially flipped kernel (input
// and output features swapped), strided by the forward input dilation and
// dilated by the forward stride; the kernel's adjoint convolves the input
// with the output adjoint, batch and feature roles swapped so that the
// examples are contracted. The paddings are those that make the shapes
// come out right, as in JAX's conv_general_dilated transpose rules.
//
// Both are left in the forward operands' own layouts: the CPU backend
// reads any dimension order (copying an input whose features are not
// innermost, and writing an output in any order through scratch), so no
// transposes are built here (a kernel gradient built with a (batch,
// spatial..., feature) output and an explicit transpose measured no
// faster: the transpose is the same copy). The kernel flip is an explicit
// reverse, not window reversal, which the fast kernel does not take.

func init() {
	registerGrad(gradConv, hlo.OpConvolution)
}

func gradConv(z, g *Op) []*Op {
	dn, w := z.in.ConvDims(), z.in.Window()
	if bg, _ := z.in.Int("batch_group_count"); bg > 1 {
		z.b.errorf("grad: no gradient rule for a convolution with batch_group_count %d (instruction %s)", bg, z.in.Name)
		return nil
	}
	if dn == nil || w == nil {
		z.b.errorf("grad: convolution %s has no window or dimension numbers", z.in.Name)
		return nil
	}
	for _, d := range w.Dims {
		if d.Reversal {
			z.b.errorf("grad: no gradient rule for a convolution with window reversal (instruction %s)", z.in.Name)
			return nil
		}
	}
	fg, _ := z.in.Int("feature_group_count")
	fg = max(fg, 1)
	return []*Op{convInputGrad(z, g, dn, w, fg), convKernelGrad(z, g, dn, w, fg)}
}

// extents are a forward convolution's spatial extents along one
// dimension, each spread by its dilation: the input by the input
// dilation, the window by the kernel dilation, the output by the stride.
// Both gradients' paddings are worked out from them.
type extents struct{ lhs, win, out int64 }

func extentsOf(z *Op, dn *hlo.ConvDimNumbers, w *hlo.Window, d int) extents {
	wd := w.Dims[d]
	x, k := z.inputs[0], z.inputs[1]
	return extents{
		lhs: dilated(x.Shape().Dims[dn.InputSpatial[d]], unit(wd.LhsDilation)),
		win: dilated(k.Shape().Dims[dn.KernelSpatial[d]], unit(wd.RhsDilation)),
		out: dilated(z.Shape().Dims[dn.OutputSpatial[d]], unit(wd.Stride)),
	}
}

// dilated is the extent of n elements spread d apart.
func dilated(n, d int64) int64 {
	if n == 0 {
		return 0
	}
	return 1 + d*(n-1)
}

func unit(v int64) int64 { return max(v, 1) }

// convInputGrad: conv(g, flip(kernel)ᵀ) with the output adjoint as input
// and the forward input's dimension numbers for the result.
func convInputGrad(z, g *Op, dn *hlo.ConvDimNumbers, w *hlo.Window, fg int64) *Op {
	k := z.inputs[1]
	kernel := k
	if fg > 1 {
		kernel = groupsIntoInput(k, dn.KernelOutput, dn.KernelInput, fg)
	}
	kernel = Reverse(kernel, dn.KernelSpatial...)
	ns := len(dn.InputSpatial)
	cfg := ConvConfig{
		Dims: &ConvDims{
			InputBatch: dn.OutputBatch, InputFeature: dn.OutputFeature, InputSpatial: slices.Clone(dn.OutputSpatial),
			// Swapped: the kernel's output features are now contracted.
			KernelInput: dn.KernelOutput, KernelOutput: dn.KernelInput, KernelSpatial: slices.Clone(dn.KernelSpatial),
			OutputBatch: dn.InputBatch, OutputFeature: dn.InputFeature, OutputSpatial: slices.Clone(dn.InputSpatial),
		},
		FeatureGroupCount: fg,
	}
	for d := range ns {
		wd, e := w.Dims[d], extentsOf(z, dn, w, d)
		before := e.win - wd.PadLo - 1
		after := e.lhs + e.win - 1 - e.out - before
		cfg.Strides = append(cfg.Strides, unit(wd.LhsDilation))
		cfg.Padding = append(cfg.Padding, [2]int64{before, after})
		cfg.LhsDilation = append(cfg.LhsDilation, unit(wd.Stride))
		cfg.RhsDilation = append(cfg.RhsDilation, unit(wd.RhsDilation))
	}
	return Conv(g, kernel, cfg)
}

// convKernelGrad: conv(x, g) contracting the batch: x's features act as
// its batch and its examples as features, g's examples as the kernel's
// input features; the result has the kernel's dimension numbers. Feature
// groups become batch groups.
func convKernelGrad(z, g *Op, dn *hlo.ConvDimNumbers, w *hlo.Window, fg int64) *Op {
	x := z.inputs[0]
	ns := len(dn.InputSpatial)
	cfg := ConvConfig{
		Dims: &ConvDims{
			InputBatch: dn.InputFeature, InputFeature: dn.InputBatch, InputSpatial: slices.Clone(dn.InputSpatial),
			KernelInput: dn.OutputBatch, KernelOutput: dn.OutputFeature, KernelSpatial: slices.Clone(dn.OutputSpatial),
			OutputBatch: dn.KernelInput, OutputFeature: dn.KernelOutput, OutputSpatial: slices.Clone(dn.KernelSpatial),
		},
	}
	if fg > 1 {
		cfg.BatchGroupCount = fg
	}
	for d := range ns {
		wd, e := w.Dims[d], extentsOf(z, dn, w, d)
		hi := e.out - e.lhs + e.win - wd.PadLo - 1
		cfg.Strides = append(cfg.Strides, unit(wd.RhsDilation))
		cfg.Padding = append(cfg.Padding, [2]int64{wd.PadLo, hi})
		cfg.LhsDilation = append(cfg.LhsDilation, unit(wd.LhsDilation))
		cfg.RhsDilation = append(cfg.RhsDilation, unit(wd.Stride))
	}
	return Conv(x, g, cfg)
}

// groupsIntoInput moves the group factor of the kernel's output-feature
// dimension (groups major) into its input-feature dimension (groups
// major): [.., I/g, .., O] → [.., I, .., O/g] in the same dimension order,
// the kernel layout a transposed grouped convolution needs.
func groupsIntoInput(k *Op, out, in, groups int64) *Op {
	dims := k.Dims()
	r := int64(len(dims))
	// Split the output features into (groups, O/g), the group axis at out.
	split := slices.Clone(dims[:out])
	split = append(split, groups, dims[out]/groups)
	split = append(split, dims[out+1:]...)
	s := Reshape(k, split...)
	in2 := in
	if in > out {
		in2++
	}
	// Move the group axis next to (before) the input features.
	var perm []int64
	for a := range r + 1 {
		if a == out {
			continue
		}
		if a == in2 {
			perm = append(perm, out)
		}
		perm = append(perm, a)
	}
	s = Transpose(s, perm...)
	final := slices.Clone(dims)
	final[out], final[in] = dims[out]/groups, dims[in]*groups
	return Reshape(s, final...)
}
