package kernels

import (
	"sync"

	"github.com/axle-ml/axle/hlo/minifloat"
)

// Narrow is a strided view of f16, bf16 (or any minifloat) bit patterns:
// element (i, j) is Format's value of Data[i*Row + j*Col].
type Narrow struct {
	Data     []uint16
	Row, Col int
	Format   minifloat.Format
}

// GemmNarrowF32 is GemmF32 for narrow-float operands: they are widened to
// f32 (exactly, by table) while being packed, so the f32 micro-kernel runs
// unchanged and no widened copy of A or B is ever made. The result is
// bit-identical to widening first and calling GemmF32.
//
// Two bf16 operands run instead on AVX512_BF16's VDPBF16PS where the CPU
// runs it faster than the f32 kernels (AMD Zen 4; not Intel without AMX,
// where it has half their rate), or where AXLE_KERNELS=bf16 asks for it
// (gemm_bf16.go). That path reads bf16 subnormals as zero and flushes
// subnormal partial sums to zero, so its bits differ. Either path keeps
// every element of C, where no partial sum overflows and k < 2²², within
//
//	|c − exact| ≤ k·2⁻²³·(|c₀| + Σₚ|aᵢₚbₚⱼ|) + k·2⁻¹²⁵ + Σ′|aᵢₚbₚⱼ|
//
// of the exact c₀ + Σₚ aᵢₚbₚⱼ, c₀ being C's element before (0 unless
// accumulating). Each product is exact in f32 and every addition of one
// (k of them), of a K block's sum into C and of c₀ (fewer than k/256 + 1
// more) rounds once to nearest: fewer than 2k roundings of relative
// error 2⁻²⁴ each, or an absolute 2⁻¹²⁶ where the path flushes the sum
// to zero. Σ′ is over the products with a subnormal factor, which the
// VDPBF16PS path (and the widening one with AXLE_DENORMALS=flush) drops.
func GemmNarrowF32(m, n, k int, a, b Narrow, c []float32, ldc int, accumulate bool, threads int) {
	if preferBF16DP && a.Format == minifloat.BF16 && b.Format == minifloat.BF16 {
		gemmBF16DP(m, n, k, a, b, c, ldc, accumulate, threads)
		return
	}
	ta, tb := widenTable(a.Format), widenTable(b.Format)
	pa := func(dst []float32, ic, pc, mb, kb int) {
		o := 0
		for s := 0; s < mb; s += sgemmMR {
			rows := min(sgemmMR, mb-s)
			for p := range kb {
				col := (pc + p) * a.Col
				for r := range rows {
					dst[o+r] = ta[a.Data[(ic+s+r)*a.Row+col]]
				}
				clear(dst[o+rows : o+sgemmMR])
				o += sgemmMR
			}
		}
	}
	pb := func(dst []float32, pc, jc, kb, nb, from, to int) {
		to = min(to, (nb+sgemmNR-1)/sgemmNR)
		o := from * sgemmNR * kb
		for s := from * sgemmNR; s < to*sgemmNR; s += sgemmNR {
			cols := min(sgemmNR, nb-s)
			for p := range kb {
				row := (pc + p) * b.Row
				for j := range cols {
					dst[o+j] = tb[b.Data[row+(jc+s+j)*b.Col]]
				}
				clear(dst[o+cols : o+sgemmNR])
				o += sgemmNR
			}
		}
	}
	gemmCore(m, n, k, packedBlock(pa, sgemmMR, sgemmNR, kernelF32, wideFor(m, n, k)), pb, c, ldc, accumulate, threads, sgemmMR, sgemmNR, nil)
}

// BF16Direct reports whether GemmNarrowF32 multiplies two bf16 operands
// on the bf16 dot-product kernels (VDPBF16PS), where this CPU runs them
// faster than widening to f32 (cpu_model_amd64.go's policy, or
// AXLE_KERNELS=bf16): the compiler then hands bf16 products to it rather
// than widening them itself.
func BF16Direct() bool { return preferBF16DP }

// widenTables holds widenTable's tables by format name: built once each
// (65,536 values: rebuilding two took 150 µs a call, 5% of a 512³
// product).
var widenTables sync.Map

// widenTable is the f32 value of every bit pattern of f.
func widenTable(f minifloat.Format) []float32 {
	if t, ok := widenTables.Load(f.Name()); ok {
		return t.([]float32)
	}
	v := f.Values()
	t := make([]float32, len(v))
	for i, x := range v {
		t[i] = float32(x)
	}
	actual, _ := widenTables.LoadOrStore(f.Name(), t)
	return actual.([]float32)
}
