package opt

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// TransposeFolding folds transposes of dot and convolution operands into
// the consumer's dimension numbers (XLA's TransposeFolding): the consumer
// reads the transpose's operand directly, naming its dimensions through
// the permutation. For dot this is only done when the non-contracting,
// non-batch dimensions keep their relative order, since their order is
// the order of the result's dimensions.
var TransposeFolding = pass.Func("transpose-folding", runTransposeFolding)

func runTransposeFolding(m *hlo.Module) (bool, error) {
	changed := false
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			switch in.Opcode {
			case hlo.OpDot:
				changed = foldDotOperand(in, 0, "lhs") || changed
				changed = foldDotOperand(in, 1, "rhs") || changed
			case hlo.OpConvolution:
				changed = foldConvOperands(in) || changed
			}
		}
	}
	if changed {
		removeDead(m)
	}
	return changed, nil
}

// mapDims returns perm[d] for each d: transposed dimension d is dimension
// perm[d] of the transpose's operand.
func mapDims(perm, dims []int64) []int64 {
	out := make([]int64, len(dims))
	for i, d := range dims {
		out[i] = perm[d]
	}
	return out
}

func foldDotOperand(in *hlo.Instruction, i int, side string) bool {
	t := in.Operands[i]
	if t.Opcode != hlo.OpTranspose || in.HasAttr("sparsity") {
		return false
	}
	perm := t.Dimensions()
	batch, _ := in.Ints(side + "_batch_dims")
	contract, _ := in.Ints(side + "_contracting_dims")
	free := complement(t.Shape.Rank(), append(slices.Clone(batch), contract...))
	if !slices.IsSorted(mapDims(perm, free)) {
		return false
	}
	if len(batch) > 0 {
		in.SetAttr(side+"_batch_dims", mapDims(perm, batch))
	}
	if len(contract) > 0 {
		in.SetAttr(side+"_contracting_dims", mapDims(perm, contract))
	}
	in.Operands[i] = t.Operands[0]
	return true
}

// foldConvOperands: a convolution names every operand dimension by role,
// so any transpose of the input or kernel folds.
func foldConvOperands(in *hlo.Instruction) bool {
	dn := in.ConvDims()
	if dn == nil {
		return false
	}
	changed := false
	next := *dn
	if t := in.Operands[0]; t.Opcode == hlo.OpTranspose {
		p := t.Dimensions()
		next.InputBatch, next.InputFeature = p[dn.InputBatch], p[dn.InputFeature]
		next.InputSpatial = mapDims(p, dn.InputSpatial)
		in.Operands[0] = t.Operands[0]
		changed = true
	}
	if t := in.Operands[1]; t.Opcode == hlo.OpTranspose {
		p := t.Dimensions()
		next.KernelInput, next.KernelOutput = p[dn.KernelInput], p[dn.KernelOutput]
		next.KernelSpatial = mapDims(p, dn.KernelSpatial)
		in.Operands[1] = t.Operands[0]
		changed = true
	}
	if changed {
		in.SetAttr("dim_labels", &next)
	}
	return changed
}
