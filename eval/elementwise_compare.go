package eval

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/xlamath"
)

// direction is a compare direction as a function of the three-way order of
// two values: lt, eq, gt are the outcomes it accepts. Unordered pairs (a
// NaN under IEEE comparison) are accepted by NE only.
type direction struct{ lt, eq, gt, unordered bool }

var directions = map[hlo.Enum]direction{
	"EQ": {eq: true},
	"NE": {lt: true, gt: true, unordered: true},
	"LT": {lt: true},
	"LE": {lt: true, eq: true},
	"GT": {gt: true},
	"GE": {gt: true, eq: true},
}

func evalCompare(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	dirName, _ := in.EnumAttr("direction")
	dir, ok := directions[dirName]
	if !ok {
		return nil, fmt.Errorf("unknown comparison direction %q", dirName)
	}
	out := hlo.NewLiteral(in.Shape)
	n := out.Len()
	a, b := fullSize(ops[0], n), fullSize(ops[1], n)
	dst := out.Data().([]bool)
	t := a.DType()
	cmpType, _ := in.EnumAttr("type")
	if t.IsFloat() && cmpType == "TOTALORDER" {
		compareOrdered(dir, dst, totalOrderKeys(a), totalOrderKeys(b))
		return out, nil
	}
	if f, ok := narrowFormat(t); ok {
		compareFloat(dir, dst, decodeNarrow(a, f), decodeNarrow(b, f))
		return out, nil
	}
	switch d := a.Data().(type) {
	case []float32:
		compareFloat(dir, dst, d, b.Data().([]float32))
	case []float64:
		compareFloat(dir, dst, d, b.Data().([]float64))
	case []bool:
		compareOrdered(dir, dst, boolsAsInts(d), boolsAsInts(b.Data().([]bool)))
	case []int8:
		compareOrdered(dir, dst, d, b.Data().([]int8))
	case []int16:
		compareOrdered(dir, dst, d, b.Data().([]int16))
	case []int32:
		compareOrdered(dir, dst, d, b.Data().([]int32))
	case []int64:
		compareOrdered(dir, dst, d, b.Data().([]int64))
	case []uint8:
		compareOrdered(dir, dst, d, b.Data().([]uint8))
	case []uint16:
		compareOrdered(dir, dst, d, b.Data().([]uint16))
	case []uint32:
		compareOrdered(dir, dst, d, b.Data().([]uint32))
	case []uint64:
		compareOrdered(dir, dst, d, b.Data().([]uint64))
	case []complex64, []complex128:
		return compareComplex(dirName, out, a, b)
	default:
		return nil, errOpType(hlo.OpCompare, t)
	}
	return out, nil
}

func compareOrdered[T integer](dir direction, dst []bool, a, b []T) {
	b = b[:len(a)]
	for i := range a {
		x, y := a[i], b[i]
		dst[i] = x < y && dir.lt || x == y && dir.eq || x > y && dir.gt
	}
}

// compareFloat is IEEE comparison: a NaN operand makes every direction but
// NE false.
func compareFloat[T nativeFloat](dir direction, dst []bool, a, b []T) {
	b = b[:len(a)]
	for i := range a {
		x, y := a[i], b[i]
		dst[i] = x < y && dir.lt || x == y && dir.eq || x > y && dir.gt ||
			(x != x || y != y) && dir.unordered
	}
}

func compareComplex(dir hlo.Enum, out *hlo.Literal, a, b *hlo.Literal) (*hlo.Literal, error) {
	if dir != "EQ" && dir != "NE" {
		return nil, fmt.Errorf("complex numbers compare only for EQ and NE, not %s", dir)
	}
	x, y := loadComplex128(a), loadComplex128(b)
	dst := out.Data().([]bool)
	for i := range x {
		dst[i] = (x[i] == y[i]) == (dir == "EQ")
	}
	return out, nil
}

func boolsAsInts(v []bool) []int8 {
	out := make([]int8, len(v))
	for i, b := range v {
		if b {
			out[i] = 1
		}
	}
	return out
}

// totalOrderKeys maps float bit patterns to integers whose order is XLA's
// total order: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN. Negative
// values have their magnitude bits flipped so larger magnitudes sort lower.
func totalOrderKeys(l *hlo.Literal) []int64 {
	w := l.DType().Bits()
	keys := make([]int64, l.Len())
	for i := range keys {
		b := l.Bits(i)
		v := int64(b<<(64-w)) >> (64 - w) // sign-extend from the width
		if v < 0 {
			v ^= math.MaxInt64 >> (64 - w)
		}
		keys[i] = v
	}
	return keys
}

func evalSelect(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if !in.Shape.IsArray() {
		if ops[0].GetBool(0) {
			return ops[1], nil
		}
		return ops[2], nil
	}
	out := hlo.NewLiteral(in.Shape)
	n := out.Len()
	p := fullSize(ops[0], n).Data().([]bool)
	t, f := fullSize(ops[1], n), fullSize(ops[2], n)
	switch d := out.Data().(type) {
	case []bool:
		selectT(d, p, t.Data().([]bool), f.Data().([]bool))
	case []int8:
		selectT(d, p, t.Data().([]int8), f.Data().([]int8))
	case []int16:
		selectT(d, p, t.Data().([]int16), f.Data().([]int16))
	case []int32:
		selectT(d, p, t.Data().([]int32), f.Data().([]int32))
	case []int64:
		selectT(d, p, t.Data().([]int64), f.Data().([]int64))
	case []uint8:
		selectT(d, p, t.Data().([]uint8), f.Data().([]uint8))
	case []uint16:
		selectT(d, p, t.Data().([]uint16), f.Data().([]uint16))
	case []uint32:
		selectT(d, p, t.Data().([]uint32), f.Data().([]uint32))
	case []uint64:
		selectT(d, p, t.Data().([]uint64), f.Data().([]uint64))
	case []float32:
		selectT(d, p, t.Data().([]float32), f.Data().([]float32))
	case []float64:
		selectT(d, p, t.Data().([]float64), f.Data().([]float64))
	case []complex64:
		selectT(d, p, t.Data().([]complex64), f.Data().([]complex64))
	case []complex128:
		selectT(d, p, t.Data().([]complex128), f.Data().([]complex128))
	default:
		return nil, errOpType(hlo.OpSelect, in.Shape.DType)
	}
	return out, nil
}

func selectT[T any](dst []T, p []bool, t, f []T) {
	for i := range dst {
		if p[i] {
			dst[i] = t[i]
		} else {
			dst[i] = f[i]
		}
	}
}

// evalClamp is min(max(operand, lo), hi), with the NaN-propagating maximum
// and minimum for floats.
func evalClamp(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	out := hlo.NewLiteral(in.Shape)
	n := out.Len()
	lo, x, hi := fullSize(ops[0], n), fullSize(ops[1], n), fullSize(ops[2], n)
	t := in.Shape.DType
	if f, ok := narrowFormat(t); ok {
		v, l, h := decodeNarrow(x, f), decodeNarrow(lo, f), decodeNarrow(hi, f)
		clampFloat(v, l, v, h)
		encodeNarrow(out, f, v)
		return out, nil
	}
	switch d := out.Data().(type) {
	case []float32:
		clampFloat(d, lo.Data().([]float32), x.Data().([]float32), hi.Data().([]float32))
	case []float64:
		clampFloat(d, lo.Data().([]float64), x.Data().([]float64), hi.Data().([]float64))
	case []int8:
		clampInt(d, lo.Data().([]int8), x.Data().([]int8), hi.Data().([]int8))
	case []int16:
		clampInt(d, lo.Data().([]int16), x.Data().([]int16), hi.Data().([]int16))
	case []int32:
		clampInt(d, lo.Data().([]int32), x.Data().([]int32), hi.Data().([]int32))
	case []int64:
		clampInt(d, lo.Data().([]int64), x.Data().([]int64), hi.Data().([]int64))
	case []uint8:
		clampInt(d, lo.Data().([]uint8), x.Data().([]uint8), hi.Data().([]uint8))
	case []uint16:
		clampInt(d, lo.Data().([]uint16), x.Data().([]uint16), hi.Data().([]uint16))
	case []uint32:
		clampInt(d, lo.Data().([]uint32), x.Data().([]uint32), hi.Data().([]uint32))
	case []uint64:
		clampInt(d, lo.Data().([]uint64), x.Data().([]uint64), hi.Data().([]uint64))
	case []bool:
		// false < true: clamp is x || lo, then && hi.
		l, v, h := lo.Data().([]bool), x.Data().([]bool), hi.Data().([]bool)
		for i := range d {
			d[i] = (v[i] || l[i]) && h[i]
		}
	default:
		return nil, errOpType(hlo.OpClamp, t)
	}
	return out, nil
}

func clampFloat[T nativeFloat](dst, lo, x, hi []T) {
	for i := range dst {
		dst[i] = xlamath.Min(xlamath.Max(x[i], lo[i]), hi[i])
	}
}

func clampInt[T integer](dst, lo, x, hi []T) {
	for i := range dst {
		dst[i] = min(max(x[i], lo[i]), hi[i])
	}
}
