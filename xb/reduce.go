package xb

import (
	"math"

	"github.com/axle-ml/axle/hlo"
)

// Reducer is the body of a reduction: it combines two scalars of the
// reduced element type. It runs on a fresh builder, the sub-computation's.
type Reducer func(sb *Builder, a, b *Op) *Op

// Reduce reduces x along axes with fn, starting from the scalar init.
func Reduce(x, init *Op, fn Reducer, axes ...int64) *Op {
	b := builderOf(x, init)
	if b == nil || !b.check("reduce", x, init) {
		return poison(b)
	}
	if fn == nil {
		b.errorf("reduce: nil reducer")
		return b.poisoned()
	}
	c := b.scalarBinary("reducer", init.DType(), fn)
	if c == nil {
		return b.poisoned()
	}
	return b.reduceWith(x, init, c, axes)
}

func (b *Builder) reduceWith(x, init *Op, c *hlo.Computation, axes []int64) *Op {
	return b.add(instr{op: hlo.OpReduce, operands: []*Op{x, init},
		attrs: []hlo.Attr{{Name: "dimensions", Value: nonNil(axes)}, {Name: "to_apply", Value: c}}})
}

// standard returns the shared reducer computation of a binary opcode for
// element type t, building it once per module: models reduce with the same
// few bodies many times.
func (b *Builder) standard(op hlo.Opcode, t hlo.DType) *hlo.Computation {
	key := op.String() + "_" + t.String()
	if c, ok := b.shared.reducers[key]; ok {
		return c
	}
	// The root builder's state owns the cache; building the reducer on b
	// is fine because sub-computations never depend on their caller.
	c := b.scalarBinary(key, t, func(sb *Builder, x, y *Op) *Op {
		return sb.add(instr{op: op, operands: []*Op{x, y}})
	})
	if c != nil {
		if b.shared.reducers == nil {
			b.shared.reducers = map[string]*hlo.Computation{}
		}
		b.shared.reducers[key] = c
	}
	return c
}

func reduceStandard(name string, op hlo.Opcode, x *Op, init float64, axes []int64) *Op {
	b := builderOf(x)
	if b == nil || !b.check(name, x) {
		return poison(b)
	}
	t := x.DType()
	if !x.Shape().IsArray() {
		b.errorf("%s: operand is %s, not an array", name, x.Shape().HumanString())
		return b.poisoned()
	}
	if t.IsPred() {
		// ±inf would convert to true; the identities of or/and are false/true.
		init = math.Max(0, math.Min(init, 1))
	}
	c := b.standard(op, t)
	if c == nil {
		return b.poisoned()
	}
	return b.reduceWith(x, b.ScalarOf(t, init), c, axes)
}

// AllAxes lists 0..rank-1: reduce over every dimension of x.
func AllAxes(x *Op) []int64 {
	out := make([]int64, x.Rank())
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// ReduceSum sums x over axes (all of them when none are given).
func ReduceSum(x *Op, axes ...int64) *Op {
	return reduceStandard("reduce-sum", hlo.OpAdd, x, 0, defaultAxes(x, axes))
}

// ReduceProd multiplies x over axes (all of them when none are given).
func ReduceProd(x *Op, axes ...int64) *Op {
	return reduceStandard("reduce-prod", hlo.OpMultiply, x, 1, defaultAxes(x, axes))
}

// ReduceMax takes the maximum over axes (all when none are given); the
// initial value is -inf, or the type's minimum for integers.
func ReduceMax(x *Op, axes ...int64) *Op {
	return reduceStandard("reduce-max", hlo.OpMaximum, x, math.Inf(-1), defaultAxes(x, axes))
}

// ReduceMin takes the minimum over axes (all when none are given).
func ReduceMin(x *Op, axes ...int64) *Op {
	return reduceStandard("reduce-min", hlo.OpMinimum, x, math.Inf(1), defaultAxes(x, axes))
}

func defaultAxes(x *Op, axes []int64) []int64 {
	if len(axes) == 0 {
		return AllAxes(x)
	}
	return axes
}

// Window describes a reduce-window or pooling window per dimension of the
// operand: sizes, strides (nil: 1) and (lo, hi) padding (nil: none).
type Window struct {
	Sizes   []int64
	Strides []int64
	Padding [][2]int64
}

func (w Window) toHLO(rank int) (*hlo.Window, bool) {
	if len(w.Sizes) != rank || (w.Strides != nil && len(w.Strides) != rank) || (w.Padding != nil && len(w.Padding) != rank) {
		return nil, false
	}
	hw := hlo.NewWindow(w.Sizes...)
	for i := range hw.Dims {
		if w.Strides != nil {
			hw.Dims[i].Stride = w.Strides[i]
		}
		if w.Padding != nil {
			hw.Dims[i].PadLo, hw.Dims[i].PadHi = w.Padding[i][0], w.Padding[i][1]
		}
	}
	return hw, true
}

// ReduceWindow reduces every window of x with fn from init.
func ReduceWindow(x, init *Op, fn Reducer, w Window) *Op {
	b := builderOf(x, init)
	if b == nil || !b.check("reduce-window", x, init) {
		return poison(b)
	}
	hw, ok := w.toHLO(x.Rank())
	if !ok {
		b.errorf("reduce-window: the window has %d sizes, %d strides and %d paddings for an operand of rank %d",
			len(w.Sizes), len(w.Strides), len(w.Padding), x.Rank())
		return b.poisoned()
	}
	if fn == nil {
		b.errorf("reduce-window: nil reducer")
		return b.poisoned()
	}
	c := b.scalarBinary("reducer", init.DType(), fn)
	if c == nil {
		return b.poisoned()
	}
	return b.add(instr{op: hlo.OpReduceWindow, operands: []*Op{x, init},
		attrs: []hlo.Attr{{Name: "window", Value: hw}, {Name: "to_apply", Value: c}}})
}

// TopK is HLO's topk: the k first elements of each row along x's last
// dimension, in the order less(a, b) says ("a goes first"; ties keep the
// lower index first), and their s32 indices, as a pair.
func TopK(x *Op, k int64, largest bool, less func(sb *Builder, params []*Op) *Op) *Op {
	b := builderOf(x)
	if b == nil || !b.check("topk", x) {
		return poison(b)
	}
	s := hlo.ScalarShape(x.DType())
	c := b.Computation("compare", []hlo.Shape{s, s}, less)
	if c == nil {
		return b.poisoned()
	}
	return b.add(instr{op: hlo.OpTopK, operands: []*Op{x}, attrs: []hlo.Attr{{Name: "k", Value: k}, {Name: "largest", Value: largest}, {Name: "to_apply", Value: c}}})
}

// Sort sorts xs (all of one shape) together along dim, ordered by less,
// which receives two scalars per operand: (a0, b0, a1, b1, ...). It
// returns one op for a single operand and a tuple otherwise.
func Sort(dim int64, less func(sb *Builder, params []*Op) *Op, xs ...*Op) *Op {
	b := builderOf(xs...)
	if b == nil || !b.check("sort", xs...) {
		return poison(b)
	}
	var params []hlo.Shape
	for _, x := range xs {
		s := hlo.ScalarShape(x.DType())
		params = append(params, s, s)
	}
	c := b.Computation("compare", params, less)
	if c == nil {
		return b.poisoned()
	}
	return b.add(instr{op: hlo.OpSort, operands: xs, attrs: []hlo.Attr{{Name: "dimensions", Value: []int64{dim}}, {Name: "to_apply", Value: c}}})
}
