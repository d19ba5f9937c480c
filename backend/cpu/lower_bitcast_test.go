package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

func TestBitcastConvertConformance(t *testing.T) {
	conformanceOps(t, hlo.OpBitcastConvert, intoWhole(lowerBitcastConvert))
}

func TestReducePrecisionConformance(t *testing.T) {
	conformanceOps(t, hlo.OpReducePrecision, intoWhole(lowerReducePrecision))
}

// randomBits fills a literal with random bit patterns (every NaN, every
// subnormal, every infinity included).
func randomBits(s hlo.Shape, rng *rand.Rand) *hlo.Literal {
	l := hlo.NewLiteral(s)
	for i := range l.Len() {
		l.SetBits(i, rng.Uint64())
	}
	return l
}

func TestBitcastConvertRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	groups := [][]hlo.DType{
		{hlo.S8, hlo.U8, hlo.F8E4M3FN, hlo.F8E5M2},
		{hlo.S16, hlo.U16, hlo.F16, hlo.BF16},
		{hlo.S32, hlo.U32, hlo.F32},
		{hlo.S64, hlo.U64, hlo.F64},
	}
	for range 300 {
		gf, gt := rng.IntN(4), rng.IntN(4)
		from := groups[gf][rng.IntN(len(groups[gf]))]
		to := groups[gt][rng.IntN(len(groups[gt]))]
		dims := randDims(rng, rng.IntN(3))
		if rng.IntN(20) == 0 {
			dims = []int64{300, 200}
		}
		src, dst := append([]int64{}, dims...), append([]int64{}, dims...)
		switch wf, wt := from.Bits(), to.Bits(); {
		case wf > wt:
			dst = append(dst, int64(wf/wt))
		case wf < wt:
			src = append(src, int64(wt/wf))
		}
		in := parseRoot(t, module([]string{shapeText(from, src)}, fmt.Sprintf("%s bitcast-convert(p0)", shapeText(to, dst))))
		runWhole(t, intoWhole(lowerBitcastConvert), in, []*hlo.Literal{randomBits(in.Operands[0].Shape, rng)}, 1+rng.IntN(3))
	}
	for _, s := range []string{"pred[4] bitcast-convert(p0)", "s4[4] bitcast-convert(p0)"} {
		in := parseRoot(t, module([]string{"u8[4]"}, s))
		if _, ok := lowerBitcastConvert(in, 1); ok {
			t.Fatalf("lowered %s", s)
		}
	}
}

func TestReducePrecisionRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	types := []hlo.DType{hlo.F32, hlo.F64, hlo.F16, hlo.BF16, hlo.F8E4M3FN, hlo.F8E5M2, hlo.F8E4M3FNUZ, hlo.F8E8M0FNU, hlo.F4E2M1FN}
	ran := 0
	for i := range 400 {
		ty := types[i%len(types)]
		eb, mb := 1+rng.IntN(12), rng.IntN(54)
		if rng.IntN(2) == 0 {
			eb, mb = []int{5, 8, 4, 2, 11}[rng.IntN(5)], []int{10, 7, 3, 0, 1, 23, 52}[rng.IntN(7)]
		}
		dims := randDims(rng, 1+rng.IntN(2))
		if rng.IntN(20) == 0 {
			dims = []int64{100, 700}
		}
		sh := shapeText(ty, dims)
		text := module([]string{sh}, fmt.Sprintf("%s reduce-precision(p0), exponent_bits=%d, mantissa_bits=%d", sh, eb, mb))
		in := parseRootOrNil(text)
		if in == nil {
			continue
		}
		runWhole(t, intoWhole(lowerReducePrecision), in, []*hlo.Literal{randomBits(in.Operands[0].Shape, rng)}, 1+rng.IntN(3))
		ran++
	}
	if ran < 300 {
		t.Fatalf("only %d of 400 cases parsed", ran)
	}
}
