package stablehlo

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// Hurwitz zeta ζ(x, q) and polygamma ψ⁽ⁿ⁾(x) as the CHLO legalization
// computes them: ten terms of the series, then the Euler–Maclaurin
// correction with twelve Bernoulli terms; polygamma is
// (-1)^(n+1) n! ζ(n+1, x), digamma at n = 0. Both compute in at least f32.

func init() {
	register(binaryChlo(zeta), "chlo.zeta", "chlo.broadcast_zeta")
	register(binaryChlo(polygamma), "chlo.polygamma", "chlo.broadcast_polygamma")
}

// zetaCoeffs are (2k)!/B_2k, highest k first.
var zetaCoeffs = []float64{-7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15,
	1.1646782814350067249e14, -2.950130727918164224e12, 7.47242496e10, -1.8924375803183791606e9,
	47900160.0, -1209600.0, 30240.0, -720.0, 12.0}

// binaryChlo converts a two-operand CHLO special function (operands of one
// shape), f16 and bf16 computed in f32.
func binaryChlo(f func(b eb, x, y *hlo.Instruction) *hlo.Instruction) opFunc {
	return func(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
		ins, sh, err := operandsAndShape(s, op)
		if err != nil {
			return nil, err
		}
		x, y := ins[0], ins[1]
		if err := requireFloat(x, op.Name); err != nil {
			return nil, err
		}
		if !x.Shape.SameDims(y.Shape) {
			if x, y, err = s.broadcastPair(x, y, sh); err != nil {
				return nil, err
			}
		}
		b := eb{s, x.Shape}
		if t := x.Shape.DType; t == hlo.F16 || t == hlo.BF16 {
			b = eb{s, x.Shape.WithDType(hlo.F32)}
			x, y = b.convert(x, hlo.F32), b.convert(y, hlo.F32)
		}
		return []*hlo.Instruction{b.convert(f(b, x, y), sh.DType)}, nil
	}
}

// broadcastPair broadcasts both operands to sh, numpy style.
func (s *scope) broadcastPair(x, y *hlo.Instruction, sh hlo.Shape) (*hlo.Instruction, *hlo.Instruction, error) {
	out := []*hlo.Instruction{x, y}
	for i, v := range out {
		if v.Shape.SameDims(sh) {
			continue
		}
		dims := make([]int64, v.Shape.Rank())
		for d := range dims {
			dims[d] = int64(sh.Rank() - v.Shape.Rank() + d)
		}
		b, err := s.broadcastInDim(v, hlo.ArrayShape(v.Shape.DType, sh.Dims...), dims)
		if err != nil {
			return nil, nil, err
		}
		out[i] = b
	}
	return out[0], out[1], nil
}

func zeta(b eb, x, q *hlo.Instruction) *hlo.Instruction {
	zero, one := b.c(0), b.c(1)
	negX := b.un(hlo.OpNegate, x)
	acc := q
	sum := b.bin(hlo.OpPower, q, negX)
	for range 9 {
		acc = b.add(acc, one)
		sum = b.add(sum, b.bin(hlo.OpPower, acc, negX))
	}
	acc = b.add(acc, one)
	negPow := b.bin(hlo.OpPower, acc, negX)
	correction := b.div(b.mul(negPow, acc), b.sub(x, one))
	invSq := b.div(one, b.mul(acc, acc))
	horner := zero
	const twoTermsMinusOne = 2*12 - 1
	for i := range len(zetaCoeffs) - 1 {
		lhs := b.add(x, b.c(float64(twoTermsMinusOne-1-2*i)))
		rhs := b.add(x, b.c(float64(twoTermsMinusOne-2-2*i)))
		horner = b.mul(b.mul(lhs, rhs), b.mul(invSq, b.add(horner, b.c(1/zetaCoeffs[i]))))
	}
	tail := b.mul(negPow, b.add(b.c(0.5), b.mul(b.div(x, acc), b.add(b.c(1/zetaCoeffs[len(zetaCoeffs)-1]), horner))))
	accurate := b.add(b.add(sum, correction), tail)
	smallest := smallestFinite(b.sh.DType)
	out := b.sel(b.cmp("LT", b.un(hlo.OpAbs, negPow), b.mul(b.un(hlo.OpAbs, sum), b.c(smallest))), sum, accurate)
	nan, inf := b.c(math.NaN()), b.c(math.Inf(1))
	out = b.sel(b.cmp("LT", x, one), nan, out)
	qLeZero := b.cmp("LE", q, zero)
	out = b.sel(b.bin(hlo.OpAnd, qLeZero, b.cmp("NE", x, b.un(hlo.OpFloor, x))), nan, out)
	atPole := b.bin(hlo.OpAnd, qLeZero, b.cmp("EQ", q, b.un(hlo.OpFloor, q)))
	evenInt := b.bin(hlo.OpAnd, b.cmp("EQ", x, b.un(hlo.OpFloor, x)), b.cmp("EQ", b.bin(hlo.OpRemainder, x, b.c(2)), zero))
	out = b.sel(atPole, b.sel(evenInt, inf, nan), out)
	return b.sel(b.cmp("EQ", x, one), inf, out)
}

// smallestFinite is the smallest positive (denormal) value of t.
func smallestFinite(t hlo.DType) float64 {
	if t == hlo.F64 {
		return math.SmallestNonzeroFloat64
	}
	return float64(math.SmallestNonzeroFloat32)
}

func polygamma(b eb, n, x *hlo.Instruction) *hlo.Instruction {
	one, two := b.c(1), b.c(2)
	sign := b.sub(b.mul(two, b.bin(hlo.OpRemainder, n, two)), one)
	np1 := b.add(n, one)
	lg, _ := lgamma(b, np1)
	r := b.mul(b.mul(sign, b.un(hlo.OpExp, lg)), zeta(b, np1, x))
	dg, _ := digamma(b, x)
	r = b.sel(b.cmp("EQ", n, b.c(0)), dg, r)
	nonNatural := b.bin(hlo.OpOr, b.cmp("NE", n, b.un(hlo.OpFloor, n)), b.cmp("LT", n, b.c(0)))
	return b.sel(nonNatural, b.c(math.NaN()), r)
}
