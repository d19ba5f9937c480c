package kernels

import "math"

// Masks: a predicate per lane held in a float32 slot as all one bits
// (true) or zero (false), as the CPU backend's tile programs hold the
// results of comparisons. Comparisons write masks, Select reads the sign
// bit of one (so any mask works), and the logical ops are bitwise.

// Compare directions of CompareF32.
const (
	CmpEQ = iota
	CmpNE
	CmpLT
	CmpLE
	CmpGT
	CmpGE
)

// CompareF32 sets dst[i] to the mask of a[i] dir b[i] (IEEE: NaN compares
// unequal to everything, itself included).
func CompareF32(dir int, dst, a, b []float32) {
	n := len(dst)
	compareF32(dir, dst, a[:n], b[:n])
}

// SelectF32 sets dst[i] = a[i] where p[i]'s sign bit is set (a true
// mask), else b[i].
func SelectF32(dst, p, a, b []float32) { n := len(dst); selectF32(dst, p[:n], a[:n], b[:n]) }

// AndF32, OrF32 and XorF32 combine masks (any bits) bitwise.
func AndF32(dst, a, b []float32) { n := len(dst); andF32(dst, a[:n], b[:n]) }

// OrF32 sets dst[i] = a[i] | b[i], bitwise.
func OrF32(dst, a, b []float32) { n := len(dst); orF32(dst, a[:n], b[:n]) }

// XorF32 sets dst[i] = a[i] ^ b[i], bitwise.
func XorF32(dst, a, b []float32) { n := len(dst); xorF32(dst, a[:n], b[:n]) }

func mask(t bool) float32 {
	if t {
		return math.Float32frombits(^uint32(0))
	}
	return 0
}

func compareGo(dir int, dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		var t bool
		switch dir {
		case CmpEQ:
			t = a[i] == b[i]
		case CmpNE:
			t = a[i] != b[i]
		case CmpLT:
			t = a[i] < b[i]
		case CmpLE:
			t = a[i] <= b[i]
		case CmpGT:
			t = a[i] > b[i]
		default:
			t = a[i] >= b[i]
		}
		dst[i] = mask(t)
	}
}

func selectGo(dst, p, a, b []float32) {
	p, a, b = p[:len(dst)], a[:len(dst)], b[:len(dst)]
	for i := range dst {
		m := uint32(int32(math.Float32bits(p[i])) >> 31)
		dst[i] = math.Float32frombits(math.Float32bits(a[i])&m | math.Float32bits(b[i])&^m)
	}
}

func bitwiseGo(dst, a, b []float32, f func(x, y uint32) uint32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(f(math.Float32bits(a[i]), math.Float32bits(b[i])))
	}
}

func andGo(dst, a, b []float32) { bitwiseGo(dst, a, b, func(x, y uint32) uint32 { return x & y }) }
func orGo(dst, a, b []float32)  { bitwiseGo(dst, a, b, func(x, y uint32) uint32 { return x | y }) }
func xorGo(dst, a, b []float32) { bitwiseGo(dst, a, b, func(x, y uint32) uint32 { return x ^ y }) }
