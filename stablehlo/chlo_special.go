package stablehlo

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// Giles' erfinv approximation ("Approximating the erfinv function",
// GPU Computing Gems), as the CHLO legalization uses it.
var (
	erfInvF32Lt5 = []float64{2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
		-0.00125372503, -0.00417768164, 0.246640727, 1.50140941}
	erfInvF32Ge5 = []float64{-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
		-0.0076224613, 0.00943887047, 1.00167406, 2.83297682}
	erfInvF64Lt625 = []float64{-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
		1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17, 6.6376381343583238325e-15,
		-4.0545662729752068639e-14, -8.1519341976054721522e-14, 2.6335093153082322977e-12, -1.2975133253453532498e-11,
		-5.4154120542946279317e-11, 1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
		4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05, 0.0001867342080340571352,
		-0.00074070253416626697512, -0.0060336708714301490533, 0.24015818242558961693, 1.6536545626831027356}
	erfInvF64Lt16 = []float64{2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
		1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06, 2.9234449089955446044e-06,
		1.2475304481671778723e-05, -4.7318229009055733981e-05, 6.8284851459573175448e-05, 2.4031110387097893999e-05,
		-0.0003550375203628474796, 0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
		-0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334, 3.0838856104922207635}
	erfInvF64Ge16 = []float64{-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
		-3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08, 2.9147953450901080826e-08,
		-6.7711997758452339498e-08, 2.2900482228026654717e-07, -9.9298272942317002539e-07, 4.5260625972231537039e-06,
		-1.9681778105531670567e-05, 7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
		1.0103004648645343977, 4.8499064014085844221}
)

// erfInv evaluates the piecewise polynomial in w = -log(1 - x²).
func erfInv(b eb, x *hlo.Instruction) (*hlo.Instruction, error) {
	if err := requireFloat(x, "erf_inv"); err != nil {
		return nil, err
	}
	w := b.un(hlo.OpNegate, b.un(hlo.OpLog1p, b.mul(x, b.un(hlo.OpNegate, x))))
	var p *hlo.Instruction
	if x.Shape.DType == hlo.F64 {
		lt625, lt16 := b.cmp("LT", w, b.c(6.25)), b.cmp("LT", w, b.c(16))
		coef := func(i int) *hlo.Instruction {
			c := b.c(erfInvF64Lt625[i])
			if i < len(erfInvF64Lt16) {
				c = b.sel(lt625, c, b.c(erfInvF64Lt16[i]))
			}
			if i < len(erfInvF64Ge16) {
				c = b.sel(lt16, c, b.c(erfInvF64Ge16[i]))
			}
			return c
		}
		sq := b.un(hlo.OpSqrt, w)
		w = b.sel(lt625, b.sub(w, b.c(3.125)), b.sub(sq, b.sel(lt16, b.c(3.25), b.c(5))))
		p = coef(0)
		for i := 1; i < 17; i++ {
			p = b.add(coef(i), b.mul(p, w))
		}
		for i := 17; i < 19; i++ {
			p = b.sel(lt16, b.add(coef(i), b.mul(p, w)), p)
		}
		for i := 19; i < 23; i++ {
			p = b.sel(lt625, b.add(coef(i), b.mul(p, w)), p)
		}
	} else {
		lt := b.cmp("LT", w, b.c(5))
		coef := func(i int) *hlo.Instruction { return b.sel(lt, b.c(erfInvF32Lt5[i]), b.c(erfInvF32Ge5[i])) }
		w = b.sel(lt, b.sub(w, b.c(2.5)), b.sub(b.un(hlo.OpSqrt, w), b.c(3)))
		p = coef(0)
		for i := 1; i < len(erfInvF32Lt5); i++ {
			p = b.add(coef(i), b.mul(p, w))
		}
	}
	r := b.mul(p, x)
	return b.sel(b.cmp("EQ", b.un(hlo.OpAbs, x), b.c(1)), b.mul(x, b.c(math.Inf(1))), r), nil
}

// Cephes' Chebyshev coefficients of exp(-|x|) I1(x), on [0, 8] (A) and
// (8, inf) (B).
var (
	i1eF32A = []float64{9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
		-8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5, 4.78156510755005422638e-5,
		-1.61760815825896745588e-4, 5.12285956168575772895e-4, -1.51357245063125314899e-3, 4.15642294431288815669e-3,
		-1.05640848946261981558e-2, 2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
		-1.76416518357834055153e-1, 2.52587186443633654823e-1}
	i1eF32B = []float64{-3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
		-3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3, 7.78576235018280120474e-1}
	i1eF64A = append([]float64{2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
		-1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14, 3.22379336594557470981e-13,
		-1.98397439776494371520e-12, 1.17361862988909016308e-11, -6.66348972350202774223e-11, 3.62559028155211703701e-10,
		-1.88724975172282928790e-9}, i1eF32A...)
	i1eF64B = append([]float64{7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
		-3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16, -1.88035477551078244854e-15,
		-3.81440307243700780478e-15, 1.04202769841288027642e-14, 4.27244001671195135429e-14, -2.10154184277266431302e-14,
		-4.08355111109219731823e-13, -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
		3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10}, i1eF32B...)
)

// chebyshev evaluates a Chebyshev series by Clenshaw's recurrence.
func chebyshev(b eb, x *hlo.Instruction, coef []float64) *hlo.Instruction {
	b0, b1, b2 := b.c(0), b.c(0), b.c(0)
	for _, c := range coef {
		b2, b1 = b1, b0
		b0 = b.add(b.sub(b.mul(x, b1), b2), b.c(c))
	}
	return b.mul(b.sub(b0, b2), b.c(0.5))
}

// besselI1e is exp(-|x|) I1(x).
func besselI1e(b eb, x *hlo.Instruction) (*hlo.Instruction, error) {
	if err := requireFloat(x, "bessel_i1e"); err != nil {
		return nil, err
	}
	ca, cb := i1eF32A, i1eF32B
	if x.Shape.DType == hlo.F64 {
		ca, cb = i1eF64A, i1eF64B
	}
	z := b.un(hlo.OpAbs, x)
	le8 := b.mul(z, chebyshev(b, b.sub(b.mul(b.c(0.5), z), b.c(2)), ca))
	gt8 := b.div(chebyshev(b, b.sub(b.div(b.c(32), z), b.c(2)), cb), b.un(hlo.OpSqrt, z))
	r := b.sel(b.cmp("LE", z, b.c(8)), le8, gt8)
	return b.mul(b.un(hlo.OpSign, x), r), nil
}

// convertNextAfter steps x's bit pattern one unit towards y.
func convertNextAfter(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, sh, err := operandsAndShape(s, op)
	if err != nil {
		return nil, err
	}
	x, y := ins[0], ins[1]
	if !x.Shape.SameDims(y.Shape) {
		return nil, fmt.Errorf("next_after with broadcasting: %w", ErrUnsupported)
	}
	t := x.Shape.DType
	it, ok := hlo.DTypeByName(fmt.Sprintf("s%d", t.Bits()))
	if !t.IsFloat() || !ok {
		return nil, fmt.Errorf("next_after of %s: %w", t, ErrUnsupported)
	}
	f := eb{s, x.Shape}
	i := eb{s, x.Shape.WithDType(it)}
	xi := s.add(hlo.OpBitcastConvert, i.sh, []*hlo.Instruction{x})
	yi := s.add(hlo.OpBitcastConvert, i.sh, []*hlo.Instruction{y})
	nan := f.bin(hlo.OpOr, f.cmp("NE", x, x), f.cmp("NE", y, y))
	nanBits := s.add(hlo.OpBitcastConvert, i.sh, []*hlo.Instruction{f.c(math.NaN())})
	signBit := int64(-1) << (t.Bits() - 1)
	signMask, absMask := i.ci(signBit), i.ci(^signBit)
	xAbs, yAbs := i.bin(hlo.OpAnd, xi, absMask), i.bin(hlo.OpAnd, yi, absMask)
	equal := f.cmp("EQ", x, y)
	xZero, yZero := i.cmp("EQ", xAbs, i.ci(0)), i.cmp("EQ", yAbs, i.ci(0))
	xSign, ySign := i.bin(hlo.OpAnd, xi, signMask), i.bin(hlo.OpAnd, yi, signMask)
	one := i.ci(1)
	fromZero := i.bin(hlo.OpOr, ySign, one)
	smaller := f.bin(hlo.OpOr, i.cmp("GT", xAbs, yAbs), i.cmp("NE", xSign, ySign))
	r := i.add(xi, i.sel(smaller, i.ci(-1), one))
	r = i.sel(xZero, i.sel(yZero, yi, fromZero), r)
	r = i.sel(equal, yi, r)
	r = i.sel(nan, nanBits, r)
	return []*hlo.Instruction{s.add(hlo.OpBitcastConvert, sh, []*hlo.Instruction{r})}, nil
}

// ci is an integer splat constant (exact for every 64-bit pattern).
func (b eb) ci(v int64) *hlo.Instruction {
	l := hlo.NewLiteral(hlo.ArrayShape(b.sh.DType))
	l.SetBits(0, uint64(v))
	c := b.s.constant(l)
	if b.sh.Rank() == 0 {
		return c
	}
	return b.s.add(hlo.OpBroadcast, b.sh, []*hlo.Instruction{c}, hlo.Attr{Name: "dimensions", Value: []int64{}})
}

// convertTopK is HLO's topk along the last dimension, largest first.
func convertTopK(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := resultsShape(op)
	if err != nil {
		return nil, err
	}
	k := opInt(op, "k", -1)
	if k < 0 || !sh.IsTuple() {
		return nil, fmt.Errorf("top_k without k or two results")
	}
	in := s.add(hlo.OpTopK, sh, ins, hlo.Attr{Name: "k", Value: k}, hlo.Attr{Name: "largest", Value: true})
	return s.untuple(in), nil
}

// convertConstantLike is the value attribute splat to the operand's shape.
func convertConstantLike(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	sh, err := resultShape(op, 0)
	if err != nil {
		return nil, err
	}
	lit := hlo.NewLiteral(hlo.ArrayShape(sh.DType))
	switch v := op.Attr("value").(type) {
	case mlir.FloatAttr:
		lit.SetFloat64(0, v.Value)
	case mlir.IntAttr:
		lit.SetInt64(0, v.Value)
	case mlir.BoolAttr:
		lit.SetBool(0, v.Value)
	case mlir.DenseAttr:
		if lit, err = denseLiteral(v, hlo.ArrayShape(sh.DType)); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("constant_like value %T: %w", v, ErrUnsupported)
	}
	c := s.constant(lit)
	if sh.Rank() == 0 {
		return []*hlo.Instruction{c}, nil
	}
	return []*hlo.Instruction{s.add(hlo.OpBroadcast, sh, []*hlo.Instruction{c}, hlo.Attr{Name: "dimensions", Value: []int64{}})}, nil
}

// broadcastBinary converts chlo.broadcast_*: each operand is broadcast to
// the result's dimensions (numpy rules, or broadcast_dimensions for the
// lower-ranked operand), then the HLO op applies.
func broadcastBinary(code hlo.Opcode) opFunc {
	return func(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
		ins, sh, err := operandsAndShape(s, op)
		if err != nil {
			return nil, err
		}
		bdims, err := opInts(op, "broadcast_dimensions")
		if err != nil {
			return nil, err
		}
		for i, x := range ins {
			if x.Shape.SameDims(sh) {
				continue
			}
			dims := bdims
			if dims == nil || x.Shape.Rank() == sh.Rank() {
				dims = make([]int64, x.Shape.Rank())
				for d := range dims {
					dims[d] = int64(sh.Rank() - x.Shape.Rank() + d)
				}
			}
			if ins[i], err = s.broadcastInDim(x, hlo.ArrayShape(x.Shape.DType, sh.Dims...), dims); err != nil {
				return nil, err
			}
		}
		if code == hlo.OpCompare {
			return convertCompareOf(s, op, ins, sh)
		}
		return []*hlo.Instruction{s.add(code, sh, ins)}, nil
	}
}
