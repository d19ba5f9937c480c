package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

func TestSelectAndScatterConformance(t *testing.T) {
	conformanceOps(t, hlo.OpSelectAndScatter, intoWhole(lowerSelectAndScatter))
}

// selectScatterCase is a random select-and-scatter: window sizes,
// strides and padding per dimension, the source shape the window gives.
func selectScatterCase(rng *rand.Rand, ty hlo.DType, dir string, swapSel, swapAdd bool) (params []string, root string, comps []string) {
	rank := 1 + rng.IntN(3)
	dims := make([]int64, rank)
	src := make([]int64, rank)
	var size, stride, pad []string
	for d := range dims {
		dims[d] = int64(1 + rng.IntN(7))
		w := int64(1 + rng.IntN(3))
		s := int64(1 + rng.IntN(3))
		lo, hi := int64(rng.IntN(2)), int64(rng.IntN(3))
		if n := dims[d] + lo + hi; n >= w {
			src[d] = (n-w)/s + 1
		} else {
			lo, hi, w = 0, 0, 1
			src[d] = (dims[d]-1)/s + 1
		}
		size = append(size, fmt.Sprint(w))
		stride = append(stride, fmt.Sprint(s))
		pad = append(pad, fmt.Sprintf("%d_%d", lo, hi))
	}
	a, b := "a", "b"
	if swapSel {
		a, b = b, a
	}
	sel := fmt.Sprintf("sel {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT c = pred[] compare(%s, %s), direction=%s\n}", ty, ty, a, b, dir)
	a, b = "a", "b"
	if swapAdd {
		a, b = b, a
	}
	sc := fmt.Sprintf("sc {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT c = %s[] add(%s, %s)\n}", ty, ty, ty, a, b)
	params = []string{shapeText(ty, dims), shapeText(ty, src), ty.String() + "[]"}
	root = fmt.Sprintf("%s select-and-scatter(p0, p1, p2), window={size=%s stride=%s pad=%s}, select=sel, scatter=sc",
		shapeText(ty, dims), strings.Join(size, "x"), strings.Join(stride, "x"), strings.Join(pad, "x"))
	return params, root, []string{sel, sc}
}

func TestSelectAndScatterRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	types := []hlo.DType{hlo.F32, hlo.F64, hlo.S32, hlo.U8, hlo.S64}
	for i := range 400 {
		ty := types[i%len(types)]
		dir := []string{"GE", "GT", "LE", "LT"}[rng.IntN(4)]
		params, root, comps := selectScatterCase(rng, ty, dir, rng.IntN(2) == 0, rng.IntN(2) == 0)
		in := parseRootOrNil(module(params, root, comps...))
		if in == nil {
			t.Fatalf("does not parse:\n%s", module(params, root, comps...))
		}
		ops := randomOperands(in, rng)
		// Ties and NaNs in the operand, duplicates in the source.
		for i := range ops[0].Len() {
			switch r := rng.IntN(8); {
			case r < 3:
				ops[0].SetInt64(i, int64(rng.IntN(3)))
			case r == 3 && ty.IsFloat():
				ops[0].SetFloat64(i, math.NaN())
			}
		}
		runWhole(t, intoWhole(lowerSelectAndScatter), in, ops, 1+rng.IntN(3))
	}
	// A big one, split over threads.
	sel := "sel {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}"
	sc := "sc {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}"
	in := parseRoot(t, module([]string{"f32[8,64,64,16]", "f32[8,32,32,16]", "f32[]"},
		"f32[8,64,64,16] select-and-scatter(p0, p1, p2), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, select=sel, scatter=sc", sel, sc))
	runWhole(t, intoWhole(lowerSelectAndScatter), in, randomOperands(in, rng), 2)
}

// BenchmarkMaxPoolGrad is the gradient of a CNN's 2x2 max pool over a
// batch of 256 26x26x32 images.
func BenchmarkMaxPoolGrad(b *testing.B) {
	ge := "ge {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = pred[] compare(a, b), direction=GE\n}"
	add := "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}"
	in := parseRootB(b, module([]string{"f32[256,26,26,32]", "f32[256,13,13,32]", "f32[]"},
		"f32[256,26,26,32] select-and-scatter(p0, p1, p2), window={size=1x2x2x1 stride=1x2x2x1}, select=ge, scatter=add", ge, add))
	benchKernel(b, lowerSelectAndScatter, in, 256*26*26*32*4*2+256*13*13*32*4)
}
