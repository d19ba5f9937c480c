package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// Lane programs (lanes.go) against the evaluator, bit for bit: reduces
// and reduce-windows with reducers that are not one op, sorts with
// comparators that are not one compare; and the other kernels that took
// the last evaluator fallbacks (clamp and select with scalar operands,
// f32 dots whose contracting dimensions do not nest).

func reduceLanesWhole(in *hlo.Instruction, threads int) (wholeKernel, bool) {
	k, ok := lowerReduceLanes(in, threads)
	return wholeKernel(k), ok
}

func reduceWindowLanesWhole(in *hlo.Instruction, threads int) (wholeKernel, bool) {
	k, ok := lowerReduceWindowLanes(in, threads)
	return wholeKernel(k), ok
}

// argmaxText is JAX's argmax reducer: the larger value (NaN wins), and
// on a tie the smaller index.
const argmaxText = `argmax {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  nan = pred[] compare(a, a), direction=NE
  keep = pred[] or(gt, nan)
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lt)
  k = pred[] or(keep, tie)
  v = f32[] select(k, a, b)
  x = s32[] select(k, i, j)
  ROOT t = (f32[], s32[]) tuple(v, x)
}`

// sumMaxText folds a sum of the first input and a maximum of the second;
// its results are in the other order from its parameters' use, and the
// sum's rounding makes the fold order visible.
const sumMaxText = `summax {
  a = f32[] parameter(0)
  m = s32[] parameter(1)
  b = f32[] parameter(2)
  n = s32[] parameter(3)
  s = f32[] add(a, b)
  c = f32[] constant(0.1)
  s2 = f32[] multiply(s, c)
  s3 = f32[] add(s, s2)
  x = s32[] maximum(m, n)
  ROOT t = (f32[], s32[]) tuple(s3, x)
}`

func TestReduceLanesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for iter := range 120 {
		rank := 1 + rng.IntN(3)
		dims := randDims(rng, rank)
		if iter%20 == 0 {
			dims, rank = []int64{700, 3, 5}, 3 // several blocks of lanes, and a tail
		}
		// Reduced dimensions in a random order: the fold follows it.
		perm := rng.Perm(rank)
		red := perm[:1+rng.IntN(rank)]
		var kept []int64
		for d := range rank {
			if !containsInt(red, d) {
				kept = append(kept, dims[d])
			}
		}
		redText := make([]string, len(red))
		for i, d := range red {
			redText[i] = fmt.Sprint(d)
		}
		comp, name := argmaxText, "argmax"
		if iter%2 == 1 {
			comp, name = sumMaxText, "summax"
		}
		res := fmt.Sprintf("(%s, %s)", shapeText(hlo.F32, kept), shapeText(hlo.S32, kept))
		root := fmt.Sprintf("%s reduce(p0, p1, p2, p3), dimensions={%s}, to_apply=%s", res, strings.Join(redText, ","), name)
		in := parseRoot(t, module([]string{shapeText(hlo.F32, dims), shapeText(hlo.S32, dims), "f32[]", "s32[]"}, root, comp))
		ops := randomOperands(in, rng)
		if iter%3 == 0 { // ties and NaNs
			x := ops[0].Data().([]float32)
			for i := range x {
				x[i] = float32(rng.IntN(3))
				if rng.IntN(50) == 0 {
					x[i] = float32(math.NaN())
				}
			}
		}
		runWhole(t, reduceLanesWhole, in, ops, 1+rng.IntN(3))
	}
}

func TestReduceLanesConformance(t *testing.T) {
	if n, _ := conformanceOps(t, hlo.OpReduce, func(in *hlo.Instruction, threads int) (wholeKernel, bool) {
		if k, ok := reduceLanesWhole(in, threads); ok {
			return k, true
		}
		return intoWhole(lowerReduce)(in, threads)
	}); n == 0 {
		t.Skip("no reduces")
	}
}

// TestReduceWindowLanesRandom folds windows with padding, strides and
// dilations through reducers no one-op kernel takes: the larger
// magnitude, and the evaluator's pad_to_reduce_window identity.
func TestReduceWindowLanesRandom(t *testing.T) {
	comps := map[string]string{
		"bigger": `bigger {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  x = f32[] abs(a)
  y = f32[] abs(b)
  g = pred[] compare(x, y), direction=GE
  ROOT r = f32[] select(g, a, b)
}`,
		"identity": `identity {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}`,
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for iter := range 100 {
		rank := 1 + rng.IntN(3)
		dims := randDims(rng, rank)
		var sizes, strides, pads, lds, rds []string
		var outDims []int64
		for d := range rank {
			size, stride := 1+rng.IntN(3), 1+rng.IntN(2)
			lo, hi := rng.IntN(2), rng.IntN(2)
			ld, rd := 1+rng.IntN(2), 1+rng.IntN(2)
			ext := (dims[d]-1)*int64(ld) + 1 + int64(lo+hi)
			span := int64((size-1)*rd + 1)
			n := int64(0)
			if ext >= span {
				n = (ext-span)/int64(stride) + 1
			}
			outDims = append(outDims, n)
			sizes, strides = append(sizes, fmt.Sprint(size)), append(strides, fmt.Sprint(stride))
			pads = append(pads, fmt.Sprintf("%d_%d", lo, hi))
			lds, rds = append(lds, fmt.Sprint(ld)), append(rds, fmt.Sprint(rd))
		}
		name := []string{"bigger", "identity"}[iter%2]
		window := fmt.Sprintf("window={size=%s stride=%s pad=%s lhs_dilate=%s rhs_dilate=%s}",
			strings.Join(sizes, "x"), strings.Join(strides, "x"), strings.Join(pads, "x"),
			strings.Join(lds, "x"), strings.Join(rds, "x"))
		root := fmt.Sprintf("%s reduce-window(p0, p1), %s, to_apply=%s", shapeText(hlo.F32, outDims), window, name)
		in := parseRoot(t, module([]string{shapeText(hlo.F32, dims), "f32[]"}, root, comps[name]))
		runWhole(t, reduceWindowLanesWhole, in, randomOperands(in, rng), 1+rng.IntN(3))
	}
}

// TestSortLanesRandom: comparators with arithmetic (squares, a
// convert), which only the lane program runs.
func TestSortLanesRandom(t *testing.T) {
	comps := []string{`cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  x = f32[] multiply(a, a)
  y = f32[] multiply(b, b)
  ROOT c = pred[] compare(x, y), direction=LT
}`, `cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  lt = pred[] compare(a, b), direction=LT
  eq = pred[] compare(a, b), direction=EQ
  cc = f64[] convert(c)
  dd = f64[] convert(d)
  lt2 = pred[] compare(cc, dd), direction=GT
  tie = pred[] and(eq, lt2)
  ROOT r = pred[] or(lt, tie)
}`}
	rng := rand.New(rand.NewPCG(15, 16))
	for iter := range 80 {
		rank := 1 + rng.IntN(2)
		dims := randDims(rng, rank)
		if iter%20 == 0 {
			dims, rank = []int64{3, 300}, 2
		}
		dim := rng.IntN(rank)
		var root string
		var params []string
		if iter%2 == 0 {
			params = []string{shapeText(hlo.F32, dims)}
			root = fmt.Sprintf("%s sort(p0), dimensions={%d}, to_apply=cmp", params[0], dim)
		} else {
			params = []string{shapeText(hlo.S32, dims), shapeText(hlo.F32, dims)}
			root = fmt.Sprintf("(%s, %s) sort(p0, p1), dimensions={%d}, to_apply=cmp", params[0], params[1], dim)
		}
		in := parseRoot(t, module(params, root, comps[iter%2]))
		if pl, _, ok := planSort(in, 1); !ok || pl.lanes == nil {
			t.Fatalf("%s: not on the lane program", in)
		}
		ops := randomOperands(in, rng)
		ops[0] = sortKeysLiteral(ops[0].Shape(), rng)
		if iter%2 == 1 { // few distinct first keys, so the second decides
			k := ops[0].Data().([]int32)
			for i := range k {
				k[i] %= 3
			}
		}
		runWhole(t, sortWhole, in, ops, 1+rng.IntN(3))
	}
}

// TestStretchedScalars runs clamp with scalar bounds (and select with a
// scalar predicate, lowerSelect's) over integer and float types, through
// the lowerers in the order lower tries them.
func TestStretchedScalars(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, ty := range []hlo.DType{hlo.S8, hlo.U32, hlo.S64, hlo.F32, hlo.F64} {
		arr := shapeText(ty, []int64{3, 50})
		s := shapeText(ty, nil)
		for _, c := range []struct {
			params []string
			root   string
		}{
			{[]string{s, arr, s}, arr + " clamp(p0, p1, p2)"},
			{[]string{arr, arr, s}, arr + " clamp(p0, p1, p2)"},
			{[]string{"pred[]", arr, arr}, arr + " select(p0, p1, p2)"},
		} {
			in := parseRoot(t, module(c.params, c.root))
			for range 3 {
				runWhole(t, intoWhole(movementOrElementwise), in, randomOperands(in, rng), 2)
			}
		}
	}
}

// TestF32DotNonNesting runs f32 dots whose contracting dimensions do not
// collapse into one index, which the GEMM declines: the table loop sums
// in float64 and rounds once, as the evaluator does, so the bits agree.
func TestF32DotNonNesting(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for _, root := range []string{
		"f32[2,2,5] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={1,3}, rhs_batch_dims={0}, rhs_contracting_dims={2,1}",
		"f32[4,6] dot(p0, p1), lhs_contracting_dims={0,2}, rhs_contracting_dims={1,0}",
	} {
		params := []string{"f32[2,3,2,4]", "f32[2,4,3,5]"}
		if strings.HasPrefix(root, "f32[4,6]") {
			params = []string{"f32[3,4,5]", "f32[5,3,6]"}
		}
		in := parseRoot(t, module(params, root))
		if _, ok := planDot(in); ok {
			t.Fatalf("%s: the GEMM takes it; the test wants one it declines", in)
		}
		runWhole(t, intoWhole(lowerDotGeneric), in, randomOperands(in, rng), 2)
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func movementOrElementwise(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if k, ok := lowerMovement(in, threads); ok {
		return k, true
	}
	return lowerElementwise(in, threads)
}

func scatterLanesWhole(in *hlo.Instruction, threads int) (wholeKernel, bool) {
	k, ok := lowerScatterLanes(in, threads)
	return wholeKernel(k), ok
}

// TestScatterLanesRandom scatters rows (and single elements) with
// duplicate and out-of-bounds indices through a two-operand combiner and
// a one-operand combiner that is not one op.
func TestScatterLanesRandom(t *testing.T) {
	pair := `pair {
  a = f32[] parameter(0)
  m = s32[] parameter(1)
  b = f32[] parameter(2)
  n = s32[] parameter(3)
  s = f32[] add(a, b)
  c = f32[] constant(0.5)
  h = f32[] multiply(s, c)
  x = s32[] maximum(m, n)
  ROOT t = (f32[], s32[]) tuple(h, x)
}`
	blend := `blend {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] constant(0.25)
  d = f32[] multiply(a, c)
  ROOT r = f32[] add(d, b)
}`
	dims := "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"
	elems := "update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1"
	cases := []struct {
		params []string
		root   string
		comp   string
	}{
		{[]string{"f32[6,300]", "s32[6,300]", "s32[9,1]", "f32[9,300]", "s32[9,300]"},
			"(f32[6,300], s32[6,300]) scatter(p0, p1, p2, p3, p4), " + dims + ", to_apply=pair", pair},
		{[]string{"f32[6,4]", "s32[5,1]", "f32[5,4]"}, "f32[6,4] scatter(p0, p1, p2), " + dims + ", to_apply=blend", blend},
		{[]string{"f32[6,4]", "s32[7,2]", "f32[7]"}, "f32[6,4] scatter(p0, p1, p2), " + elems + ", to_apply=blend", blend},
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range cases {
		in := parseRoot(t, module(c.params, c.root, c.comp))
		idx := (len(in.Operands) - 1) / 2
		for range 20 {
			ops := randomOperands(in, rng)
			setIndices(ops[idx], rng, -1, 7)
			runWhole(t, scatterLanesWhole, in, ops, 2)
		}
	}
}

// TestFloatDotLoop runs dots of f8, f16 and mixed float types that the
// GEMM declines: float64 sums rounded once, the evaluator's bits.
func TestFloatDotLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, ty := range [][3]hlo.DType{{hlo.F8E4M3FN, hlo.F8E4M3FN, hlo.F8E4M3FN}, {hlo.F8E5M2, hlo.F8E5M2, hlo.F32},
		{hlo.F16, hlo.F16, hlo.F16}, {hlo.BF16, hlo.F32, hlo.F32}} {
		in := parseRoot(t, module([]string{shapeText(ty[0], []int64{2, 5, 7}), shapeText(ty[1], []int64{2, 7, 3})},
			shapeText(ty[2], []int64{2, 5, 3})+" dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}"))
		for range 3 {
			runWhole(t, intoWhole(floatDotLoop), in, randomOperands(in, rng), 2)
		}
	}
}

// TestLanesKernelErrors: a lane kernel given the wrong operands returns
// an error naming the count, not a panic.
func TestLanesKernelErrors(t *testing.T) {
	in := parseRoot(t, module([]string{"f32[4,5]", "s32[4,5]", "f32[]", "s32[]"},
		"(f32[4], s32[4]) reduce(p0, p1, p2, p3), dimensions={1}, to_apply=argmax", argmaxText))
	k, ok := lowerReduceLanes(in, 1)
	if !ok {
		t.Fatal("no kernel")
	}
	ops := randomOperands(in, rand.New(rand.NewPCG(1, 1)))
	if _, err := k(ops[:3]); err == nil || !strings.Contains(err.Error(), "4 operands, got 3") {
		t.Errorf("reduce: %v", err)
	}
	in = parseRoot(t, module([]string{"f32[6,4]", "s32[5,1]", "f32[5,4]"},
		"f32[6,4] scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=blend",
		"blend {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] subtract(a, b)\n}"))
	ks, ok := lowerScatterLanes(in, 1)
	if !ok {
		t.Fatal("no scatter kernel")
	}
	if _, err := ks(ops[:2]); err == nil || !strings.Contains(err.Error(), "3 operands, got 2") {
		t.Errorf("scatter: %v", err)
	}
}
