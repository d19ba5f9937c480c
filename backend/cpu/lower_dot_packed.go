package cpu

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// A product whose right operand is a constant (a layer's weights) lays it
// out for its kernel once, on its first call, and reads that copy on
// every call after, as ONNX Runtime and oneDNN prepack weights:
//   - for the blocked GEMM, B packed into its slivers (kernels.PackedB):
//     packing on every call read and wrote all of B for one use of each
//     value per block of A's rows;
//   - for the small-M kernels, which read B's rows in place, a B stored
//     transposed (weights [n, k]: ONNX Gemm's transB, PyTorch's Linear,
//     an LSTM's recurrence) turned row-major once: those products went to
//     the packed GEMM (a few rows) or the skinny kernel (one row, run 16
//     lanes wide over one column: ResNet's 1×1024·1024×1000 classifier
//     took 0.55 ms); and any B in the column strips the kernels read as
//     one stream where that is faster (kernels.GemvStrip: every B wider
//     than a kernel on AVX2, a BiLSTM's step 7.2 → 4.7 µs).
//   - a narrow (bf16, f16) B widened to f32 once for the kernels that read
//     it so (an fp16 ViT-S widened its 11M weights on every call, 2.5 ns
//     each: a fifth of its time).
// The copy lives as long as the executable, as large as the weights in
// f32.

// packedWeights keeps one product's constant B laid out for its kernel.
type packedWeights struct {
	plan   gemmPlan // the plan of the products sharing this keeper
	mu     sync.Mutex
	lit    *hlo.Literal     // the literal the copies were made from
	packed *kernels.PackedB // for the GEMM
	wide   []float32        // a narrow B's values as f32
	// rows, for the small-M kernels, is read without the lock: their
	// products take a microsecond or two, and a recurrence's steps all
	// read one keeper (constantRHS).
	rows atomic.Pointer[rowsCopy]
}

// rowsCopy is a B laid out for the small-M kernels, the plan reading it
// and the literal it was copied from; never changed once made.
type rowsCopy struct {
	lit  *hlo.Literal
	g    gemmPlan
	data []float32
}

// constantRHS returns the keeper for w, a product's right operand read
// through g, when it is a constant with its values (nil otherwise): one
// keeper, and so one copy, for every product of the same plan that reads
// the same constant. An unrolled recurrence's 32 steps read one weight matrix:
// a copy each put 32 copies of the 256 KB the steps share in L2 out in
// memory (a BiLSTM's steps 5 → 15 µs).
func (x *compiler) constantRHS(w *hlo.Instruction, g *gemmPlan) *packedWeights {
	if w.Opcode != hlo.OpConstant || w.Literal == nil || w.Literal.IsElided() {
		return nil
	}
	if _, _, ok := tile.KernelType(w.Literal.DType()); !ok {
		return nil
	}
	// The layouts a keeper holds depend on how B is read, and the plan it
	// hands the small-M kernels is the product's (its A too): products
	// share a keeper only where their plans are equal.
	for _, p := range x.weights[w] {
		if p.plan.same(g) {
			return p
		}
	}
	if x.weights == nil {
		x.weights = map[*hlo.Instruction][]*packedWeights{}
	}
	p := &packedWeights{plan: *g}
	x.weights[w] = append(x.weights[w], p)
	return p
}

// same reports whether g and h read their operands alike: sizes,
// strides, batch layout and strips (not the operands' data).
func (g *gemmPlan) same(h *gemmPlan) bool {
	return g.batch == h.batch && g.m == h.m && g.n == h.n && g.k == h.k && g.strip == h.strip &&
		g.a.Row == h.a.Row && g.a.Col == h.a.Col && g.b.Row == h.b.Row && g.b.Col == h.b.Col &&
		slices.Equal(g.batchDims, h.batchDims) && slices.Equal(g.aBatch, h.aBatch) && slices.Equal(g.bBatch, h.bBatch)
}

// gemmB returns lit packed as g's B (vals: lit as f32) for the blocked
// GEMM, packing it on the first call; nil where p is nil or the GEMM
// would not read it (a batch, one row, a few columns).
func (p *packedWeights) gemmB(lit *hlo.Literal, g *gemmPlan, vals []float32) *kernels.PackedB {
	if p == nil || g.batch != 1 || g.m < 2 || g.n <= 16 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lit != lit {
		p.reset(lit)
	}
	if p.packed == nil {
		b := g.b
		b.Data = vals
		p.packed, _ = kernels.PackBF32(g.k, g.n, b) // nil on a refusal: the caller packs per call
	}
	return p.packed
}

// rowsB returns lit as g's B with every product's rows contiguous, in the
// column strips the small-M kernels read fastest where there are such
// (kernels.GemvStrip), and the plan reading it, copying it on the first
// call; ok is false where p is nil, g does not go to the small-M
// kernels, or B's rows are contiguous already and strips would not help.
func (p *packedWeights) rowsB(lit *hlo.Literal, g *gemmPlan, vals []float32) (rg *gemmPlan, rows []float32, ok bool) {
	if p == nil || g.n == 1 || !smallM(g) {
		return nil, nil, false
	}
	strip := kernels.GemvStrip(g.k, g.n)
	if g.b.Col == 1 && strip == 0 {
		return nil, nil, false
	}
	if r := p.rows.Load(); r != nil && r.lit == lit {
		return &r.g, r.data, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lit != lit {
		p.reset(lit)
	}
	r := p.rows.Load()
	if r == nil {
		r = &rowsCopy{lit: lit}
		r.g, r.data = rowMajorB(g, vals, strip)
		p.rows.Store(r)
	}
	return &r.g, r.data, true
}

func (p *packedWeights) reset(lit *hlo.Literal) {
	p.lit, p.packed, p.wide = lit, nil, nil
	p.rows.Store(nil)
}

// values returns lit's values as f32 and the function handing back what
// that took: an f32 literal's own storage; a narrow constant p keeps
// widened once and kept; any other narrow operand widened into scratch
// (tile.AsF32).
func (p *packedWeights) values(lit *hlo.Literal, threads int) ([]float32, func()) {
	if _, isF32 := lit.Data().([]float32); p == nil || isF32 {
		return tile.AsF32(lit, threads)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lit != lit {
		p.reset(lit)
	}
	if p.wide == nil {
		f, release := tile.AsF32(lit, threads)
		p.wide = slices.Clone(f)
		release()
	}
	return p.wide, func() {}
}

// rowMajorB copies every product's B of g (read from vals) row-major, the
// products one after another, each in column strips of width strip where
// that is not 0, and returns the plan reading the copy.
func rowMajorB(g *gemmPlan, vals []float32, strip int) (gemmPlan, []float32) {
	rows := make([]float32, g.batch*g.k*g.n)
	for i := range g.batch {
		_, bo := g.offsets(i)
		dst := rows[i*g.k*g.n:]
		// In 32×32 blocks: a classifier's 4 MB of weights read a column
		// at a time took 8 ms, a first call's worth.
		for p0 := 0; p0 < g.k; p0 += 32 {
			for j0 := 0; j0 < g.n; j0 += 32 {
				for j := j0; j < min(j0+32, g.n); j++ {
					at, ld := p0*g.n+j, g.n // row p0, column j
					if strip > 0 {
						s := j / strip * strip
						w := min(strip, g.n-s)
						at, ld = s*g.k+p0*w+j-s, w
					}
					for p := p0; p < min(p0+32, g.k); p++ {
						dst[at] = vals[bo+p*g.b.Row+j*g.b.Col]
						at += ld
					}
				}
			}
		}
	}
	rg := *g
	rg.strip = strip
	rg.b = kernels.Strided[float32]{Row: g.n, Col: 1}
	rg.bBatch = make([]int, len(g.batchDims))
	stride := g.k * g.n
	for d := len(g.batchDims) - 1; d >= 0; d-- {
		rg.bBatch[d] = stride
		stride *= g.batchDims[d]
	}
	return rg, rows
}
