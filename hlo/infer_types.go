package hlo

import (
	"fmt"
	"slices"
	"strings"
)

// Element type and shape comparisons with XLA's meanings (ShapeUtil's
// SameElementTypeIgnoringFpPrecision, CompatibleIgnoringFpPrecision,
// HigherPrecisionElementType, ...).

// sameTypeIgnoringFP reports whether a and b are equal, or both floating
// point of any precision.
func sameTypeIgnoringFP(a, b DType) bool {
	return a == b || (a.IsFloat() && b.IsFloat())
}

// isSignedType is XLA's ElementIsSigned: signed integers and floats.
func isSignedType(t DType) bool { return t.IsSigned() || t.IsFloat() }

// floatRange holds what XLA ranks floating-point types by: the exponent at
// which the type overflows, then the significand width.
var floatRange = map[DType][2]int{
	F16: {16, 11}, BF16: {128, 8}, F32: {128, 24}, F64: {1024, 53},
	F8E4M3FN: {9, 4}, F8E5M2: {16, 3}, F8E4M3FNUZ: {8, 4}, F8E5M2FNUZ: {16, 3},
	F8E4M3B11FNUZ: {5, 4}, F8E3M4: {4, 5}, F8E4M3: {8, 4}, F8E8M0FNU: {128, 1},
	F4E2M1FN: {3, 2}, F6E2M3FN: {3, 4}, F6E3M2FN: {5, 3},
}

// higherPrecision is XLA's primitive_util::HigherPrecisionType: complex over
// real, then float range, float precision, width, signedness.
func higherPrecision(a, b DType) DType {
	if a == b {
		return a
	}
	key := func(t DType) [5]int {
		c := t
		if t.IsComplex() {
			c = t.ComplexComponent()
		}
		k := [5]int{0, -1, -1, c.Bits(), 0}
		if t.IsComplex() {
			k[0] = 1
		}
		if r, ok := floatRange[c]; ok {
			k[1], k[2] = r[0], r[1]
		}
		if c.IsSigned() {
			k[4] = 1
		}
		return k
	}
	ka, kb := key(a), key(b)
	if slices.Compare(ka[:], kb[:]) >= 0 {
		return a
	}
	return b
}

// dimsMatch compares dimension sizes; an unbounded dimension (`?`) matches
// any size, as XLA's SameDimensions does since unbounded dynamism.
func dimsMatch(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && a[i] != Unbounded && b[i] != Unbounded {
			return false
		}
	}
	return true
}

// compareMode selects what compatibleShapes ignores beyond layouts and
// dynamic-ness (which XLA's ShapeUtil::Compatible ignores too).
type compareMode uint8

const (
	exactTypes        compareMode = iota
	ignoreFPPrecision             // floats of any precision match
	ignoreElemType                // only structure and dimensions matter
)

// compatibleShapes is XLA's ShapeUtil::Compatible and its variants: same
// structure, element types and dimension sizes; layouts and whether a
// dimension is dynamic are ignored.
func compatibleShapes(a, b Shape, mode compareMode) bool {
	if a.IsTuple() || b.IsTuple() || a.DType == Buffer || b.DType == Buffer {
		if a.DType != b.DType || len(a.Tuple) != len(b.Tuple) {
			return false
		}
		for i := range a.Tuple {
			if !compatibleShapes(a.Tuple[i], b.Tuple[i], mode) {
				return false
			}
		}
		return true
	}
	if !a.IsArray() || !b.IsArray() {
		return a.DType == b.DType
	}
	switch mode {
	case exactTypes:
		if a.DType != b.DType {
			return false
		}
	case ignoreFPPrecision:
		if !sameTypeIgnoringFP(a.DType, b.DType) {
			return false
		}
	}
	return dimsMatch(a.Dims, b.Dims)
}

// isScalarOf reports whether s is the rank-0 array of type t.
func isScalarOf(s Shape, t DType) bool { return s.IsScalar() && s.DType == t }

// isPermutation reports whether p holds each of 0..n-1 once.
func isPermutation(p []int64, n int) bool {
	if len(p) != n {
		return false
	}
	seen := make([]bool, n)
	for _, d := range p {
		if d < 0 || d >= int64(n) || seen[d] {
			return false
		}
		seen[d] = true
	}
	return true
}

// allUnique reports whether no value repeats in s.
func allUnique(s []int64) bool {
	seen := make(map[int64]bool, len(s))
	for _, d := range s {
		if seen[d] {
			return false
		}
		seen[d] = true
	}
	return true
}

func inRange(dims []int64, rank int) bool {
	for _, d := range dims {
		if d < 0 || d >= int64(rank) {
			return false
		}
	}
	return true
}

func isSortedStrictly(s []int64) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return true
}

func joinInts(s []int64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return strings.Join(parts, ",")
}

func shapeList(shapes []Shape) string {
	parts := make([]string, len(shapes))
	for i, s := range shapes {
		parts[i] = s.HumanString()
	}
	return strings.Join(parts, ", ")
}
