package cpu

import (
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
	f.DecodeFloat32(out, bits)
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

// encodeNarrow rounds src to the format f into dst.
func encodeNarrow(f minifloat.Format, dst []uint16, src []float32) { f.EncodeFloat32(dst, src) }
