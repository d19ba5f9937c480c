package cpu

import (
	"sync"

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
	var pw *bf16Weights
	if g.batch == 1 {
		pw = constantBF16(in.Operands[1], func(lit *hlo.Literal) (*kernels.PackedBF16, error) {
			return kernels.PackBF16(g.k, g.n, kernels.Narrow{Data: lit.Data().([]uint16), Row: g.b.Row, Col: g.b.Col, Format: minifloat.BF16})
		})
	}
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		c, finish := tile.F32Into(out, x.threads)
		la, lb := ops[0].Data().([]uint16), ops[1].Data().([]uint16)
		if packed := pw.get(ops[1]); packed != nil {
			a := kernels.Narrow{Data: la, Row: g.a.Row, Col: g.a.Col, Format: minifloat.BF16}
			err := kernels.GemmBF16Packed(g.m, g.n, g.k, a, packed, c, g.n, x.threads)
			finish()
			return err
		}
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

// bf16Weights keeps a bf16 product's or convolution's constant right
// operand (a model's weights) packed for the bf16 GEMM from its first
// call on, as packedWeights does for f32: packing on every call read and
// wrote all of B for one use of each word per block of A's rows. The copy
// lives as long as the executable, as large as the weights.
type bf16Weights struct {
	pack   func(*hlo.Literal) (*kernels.PackedBF16, error)
	mu     sync.Mutex
	lit    *hlo.Literal // the literal the copy was made from
	packed *kernels.PackedBF16
}

// constantBF16 returns a keeper packing the right operand w with pack
// when w is a constant with its values (nil otherwise).
func constantBF16(w *hlo.Instruction, pack func(*hlo.Literal) (*kernels.PackedBF16, error)) *bf16Weights {
	if w.Opcode != hlo.OpConstant || w.Literal == nil || w.Literal.IsElided() {
		return nil
	}
	return &bf16Weights{pack: pack}
}

// get returns lit packed, packing it on the first call (nil where p is
// nil or the packer refuses: the caller packs per call).
func (p *bf16Weights) get(lit *hlo.Literal) *kernels.PackedBF16 {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lit != lit {
		p.packed, _ = p.pack(lit)
		p.lit = lit
	}
	return p.packed
}
