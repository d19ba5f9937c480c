package xb

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Gradient rules of reduce (sum, product, max, min bodies) and dot.

func init() {
	registerGrad(gradReduce, hlo.OpReduce)
	registerGrad(gradDot, hlo.OpDot)
}

func gradReduce(z, g *Op) []*Op {
	if len(z.inputs) != 2 {
		z.b.errorf("grad: no gradient rule for a variadic reduce (instruction %s)", z.in.Name)
		return nil
	}
	x, init := z.inputs[0], z.inputs[1]
	axes := z.in.Dimensions()
	op, ok := hlo.Combiner(z.in.Computation("to_apply"))
	back := func(o *Op) *Op { return expandBack(o, x, axes...) }
	switch {
	case ok && op == hlo.OpAdd:
		// The init value is added once into every result element.
		return []*Op{back(g), ReduceSum(g, AllAxes(g)...)}
	case ok && op == hlo.OpMultiply:
		// ∂(Πx)/∂x_i = Πx / x_i, exact while no x_i is zero.
		return []*Op{Div(back(Mul(g, z)), x), nil}
	case ok && (op == hlo.OpMaximum || op == hlo.OpMinimum):
		// The adjoint goes to the elements equal to the result, split
		// evenly among ties (as JAX does); init gets none.
		hit := Eq(x, back(z))
		count := ReduceSum(Convert(hit, x.DType()), axes...)
		share := back(Div(g, count))
		return []*Op{Select(hit, share, BroadcastTo(like(x, 0), x.Dims()...)), nil}
	}
	_ = init
	z.b.errorf("grad: no gradient rule for reduce with body %s (instruction %s): only add, multiply, maximum and minimum",
		z.in.Computation("to_apply").Name, z.in.Name)
	return nil
}

// gradDot: with z = x·y contracting x's C dims against y's, batch dims B,
// the adjoint of x is g·yᵀ over y's free dims, and of y is xᵀ·g over x's
// free dims, each transposed back into its operand's dimension order.
func gradDot(z, g *Op) []*Op {
	x, y := z.inputs[0], z.inputs[1]
	lb, _ := z.in.Ints("lhs_batch_dims")
	rb, _ := z.in.Ints("rhs_batch_dims")
	lc, _ := z.in.Ints("lhs_contracting_dims")
	rc, _ := z.in.Ints("rhs_contracting_dims")
	xFree := freeDims(x.Rank(), lb, lc)
	yFree := freeDims(y.Rank(), rb, rc)
	nb := int64(len(lb))
	// g's dimensions: batch, then x's free dims, then y's free dims.
	gBatch := iotaFrom(0, nb)
	gX := iotaFrom(nb, int64(len(xFree)))
	gY := iotaFrom(nb+int64(len(xFree)), int64(len(yFree)))
	return []*Op{
		dotBack(g, y, gBatch, gY, rb, yFree, rc, lb, xFree, lc, x.Rank()),
		dotBack(g, x, gBatch, gX, lb, xFree, lc, rb, yFree, rc, y.Rank()),
	}
}

// dotBack computes one operand's adjoint: contract g's dims gOther with
// other's free dims, batch on gBatch/otherBatch. With g first, the result
// holds batch, then g's remaining (this operand's free) dims, then
// other's contracting dims in increasing order; with other first, those
// two groups swap. The order that needs no transpose into this operand's
// layout (batch dims at myBatch, free dims at myFree, contracting dims at
// myContract, paired with otherContract) is used, so a weight gradient
// xᵀ·g comes out as [in, out] directly rather than as a product and a
// transpose.
func dotBack(g, other *Op, gBatch, gOther, otherBatch, otherFree, otherContract, myBatch, myFree, myContract []int64, rank int) *Op {
	rest := slices.Clone(otherContract)
	slices.Sort(rest)
	positions := func(gFirst bool) []int64 {
		pos := make([]int64, rank)
		for i, m := range myBatch {
			pos[m] = int64(i)
		}
		free, contract := int64(len(myBatch)), int64(len(myBatch)+len(myFree))
		if !gFirst {
			free, contract = int64(len(myBatch)+len(rest)), int64(len(myBatch))
		}
		for j, m := range myFree {
			pos[m] = free + int64(j)
		}
		for i, oc := range otherContract {
			pos[myContract[i]] = contract + int64(slices.Index(rest, oc))
		}
		return pos
	}
	if pos := positions(false); isIdentity(pos) {
		return DotGeneral(other, g, DotDims{
			LhsBatch: otherBatch, RhsBatch: gBatch,
			LhsContracting: otherFree, RhsContracting: gOther,
		})
	}
	d := DotGeneral(g, other, DotDims{
		LhsBatch: gBatch, RhsBatch: otherBatch,
		LhsContracting: gOther, RhsContracting: otherFree,
	})
	if pos := positions(true); !isIdentity(pos) {
		return Transpose(d, pos...)
	}
	return d
}

// freeDims lists the dims of a rank-r operand that are neither batch nor
// contracting, in order.
func freeDims(r int, batch, contract []int64) []int64 {
	var out []int64
	for d := range int64(r) {
		if !slices.Contains(batch, d) && !slices.Contains(contract, d) {
			out = append(out, d)
		}
	}
	return out
}

func iotaFrom(start, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = start + int64(i)
	}
	return out
}
