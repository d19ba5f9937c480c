package kernels

import "unsafe"

// CopyRuns copies rows runs of n contiguous elements, run r from
// src[s+r·ss:] to dst[d+r·ds:], on the vector kernel where the machine
// has one (runs of 4 bytes or more, strides not negative), and reports
// whether it did; the caller copies otherwise. dst and src must not
// overlap.
func CopyRuns[W any](dst, src []W, d, s, rows, n, ds, ss int) bool {
	size := int(unsafe.Sizeof(*new(W)))
	if rows <= 0 || n <= 0 || ds < 0 || ss < 0 || n*size < 4 {
		return false
	}
	// Bounds once: the kernel touches nothing outside these runs.
	_, _ = dst[d], dst[d+(rows-1)*ds+n-1]
	_, _ = src[s], src[s+(rows-1)*ss+n-1]
	return copyRunsVec(unsafe.Pointer(&dst[d]), unsafe.Pointer(&src[s]), rows, n*size, ds*size, ss*size)
}
