package cpu

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Products written transposed: a plain f32 dot whose only reader is a
// transpose that keeps the product's columns last becomes a kCustom
// fusion of the two, whose kernel (lowerDotTransposeFusion) has the GEMM
// write each product's rows straight to where the transpose puts them,
// instead of the product to a buffer and then the copy. Attention's
// output is such a pair: the heads' products P·V, [B, H, T, D], go back
// to the sequence's layout [B, T, H, D] for the output projection; each
// head's C starts at h·D of a row H·D long, its rows H·D apart. (XLA
// gets the same from layout assignment, by giving the dot its consumer's
// layout.)

// fuseDotTransposes rewrites c, returning the number of fusions made.
func fuseDotTransposes(m *hlo.Module, c *hlo.Computation, names *hlo.NameSet) (int, error) {
	users := c.Users()
	n := 0
	for _, t := range slices.Clone(c.Instructions) {
		if t.Opcode != hlo.OpTranspose || len(t.ControlPredecessors) > 0 {
			continue
		}
		d := t.Operands[0]
		if d.Opcode != hlo.OpDot || d == c.Root || len(users[d]) != 1 || len(d.ControlPredecessors) > 0 {
			continue
		}
		if _, ok := planTransposedDot(d, t); !ok {
			continue
		}
		if err := buildFusion(m, c, group{members: []*hlo.Instruction{t, d}, kind: kCustom, copied: map[*hlo.Instruction]bool{}, elem: t.Shape}, names); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// transposedDot is a product whose C goes out transposed: plan's
// products, product i's C at offset(i) of the output, its rows ldc
// apart.
type transposedDot struct {
	plan gemmPlan
	// outStrides are the output's strides of the product's batch
	// dimensions, in the product's order.
	outStrides []int
	ldc        int
}

// offset is where product i's C starts in the output.
func (p *transposedDot) offset(i int) int {
	off := 0
	for d := len(p.plan.batchDims) - 1; d >= 0; d-- {
		off += i % p.plan.batchDims[d] * p.outStrides[d]
		i /= p.plan.batchDims[d]
	}
	return off
}

// planTransposedDot plans dot d (f32, on the batched GEMM) written
// through transpose t: d's result must be its batch dimensions, then
// one row dimension and one column dimension (planDot's C order), and t
// must keep the columns last. Products lowerDot runs on other kernels
// (a few rows: gemvDot; a constant B: packed once) are left to it, so
// that the fusion never changes a product's bits.
func planTransposedDot(d, t *hlo.Instruction) (transposedDot, bool) {
	g, ok := planDot(d)
	if !ok || !plainArray(d.Shape) || !plainArray(t.Shape) || d.Shape.DType != hlo.F32 || t.Shape.DType != hlo.F32 ||
		smallM(&g) || g.strip > 0 || d.Operands[1].Opcode == hlo.OpConstant {
		return transposedDot{}, false
	}
	r := d.Shape.Rank()
	perm := t.Dimensions()
	if r < 3 || len(perm) != r || len(g.batchDims) != r-2 || int(perm[r-1]) != r-1 {
		return transposedDot{}, false
	}
	out := hlo.RowMajorStrides(t.Shape.Dims)
	at := make([]int, r) // the output's stride of each of d's dimensions
	for i, p := range perm {
		if p < 0 || int(p) >= r {
			return transposedDot{}, false
		}
		at[p] = out[i]
	}
	if at[r-1] != 1 || int(d.Shape.Dims[r-2]) != g.m || int(d.Shape.Dims[r-1]) != g.n {
		return transposedDot{}, false
	}
	return transposedDot{plan: g, outStrides: at[:r-2], ldc: at[r-2]}, true
}
