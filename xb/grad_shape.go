package xb

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Gradient rules of ops that move data without arithmetic: each one's
// adjoint is the transpose of the data movement (a broadcast's is a sum, a
// slice's is a pad, a concatenation's is slices, ...).

func init() {
	registerGrad(gradBroadcast, hlo.OpBroadcast)
	registerGrad(func(z, g *Op) []*Op { return []*Op{Reshape(g, z.inputs[0].Dims()...)} }, hlo.OpReshape, hlo.OpBitcast)
	registerGrad(gradTranspose, hlo.OpTranspose)
	registerGrad(gradSlice, hlo.OpSlice)
	registerGrad(gradPad, hlo.OpPad)
	registerGrad(gradConcatenate, hlo.OpConcatenate)
	registerGrad(func(z, g *Op) []*Op { return []*Op{Reverse(g, z.in.Dimensions()...)} }, hlo.OpReverse)
	registerGrad(gradDynamicSlice, hlo.OpDynamicSlice)
	registerGrad(gradDynamicUpdateSlice, hlo.OpDynamicUpdateSlice)
}

// gradBroadcast sums the adjoint over the dimensions the broadcast added
// and puts the rest in the operand's order.
func gradBroadcast(z, g *Op) []*Op {
	x := z.inputs[0]
	mapping := z.in.Dimensions()
	var added []int64
	for d := range int64(z.Rank()) {
		if !slices.Contains(mapping, d) {
			added = append(added, d)
		}
	}
	s := g
	if len(added) > 0 {
		s = ReduceSum(g, added...)
	}
	// The kept dimensions are in increasing result order; the operand's
	// dimension i is at the rank of mapping[i] among them.
	sorted := slices.Clone(mapping)
	slices.Sort(sorted)
	perm := make([]int64, len(mapping))
	for i, m := range mapping {
		perm[i] = int64(slices.Index(sorted, m))
	}
	if !isIdentity(perm) {
		s = Transpose(s, perm...)
	}
	return []*Op{Reshape(s, x.Dims()...)}
}

func isIdentity(perm []int64) bool {
	for i, p := range perm {
		if p != int64(i) {
			return false
		}
	}
	return true
}

func gradTranspose(z, g *Op) []*Op {
	perm := z.in.Dimensions()
	inv := make([]int64, len(perm))
	for i, p := range perm {
		inv[p] = int64(i)
	}
	return []*Op{Transpose(g, inv...)}
}

// gradSlice pads the adjoint back to the operand's shape: zeros before the
// start, between strided elements and after the last one taken.
func gradSlice(z, g *Op) []*Op {
	x := z.inputs[0]
	v, _ := z.in.Attr("slice")
	dims := v.([]hlo.SliceDim)
	cfg := make(hlo.PaddingConfig, len(dims))
	for i, d := range dims {
		stride := max(d.Stride, 1)
		n := z.Shape().Dims[i]
		last := d.Start
		if n > 0 {
			last = d.Start + (n-1)*stride + 1
		}
		cfg[i] = hlo.PadDim{Lo: d.Start, Hi: x.Shape().Dims[i] - last, Interior: stride - 1}
		if n == 0 {
			cfg[i] = hlo.PadDim{Lo: x.Shape().Dims[i]}
		}
	}
	return []*Op{Pad(g, like(g, 0), cfg)}
}

// gradPad: the operand's adjoint is the adjoint at the operand's places
// (negative padding first undone by padding the adjoint with zeros); the
// padding value's is the sum of the rest.
func gradPad(z, g *Op) []*Op {
	x := z.inputs[0]
	v, _ := z.in.Attr("padding")
	cfg := v.(hlo.PaddingConfig)
	undo := make(hlo.PaddingConfig, len(cfg))
	needUndo := false
	for i, d := range cfg {
		undo[i] = hlo.PadDim{Lo: max(-d.Lo, 0), Hi: max(-d.Hi, 0)}
		needUndo = needUndo || d.Lo < 0 || d.Hi < 0
	}
	full := g
	if needUndo {
		full = Pad(g, like(g, 0), undo)
	}
	starts := make([]int64, len(cfg))
	limits := make([]int64, len(cfg))
	strides := make([]int64, len(cfg))
	for i, d := range cfg {
		starts[i] = max(d.Lo, 0)
		strides[i] = d.Interior + 1
		n := x.Shape().Dims[i]
		limits[i] = starts[i]
		if n > 0 {
			limits[i] = starts[i] + (n-1)*strides[i] + 1
		}
	}
	gx := Slice(full, starts, limits, strides)
	gv := Sub(ReduceSum(g, AllAxes(g)...), ReduceSum(gx, AllAxes(gx)...))
	return []*Op{gx, gv}
}

func gradConcatenate(z, g *Op) []*Op {
	axis := z.in.Dimensions()[0]
	out := make([]*Op, len(z.inputs))
	at := int64(0)
	for i, x := range z.inputs {
		n := x.Shape().Dims[axis]
		out[i] = SliceAxis(g, axis, at, at+n)
		at += n
	}
	return out
}

// gradDynamicSlice writes the adjoint into zeros at the same (clamped)
// starts.
func gradDynamicSlice(z, g *Op) []*Op {
	x := z.inputs[0]
	zeros := z.b.Zeros(x.DType(), x.Dims()...)
	return []*Op{DynamicUpdateSlice(zeros, g, z.inputs[1:]...)}
}

// gradDynamicUpdateSlice: the operand's adjoint is g with the updated
// window zeroed; the update's is g's window.
func gradDynamicUpdateSlice(z, g *Op) []*Op {
	u := z.inputs[1]
	starts := z.inputs[2:]
	gx := DynamicUpdateSlice(g, z.b.Zeros(u.DType(), u.Dims()...), starts...)
	gu := DynamicSlice(g, starts, u.Dims()...)
	return []*Op{gx, gu}
}
