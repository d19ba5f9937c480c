package collective

import (
	"sync"
	"unsafe"
)

// Arrays are row-major, so a piece of a split along dimension d is
// contiguous only when every dimension before d is 1 (outer == 1). Along
// any other dimension an array is viewed as [outer][k][piece] bytes,
// and piece j of every row is gathered into, or scattered from, a
// contiguous block [outer][piece].

// gatherBlock copies piece j of each row of src, [outer][k][piece], into
// blk, [outer][piece].
func gatherBlock(blk, src []byte, j, outer, k, piece int) {
	for o := range outer {
		copy(blk[o*piece:(o+1)*piece], src[(o*k+j)*piece:])
	}
}

// scatterBlock copies blk, [outer][piece], into piece j of each row of
// dst, [outer][k][piece].
func scatterBlock(dst, blk []byte, j, outer, k, piece int) {
	for o := range outer {
		copy(dst[(o*k+j)*piece:(o*k+j+1)*piece], blk[o*piece:])
	}
}

// blocks cuts buf into k consecutive blocks of n bytes.
func blocks(buf []byte, k, n int) [][]byte {
	out := make([][]byte, k)
	for j := range out {
		out[j] = buf[j*n : (j+1)*n : (j+1)*n]
	}
	return out
}

// scratchPool recycles the buffers collectives receive into, which for
// a large all-reduce are most of its operand's size each execution.
var scratchPool sync.Pool

// buffer is scratch storage aligned for every element type (Go aligns
// complex128 to 8 bytes, as []uint64 is).
type buffer struct{ words []uint64 }

// scratch returns a buffer of at least n bytes; give it back with release.
func scratch(n int) *buffer {
	words := (n + 7) / 8
	if b, ok := scratchPool.Get().(*buffer); ok && cap(b.words) >= words {
		return b
	}
	return &buffer{words: make([]uint64, words)}
}

// bytes is the buffer's first n bytes.
func (b *buffer) bytes(n int) []byte {
	w := b.words[:cap(b.words)]
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), 8*len(w))[:n:n]
}

func (b *buffer) release() { scratchPool.Put(b) }
