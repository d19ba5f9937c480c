package opt

import (
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
	m "github.com/axle-ml/axle/hlo/match"
)

var reduceRules = []rule{
	{"reduce-of-reduce", ops(hlo.OpReduce), reduceOfReduce},
	{"reduce-of-broadcast", ops(hlo.OpReduce), reduceOfBroadcast},
	{"dot-to-multiply", ops(hlo.OpDot), dotToMultiply},
}

// reducerOp recognises a reducer computation that applies one binary op to
// its two parameters.
func reducerOp(c *hlo.Computation) (hlo.Opcode, bool) {
	if c == nil || c.Root == nil || len(c.Instructions) != 3 || len(c.Root.Operands) != 2 {
		return 0, false
	}
	a, b := c.Root.Operands[0], c.Root.Operands[1]
	if a.Opcode != hlo.OpParameter || b.Opcode != hlo.OpParameter || a == b {
		return 0, false
	}
	switch op := c.Root.Opcode; op {
	case hlo.OpAdd, hlo.OpMultiply, hlo.OpMaximum, hlo.OpMinimum, hlo.OpAnd, hlo.OpOr:
		return op, true
	}
	return 0, false
}

// isIdentity reports whether init is the identity element of op, so
// applying it once more or once less changes nothing.
func isIdentity(op hlo.Opcode, init *hlo.Instruction) bool {
	l, ok := m.EffectiveScalar(init)
	if !ok {
		return false
	}
	t := l.DType()
	switch op {
	case hlo.OpAdd, hlo.OpOr:
		return l.Bits(0) == 0 || (t.IsFloat() && l.GetFloat64(0) == 0)
	case hlo.OpMultiply:
		return l.GetFloat64(0) == 1
	case hlo.OpAnd:
		return t.IsPred() && l.GetBool(0) || t.IsInteger() && l.Bits(0) == uint64(math.MaxUint64)>>(64-t.Bits())
	case hlo.OpMaximum:
		if t.IsFloat() {
			return math.IsInf(l.GetFloat64(0), -1)
		}
		return t.IsSigned() && l.GetInt64(0) == -1<<(t.Bits()-1) || t.IsUnsigned() && l.Bits(0) == 0
	case hlo.OpMinimum:
		if t.IsFloat() {
			return math.IsInf(l.GetFloat64(0), 1)
		}
		return t.IsSigned() && l.GetInt64(0) == 1<<(t.Bits()-1)-1 || t.IsUnsigned() && l.Bits(0) == uint64(math.MaxUint64)>>(64-t.Bits())
	}
	return false
}

// singleReduce returns the reducer op of a one-input reduce whose init is
// that op's identity.
func singleReduce(in *hlo.Instruction) (hlo.Opcode, bool) {
	if in.Opcode != hlo.OpReduce || len(in.Operands) != 2 {
		return 0, false
	}
	op, ok := reducerOp(in.Computation("to_apply"))
	return op, ok && isIdentity(op, in.Operands[1])
}

// reduceOfReduce: reduce(reduce(x, d1), d2) with the same reducer is one
// reduce of x over d1 and the dimensions of x that d2 names. For float
// add this reassociates the sum, as XLA does.
func reduceOfReduce(b *builder, in *hlo.Instruction) *hlo.Instruction {
	inner := in.Operands[0]
	op1, ok1 := singleReduce(inner)
	op2, ok2 := singleReduce(in)
	if !ok1 || !ok2 || op1 != op2 || inner.Shape.DType != in.Shape.DType {
		return nil
	}
	x := inner.Operands[0]
	d1 := inner.Dimensions()
	kept := complement(x.Shape.Rank(), d1)
	dims := slices.Clone(d1)
	for _, d := range in.Dimensions() {
		dims = append(dims, kept[d])
	}
	slices.Sort(dims)
	return b.add(hlo.OpReduce, []*hlo.Instruction{x, in.Operands[1]},
		hlo.Attr{Name: "dimensions", Value: dims}, hlo.Attr{Name: "to_apply", Value: in.Computation("to_apply")})
}

// complement lists 0..rank-1 without the given dimensions.
func complement(rank int, dims []int64) []int64 {
	var out []int64
	for d := range int64(rank) {
		if !slices.Contains(dims, d) {
			out = append(out, d)
		}
	}
	return out
}

// reduceOfBroadcast: reducing away exactly the dimensions a broadcast
// added gives back the operand for max, min, and, or; for add it is the
// operand times the number of copies (XLA's rewrite; for floats this is
// the one rounding of x*n instead of n-1 additions).
func reduceOfBroadcast(b *builder, in *hlo.Instruction) *hlo.Instruction {
	op, ok := singleReduce(in)
	bc := in.Operands[0]
	if !ok || bc.Opcode != hlo.OpBroadcast || op == hlo.OpMultiply {
		return nil
	}
	x := bc.Operands[0]
	kept := bc.Dimensions()
	if !slices.IsSorted(kept) || !slices.Equal(complement(bc.Shape.Rank(), kept), sortedDims(in.Dimensions())) || !sameType(x, in) {
		return nil
	}
	if op != hlo.OpAdd {
		return x
	}
	n := int64(1)
	for _, d := range in.Dimensions() {
		n *= bc.Shape.Dims[d]
	}
	if !in.Shape.DType.IsInteger() && !b.scalarRoundTrips(in.Shape.DType, float64(n)) {
		return nil
	}
	return b.add(hlo.OpMultiply, []*hlo.Instruction{x, b.splat(in, float64(n))})
}

func sortedDims(d []int64) []int64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return s
}

// dotToMultiply: a dot whose contracting dimensions all have size 1 sums a
// single product, so it is an outer product: each operand reshaped to
// drop the contracting dimensions, broadcast to the result and
// multiplied. Batch dimensions must lead both operands in order; element
// types must agree (no preferred-type widening).
func dotToMultiply(b *builder, in *hlo.Instruction) *hlo.Instruction {
	lhs, rhs := in.Operands[0], in.Operands[1]
	lb, _ := in.Ints("lhs_batch_dims")
	rb, _ := in.Ints("rhs_batch_dims")
	lc, _ := in.Ints("lhs_contracting_dims")
	rc, _ := in.Ints("rhs_contracting_dims")
	if lhs.Shape.DType != in.Shape.DType || rhs.Shape.DType != in.Shape.DType || !isIota(lb) || !isIota(rb) ||
		in.HasAttr("sparsity") || in.HasAttr("algorithm") {
		return nil
	}
	for i, d := range lc {
		if lhs.Shape.Dims[d] != 1 || rhs.Shape.Dims[rc[i]] != 1 {
			return nil
		}
	}
	l := b.dropDims(lhs, lc)
	r := b.dropDims(rhs, rc)
	if l == nil || r == nil {
		return nil
	}
	nb, nl := int64(len(lb)), int64(l.Shape.Rank())
	out := in.Shape.Dims
	rpos := make([]int64, r.Shape.Rank())
	for i := range rpos {
		if int64(i) < nb {
			rpos[i] = int64(i)
		} else {
			rpos[i] = nl + int64(i) - nb
		}
	}
	lpos := make([]int64, nl)
	for i := range lpos {
		lpos[i] = int64(i)
	}
	return b.add(hlo.OpMultiply, []*hlo.Instruction{b.broadcast(l, out, lpos), b.broadcast(r, out, rpos)})
}

// dropDims reshapes x without the given size-1 dimensions.
func (b *builder) dropDims(x *hlo.Instruction, drop []int64) *hlo.Instruction {
	if len(drop) == 0 {
		return x
	}
	var dims []int64
	for d, n := range x.Shape.Dims {
		if !slices.Contains(drop, int64(d)) {
			dims = append(dims, n)
		}
	}
	return b.withShape(hlo.OpReshape, hlo.ArrayShape(x.Shape.DType, dims...), []*hlo.Instruction{x})
}
