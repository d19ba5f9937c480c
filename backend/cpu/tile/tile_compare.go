package tile

import (
	"math"
	"unsafe"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Predicates in tile programs are masks in f32 tiles: true is all one
// bits (a NaN pattern), false is zero, so a select is three integer ops
// with no branch to mispredict (a ReLU gradient's predicate is as random
// as its input). Predicates never leave a program (fusionRoot) or meet
// arithmetic (only select reads them), so the encoding is private to it.

// tileValue: the element types a value inside a tile program may have.
func tileValue(t hlo.DType) bool { return Type(t) || t == hlo.Pred }

type compareDir uint8

// The directions, in kernels.CmpEQ's order.
const (
	cmpEQ compareDir = iota
	cmpNE
	cmpLT
	cmpLE
	cmpGT
	cmpGE
)

// compareDirOf reads an IEEE float comparison's direction (a total-order
// comparison orders NaNs and signed zeros differently and is not fused).
func compareDirOf(in *hlo.Instruction) (compareDir, bool) {
	if typ, _ := in.EnumAttr("type"); typ == "TOTALORDER" {
		return 0, false
	}
	d, _ := in.EnumAttr("direction")
	switch d {
	case "EQ":
		return cmpEQ, true
	case "NE":
		return cmpNE, true
	case "LT":
		return cmpLT, true
	case "LE":
		return cmpLE, true
	case "GT":
		return cmpGT, true
	case "GE":
		return cmpGE, true
	}
	return 0, false
}

func b2f(b bool) float32 { return math.Float32frombits(b2m(b)) }

// b2m is a bool's mask, from its byte (0 or 1) without a branch: a
// comparison of random activations would mispredict half the time.
func b2m(b bool) uint32 { return -uint32(*(*uint8)(unsafe.Pointer(&b))) }

// compareTile sets dst[i] to the mask of a[i] dir b[i] on the vector
// kernels (compareDir's order is kernels'). IEEE: any comparison with NaN
// is false except NE.
func compareTile(dir compareDir, dst, a, b []float32) { kernels.CompareF32(int(dir), dst, a, b) }

// notMask inverts mask tiles.
func notMask(dst, a []float32) {
	d, x := kernels.Words(dst), kernels.Words(a)[:len(dst)]
	for i := range d {
		d[i] = ^x[i]
	}
}
