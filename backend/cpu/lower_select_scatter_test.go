package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
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
	params = []string{shapeText(ty, dims), shapeText(ty, src), ty.String() + "[]"}
	root = fmt.Sprintf("%s select-and-scatter(p0, p1, p2), window={size=%s stride=%s pad=%s}, select=sel, scatter=sc",
		shapeText(ty, dims), strings.Join(size, "x"), strings.Join(stride, "x"), strings.Join(pad, "x"))
	return params, root, selectScatterComps(ty, dir, swapSel, swapAdd)
}

// selectScatterComps are the select computation sel, compare(a, b) in
// direction dir (compare(b, a) with swapSel), and the scatter sc,
// add(a, b) (add(b, a) with swapAdd).
func selectScatterComps(ty hlo.DType, dir string, swapSel, swapAdd bool) []string {
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
	return []string{sel, sc}
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

// BenchmarkMaxPoolGrad11 is the CNN's second pool: 2x2 stride 2 over
// 11x11, so the last row and column are in no window.
func BenchmarkMaxPoolGrad11(b *testing.B) {
	ge := "ge {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = pred[] compare(a, b), direction=GE\n}"
	add := "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}"
	in := parseRootB(b, module([]string{"f32[256,11,11,64]", "f32[256,5,5,64]", "f32[]"},
		"f32[256,11,11,64] select-and-scatter(p0, p1, p2), window={size=1x2x2x1 stride=1x2x2x1}, select=ge, scatter=add", ge, add))
	benchKernel(b, lowerSelectAndScatter, in, 256*11*11*64*4*2+256*5*5*64*4)
}

// poolWindow is a window over an operand shape, and the source shape the
// window gives.
type poolWindow struct {
	dims                 []int64
	size, stride, dilate []int64
	padL, padH           []int64 // padding below and above
}

// text is the operand and source shapes and the window attribute.
func (p poolWindow) text() (operand, source, window string) {
	src := make([]int64, len(p.dims))
	var size, stride, dilate, pad []string
	for d, n := range p.dims {
		eff := (p.size[d]-1)*p.dilate[d] + 1
		src[d] = (n+p.padL[d]+p.padH[d]-eff)/p.stride[d] + 1
		size = append(size, fmt.Sprint(p.size[d]))
		stride = append(stride, fmt.Sprint(p.stride[d]))
		dilate = append(dilate, fmt.Sprint(p.dilate[d]))
		pad = append(pad, fmt.Sprintf("%d_%d", p.padL[d], p.padH[d]))
	}
	window = fmt.Sprintf("size=%s stride=%s pad=%s rhs_dilate=%s", strings.Join(size, "x"),
		strings.Join(stride, "x"), strings.Join(pad, "x"), strings.Join(dilate, "x"))
	return shapeText(hlo.F32, p.dims), shapeText(hlo.F32, src), window
}

// pool is a window of the given sizes and strides over dims, undilated
// and unpadded.
func pool(dims, size, stride []int64) poolWindow {
	ones, zeros := make([]int64, len(dims)), make([]int64, len(dims))
	for d := range ones {
		ones[d] = 1
	}
	return poolWindow{dims: dims, size: size, stride: stride, dilate: ones, padL: zeros, padH: zeros}
}

// nhwc2x2 is the 2x2 stride-2 pooling window of an NHWC operand.
func nhwc2x2(n, h, w, c int64) poolWindow {
	return pool([]int64{n, h, w, c}, []int64{1, 2, 2, 1}, []int64{1, 2, 2, 1})
}

// disjointCases are windows the disjoint f32 path takes: NHWC 2x2 pooling
// with odd channel counts, 11→5 (last row and column in no window), big
// enough to split rows over threads (8x26x26x64) or the fill of rows in
// no window (4x64x8x64 with stride 4), NCHW (a run of one), padding (edge
// windows of fewer positions, a window wholly in padding), gaps between
// windows, dilated windows, one and three windowed dimensions, and four
// positions along one dimension.
func disjointCases() []poolWindow {
	padded := pool([]int64{2, 7, 7, 3}, []int64{1, 3, 3, 1}, []int64{1, 3, 3, 1})
	padded.padL, padded.padH = []int64{0, 1, 1, 0}, []int64{0, 1, 1, 0}
	outside := nhwc2x2(1, 4, 4, 2)
	outside.padL = []int64{0, 2, 0, 0}
	dilated := pool([]int64{2, 9, 9, 3}, []int64{1, 2, 2, 1}, []int64{1, 3, 3, 1})
	dilated.dilate = []int64{1, 2, 2, 1}
	return []poolWindow{
		nhwc2x2(2, 26, 26, 1), nhwc2x2(2, 26, 26, 3), nhwc2x2(1, 26, 26, 17), nhwc2x2(1, 6, 6, 32),
		nhwc2x2(1, 11, 11, 17), nhwc2x2(3, 11, 11, 64), nhwc2x2(2, 7, 5, 3),
		nhwc2x2(8, 26, 26, 64), pool([]int64{4, 64, 8, 64}, []int64{1, 1, 2, 1}, []int64{1, 4, 2, 1}),
		pool([]int64{2, 3, 9, 8}, []int64{1, 1, 2, 2}, []int64{1, 1, 2, 2}),
		padded, outside, dilated,
		pool([]int64{2, 8, 8, 5}, []int64{1, 2, 2, 1}, []int64{1, 3, 3, 1}),
		pool([]int64{10}, []int64{2}, []int64{2}), pool([]int64{9}, []int64{2}, []int64{2}),
		pool([]int64{2, 4, 6, 6, 3}, []int64{1, 2, 2, 2, 1}, []int64{1, 2, 2, 2, 1}),
		pool([]int64{2, 8, 3, 2}, []int64{1, 4, 1, 1}, []int64{1, 4, 1, 1}),
	}
}

// poolOperands are operands full of what decides a selection: ties,
// NaNs of both signs, signed zeros and infinities; NaNs in the source
// too, so that adding one onto a NaN init shows the operand order.
func poolOperands(in *hlo.Instruction, rng *rand.Rand, init float32) []*hlo.Literal {
	ops := randomOperands(in, rng)
	x, src := ops[0].Data().([]float32), ops[1].Data().([]float32)
	special := []float32{float32(math.NaN()), -float32(math.NaN()), 0, float32(math.Copysign(0, -1)),
		float32(math.Inf(1)), float32(math.Inf(-1))}
	for i := range x {
		switch r := rng.IntN(10); {
		case r < 4:
			x[i] = float32(rng.IntN(3))
		case r == 4:
			x[i] = special[rng.IntN(len(special))]
		}
	}
	for i := range src {
		if rng.IntN(8) == 0 {
			src[i] = math.Float32frombits(0x7fc00000 | uint32(rng.IntN(1<<16)))
		}
	}
	ops[2].Data().([]float32)[0] = init
	return ops
}

// TestSelectAndScatterDisjoint checks the disjoint f32 path against the
// evaluator, bit for bit, on 1 to 3 threads, for every select direction
// and operand order, both scatter operand orders, and several inits.
func TestSelectAndScatterDisjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	inits := []float32{0, float32(math.Copysign(0, -1)), 1.5, float32(math.Inf(-1)), math.Float32frombits(0x7fc0abcd)}
	for ci, c := range disjointCases() {
		operand, source, window := c.text()
		big := c.dims[0] >= 8
		for di, dir := range []string{"GE", "GT", "LE", "LT"} {
			if big && (dir == "GT" || dir == "LE") {
				continue // the evaluator is slow; GE and LT cover both strictnesses and orders
			}
			swapSel, swapAdd := rng.IntN(2) == 0, (ci+di)%2 == 0
			root := fmt.Sprintf("%s select-and-scatter(p0, p1, p2), window={%s}, select=sel, scatter=sc", operand, window)
			in := parseRoot(t, module([]string{operand, source, "f32[]"}, root, selectScatterComps(hlo.F32, dir, swapSel, swapAdd)...))
			pl, ok := newSelectPlan(in, 1)
			if !ok || newFastSelectPlan(pl, in.Operands[0].Shape.Dims) == nil {
				t.Fatalf("%s: not on the disjoint path", in)
			}
			ops := poolOperands(in, rng, inits[(ci+di)%len(inits)])
			var ev eval.Evaluator
			want, err := ev.Instruction(in, ops)
			if err != nil {
				t.Fatalf("%s: evaluator: %v", in, err)
			}
			for threads := 1; threads <= 3; threads++ {
				k, _ := intoWhole(lowerSelectAndScatter)(in, threads)
				got, err := k(ops)
				if err != nil {
					t.Fatalf("%s: %v", in, err)
				}
				sameBits(t, in, got, want)
			}
		}
	}
}
