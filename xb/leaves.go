package xb

import (
	"github.com/axle-ml/axle/hlo"
)

// Parameter adds the next parameter of the computation, numbered in the
// order of the calls. The name is made unique in the module if needed.
func (b *Builder) Parameter(name string, shape hlo.Shape) *Op {
	if b == nil {
		return orphan()
	}
	if !b.check("parameter") {
		return b.poisoned()
	}
	s := shape.Clone()
	s.SetDefaultLayoutIfMissing()
	if !s.IsArray() && !s.IsTuple() && !s.IsToken() {
		b.errorf("parameter %s: invalid shape %s", name, s.HumanString())
		return b.poisoned()
	}
	for _, d := range s.Dims {
		if d < 0 {
			b.errorf("parameter %s: negative dimension in %s", name, s.HumanString())
			return b.poisoned()
		}
	}
	op := b.add(instr{op: hlo.OpParameter, shape: s, param: int64(len(b.params)), name: sanitize(name, "param")})
	if !op.Poisoned() {
		b.params = append(b.params, op)
		b.comp.Params = append(b.comp.Params, op.in)
	}
	return op
}

// Param adds an array parameter of element type t and dimensions dims.
func (b *Builder) Param(name string, t hlo.DType, dims ...int64) *Op {
	return b.Parameter(name, hlo.ArrayShape(t, dims...))
}

// Constant adds a constant holding lit (not copied: do not modify it).
func (b *Builder) Constant(lit *hlo.Literal) *Op {
	if b == nil {
		return orphan()
	}
	if lit == nil {
		b.errorf("constant: nil literal")
		return b.poisoned()
	}
	return b.add(instr{op: hlo.OpConstant, literal: lit})
}

// Const adds a constant array holding a copy of data with dimensions dims
// (a vector when dims is empty). Use a float32 slice for f32, int32 for
// s32, bool for pred, and so on.
func Const[T hlo.Native](b *Builder, data []T, dims ...int64) *Op {
	if b == nil {
		return orphan()
	}
	lit, err := hlo.LiteralFromSlice(data, dims...)
	if err != nil {
		b.errorf("constant: %v", err)
		return b.poisoned()
	}
	return b.Constant(lit)
}

// Scalar adds a rank-0 constant of T's element type.
func Scalar[T hlo.Native](b *Builder, v T) *Op {
	if b == nil {
		return orphan()
	}
	return b.Constant(hlo.ScalarLiteral(v))
}

// ScalarOf adds a rank-0 constant of element type t holding v converted
// to t: the usual way to get a constant matching an op, as in
// xb.Mul(x, b.ScalarOf(x.DType(), 0.5)).
func (b *Builder) ScalarOf(t hlo.DType, v float64) *Op {
	if b == nil {
		return orphan()
	}
	if !t.IsArrayType() {
		b.errorf("constant: %s is not an array element type", t)
		return b.poisoned()
	}
	lit := hlo.NewLiteral(hlo.ScalarShape(t))
	lit.SetFloat64(0, v)
	return b.Constant(lit)
}

// Full adds a constant of the given shape with every element v: a scalar
// constant broadcast, so that large fills stay small in the module.
func (b *Builder) Full(t hlo.DType, v float64, dims ...int64) *Op {
	return Broadcast(b.ScalarOf(t, v), dims...)
}

// Zeros adds an all-zero array of type t.
func (b *Builder) Zeros(t hlo.DType, dims ...int64) *Op { return b.Full(t, 0, dims...) }

// Ones adds an all-one array of type t.
func (b *Builder) Ones(t hlo.DType, dims ...int64) *Op { return b.Full(t, 1, dims...) }

// Iota adds an array of type t and dimensions dims whose elements are
// their index along dimension dim.
func (b *Builder) Iota(t hlo.DType, dim int64, dims ...int64) *Op {
	if b == nil {
		return orphan()
	}
	return b.add(instr{op: hlo.OpIota, shape: hlo.ArrayShape(t, dims...), attrs: []hlo.Attr{{Name: "iota_dimension", Value: dim}}})
}
