package stablehlo

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// CHLO ops are decomposed into HLO. Where Axle's HLO has the op itself
// (sinh, cosh, tan, asin, acos, atan, asinh, acosh, atanh, erf), the op
// is used directly: the evaluator and the cpu backend compute it to
// within an ulp or two, at least as exactly as XLA's decompositions. The
// special functions follow the formulas of StableHLO's CHLO legalization
// (ChloLegalizeToStablehlo.cpp): the same approximations, computed in at
// least f32, so results agree with what JAX's lowering computes.

func init() {
	for name, code := range map[string]hlo.Opcode{
		"cosh": hlo.OpCosh, "tan": hlo.OpTan,
		"atan": hlo.OpAtan, "atanh": hlo.OpAtanh,
	} {
		register(sameShape(code), "chlo."+name)
	}
	for name, code := range map[string]hlo.Opcode{
		"add": hlo.OpAdd, "and": hlo.OpAnd, "atan2": hlo.OpAtan2, "complex": hlo.OpComplex, "divide": hlo.OpDivide,
		"maximum": hlo.OpMaximum, "minimum": hlo.OpMinimum, "multiply": hlo.OpMultiply, "or": hlo.OpOr,
		"power": hlo.OpPower, "remainder": hlo.OpRemainder, "shift_left": hlo.OpShiftLeft,
		"shift_right_arithmetic": hlo.OpShiftRightArithmetic, "shift_right_logical": hlo.OpShiftRightLogical,
		"subtract": hlo.OpSubtract, "xor": hlo.OpXor, "compare": hlo.OpCompare,
	} {
		register(broadcastBinary(code), "chlo.broadcast_"+name)
	}
	register(unaryChlo(sinh, true), "chlo.sinh")
	register(unaryChlo(lgamma, true), "chlo.lgamma")
	register(unaryChlo(digamma, true), "chlo.digamma")
	register(unaryChlo(erfInv, true), "chlo.erf_inv")
	register(unaryChlo(erfc, true), "chlo.erfc")
	register(unaryChlo(erf, true), "chlo.erf")
	register(unaryChlo(besselI1e, true), "chlo.bessel_i1e")
	register(unaryChlo(square, false), "chlo.square")
	register(unaryChlo(conj, false), "chlo.conj")
	register(isInf(0), "chlo.is_inf")
	register(isInf(1), "chlo.is_pos_inf")
	register(isInf(-1), "chlo.is_neg_inf")
	register(convertNextAfter, "chlo.next_after", "chlo.broadcast_next_after")
	register(convertTopK, "chlo.top_k")
	register(convertConstantLike, "chlo.constant_like")
	register(convertConstant, "chlo.constant")
}

// eb emits elementwise HLO over operands of one shape.
type eb struct {
	s  *scope
	sh hlo.Shape
}

func (b eb) c(v float64) *hlo.Instruction { return b.s.splat(b.sh, v) }

func (b eb) bin(code hlo.Opcode, x, y *hlo.Instruction) *hlo.Instruction {
	return b.s.add(code, x.Shape, []*hlo.Instruction{x, y})
}

func (b eb) un(code hlo.Opcode, x *hlo.Instruction) *hlo.Instruction {
	return b.s.add(code, x.Shape, []*hlo.Instruction{x})
}

func (b eb) add(x, y *hlo.Instruction) *hlo.Instruction { return b.bin(hlo.OpAdd, x, y) }
func (b eb) sub(x, y *hlo.Instruction) *hlo.Instruction { return b.bin(hlo.OpSubtract, x, y) }
func (b eb) mul(x, y *hlo.Instruction) *hlo.Instruction { return b.bin(hlo.OpMultiply, x, y) }
func (b eb) div(x, y *hlo.Instruction) *hlo.Instruction { return b.bin(hlo.OpDivide, x, y) }

func (b eb) cmp(dir string, x, y *hlo.Instruction) *hlo.Instruction {
	return b.s.add(hlo.OpCompare, x.Shape.WithDType(hlo.Pred), []*hlo.Instruction{x, y}, hlo.Attr{Name: "direction", Value: hlo.Enum(dir)})
}

func (b eb) sel(p, x, y *hlo.Instruction) *hlo.Instruction {
	return b.s.add(hlo.OpSelect, x.Shape, []*hlo.Instruction{p, x, y})
}

func (b eb) isFinite(x *hlo.Instruction) *hlo.Instruction {
	return b.s.add(hlo.OpIsFinite, x.Shape.WithDType(hlo.Pred), []*hlo.Instruction{x})
}

func (b eb) convert(x *hlo.Instruction, t hlo.DType) *hlo.Instruction {
	if x.Shape.DType == t {
		return x
	}
	return b.s.add(hlo.OpConvert, x.Shape.WithDType(t), []*hlo.Instruction{x})
}

// unaryChlo converts a one-operand CHLO op computed by f; with upcast, f16
// and bf16 operands are computed in f32, as the legalization does.
func unaryChlo(f func(b eb, x *hlo.Instruction) (*hlo.Instruction, error), upcast bool) opFunc {
	return func(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
		ins, sh, err := operandsAndShape(s, op)
		if err != nil {
			return nil, err
		}
		x := ins[0]
		t := x.Shape.DType
		b := eb{s, x.Shape}
		if upcast && (t == hlo.F16 || t == hlo.BF16) {
			b = eb{s, x.Shape.WithDType(hlo.F32)}
			x = b.convert(x, hlo.F32)
		}
		r, err := f(b, x)
		if err != nil {
			return nil, err
		}
		return []*hlo.Instruction{b.convert(r, sh.DType)}, nil
	}
}

func requireFloat(x *hlo.Instruction, what string) error {
	if !x.Shape.DType.IsFloat() {
		return fmt.Errorf("%s of %s: %w", what, x.Shape.DType, ErrUnsupported)
	}
	return nil
}

const lanczosGamma = 7

var lanczosBase = 0.99999999999980993227684700473478
var lanczosCoefficients = []float64{
	676.520368121885098567009190444019, -1259.13921672240287047156078755283,
	771.3234287776530788486528258894, -176.61502916214059906584551354,
	12.507343278686904814458936853, -0.13857109526572011689554707,
	9.984369578019570859563e-6, 1.50563273514931155834e-7,
}

// lanczosZ returns whether to reflect (x < 1/2) and z, the argument the
// Lanczos series is evaluated at.
func lanczosZ(b eb, x *hlo.Instruction) (reflect, z *hlo.Instruction) {
	reflect = b.cmp("LT", x, b.c(0.5))
	z = b.sel(reflect, b.un(hlo.OpNegate, x), b.sub(x, b.c(1)))
	return reflect, z
}

// logT is log(lanczosGamma + 1/2 + z), computed through log1p.
func logT(b eb, z *hlo.Instruction) *hlo.Instruction {
	g := lanczosGamma + 0.5
	return b.add(b.c(math.Log(g)), b.un(hlo.OpLog1p, b.div(z, b.c(g))))
}

// lgamma is log|Γ(x)| by the Lanczos approximation, reflected below 1/2.
func lgamma(b eb, x *hlo.Instruction) (*hlo.Instruction, error) {
	if err := requireFloat(x, "lgamma"); err != nil {
		return nil, err
	}
	reflect, z := lanczosZ(b, x)
	a := b.c(lanczosBase)
	for i, k := range lanczosCoefficients {
		a = b.add(a, b.div(b.c(k), b.add(z, b.c(float64(i+1)))))
	}
	t := b.add(b.c(lanczosGamma+0.5), z)
	lt := logT(b, z)
	r := b.mul(b.sub(b.add(z, b.c(0.5)), b.div(t, lt)), lt)
	lg := b.add(b.add(b.c((math.Log(2)+math.Log(math.Pi))/2), r), b.un(hlo.OpLog, a))

	abs := b.un(hlo.OpAbs, x)
	frac := b.sub(abs, b.un(hlo.OpFloor, abs))
	frac = b.sel(b.cmp("LT", b.c(0.5), frac), b.sub(b.c(1), frac), frac)
	denom := b.un(hlo.OpLog, b.un(hlo.OpSin, b.mul(b.c(math.Pi), frac)))
	refl := b.sub(b.sub(b.c(math.Log(math.Pi)), denom), lg)
	refl = b.sel(b.isFinite(denom), refl, b.un(hlo.OpNegate, denom))
	lg = b.sel(reflect, refl, lg)
	return b.sel(isInfPred(b, x, 0), b.c(math.Inf(1)), lg), nil
}

// digamma is Γ'(x)/Γ(x) from the derivative of the Lanczos series, NaN
// at the poles (integers ≤ 0).
func digamma(b eb, x *hlo.Instruction) (*hlo.Instruction, error) {
	if err := requireFloat(x, "digamma"); err != nil {
		return nil, err
	}
	reflect, z := lanczosZ(b, x)
	a, ap := b.c(lanczosBase), b.c(0)
	for i, k := range lanczosCoefficients {
		zt := b.add(z, b.c(float64(i+1)))
		ap = b.sub(ap, b.div(b.c(k), b.mul(zt, zt)))
		a = b.add(a, b.div(b.c(k), zt))
	}
	t := b.add(b.c(lanczosGamma+0.5), z)
	d := b.sub(b.add(logT(b, z), b.div(ap, a)), b.div(b.c(lanczosGamma), t))
	reduced := b.add(x, b.un(hlo.OpAbs, b.un(hlo.OpFloor, b.add(x, b.c(0.5)))))
	pix := b.mul(b.c(math.Pi), reduced)
	refl := b.sub(d, b.div(b.mul(b.c(math.Pi), b.un(hlo.OpCos, pix)), b.un(hlo.OpSin, pix)))
	d = b.sel(reflect, refl, d)
	pole := b.bin(hlo.OpAnd, b.cmp("LE", x, b.c(0)), b.cmp("EQ", x, b.un(hlo.OpFloor, x)))
	return b.sel(pole, b.c(math.NaN()), d), nil
}

// isInfPred is |x| = inf (sign 0), x = +inf (1) or x = -inf (-1).
func isInfPred(b eb, x *hlo.Instruction, sign int) *hlo.Instruction {
	switch sign {
	case 1:
		return b.cmp("EQ", x, b.c(math.Inf(1)))
	case -1:
		return b.cmp("EQ", x, b.c(math.Inf(-1)))
	}
	return b.cmp("EQ", b.un(hlo.OpAbs, x), b.c(math.Inf(1)))
}

func isInf(sign int) opFunc {
	return func(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
		ins, _, err := operandsAndShape(s, op)
		if err != nil {
			return nil, err
		}
		if err := requireFloat(ins[0], "is_inf"); err != nil {
			return nil, err
		}
		return []*hlo.Instruction{isInfPred(eb{s, ins[0].Shape}, ins[0], sign)}, nil
	}
}

func square(b eb, x *hlo.Instruction) (*hlo.Instruction, error) { return b.mul(x, x), nil }

// conj is complex(real(x), -imag(x)); real types are their own conjugate.
func conj(b eb, x *hlo.Instruction) (*hlo.Instruction, error) {
	t := x.Shape.DType
	if !t.IsComplex() {
		return x, nil
	}
	part := x.Shape.WithDType(t.ComplexComponent())
	re := b.s.add(hlo.OpReal, part, []*hlo.Instruction{x})
	im := b.s.add(hlo.OpImag, part, []*hlo.Instruction{x})
	im = b.s.add(hlo.OpNegate, part, []*hlo.Instruction{im})
	return b.s.add(hlo.OpComplex, x.Shape, []*hlo.Instruction{re, im}), nil
}

// sinh is (e^x - e^-x)/2 as the legalization computes it: through expm1
// for |x| < 1, else as e^(x + log 1/2) - e^(log 1/2 - x); complex
// operands take the second form everywhere.
func sinh(b eb, x *hlo.Instruction) (*hlo.Instruction, error) {
	logHalf := b.un(hlo.OpLog, b.c(0.5))
	large := b.sub(b.un(hlo.OpExp, b.add(x, logHalf)), b.un(hlo.OpExp, b.sub(logHalf, x)))
	if x.Shape.DType.IsComplex() {
		return large, nil
	}
	if err := requireFloat(x, "sinh"); err != nil {
		return nil, err
	}
	em1 := b.un(hlo.OpExpm1, x)
	small := b.mul(b.c(0.5), b.add(em1, b.div(em1, b.add(em1, b.c(1)))))
	return b.sel(b.cmp("LT", b.un(hlo.OpAbs, x), b.c(1)), small, large), nil
}
