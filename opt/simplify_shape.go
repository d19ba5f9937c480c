package opt

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

var shapeRules = []rule{
	// Reshape, broadcast, transpose, convert, copy, slice, pad and
	// concatenate that leave their operand as it is.
	{"noop-reshape", ops(hlo.OpReshape, hlo.OpBitcast), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		if x := in.Operands[0]; sameType(x, in) && layoutsAgree(x, in) {
			return x
		}
		return nil
	}},
	{"noop-convert", ops(hlo.OpConvert), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		if x := in.Operands[0]; sameType(x, in) {
			return x
		}
		return nil
	}},
	{"noop-copy", ops(hlo.OpCopy), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		if x := in.Operands[0]; sameType(x, in) && layoutsAgree(x, in) {
			return x
		}
		return nil
	}},
	{"noop-transpose", ops(hlo.OpTranspose), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		if isIota(in.Dimensions()) && sameType(in.Operands[0], in) {
			return in.Operands[0]
		}
		return nil
	}},
	{"noop-broadcast", ops(hlo.OpBroadcast), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		if x := in.Operands[0]; sameType(x, in) && isIota(in.Dimensions()) {
			return x
		}
		return nil
	}},
	{"noop-slice", ops(hlo.OpSlice), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		if x := in.Operands[0]; sameType(x, in) {
			return x // same dimensions means start 0, stride 1, full limit
		}
		return nil
	}},
	{"noop-pad", ops(hlo.OpPad), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		if x := in.Operands[0]; sameType(x, in) && padIsZero(in) {
			return x
		}
		return nil
	}},
	{"noop-concatenate", ops(hlo.OpConcatenate), func(_ *builder, in *hlo.Instruction) *hlo.Instruction {
		if len(in.Operands) == 1 && sameType(in.Operands[0], in) {
			return in.Operands[0]
		}
		return nil
	}},
	// reshape(reshape(x)) = reshape(x): only the final dimensions matter.
	{"reshape-of-reshape", ops(hlo.OpReshape), func(b *builder, in *hlo.Instruction) *hlo.Instruction {
		x := in.Operands[0]
		if x.Opcode != hlo.OpReshape {
			return nil
		}
		return b.withShape(hlo.OpReshape, in.Shape, []*hlo.Instruction{x.Operands[0]})
	}},
	// A transpose that moves only dimensions of size 1 keeps every
	// element where it was: a reshape (XLA's "transpose is a bitcast").
	// Exporters write these all the time — attention's batch-first
	// (L, 1, E) → (1, L, E) — and a reshape is free where a transpose
	// makes a fusion gather.
	{"transpose-unit-dims", ops(hlo.OpTranspose), func(b *builder, in *hlo.Instruction) *hlo.Instruction {
		x := in.Operands[0]
		if !in.Shape.IsArray() || isIota(in.Dimensions()) {
			return nil
		}
		last := int64(-1)
		for _, d := range in.Dimensions() {
			if x.Shape.Dims[d] == 1 {
				continue
			}
			if d < last {
				return nil
			}
			last = d
		}
		return b.withShape(hlo.OpReshape, in.Shape, []*hlo.Instruction{x})
	}},
	// transpose(transpose(x, p), q): output dim i is x's dim p[q[i]].
	{"transpose-of-transpose", ops(hlo.OpTranspose), func(b *builder, in *hlo.Instruction) *hlo.Instruction {
		x := in.Operands[0]
		if x.Opcode != hlo.OpTranspose {
			return nil
		}
		p, q := x.Dimensions(), in.Dimensions()
		perm := make([]int64, len(q))
		for i, d := range q {
			perm[i] = p[d]
		}
		return b.add(hlo.OpTranspose, []*hlo.Instruction{x.Operands[0]}, hlo.Attr{Name: "dimensions", Value: perm})
	}},
	// broadcast(broadcast(x, d1), d2): x's dim i lands at d2[d1[i]].
	{"broadcast-of-broadcast", ops(hlo.OpBroadcast), func(b *builder, in *hlo.Instruction) *hlo.Instruction {
		x := in.Operands[0]
		if x.Opcode != hlo.OpBroadcast {
			return nil
		}
		d1, d2 := x.Dimensions(), in.Dimensions()
		pos := make([]int64, len(d1))
		for i, d := range d1 {
			pos[i] = d2[d]
		}
		return b.broadcast(x.Operands[0], in.Shape.Dims, pos)
	}},
	{"slice-of-slice", ops(hlo.OpSlice), sliceOfSlice},
	{"concatenate-adjacent-slices", ops(hlo.OpConcatenate), concatAdjacentSlices},
}

func isIota(d []int64) bool {
	for i, v := range d {
		if v != int64(i) {
			return false
		}
	}
	return true
}

// layoutsAgree: removing an instruction must not change the layout a
// consumer sees; shapes without layouts agree with anything.
func layoutsAgree(x, in *hlo.Instruction) bool {
	if x.Shape.Layout == nil || in.Shape.Layout == nil {
		return true
	}
	return slices.Equal(x.Shape.Layout.MinorToMajor, in.Shape.Layout.MinorToMajor)
}

func padIsZero(in *hlo.Instruction) bool {
	v, _ := in.Attr("padding")
	cfg, ok := v.(hlo.PaddingConfig)
	if !ok {
		return false
	}
	for _, d := range cfg {
		if d != (hlo.PadDim{}) {
			return false
		}
	}
	return true
}

func sliceDims(in *hlo.Instruction) []hlo.SliceDim {
	v, _ := in.Attr("slice")
	d, _ := v.([]hlo.SliceDim)
	return d
}

// sliceOfSlice composes two slices: the outer slice's element k of a
// dimension is the inner's element start2 + k*stride2, which is x's
// element start1 + (start2 + k*stride2)*stride1.
func sliceOfSlice(b *builder, in *hlo.Instruction) *hlo.Instruction {
	x := in.Operands[0]
	if x.Opcode != hlo.OpSlice {
		return nil
	}
	inner, outer := sliceDims(x), sliceDims(in)
	if len(inner) != len(outer) {
		return nil
	}
	dims := make([]hlo.SliceDim, len(outer))
	for i, o := range outer {
		s1, k1 := inner[i].Start, inner[i].Stride
		n := in.Shape.Dims[i]
		start := s1 + o.Start*k1
		stride := k1 * o.Stride
		limit := start // an empty result
		if n > 0 {
			limit = start + (n-1)*stride + 1
		}
		dims[i] = hlo.SliceDim{Start: start, Limit: limit, Stride: stride}
	}
	return b.add(hlo.OpSlice, []*hlo.Instruction{x.Operands[0]}, hlo.Attr{Name: "slice", Value: dims})
}

// concatAdjacentSlices merges neighbouring operands that are unit-stride
// slices of the same value, contiguous along the concatenation dimension
// and equal elsewhere, into one slice.
func concatAdjacentSlices(b *builder, in *hlo.Instruction) *hlo.Instruction {
	d := in.Dimensions()
	if len(d) != 1 || len(in.Operands) < 2 {
		return nil
	}
	dim := d[0]
	var out []*hlo.Instruction
	merged := false
	for _, o := range in.Operands {
		if n := len(out); n > 0 {
			if s, ok := joinSlices(b, out[n-1], o, dim); ok {
				out[n-1] = s
				merged = true
				continue
			}
		}
		out = append(out, o)
	}
	if !merged {
		return nil
	}
	if len(out) == 1 {
		return out[0]
	}
	return b.add(hlo.OpConcatenate, out, hlo.Attr{Name: "dimensions", Value: []int64{dim}})
}

func joinSlices(b *builder, p, q *hlo.Instruction, dim int64) (*hlo.Instruction, bool) {
	if p.Opcode != hlo.OpSlice || q.Opcode != hlo.OpSlice || p.Operands[0] != q.Operands[0] {
		return nil, false
	}
	a, c := sliceDims(p), sliceDims(q)
	for i := range a {
		switch {
		case a[i].Stride != 1 || c[i].Stride != 1:
			return nil, false
		case int64(i) == dim && a[i].Limit != c[i].Start:
			return nil, false
		case int64(i) != dim && a[i] != c[i]:
			return nil, false
		}
	}
	dims := slices.Clone(a)
	dims[dim].Limit = c[dim].Limit
	s := b.add(hlo.OpSlice, []*hlo.Instruction{p.Operands[0]}, hlo.Attr{Name: "slice", Value: dims})
	return s, s != nil
}
