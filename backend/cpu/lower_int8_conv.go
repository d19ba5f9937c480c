package cpu

import (
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Lowering of the integer convolution fusion (fusion_int8_conv.go) onto
// kernels.ConvInt8NCHW, which takes the zero points as the convolution's
// own terms and wraps in s32 as the evaluator's sums do, so the result is
// the evaluator's bit for bit. A u8 kernel is read as the s8 w−128, its
// zero points shifted by 128 with it (made once for a constant kernel).
// An image zero point outside the image type's range (the padding must
// read it) leaves that call to the evaluator.

// int8Conv is a kCustom integer convolution fusion as its kernel runs it.
type int8Conv struct {
	p       kernels.ConvInt8 // geometry and image type; zero points per call
	fc      *hlo.Computation
	px, pw  int // the fusion parameters of the 8-bit image and kernel
	zx, zw  int // those of the zero points (-1: none)
	shiftW  bool
	constW  []int8 // the s8 kernel, when the kernel is a constant
	threads int
}

// lowerInt8ConvFusion compiles a kCustom fusion of fuseInt8Convs.
func lowerInt8ConvFusion(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	fc := in.Computation("calls")
	if kind, _ := in.EnumAttr("kind"); kind != kCustom || fc == nil || fc.Root == nil {
		return nil, false
	}
	x, w, ok := int8ConvOperands(fc.Root)
	if !ok || x.x == nil || w.x == nil || x.x.Opcode != hlo.OpParameter || w.x.Opcode != hlo.OpParameter {
		return nil, false
	}
	p, _ := planInt8Conv(fc.Root)
	k := &int8Conv{p: *p, fc: fc, px: int(x.x.ParamNumber), pw: int(w.x.ParamNumber), zx: -1, zw: -1,
		shiftW: w.x.Shape.DType == hlo.U8, threads: threads}
	k.p.XUnsigned = x.x.Shape.DType == hlo.U8
	for _, z := range []struct {
		o   int8Operand
		dst *int
	}{{x, &k.zx}, {w, &k.zw}} {
		if z.o.zp == nil {
			continue
		}
		zp := z.o.zp.Operands[0]
		if zp.Opcode != hlo.OpParameter || zp.Shape.DType != hlo.S32 || zp.Shape.Rank() > 1 {
			return nil, false
		}
		*z.dst = int(zp.ParamNumber)
	}
	if wl := in.Operands[k.pw]; wl.Opcode == hlo.OpConstant && wl.Literal != nil && !wl.Literal.IsElided() {
		k.constW = k.kernelS8(wl.Literal)
		if sums, err := kernels.ConvInt8KernelSums(&k.p, k.constW); err == nil {
			k.p.KernelSums = sums
		}
	}
	return k.run, true
}

func (k *int8Conv) run(out *hlo.Literal, ops []*hlo.Literal) error {
	p := k.p
	if k.zx >= 0 {
		p.XZero = ops[k.zx].Data().([]int32)[0]
		lo, hi := int32(-128), int32(127)
		if p.XUnsigned {
			lo, hi = 0, 255
		}
		if p.XZero < lo || p.XZero > hi {
			return k.onEvaluator(out, ops)
		}
	}
	p.WZero = k.kernelZeros(ops)
	w := k.constW
	if w == nil {
		w = k.kernelS8(ops[k.pw])
	}
	return kernels.ConvInt8NCHW(&p, bytesOf(ops[k.px]), w, out.Data().([]int32), k.threads)
}

// kernelS8 is the kernel as the GEMM reads it: s8 as it is, u8 less 128.
func (k *int8Conv) kernelS8(l *hlo.Literal) []int8 {
	if u, ok := l.Data().([]uint8); ok {
		s := make([]int8, len(u))
		for i, v := range u {
			s[i] = int8(v ^ 0x80)
		}
		return s
	}
	return l.Data().([]int8)
}

// kernelZeros is the kernel's zero point per output channel (shifted by
// 128 for a u8 kernel), nil for none.
func (k *int8Conv) kernelZeros(ops []*hlo.Literal) []int32 {
	if k.zw < 0 && !k.shiftW {
		return nil
	}
	z := make([]int32, k.p.OutChannels)
	if k.zw >= 0 {
		v := ops[k.zw].Data().([]int32)
		for o := range z {
			z[o] = v[min(o, len(v)-1)] // one value, or one per channel
		}
	}
	if k.shiftW {
		for o := range z {
			z[o] -= 128
		}
	}
	return z
}

// onEvaluator computes the fusion's convolution with the evaluator.
func (k *int8Conv) onEvaluator(out *hlo.Literal, ops []*hlo.Literal) error {
	ev, err := newEvaluator(nil, false)
	if err != nil {
		return err
	}
	v, err := ev.Computation(k.fc, ops...)
	if err != nil {
		return err
	}
	copy(out.Data().([]int32), v.Data().([]int32))
	return nil
}
