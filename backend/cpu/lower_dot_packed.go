package cpu

import (
	"sync"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// A product whose right operand is a constant (a layer's weights) packs
// it for the GEMM once, on its first call, and reads the packed panels on
// every call after (kernels.PackedB), as ONNX Runtime and oneDNN prepack
// weights. The packed copy is kept for the executable's life: as large
// as the weights, in f32.

// packedWeights keeps one product's packed constant B.
type packedWeights struct {
	mu     sync.Mutex
	lit    *hlo.Literal // the literal it was packed from
	packed *kernels.PackedB
}

// constantRHS returns a keeper for a product's right operand w when
// packing it ahead can pay: a constant with its values, read by one
// product (no batch) of more than one row and more columns than one
// sliver (the kernels read B in place for one row or a few columns).
func constantRHS(w *hlo.Instruction, g *gemmPlan) *packedWeights {
	if w.Opcode != hlo.OpConstant || w.Literal == nil || w.Literal.IsElided() || g.batch != 1 || g.m < 2 || g.n <= 16 {
		return nil
	}
	if _, _, ok := tile.KernelType(w.Literal.DType()); !ok {
		return nil
	}
	return &packedWeights{}
}

// get returns lit packed as g's B (vals: lit as f32), packing it on the
// first call; nil when p is nil or the packing is refused.
func (p *packedWeights) get(lit *hlo.Literal, g *gemmPlan, vals []float32) *kernels.PackedB {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lit != lit {
		b := g.b
		b.Data = vals
		p.packed, _ = kernels.PackBF32(g.k, g.n, b) // nil on a refusal: the caller packs per call
		p.lit = lit
	}
	return p.packed
}
