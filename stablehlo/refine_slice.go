package stablehlo

import (
	"reflect"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// symbolicSizes returns limit − start when the bounds themselves depend
// on arguments but their difference does not: JAX writes a slice of a
// runtime start and a static (or dimension-variable) size as
// limit = start + size, the start computed twice by the same ops. It
// reports false when limit is not of that form.
func (s *scope) symbolicSizes(start, limit *hlo.Instruction) ([]int64, bool) {
	if limit.Opcode != hlo.OpAdd {
		return nil, false
	}
	for _, p := range [][2]int{{0, 1}, {1, 0}} {
		if !sameValue(limit.Operands[p[0]], start) {
			continue
		}
		if d, err := s.foldInts(limit.Operands[p[1]]); err == nil {
			return d, true
		}
	}
	return nil, false
}

// pureOps are the opcodes whose result is a function of their operands
// and attributes alone, so two of them with equal inputs are equal.
var pureOps = map[hlo.Opcode]bool{
	hlo.OpConstant: true, hlo.OpConvert: true, hlo.OpReshape: true, hlo.OpConcatenate: true,
	hlo.OpBroadcast: true, hlo.OpSlice: true, hlo.OpAdd: true, hlo.OpSubtract: true,
	hlo.OpMultiply: true, hlo.OpNegate: true, hlo.OpSelect: true, hlo.OpCompare: true,
	hlo.OpMaximum: true, hlo.OpMinimum: true, hlo.OpClamp: true,
}

// sameValue reports whether a and b compute the same value: the same
// instruction, or the same pure op with the same attributes on operands
// that compute the same values.
func sameValue(a, b *hlo.Instruction) bool {
	if a == b {
		return true
	}
	if a.Opcode != b.Opcode || !pureOps[a.Opcode] || !a.Shape.Equal(b.Shape) ||
		len(a.Operands) != len(b.Operands) || !reflect.DeepEqual(a.Attrs, b.Attrs) {
		return false
	}
	if a.Opcode == hlo.OpConstant {
		return a.Literal.Equal(b.Literal)
	}
	for i, o := range a.Operands {
		if !sameValue(o, b.Operands[i]) {
			return false
		}
	}
	return true
}

// dynamicSliceBySize is real_dynamic_slice with unit strides and sizes
// known though its bounds are not: a dynamic-slice of those sizes.
func dynamicSliceBySize(s *scope, x, start *hlo.Instruction, sizes []int64) ([]*hlo.Instruction, bool) {
	if len(sizes) != x.Shape.Rank() {
		return nil, false
	}
	for i, n := range sizes {
		if n < 0 || n > x.Shape.Dims[i] {
			return nil, false
		}
	}
	out, err := dynamicSliceOf(s, x, start, hlo.ArrayShape(x.Shape.DType, slices.Clone(sizes)...))
	return out, err == nil
}
