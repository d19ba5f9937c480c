package collective

import (
	"fmt"
	"unsafe"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
	"github.com/axle-ml/axle/internal/xlamath"
)

// ScalarApply evaluates a reduction computation on two scalars: the slow
// path, for to_apply computations the typed folds do not recognize.
type ScalarApply func(comp *hlo.Computation, a, b *hlo.Literal) (*hlo.Literal, error)

// foldFunc sets acc[i] = op(acc[i], x[i]) over two equally long byte
// views of one element type.
type foldFunc func(acc, x []byte) error

// reducer folds values of one element type with one to_apply computation.
type reducer struct {
	fold foldFunc
	// wrap re-establishes the storage invariant of s2/s4/u2/u4 after
	// arithmetic done in their 8-bit storage (nil for other types).
	wrap func(b []byte)
}

// foldBlock bounds the bytes folded at a time, so that the accumulator
// stays in cache while every participant's values are folded into it.
const foldBlock = 16 << 10

// reduceInto sets dst = op(...op(op(xs[0], xs[1]), xs[2])..., xs[k-1])
// element by element: the canonical left-to-right order in the group.
func (r reducer) reduceInto(dst []byte, xs [][]byte) error {
	for off := 0; off < len(dst); off += foldBlock {
		end := min(off+foldBlock, len(dst))
		copy(dst[off:end], xs[0][off:end])
		for _, x := range xs[1:] {
			if err := r.fold(dst[off:end], x[off:end]); err != nil {
				return err
			}
		}
	}
	if r.wrap != nil {
		r.wrap(dst)
	}
	return nil
}

// newReducer returns the fold of comp over elements of type t: a typed
// loop when comp is op(parameter(0), parameter(1)) for an op it knows,
// else comp applied element by element through apply.
func newReducer(comp *hlo.Computation, t hlo.DType, apply ScalarApply) (reducer, error) {
	if comp == nil {
		return reducer{}, fmt.Errorf("no to_apply computation")
	}
	if op, swapped, ok := matchReduction(comp, t); ok {
		if f := fastFold(op, t, swapped); f != nil {
			return reducer{fold: f, wrap: narrowIntWrap(t)}, nil
		}
	}
	if apply == nil {
		return reducer{}, fmt.Errorf("to_apply computation %s is not a reduction Axle folds directly, and no evaluator was given for it", comp.Name)
	}
	return reducer{fold: slowFold(comp, t, apply)}, nil
}

// matchReduction recognizes a root op(parameter(0), parameter(1)) (or
// with the parameters swapped) on scalars of type t, as XLA's
// MatchReductionComputation does, xor included.
func matchReduction(comp *hlo.Computation, t hlo.DType) (op hlo.Opcode, swapped, ok bool) {
	root := comp.Root
	if root == nil || len(root.Operands) != 2 || len(comp.Params) != 2 || !root.Shape.IsScalar() || root.Shape.DType != t {
		return 0, false, false
	}
	for _, p := range comp.Params {
		if p == nil || !p.Shape.IsScalar() || p.Shape.DType != t {
			return 0, false, false
		}
	}
	a, b := root.Operands[0], root.Operands[1]
	if a.Opcode != hlo.OpParameter || b.Opcode != hlo.OpParameter || a.ParamNumber == b.ParamNumber {
		return 0, false, false
	}
	switch root.Opcode {
	case hlo.OpAdd, hlo.OpMultiply, hlo.OpMinimum, hlo.OpMaximum, hlo.OpAnd, hlo.OpOr, hlo.OpXor:
		return root.Opcode, a.ParamNumber == 1, true
	}
	return 0, false, false
}

// fastFold is the typed fold of op on t, or nil where op has no meaning
// the fast path gives (float and/or/xor, complex min/max): those go the
// slow way, and fail there as the evaluator would.
func fastFold(op hlo.Opcode, t hlo.DType, swapped bool) foldFunc {
	switch t {
	case hlo.F32:
		return typed(floatFold[float32](op, swapped))
	case hlo.F64:
		return typed(floatFold[float64](op, swapped))
	case hlo.C64:
		return typed(complexFold[complex64](op, swapped))
	case hlo.C128:
		return typed(complexFold[complex128](op, swapped))
	case hlo.Pred:
		return predFold(op)
	case hlo.S2, hlo.S4, hlo.S8:
		return typed(intFold[int8](op))
	case hlo.S16:
		return typed(intFold[int16](op))
	case hlo.S32:
		return typed(intFold[int32](op))
	case hlo.S64:
		return typed(intFold[int64](op))
	case hlo.U2, hlo.U4, hlo.U8:
		return typed(intFold[uint8](op))
	case hlo.U16:
		return typed(intFold[uint16](op))
	case hlo.U32:
		return typed(intFold[uint32](op))
	case hlo.U64:
		return typed(intFold[uint64](op))
	}
	if f, ok := minifloat.ByName(t.String()); ok && t.IsFloat() {
		return narrowFold(f, op, swapped)
	}
	return nil
}

// typed adapts a fold over []T to byte views.
func typed[T any](f func(acc, x []T)) foldFunc {
	if f == nil {
		return nil
	}
	return func(acc, x []byte) error {
		f(view[T](acc), view[T](x))
		return nil
	}
}

// view is b's storage as elements of T: b holds whole elements, at an
// offset that is a multiple of T's size from a typed or allocated base.
func view[T any](b []byte) []T {
	var z T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(z)))
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// intFold: integers wrap, and every op is exactly commutative, so the
// parameter order does not matter.
func intFold[T integer](op hlo.Opcode) func(acc, x []T) {
	switch op {
	case hlo.OpAdd:
		return func(acc, x []T) {
			for i := range acc {
				acc[i] += x[i]
			}
		}
	case hlo.OpMultiply:
		return func(acc, x []T) {
			for i := range acc {
				acc[i] *= x[i]
			}
		}
	case hlo.OpMinimum:
		return func(acc, x []T) {
			for i := range acc {
				acc[i] = min(acc[i], x[i])
			}
		}
	case hlo.OpMaximum:
		return func(acc, x []T) {
			for i := range acc {
				acc[i] = max(acc[i], x[i])
			}
		}
	}
	return bitFold[T](op)
}

func bitFold[T integer](op hlo.Opcode) func(acc, x []T) {
	switch op {
	case hlo.OpAnd:
		return func(acc, x []T) {
			for i := range acc {
				acc[i] &= x[i]
			}
		}
	case hlo.OpOr:
		return func(acc, x []T) {
			for i := range acc {
				acc[i] |= x[i]
			}
		}
	case hlo.OpXor:
		return func(acc, x []T) {
			for i := range acc {
				acc[i] ^= x[i]
			}
		}
	}
	return nil
}

// predFold: pred is stored one byte per element, 0 or 1; XLA's add and
// maximum on pred are or, multiply and minimum are and (as package
// eval computes them).
func predFold(op hlo.Opcode) foldFunc {
	switch op {
	case hlo.OpAdd, hlo.OpMaximum:
		op = hlo.OpOr
	case hlo.OpMultiply, hlo.OpMinimum:
		op = hlo.OpAnd
	}
	return typed(bitFold[uint8](op))
}

// narrowIntWrap re-wraps 2- and 4-bit integers kept in 8-bit storage:
// sign-extended when signed, masked when unsigned. Wrapping once after
// the whole fold is exact: add and multiply in 8 bits agree with the
// narrow type modulo its width, and min, max and the bitwise ops keep
// the invariant.
func narrowIntWrap(t hlo.DType) func(b []byte) {
	bits := t.Bits()
	if !t.IsInteger() || bits >= 8 {
		return nil
	}
	if t.IsSigned() {
		s := 8 - bits
		return func(b []byte) {
			for i, v := range view[int8](b) {
				b[i] = byte(v << s >> s)
			}
		}
	}
	m := byte(1)<<bits - 1
	return func(b []byte) {
		for i := range b {
			b[i] &= m
		}
	}
}

// complexFold: add, and multiply as XLA's CPU backend rounds it
// (xlamath, as the evaluator); nothing else reduces complex numbers.
func complexFold[T complex64 | complex128](op hlo.Opcode, swapped bool) func(acc, x []T) {
	var mul func(a, b T) T
	switch any(T(0)).(type) {
	case complex64:
		mul = func(a, b T) T { return T(xlamath.ComplexMul64(complex64(a), complex64(b))) }
	default:
		mul = func(a, b T) T { return T(xlamath.ComplexMul128(complex128(a), complex128(b))) }
	}
	switch op {
	case hlo.OpAdd:
		return func(acc, x []T) {
			for i := range acc {
				acc[i] = T(complex128(acc[i]) + complex128(x[i]))
			}
		}
	case hlo.OpMultiply:
		return loop(mul, swapped)
	}
	return nil
}

// loop folds with f, called as f(acc, x), or f(x, acc) when the
// computation names its parameters the other way round.
func loop[T any](f func(a, b T) T, swapped bool) func(acc, x []T) {
	if swapped {
		return func(acc, x []T) {
			for i := range acc {
				acc[i] = f(x[i], acc[i])
			}
		}
	}
	return func(acc, x []T) {
		for i := range acc {
			acc[i] = f(acc[i], x[i])
		}
	}
}
