package stablehlo

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// Complex asin, acos, asinh and acosh follow the legalization's
// asin_acos_kernel (a modified Hull et al. algorithm, see
// ChloDecompositionPatternsMath.td): w = kernel(z) =
// sqrt(a² - x²) + i log(a + sqrt(a² - 1)) with a = (|z+1| + |z-1|)/2,
// each part evaluated in the regions where it stays exact. Real operands
// keep HLO's own ops.

func init() {
	for name, code := range map[string]hlo.Opcode{"asin": hlo.OpAsin, "acos": hlo.OpAcos, "asinh": hlo.OpAsinh, "acosh": hlo.OpAcosh} {
		register(complexInverse(name, code), "chlo."+name)
	}
}

func complexInverse(name string, code hlo.Opcode) opFunc {
	direct := sameShape(code)
	return func(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
		ins, err := s.operands(op)
		if err != nil {
			return nil, err
		}
		if len(ins) != 1 || !ins[0].Shape.DType.IsComplex() {
			return direct(s, op)
		}
		z := ins[0]
		part := z.Shape.WithDType(z.Shape.DType.ComplexComponent())
		b := eb{s, part}
		re := b.s.add(hlo.OpReal, part, []*hlo.Instruction{z})
		im := b.s.add(hlo.OpImag, part, []*hlo.Instruction{z})
		neg := func(v *hlo.Instruction) *hlo.Instruction { return b.un(hlo.OpNegate, v) }
		ltZero := func(v *hlo.Instruction) *hlo.Instruction { return b.cmp("LT", v, b.c(0)) }
		var outRe, outIm *hlo.Instruction
		switch name {
		case "asin":
			wr, wi := asinAcosKernel(b, re, im)
			outRe, outIm = b.bin(hlo.OpAtan2, re, wr), b.sel(ltZero(im), neg(wi), wi)
		case "acos":
			wr, wi := asinAcosKernel(b, re, im)
			outRe, outIm = b.bin(hlo.OpAtan2, wr, re), b.sel(ltZero(im), wi, neg(wi))
		case "acosh":
			wr, wi := asinAcosKernel(b, re, im)
			a := b.bin(hlo.OpAtan2, wr, re)
			outRe, outIm = wi, b.sel(ltZero(im), neg(a), a)
		case "asinh":
			wr, wi := asinAcosKernel(b, neg(im), re) // kernel(i z)
			outRe, outIm = b.sel(ltZero(re), neg(wi), wi), b.bin(hlo.OpAtan2, im, wr)
		}
		return []*hlo.Instruction{s.add(hlo.OpComplex, z.Shape, []*hlo.Instruction{outRe, outIm})}, nil
	}
}

// hypotLike is the kernel's sqrt(mx² + mn²) of |u| and y, exact where
// mn/mx underflows.
func hypotLike(b eb, u, y *hlo.Instruction) *hlo.Instruction {
	mx, mn := b.bin(hlo.OpMaximum, u, y), b.bin(hlo.OpMinimum, u, y)
	q := b.div(mn, mx)
	r := b.mul(q, q)
	sqa := b.un(hlo.OpSqrt, b.add(b.c(1), r))
	small := b.bin(hlo.OpAnd, b.cmp("EQ", sqa, b.c(1)), b.cmp("GT", r, b.c(0)))
	v := b.sel(small, b.add(mx, b.div(b.mul(mx, r), b.c(2))), b.mul(mx, sqa))
	return b.sel(b.cmp("EQ", mx, mn), b.mul(b.c(math.Sqrt2), mx), v)
}

// asinAcosKernel returns the real and imaginary parts of the kernel of
// signedX + i signedY.
func asinAcosKernel(b eb, signedX, signedY *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
	x, y := b.un(hlo.OpAbs, signedX), b.un(hlo.OpAbs, signedY)
	one, half, zero := b.c(1), b.c(0.5), b.c(0)
	maxFinite, smallestNormal := math.MaxFloat64, 0x1p-1022
	if b.sh.DType == hlo.F32 {
		maxFinite, smallestNormal = math.MaxFloat32, 0x1p-126
	}
	safeMax := b.div(b.un(hlo.OpSqrt, b.c(maxFinite)), b.c(8))
	xp1, xm1 := b.add(x, one), b.sub(x, one)
	r := hypotLike(b, b.un(hlo.OpAbs, xp1), y)
	s := hypotLike(b, b.un(hlo.OpAbs, xm1), y)
	a := b.mul(half, b.add(r, s))
	halfApx := b.mul(half, b.add(a, x))
	yy := b.mul(y, y)
	rpxp1, smxm1, spxm1 := b.add(r, xp1), b.sub(s, xm1), b.add(s, xm1)

	inner := b.sel(b.cmp("LE", x, one),
		b.un(hlo.OpSqrt, b.mul(halfApx, b.add(b.div(yy, rpxp1), smxm1))),
		b.mul(y, b.un(hlo.OpSqrt, b.add(b.div(halfApx, rpxp1), b.div(halfApx, spxm1)))))
	real := b.sel(b.cmp("GE", b.bin(hlo.OpMaximum, x, y), safeMax), y, inner)

	safeMaxOpt := b.sel(b.cmp("LT", x, b.mul(safeMax, b.c(1e12))), b.mul(safeMax, b.c(1e-6)), b.mul(safeMax, b.c(100)))
	yBig := b.cmp("GE", y, safeMaxOpt)
	mx1 := b.sel(yBig, y, x)
	yNotInf := b.un(hlo.OpNot, b.cmp("EQ", y, b.c(math.Inf(1))))
	xoy := b.sel(b.bin(hlo.OpAnd, yBig, yNotInf), b.div(x, y), zero)
	big := b.add(b.add(b.un(hlo.OpLog, b.c(2)), b.un(hlo.OpLog, mx1)), b.mul(half, b.un(hlo.OpLog1p, b.mul(xoy, xoy))))

	tiny := b.bin(hlo.OpAnd, b.cmp("LT", y, b.mul(b.un(hlo.OpSqrt, b.c(smallestNormal)), b.c(4))), b.cmp("LT", x, one))
	ap1 := b.add(a, one)
	halfYY := b.mul(half, yy)
	hyr := b.div(halfYY, rpxp1)
	geOne := b.sel(b.cmp("GE", x, one), b.add(hyr, b.mul(half, spxm1)),
		b.sel(b.cmp("LE", a, b.c(1.5)), b.add(hyr, b.div(halfYY, smxm1)), b.sub(a, one)))
	am1 := b.sel(tiny, b.un(hlo.OpNegate, b.div(b.mul(xp1, xm1), ap1)), geOne)
	sq := b.un(hlo.OpSqrt, b.mul(am1, ap1))
	small := b.sel(tiny, b.div(y, sq), b.un(hlo.OpLog1p, b.add(am1, sq)))
	imag := b.sel(b.cmp("GE", mx1, b.sel(yBig, safeMaxOpt, safeMax)), big, small)
	return real, imag
}
