package kernels

import "unsafe"

// Transpose sets dst[i·dr+j] = src[i+j·sc] for i < rows, j < cols: a
// tile of a transposing copy, i contiguous in the source and j in the
// destination. Words of 4 and 8 bytes go through the AVX2 register
// transposes (8×8 and 4×4 squares) where the machine has them; the
// rest, and the edges beyond whole squares, through 4×4 blocks in Go,
// whose loads and stores each touch four lines instead of sixteen.
func Transpose[W any](dst, src []W, rows, cols, dr, sc int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	// Bounds once: the kernels index nothing outside these two.
	_ = dst[(rows-1)*dr+cols-1]
	_ = src[rows-1+(cols-1)*sc]
	var r, c int
	switch unsafe.Sizeof(dst[0]) {
	case 4:
		r, c = transpose32Vec(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), rows, cols, dr, sc)
	case 8:
		r, c = transpose64Vec(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), rows, cols, dr, sc)
	}
	if c > 0 {
		// Squares covered [0, r) × [0, c); the Go loop does the rest.
		transposeGo(dst, src, 0, r, c, cols, dr, sc)
	}
	if c == 0 {
		r = 0
	}
	transposeGo(dst, src, r, rows, 0, cols, dr, sc)
}

// transposeGo copies the block [i0, i1) × [j0, j1) in 4×4 blocks, the
// edges element by element.
func transposeGo[W any](dst, src []W, i0, i1, j0, j1, dr, sc int) {
	i := i0
	for ; i+4 <= i1; i += 4 {
		j := j0
		for ; j+4 <= j1; j += 4 {
			transpose4x4(dst[i*dr+j:], src[i+j*sc:], dr, sc)
		}
		transposeScalar(dst, src, i, i+4, j, j1, dr, sc)
	}
	transposeScalar(dst, src, i, i1, j0, j1, dr, sc)
}

// transpose4x4 sets dst[i·dr + j] = src[i + j·sc] for i, j < 4.
func transpose4x4[W any](dst, src []W, dr, sc int) {
	s0, s1 := src[0:4:4], src[sc:sc+4:sc+4]
	s2, s3 := src[2*sc:2*sc+4:2*sc+4], src[3*sc:3*sc+4:3*sc+4]
	d0, d1 := dst[0:4:4], dst[dr:dr+4:dr+4]
	d2, d3 := dst[2*dr:2*dr+4:2*dr+4], dst[3*dr:3*dr+4:3*dr+4]
	d0[0], d0[1], d0[2], d0[3] = s0[0], s1[0], s2[0], s3[0]
	d1[0], d1[1], d1[2], d1[3] = s0[1], s1[1], s2[1], s3[1]
	d2[0], d2[1], d2[2], d2[3] = s0[2], s1[2], s2[2], s3[2]
	d3[0], d3[1], d3[2], d3[3] = s0[3], s1[3], s2[3], s3[3]
}

// transposeScalar copies the block [i0, i1) × [j0, j1) element by element.
func transposeScalar[W any](dst, src []W, i0, i1, j0, j1, dr, sc int) {
	for i := i0; i < i1; i++ {
		for j := j0; j < j1; j++ {
			dst[i*dr+j] = src[i+j*sc]
		}
	}
}
