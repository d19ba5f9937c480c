package kernels

import "unsafe"

// TileOps is an epilogue the direct convolution's kernels apply to a tile
// of C as they store it, instead of a pass over each finished block: the
// elementwise finish a model writes after most convolutions (the bias,
// the residual of a ResNet block, the ReLU). Per element (i, j) of C's
// matrix, in this order, each op only where Flags has it:
//
//	x = x + Bias[j]                (OpsBias; Bias[j] + x with OpsBiasFirst)
//	r = Res[i*LdRes + j]           (OpsRes)
//	r = r + ResBias[j]             (OpsResBias; ResBias[j] + r with OpsResBiasFirst)
//	x = x + r                      (OpsRes; r + x with OpsResFirst)
//	x = maximum(x, Floor)          (OpsFloor; Floor not NaN)
//	x = minimum(x, Ceil)           (OpsCeil; Ceil not NaN: with OpsFloor, ReLU6's clamp)
//
// The operands keep the epilogue's order, so its NaN payloads too, and
// the ops are the generated epilogue's own instructions: the bits are the
// same as the pass it replaces. The epilogue of the ResNet block's last
// pointwise convolution (56², 32 → 128 channels) was a third of the
// fusion, reading C back from L2 and the residual beside it. (A residual
// with a bias of its own is a stage's first block: its downsampling
// convolution's fusion adds the bias of the block's last convolution.)
type TileOps struct {
	Bias    []float32
	Res     []float32
	LdRes   int
	ResBias []float32
	Floor   float32
	Ceil    float32
	Flags   int
}

// The ops of TileOps.Flags (the kernels' flags parameter).
const (
	OpsBias = 1 << iota
	OpsBiasFirst
	OpsRes
	OpsResFirst
	OpsFloor
	OpsResBias
	OpsResBiasFirst
	OpsCeil
)

// fits reports whether ops can finish the whole of out, C's rows of ldc
// elements, n columns: its operands long enough and the residual apart
// from out (a row the kernels compute twice, as overlapping groups do,
// must find the residual unchanged).
func (ops *TileOps) fits(out []float32, ldc, n int) bool {
	switch {
	case ops == nil || ops.Flags == 0 || len(out) == 0 || n > ldc:
		return false
	case ops.Flags&OpsBias != 0 && len(ops.Bias) < n, ops.Flags&OpsResBias != 0 && len(ops.ResBias) < n:
		return false
	case ops.Flags&OpsRes == 0:
		return true
	}
	rows := (len(out) + ldc - 1) / ldc
	if ops.LdRes < n || len(ops.Res) < (rows-1)*ops.LdRes+n {
		return false
	}
	return !overlaps(ops.Res, out)
}

// overlaps reports whether a and b share memory.
func overlaps(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(len(b))*4 && b0 < a0+uintptr(len(a))*4
}

// operands returns the bias, residual and residual bias pointers of the
// tile of rows rows and 32 columns at row, col of C (nil where ops has
// none), checking that the tile lies inside them.
func (ops *TileOps) operands(rows, row, col int) (bias, res, resBias *float32) {
	return ops.operandsOf(rows, 2*sgemmNR, row, col)
}

// operandsOf is operands for a tile cols columns wide (the AVX2 kernels'
// 16).
func (ops *TileOps) operandsOf(rows, cols, row, col int) (bias, res, resBias *float32) {
	if ops.Flags&OpsBias != 0 {
		_ = ops.Bias[col+cols-1]
		bias = &ops.Bias[col]
	}
	if ops.Flags&OpsRes != 0 {
		_ = ops.Res[(row+rows-1)*ops.LdRes+col+cols-1]
		res = &ops.Res[row*ops.LdRes+col]
	}
	if ops.Flags&OpsResBias != 0 {
		_ = ops.ResBias[col+cols-1]
		resBias = &ops.ResBias[col]
	}
	return bias, res, resBias
}

// FromRow is ops for C's rows from r0 on (nil: none): a product's
// whose C starts at row r0 of ops' matrix.
func (ops *TileOps) FromRow(r0 int) *TileOps {
	if ops == nil {
		return nil
	}
	o := *ops
	if o.Flags&OpsRes != 0 {
		o.Res = o.Res[r0*o.LdRes:]
	}
	return &o
}
