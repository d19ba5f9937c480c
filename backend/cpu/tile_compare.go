package cpu

import (
	"math"

	"github.com/axle-ml/axle/hlo"
)

// Predicates in tile programs are masks in f32 tiles: true is all one
// bits (a NaN pattern), false is zero, so a select is three integer ops
// with no branch to mispredict (a ReLU gradient's predicate is as random
// as its input). Predicates never leave a program (fusionRoot) or meet
// arithmetic (only select reads them), so the encoding is private to it.

// tileValue: the element types a value inside a tile program may have.
func tileValue(t hlo.DType) bool { return tileType(t) || t == hlo.Pred }

type compareDir uint8

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

// trueMask is a true predicate's bits.
const trueMask = ^uint32(0)

func b2f(b bool) float32 { return math.Float32frombits(b2m(b)) }

func b2m(b bool) uint32 {
	var m uint32
	if b {
		m = trueMask
	}
	return m
}

// compareTile sets dst[i] to the mask of a[i] dir b[i]. Go's float
// comparisons are IEEE's: any comparison with NaN is false except NE.
func compareTile(dir compareDir, dstF, a, b []float32) {
	dst := asWords(dstF)
	a, b = a[:len(dst)], b[:len(dst)]
	switch dir {
	case cmpEQ:
		for i := range dst {
			dst[i] = b2m(a[i] == b[i])
		}
	case cmpNE:
		for i := range dst {
			dst[i] = b2m(a[i] != b[i])
		}
	case cmpLT:
		for i := range dst {
			dst[i] = b2m(a[i] < b[i])
		}
	case cmpLE:
		for i := range dst {
			dst[i] = b2m(a[i] <= b[i])
		}
	case cmpGT:
		for i := range dst {
			dst[i] = b2m(a[i] > b[i])
		}
	case cmpGE:
		for i := range dst {
			dst[i] = b2m(a[i] >= b[i])
		}
	}
}

// selectTile sets dst[i] = b[i] where the mask p[i] is true, else c[i].
func selectTile(dstF, pF, bF, cF []float32) {
	dst := asWords(dstF)
	p, b, c := asWords(pF)[:len(dst)], asWords(bF)[:len(dst)], asWords(cF)[:len(dst)]
	for i := range dst {
		dst[i] = b[i]&p[i] | c[i]&^p[i]
	}
}

// maskOps are the logical ops on predicates a tile program computes,
// bitwise on the masks.
var maskOps = map[hlo.Opcode]bool{hlo.OpAnd: true, hlo.OpOr: true, hlo.OpXor: true, hlo.OpNot: true}

func isMaskOp(op hlo.Opcode) bool {
	return op == hlo.OpAnd || op == hlo.OpOr || op == hlo.OpXor || op == hlo.OpNot
}

// maskTile applies a logical op to mask tiles (b unused for not).
func maskTile(op hlo.Opcode, dstF, aF, bF []float32) {
	dst := asWords(dstF)
	a := asWords(aF)[:len(dst)]
	if op == hlo.OpNot {
		for i := range dst {
			dst[i] = ^a[i]
		}
		return
	}
	b := asWords(bF)[:len(dst)]
	switch op {
	case hlo.OpAnd:
		for i := range dst {
			dst[i] = a[i] & b[i]
		}
	case hlo.OpOr:
		for i := range dst {
			dst[i] = a[i] | b[i]
		}
	case hlo.OpXor:
		for i := range dst {
			dst[i] = a[i] ^ b[i]
		}
	}
}
