package hlo

import (
	"strconv"
	"strings"
)

// WindowDim is one dimension of a window (XLA's WindowDimension).
type WindowDim struct {
	Size, Stride, PadLo, PadHi, LhsDilation, RhsDilation int64
	Reversal                                             bool
}

// Window is the window of convolution, reduce-window and select-and-scatter.
type Window struct {
	Dims []WindowDim
}

// NewWindow returns a window of the given sizes with unit strides and
// dilations and no padding.
func NewWindow(sizes ...int64) *Window {
	w := &Window{Dims: make([]WindowDim, len(sizes))}
	for i, s := range sizes {
		w.Dims[i] = WindowDim{Size: s, Stride: 1, LhsDilation: 1, RhsDilation: 1}
	}
	return w
}

// String prints the window as XLA does: only the fields that differ from
// their defaults, `size=3x3 stride=2x2 pad=0_1x0_1 ...`.
func (w *Window) String() string {
	var b strings.Builder
	b.WriteByte('{')
	field := func(name string, show func(WindowDim) bool, format func(*strings.Builder, WindowDim)) {
		any := false
		for _, d := range w.Dims {
			any = any || show(d)
		}
		if !any {
			return
		}
		if b.Len() > 1 {
			b.WriteByte(' ')
		}
		b.WriteString(name)
		b.WriteByte('=')
		for i, d := range w.Dims {
			if i > 0 {
				b.WriteByte('x')
			}
			format(&b, d)
		}
	}
	num := func(get func(WindowDim) int64) func(*strings.Builder, WindowDim) {
		return func(b *strings.Builder, d WindowDim) { b.WriteString(strconv.FormatInt(get(d), 10)) }
	}
	field("size", func(WindowDim) bool { return true }, num(func(d WindowDim) int64 { return d.Size }))
	field("stride", func(d WindowDim) bool { return d.Stride != 1 }, num(func(d WindowDim) int64 { return d.Stride }))
	field("pad", func(d WindowDim) bool { return d.PadLo != 0 || d.PadHi != 0 }, func(b *strings.Builder, d WindowDim) {
		b.WriteString(strconv.FormatInt(d.PadLo, 10))
		b.WriteByte('_')
		b.WriteString(strconv.FormatInt(d.PadHi, 10))
	})
	field("lhs_dilate", func(d WindowDim) bool { return d.LhsDilation != 1 }, num(func(d WindowDim) int64 { return d.LhsDilation }))
	field("rhs_dilate", func(d WindowDim) bool { return d.RhsDilation != 1 }, num(func(d WindowDim) int64 { return d.RhsDilation }))
	field("rhs_reversal", func(d WindowDim) bool { return d.Reversal }, func(b *strings.Builder, d WindowDim) {
		if d.Reversal {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	})
	if len(w.Dims) == 0 {
		return "{}"
	}
	b.WriteByte('}')
	return b.String()
}

// PadDim is one dimension of a pad instruction's padding config.
type PadDim struct{ Lo, Hi, Interior int64 }

// PaddingConfig is the `padding=` attribute of pad.
type PaddingConfig []PadDim

// String prints lo_hi per dimension joined by x, with _interior on every
// dimension when any dimension has interior padding (as XLA does).
func (p PaddingConfig) String() string {
	interior := false
	for _, d := range p {
		interior = interior || d.Interior != 0
	}
	var b strings.Builder
	for i, d := range p {
		if i > 0 {
			b.WriteByte('x')
		}
		b.WriteString(strconv.FormatInt(d.Lo, 10))
		b.WriteByte('_')
		b.WriteString(strconv.FormatInt(d.Hi, 10))
		if interior {
			b.WriteByte('_')
			b.WriteString(strconv.FormatInt(d.Interior, 10))
		}
	}
	return b.String()
}

// SliceDim is one dimension of a slice's `slice=` attribute.
type SliceDim struct{ Start, Limit, Stride int64 }

// SliceString prints {[0:2], [1:5]}, with strides only when some stride is not 1.
func SliceString(dims []SliceDim) string {
	unit := true
	for _, d := range dims {
		unit = unit && d.Stride == 1
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, d := range dims {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('[')
		b.WriteString(strconv.FormatInt(d.Start, 10))
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(d.Limit, 10))
		if !unit {
			b.WriteByte(':')
			b.WriteString(strconv.FormatInt(d.Stride, 10))
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.String()
}

// ConvDimNumbers is XLA's ConvolutionDimensionNumbers, written in text as
// dim_labels such as b01f_01io->b01f.
type ConvDimNumbers struct {
	InputBatch, InputFeature   int64
	InputSpatial               []int64
	KernelInput, KernelOutput  int64
	KernelSpatial              []int64
	OutputBatch, OutputFeature int64
	OutputSpatial              []int64
}

// String prints the dim labels: for each dimension of each of the three
// shapes the letter of its role, or the index of its spatial dimension.
func (c *ConvDimNumbers) String() string {
	label := func(rank int, a, b int64, ca, cb byte, spatial []int64) string {
		out := make([]byte, rank)
		for i := range out {
			out[i] = '?'
		}
		set := func(d int64, ch byte) {
			if d >= 0 && int(d) < rank {
				out[d] = ch
			}
		}
		set(a, ca)
		set(b, cb)
		for i, d := range spatial {
			set(d, spatialLabel(i))
		}
		return string(out)
	}
	// Each label is as long as its highest assigned dimension: positions
	// with no role print as '?'.
	rank := func(a, b int64, spatial []int64) int {
		r := max(a, b)
		for _, d := range spatial {
			r = max(r, d)
		}
		return int(r + 1)
	}
	return label(rank(c.InputBatch, c.InputFeature, c.InputSpatial), c.InputBatch, c.InputFeature, 'b', 'f', c.InputSpatial) + "_" +
		label(rank(c.KernelInput, c.KernelOutput, c.KernelSpatial), c.KernelInput, c.KernelOutput, 'i', 'o', c.KernelSpatial) + "->" +
		label(rank(c.OutputBatch, c.OutputFeature, c.OutputSpatial), c.OutputBatch, c.OutputFeature, 'b', 'f', c.OutputSpatial)
}

// spatialLabel is the character XLA uses for spatial dimension i: digits,
// then letters for the (rare) convolutions with more than ten.
func spatialLabel(i int) byte {
	if i < 10 {
		return byte('0' + i)
	}
	return byte('a' + i - 10)
}
