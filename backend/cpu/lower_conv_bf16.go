package cpu

import (
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/backend/cpu/tile"
	"github.com/axle-ml/axle/hlo"
)

// lowerConvBF16 runs a convolution of two bf16 operands on the bf16 GEMM
// (kernels.ConvBF16: VDPBF16PS, f32 sums) where kernels.BF16Direct says
// the CPU runs it faster than widening both to f32 for the f32 kernels
// (AMD Zen 4), the image read in place (no relayout, channels innermost,
// an even count of them, one feature group; kernels.ConvBF16Takes). The
// f32 result is rounded to out's type where that is narrower. Its bits
// differ from the widening path's within the bound GemmNarrowF32
// documents for the bf16 path. A constant kernel (a model's weights) is
// packed once, on the first call (bf16Weights).
func (c *compiler) lowerConvBF16(in *hlo.Instruction) (kernelFunc, bool) {
	l, r := in.Operands[0].Shape.DType, in.Operands[1].Shape.DType
	if !kernels.BF16Direct() || l != hlo.BF16 || r != hlo.BF16 {
		return nil, false
	}
	p, relayIn, relayOut, ok := planConv(in)
	if !ok || relayIn != nil || relayOut != nil || !kernels.ConvBF16Takes(p) {
		return nil, false
	}
	threads := c.threads
	pw := constantBF16(in.Operands[1], func(lit *hlo.Literal) (*kernels.PackedBF16, error) {
		return kernels.PackConvBF16(p, lit.Data().([]uint16))
	})
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		in, w := ops[0].Data().([]uint16), ops[1].Data().([]uint16)
		packed := pw.get(ops[1])
		f, narrow, _ := tile.KernelType(out.DType())
		if !narrow {
			return kernels.ConvBF16(p, in, w, packed, out.Data().([]float32), threads, nil)
		}
		dst, round := roundingBlocks(f, out, p.OutChannels)
		defer kernels.PutF32(dst)
		return kernels.ConvBF16(p, in, w, packed, dst, threads, round)
	}, true
}
