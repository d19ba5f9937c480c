package cpu

import (
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// bf16Direct reports whether dot in (planned as g) multiplies its bf16
// operands as they are, on the kernels' bf16 dot-product GEMM
// (kernels.GemmNarrowF32 where kernels.BF16Direct holds: VDPBF16PS on AMD
// Zen 4, twice the f32 FMA's multiply-adds an instruction), rather than
// widening both to f32 for the f32 GEMM. Products the small-M kernels
// take (a few rows; memory-bound) keep the widening path.
func bf16Direct(in *hlo.Instruction, g *gemmPlan) bool {
	l, r := in.Operands[0].Shape.DType, in.Operands[1].Shape.DType
	return kernels.BF16Direct() && l == hlo.BF16 && r == hlo.BF16 && !smallM(g)
}

// lowerDotBF16 runs a dot planDot and bf16Direct accept: each product of
// the batch reads its operands' bf16 bits in place through the plan's
// strides, packing them in pairs as the kernel takes them; the f32 result
// is rounded to out's type where that is narrower.
func (x *compiler) lowerDotBF16(in *hlo.Instruction) (kernelFunc, bool) {
	g, ok := planDot(in)
	if !ok || !bf16Direct(in, &g) {
		return nil, false
	}
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		c, finish := tile.F32Into(out, x.threads)
		la, lb := ops[0].Data().([]uint16), ops[1].Data().([]uint16)
		runBatch(g.batch, g.m, g.n, g.k, x.threads, func(i, threads int) {
			ao, bo := g.offsets(i)
			a := kernels.Narrow{Data: la[ao:], Row: g.a.Row, Col: g.a.Col, Format: minifloat.BF16}
			b := kernels.Narrow{Data: lb[bo:], Row: g.b.Row, Col: g.b.Col, Format: minifloat.BF16}
			kernels.GemmNarrowF32(g.m, g.n, g.k, a, b, c[i*g.m*g.n:], g.n, false, threads)
		})
		finish()
		return nil
	}, true
}
