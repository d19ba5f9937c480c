package cpu

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// Narrow floats (bf16, f16) on the f32 kernels: operands are widened
// exactly, the kernel accumulates in f32, and the result is rounded once
// to the narrow type — how XLA's CPU backend runs bf16 dots and
// convolutions.

// kernelType reports whether t runs on the f32 kernels, and its format if
// it is narrow.
func kernelType(t hlo.DType) (minifloat.Format, bool, bool) {
	switch t {
	case hlo.F32:
		return minifloat.Format{}, false, true
	case hlo.BF16:
		return minifloat.BF16, true, true
	case hlo.F16:
		return minifloat.F16, true, true
	}
	return minifloat.Format{}, false, false
}

// asF32 returns l's values as f32: its own storage for f32, a widened copy
// for bf16 and f16.
func asF32(l *hlo.Literal) []float32 {
	if d, ok := l.Data().([]float32); ok {
		return d
	}
	f, _, _ := kernelType(l.DType())
	bits := l.Data().([]uint16)
	out := make([]float32, len(bits))
	if f == minifloat.BF16 { // bf16 is f32's top half
		for i, b := range bits {
			out[i] = math.Float32frombits(uint32(b) << 16)
		}
		return out
	}
	tab := f.Values()
	for i, b := range bits {
		out[i] = float32(tab[b])
	}
	return out
}

// f32Into returns the f32 slice to compute out into: out's own storage
// for f32; for a narrow type a scratch slice that finish rounds into out.
func f32Into(out *hlo.Literal) (buf []float32, finish func()) {
	if d, ok := out.Data().([]float32); ok {
		return d, func() {}
	}
	f, _, _ := kernelType(out.DType())
	bits := out.Data().([]uint16)
	buf = make([]float32, len(bits))
	return buf, func() { encodeNarrow(f, bits, buf) }
}

// encodeNarrow rounds src to the format f into dst: bf16 by rounding the
// bit pattern (what minifloat does, without a call per element), other
// formats through minifloat.
func encodeNarrow(f minifloat.Format, dst []uint16, src []float32) {
	if f != minifloat.BF16 {
		for i, v := range src {
			dst[i] = f.FromFloat32(v)
		}
		return
	}
	dst = dst[:len(src)]
	for i, v := range src {
		b := math.Float32bits(v)
		if v != v {
			dst[i] = minifloat.BF16.FromFloat32(v) // the canonical NaN
			continue
		}
		dst[i] = uint16((b + 0x7fff + (b>>16)&1) >> 16)
	}
}
