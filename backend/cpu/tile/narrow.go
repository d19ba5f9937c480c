package tile

import (
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// Narrow floats (bf16, f16) on the f32 kernels: operands are widened
// exactly, the kernel accumulates in f32, and the result is rounded once
// to the narrow type — how XLA's CPU backend runs bf16 dots and
// convolutions.

// KernelType reports whether t runs on the f32 kernels, and its format if
// it is narrow.
func KernelType(t hlo.DType) (minifloat.Format, bool, bool) {
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

// AsF32 returns l's values as f32: its own storage for f32; for bf16 and
// f16 a widened copy in pooled scratch, which release hands back once the
// kernel is done with it.
func AsF32(l *hlo.Literal, threads int) (vals []float32, release func()) {
	if d, ok := l.Data().([]float32); ok {
		return d, func() {}
	}
	f, _, _ := KernelType(l.DType())
	bits := l.Data().([]uint16)
	buf := kernels.GetF32(len(bits))
	convertInParallel(len(bits), threads, func(lo, hi int) { DecodeNarrow(f, buf[lo:hi], bits[lo:hi]) })
	return buf, func() { kernels.PutF32(buf) }
}

// F32Into returns the f32 slice to compute out into: out's own storage
// for f32; for a narrow type pooled scratch that finish rounds into out
// (and hands back).
func F32Into(out *hlo.Literal, threads int) (buf []float32, finish func()) {
	if d, ok := out.Data().([]float32); ok {
		return d, func() {}
	}
	f, _, _ := KernelType(out.DType())
	bits := out.Data().([]uint16)
	// A local, not the named result: a closure capturing buf moved it to
	// the heap on every call, the f32 path's too.
	s := kernels.GetF32(len(bits))
	return s, func() {
		convertInParallel(len(bits), threads, func(lo, hi int) { EncodeNarrow(f, bits[lo:hi], s[lo:hi]) })
		kernels.PutF32(s)
	}
}

// EncodeNarrow rounds src to the format f into dst (bf16 and f16 by the
// vector kernels).
func EncodeNarrow(f minifloat.Format, dst []uint16, src []float32) {
	switch f {
	case minifloat.BF16:
		kernels.F32ToBF16(dst, src)
		return
	case minifloat.F16:
		kernels.F32ToF16(dst, src)
		return
	}
	f.EncodeFloat32(dst, src)
}

// DecodeNarrow widens the format f's bits src into dst (bf16 and f16 by
// the vector kernels).
func DecodeNarrow(f minifloat.Format, dst []float32, src []uint16) {
	switch f {
	case minifloat.BF16:
		kernels.BF16ToF32(dst, src)
		return
	case minifloat.F16:
		kernels.F16ToF32(dst, src)
		return
	}
	f.DecodeFloat32(dst, src)
}

// convertInParallel runs convert over [0, n) in one piece per thread when
// n is large enough to pay for waking them (kernels.MinParallelWork).
func convertInParallel(n, threads int, convert func(lo, hi int)) {
	if threads <= 1 || n < kernels.MinParallelWork {
		convert(0, n)
		return
	}
	kernels.Parallel(threads, func(t int) { convert(t*n/threads, (t+1)*n/threads) })
}
