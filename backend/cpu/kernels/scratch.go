package kernels

import (
	"math/bits"
	"sync"
	"unsafe"
)

// f32Scratch pools scratch buffers (relayouts, widened narrow operands,
// results before rounding) by size class, capacities of 2^k floats: a
// model converts the same shapes on every call, and fresh memory costs
// more than the conversion (on these machines the first touch of a page
// runs at about 2 GB/s). One pool for all sizes handed a small buffer to
// a large request, which then allocated afresh.
var f32Scratch [64]sync.Pool // of *[]float32, by log2 of the capacity

// GetF32 returns a scratch buffer of n floats (contents undefined).
func GetF32(n int) []float32 {
	k := bits.Len(uint(max(n, 1) - 1)) // 2^k >= n
	if v, ok := f32Scratch[k].Get().(*[]float32); ok {
		return (*v)[:n]
	}
	return make([]float32, n, 1<<k)
}

// PutF32 returns a buffer GetF32 gave to the pool.
func PutF32(b []float32) {
	if c := cap(b); c > 0 && c&(c-1) == 0 {
		f32Scratch[bits.Len(uint(c))-1].Put(&b)
	}
}

// slicePool pools slices of T for reuse as scratch: fresh memory costs a
// page fault per 4 KiB on first touch, more than most kernels' work on it.
type slicePool[T any] struct{ p sync.Pool }

// get returns a slice of at least n elements (contents undefined).
func (s *slicePool[T]) get(n int) []T {
	if b, ok := s.p.Get().(*[]T); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]T, n)
}

func (s *slicePool[T]) put(b []T) { s.p.Put(&b) }

// Words views float32s as their bit patterns (predicate masks, sign bits).
func Words(f []float32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(f))), len(f))
}
