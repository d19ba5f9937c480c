package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// BroadcastDims is the numpy-style (multidirectional) broadcast of the
// given dims, ok false if they do not broadcast.
func BroadcastDims(dims ...[]int64) ([]int64, bool) {
	r := 0
	for _, d := range dims {
		r = max(r, len(d))
	}
	out := make([]int64, r)
	for i := range out {
		out[i] = 1
	}
	for _, d := range dims {
		off := r - len(d)
		for i, v := range d {
			switch o := out[off+i]; {
			case o == v || v == 1:
			case o == 1:
				out[off+i] = v
			default:
				return nil, false
			}
		}
	}
	return out, true
}

// Broadcast brings ops to their common numpy-style shape; it records an
// error in the builder if they do not broadcast.
func Broadcast(b *xb.Builder, xs ...*xb.Op) []*xb.Op {
	dims := make([][]int64, len(xs))
	for i, x := range xs {
		dims[i] = x.Dims()
	}
	to, ok := BroadcastDims(dims...)
	if !ok {
		b.Emit(hlo.OpAdd, hlo.Shape{}, nil, xs...) // records the shape error
		return xs
	}
	out := make([]*xb.Op, len(xs))
	for i, x := range xs {
		out[i] = xb.BroadcastTo(x, to...)
	}
	return out
}

// Broadcast2 is Broadcast for two operands.
func Broadcast2(b *xb.Builder, x, y *xb.Op) (*xb.Op, *xb.Op) {
	r := Broadcast(b, x, y)
	return r[0], r[1]
}

// NormAxis turns a possibly negative axis into [0, rank); ok false if out
// of range.
func NormAxis(axis int64, rank int) (int64, bool) {
	if axis < 0 {
		axis += int64(rank)
	}
	return axis, axis >= 0 && axis < int64(rank)
}

// ScalarLike is a scalar constant of x's element type holding v.
func ScalarLike(x *xb.Op, v float64) *xb.Op { return x.Builder().ScalarOf(x.DType(), v) }

// FullLike is a constant of x's shape and type with every element v.
func FullLike(x *xb.Op, v float64) *xb.Op { return xb.BroadcastTo(ScalarLike(x, v), x.Dims()...) }
