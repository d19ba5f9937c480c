package cpu

import (
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// lowerDotTransposeFusion compiles a kCustom fusion of fuseDotTransposes:
// the batched GEMM with each product's C written where the transpose
// puts it.
func lowerDotTransposeFusion(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	fc := in.Computation("calls")
	if kind, _ := in.EnumAttr("kind"); kind != kCustom || fc == nil || fc.Root == nil || fc.Root.Opcode != hlo.OpTranspose {
		return nil, false
	}
	d := fc.Root.Operands[0]
	if d.Opcode != hlo.OpDot || d.Operands[0].Opcode != hlo.OpParameter || d.Operands[1].Opcode != hlo.OpParameter {
		return nil, false
	}
	p, ok := planTransposedDot(d, fc.Root)
	if !ok {
		return nil, false
	}
	pa, pb := int(d.Operands[0].ParamNumber), int(d.Operands[1].ParamNumber)
	g := p.plan
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		c := out.Data().([]float32)
		la, releaseA := tile.AsF32(ops[pa], threads)
		defer releaseA()
		lb, releaseB := tile.AsF32(ops[pb], threads)
		defer releaseB()
		runBatch(g.batch, g.m, g.n, g.k, threads, func(i, t int) {
			a, b := g.product(i, la, lb)
			kernels.GemmF32(g.m, g.n, g.k, a, b, c[p.offset(i):], p.ldc, false, t)
		})
		return nil
	}, true
}
