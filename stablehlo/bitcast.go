package stablehlo

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// bitcastBits converts between i1 tensors and wider types: a W-bit value
// is W booleans along a new last dimension, bit i (least significant
// first) at index i, as MLIR lays i1 out bit by bit.
func bitcastBits(s *scope, x *hlo.Instruction, sh hlo.Shape) ([]*hlo.Instruction, error) {
	if x.Shape.DType == hlo.Pred {
		return boolsToBits(s, x, sh)
	}
	return bitsToBools(s, x, sh)
}

// uintOf is the unsigned integer type of t's width.
func uintOf(t hlo.DType) (hlo.DType, error) {
	u, ok := hlo.DTypeByName(fmt.Sprintf("u%d", t.Bits()))
	if !ok || t.IsComplex() {
		return 0, fmt.Errorf("bitcast_convert of %s to i1: %w", t, ErrUnsupported)
	}
	return u, nil
}

func bitsToBools(s *scope, x *hlo.Instruction, sh hlo.Shape) ([]*hlo.Instruction, error) {
	u, err := uintOf(x.Shape.DType)
	if err != nil {
		return nil, err
	}
	w := int64(x.Shape.DType.Bits())
	if sh.Rank() != x.Shape.Rank()+1 || sh.Dims[sh.Rank()-1] != w {
		return nil, fmt.Errorf("bitcast_convert to %s: want a last dimension of %d", sh.HumanString(), w)
	}
	wide := sh.WithDType(u)
	b := eb{s, wide}
	v := s.add(hlo.OpBitcastConvert, x.Shape.WithDType(u), []*hlo.Instruction{x})
	v = s.add(hlo.OpBroadcast, wide, []*hlo.Instruction{v}, hlo.Attr{Name: "dimensions", Value: iotaDims(x.Shape.Rank())})
	pos := s.add(hlo.OpIota, wide, nil, hlo.Attr{Name: "iota_dimension", Value: int64(sh.Rank() - 1)})
	bit := b.bin(hlo.OpAnd, b.bin(hlo.OpShiftRightLogical, v, pos), b.c(1))
	return []*hlo.Instruction{b.cmp("NE", bit, b.c(0))}, nil
}

func boolsToBits(s *scope, x *hlo.Instruction, sh hlo.Shape) ([]*hlo.Instruction, error) {
	u, err := uintOf(sh.DType)
	if err != nil {
		return nil, err
	}
	w := int64(sh.DType.Bits())
	r := x.Shape.Rank()
	if r != sh.Rank()+1 || x.Shape.Dims[r-1] != w {
		return nil, fmt.Errorf("bitcast_convert of %s: want a last dimension of %d", x.Shape.HumanString(), w)
	}
	wide := x.Shape.WithDType(u)
	b := eb{s, wide}
	pos := s.add(hlo.OpIota, wide, nil, hlo.Attr{Name: "iota_dimension", Value: int64(r - 1)})
	bits := b.bin(hlo.OpShiftLeft, b.convert(x, u), pos)
	zero := s.scalar(u, 0)
	or := s.c.newComp("or")
	in := newScope(s.c, or, nil)
	p0, p1 := in.param(0, hlo.ArrayShape(u), "a"), in.param(1, hlo.ArrayShape(u), "b")
	or.Root = in.add(hlo.OpOr, hlo.ArrayShape(u), []*hlo.Instruction{p0, p1})
	sum := s.add(hlo.OpReduce, hlo.ArrayShape(u, slices.Clone(sh.Dims)...), []*hlo.Instruction{bits, zero},
		hlo.Attr{Name: "dimensions", Value: []int64{int64(r - 1)}}, hlo.Attr{Name: "to_apply", Value: or})
	return []*hlo.Instruction{s.add(hlo.OpBitcastConvert, sh, []*hlo.Instruction{sum})}, nil
}
