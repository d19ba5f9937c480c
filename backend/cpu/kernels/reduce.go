package kernels

import "math"

// sumBlock is how many floats one kernel call sums in float32: each of
// the kernel's 32 lanes then adds only 128 terms, so the float32 error of
// a block stays near 2^-17 relative at worst, and the blocks' sums are
// added in float64, so the length of x does not add to the error.
const sumBlock = 4096

// colBlock is how many rows SumColsF32 adds in float32 before it moves
// the partial column sums into float64, for the same reason.
const colBlock = 256

// SumF32 returns the sum of x (blocked: float32 within blocks of 4096,
// float64 across them).
func SumF32(x []float32) float32 {
	var s float64
	for len(x) > 0 {
		n := min(len(x), sumBlock)
		s += float64(sumBlockF32(x[:n]))
		x = x[n:]
	}
	return float32(s)
}

// MaxF32 returns the largest element of x, NaN if any is NaN, -Inf if x
// is empty. Of equal zeros either sign may be returned.
func MaxF32(x []float32) float32 { return maxF32(x) }

// MinF32 returns the smallest element of x, NaN if any is NaN, +Inf if x
// is empty. Of equal zeros either sign may be returned.
func MinF32(x []float32) float32 { return minF32(x) }

// SumRowsF32 sets dst[i] to the sum of row i of the row-major rows×cols
// matrix x.
func SumRowsF32(dst, x []float32, rows, cols int) { foldEachRow(opSumRows, SumF32, dst, x, rows, cols) }

// MaxRowsF32 sets dst[i] to the largest element of row i (as MaxF32).
func MaxRowsF32(dst, x []float32, rows, cols int) { foldEachRow(opMaxRows, maxF32, dst, x, rows, cols) }

// MinRowsF32 sets dst[i] to the smallest element of row i (as MinF32).
func MinRowsF32(dst, x []float32, rows, cols int) { foldEachRow(opMinRows, minF32, dst, x, rows, cols) }

// foldEachRow sets dst[i] to fold of row i of x: one assembly call a
// row where rowsVec takes the rows, fold itself otherwise (the same
// bits either way).
func foldEachRow(op int, fold func([]float32) float32, dst, x []float32, rows, cols int) {
	x, dst = x[:rows*cols], dst[:rows]
	if rowsVec(op, dst, x, cols) {
		return
	}
	for i := range dst {
		dst[i] = fold(x[i*cols : (i+1)*cols])
	}
}

// The row folds rowsVec runs.
const (
	opSumRows = iota
	opMaxRows
	opMinRows
)

// SumColsF32 sets dst[j] to the sum of column j of the row-major
// rows×cols matrix x, adding whole rows at a time (vectorized across
// columns), in float32 within blocks of colBlock rows and float64 across
// blocks.
func SumColsF32(dst, x []float32, rows, cols int) {
	x, dst = x[:rows*cols], dst[:cols]
	if rows <= colBlock {
		sumColsBlock(dst, x, rows, cols)
		return
	}
	acc := make([]float64, cols)
	for r := 0; r < rows; r += colBlock {
		n := min(colBlock, rows-r)
		sumColsBlock(dst, x[r*cols:(r+n)*cols], n, cols)
		for j, v := range dst {
			acc[j] += float64(v)
		}
	}
	for j, v := range acc {
		dst[j] = float32(v)
	}
}

// sumColsBlock sets dst to the column sums of a block of rows.
func sumColsBlock(dst, x []float32, rows, cols int) {
	clear(dst)
	for i := range rows {
		addTo(dst, x[i*cols:(i+1)*cols])
	}
}

// MaxColsF32 sets dst[j] to the largest element of column j (NaN if any
// is NaN, -Inf if rows is 0).
func MaxColsF32(dst, x []float32, rows, cols int) {
	x, dst = x[:rows*cols], dst[:cols]
	if rows == 0 {
		for j := range dst {
			dst[j] = float32(math.Inf(-1))
		}
		return
	}
	copy(dst, x[:cols])
	for i := 1; i < rows; i++ {
		maxTo(dst, x[i*cols:(i+1)*cols])
	}
}

// sumGo sums x in eight interleaved float32 accumulators, like the
// kernel's lanes.
func sumGo(x []float32) float32 {
	var acc [8]float32
	n := len(x) &^ 7
	for i := 0; i < n; i += 8 {
		v := x[i : i+8 : i+8]
		for l := range acc {
			acc[l] += v[l]
		}
	}
	s := ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
	for _, v := range x[n:] {
		s += v
	}
	return s
}

// maxGo and minGo rely on the builtin max and min returning NaN if
// either argument is NaN.
func maxGo(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

func minGo(x []float32) float32 {
	m := float32(math.Inf(1))
	for _, v := range x {
		m = min(m, v)
	}
	return m
}

func addToGo(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] += v
	}
}

func maxToGo(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = max(dst[i], v)
	}
}

// AccumulateColsF32 adds rows rows of len(d) values, stride apart in src, into
// d: d[j] += src[j] + src[stride+j] + ..., in row order, so each column
// sums exactly as a loop over the rows does (a bias gradient, a column
// of a batch).
func AccumulateColsF32(d, src []float32, rows, stride int) {
	j := colSumVec(d, src, rows, stride)
	if j == len(d) {
		return
	}
	rest := d[j:]
	for i := range rows {
		row := src[i*stride+j : i*stride+len(d)]
		for k, v := range row {
			rest[k] += v
		}
	}
}
