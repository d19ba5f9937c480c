package collective

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// A box of a row-major array, as the in-place collective-permute reads
// and writes it: start indices and sizes per dimension. Its bytes are a
// series of contiguous runs, one per index of the dimensions before the
// first one it does not span fully (with every later one spanned).

// forEachRun calls f(off, n) for each contiguous run of bytes of the box
// start+size of an array of dims with es-byte elements, in row-major
// order of the box.
func forEachRun(dims, start, size []int64, es int, f func(off, n int)) {
	r := len(dims)
	if r == 0 {
		f(0, es)
		return
	}
	for _, s := range size {
		if s == 0 {
			return
		}
	}
	stride := make([]int, r+1)
	stride[r] = es
	for d := r - 1; d >= 0; d-- {
		stride[d] = stride[d+1] * int(dims[d])
	}
	// inner is the outermost dimension of the run: every dimension after
	// it is spanned whole.
	inner := r - 1
	for inner > 0 && size[inner] == dims[inner] {
		inner--
	}
	run := int(size[inner]) * stride[inner+1]
	idx := make([]int64, inner) // position within the box, dims [0, inner)
	for {
		off := int(start[inner]) * stride[inner+1]
		for d := range inner {
			off += int(start[d]+idx[d]) * stride[d+1]
		}
		f(off, run)
		d := inner - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < size[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// packBox copies the box of src (an array of dims) into dst, densely.
func packBox(dst, src []byte, dims, start, size []int64, es int) {
	pos := 0
	forEachRun(dims, start, size, es, func(off, n int) {
		copy(dst[pos:pos+n], src[off:off+n])
		pos += n
	})
}

// unpackBox copies a dense box, src, into the box of dst (an array of
// dims).
func unpackBox(dst, src []byte, dims, start, size []int64, es int) {
	pos := 0
	forEachRun(dims, start, size, es, func(off, n int) {
		copy(dst[off:off+n], src[pos:pos+n])
		pos += n
	})
}

// boxBytes is the size of a dense box of size with es-byte elements.
func boxBytes(size []int64, es int) int {
	n := es
	for _, s := range size {
		n *= int(s)
	}
	return n
}

// clampStart is XLA's dynamic-slice rule for start indices read at run
// time: each is clamped so that the box lies inside the array.
func clampStart(start, size, dims []int64) []int64 {
	out := make([]int64, len(start))
	for d, s := range start {
		out[d] = min(max(s, 0), dims[d]-size[d])
	}
	return out
}

// intValues reads every element of an integer array (or scalar) literal.
func intValues(l *hlo.Literal, what string) ([]int64, error) {
	s := l.Shape()
	if !s.IsArray() || !s.DType.IsInteger() || l.IsElided() || l.Data() == nil {
		return nil, fmt.Errorf("%s is %s: want integers with values", what, s.HumanString())
	}
	out := make([]int64, l.Len())
	for i := range out {
		out[i] = l.GetInt64(i)
	}
	return out, nil
}

// sameStorage reports whether a and b are the same bytes (a result
// assigned its operand's buffer), so copying one to the other is a no-op.
func sameStorage(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
