package cpu

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// Selection reducers (lower_reduce_select.go) against the evaluator, bit
// for bit, over keys full of ties, NaNs of both signs, signed zeros and
// infinities.

func reduceSelectWhole(in *hlo.Instruction, threads int) (wholeKernel, bool) {
	k, ok := lowerReduceSelect(in, threads)
	return wholeKernel(k), ok
}

// selectionReducers are reducers over (value V, index I) slots, written
// as real tools write them; V and I stand for the types.
var selectionReducers = map[string]string{
	// JAX's argmax: the larger value, NaN wins, ties to the smaller index.
	"jax-argmax": argmaxText,
	// The conformance suite's argmax: the element against the
	// accumulator, no NaN rule.
	"elem-first": `r {
  a = V[] parameter(0)
  i = I[] parameter(1)
  b = V[] parameter(2)
  j = I[] parameter(3)
  gt = pred[] compare(b, a), direction=GT
  eq = pred[] compare(b, a), direction=EQ
  lt = pred[] compare(j, i), direction=LT
  tie = pred[] and(eq, lt)
  k = pred[] or(gt, tie)
  v = V[] select(k, b, a)
  x = I[] select(k, j, i)
  ROOT t = (V[], I[]) tuple(v, x)
}`,
	// argmin keeping the last index on ties, NaN loses, written with not
	// and xor, the results' order swapped in the selects.
	"argmin-last": `r {
  a = V[] parameter(0)
  i = I[] parameter(1)
  b = V[] parameter(2)
  j = I[] parameter(3)
  le = pred[] compare(b, a), direction=LE
  bnan = pred[] compare(b, b), direction=NE
  bok = pred[] not(bnan)
  anan = pred[] compare(a, a), direction=EQ
  an = pred[] xor(anan, bok)
  take = pred[] and(le, bok)
  k = pred[] or(take, an)
  v = V[] select(k, b, a)
  x = I[] select(k, j, i)
  ROOT t = (V[], I[]) tuple(v, x)
}`,
	// JAX's argmax on integers after the simplifier: x != x folded to a
	// constant.
	"folded": `r {
  a = V[] parameter(0)
  i = I[] parameter(1)
  b = V[] parameter(2)
  j = I[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  nan = pred[] constant(false)
  keep = pred[] or(gt, nan)
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lt)
  k = pred[] or(keep, tie)
  v = V[] select(k, a, b)
  x = I[] select(k, i, j)
  ROOT t = (V[], I[]) tuple(v, x)
}`,
	// Value and index chosen by different rules: the value is the
	// maximum, the index the larger one.
	"split": `r {
  a = V[] parameter(0)
  i = I[] parameter(1)
  b = V[] parameter(2)
  j = I[] parameter(3)
  ge = pred[] compare(a, b), direction=GE
  v = V[] select(ge, a, b)
  gi = pred[] compare(i, j), direction=GT
  x = I[] select(gi, i, j)
  ROOT t = (V[], I[]) tuple(v, x)
}`,
}

func selectionReducer(name string, v, i hlo.DType) string {
	return strings.NewReplacer("V[]", v.String()+"[]", "I[]", i.String()+"[]", "f32[]", v.String()+"[]",
		"s32[]", i.String()+"[]").Replace(selectionReducers[name])
}

// maxNaNText is a one-input selection reducer: the larger, NaN wins.
const maxNaNText = `r {
  a = V[] parameter(0)
  b = V[] parameter(1)
  gt = pred[] compare(a, b), direction=GT
  nan = pred[] compare(a, a), direction=NE
  k = pred[] or(gt, nan)
  ROOT v = V[] select(k, a, b)
}`

func TestReduceSelectRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	names := []string{"jax-argmax", "elem-first", "argmin-last", "split", "max-nan", "folded"}
	types := [][2]hlo.DType{{hlo.F32, hlo.S32}, {hlo.F64, hlo.S64}, {hlo.S32, hlo.U32}, {hlo.U8, hlo.S32}, {hlo.F32, hlo.F32}}
	for iter := range 150 {
		name, ty := names[iter%len(names)], types[rng.IntN(len(types))]
		rank := 1 + rng.IntN(3)
		dims := randDims(rng, rank)
		if iter%25 == 0 {
			dims, rank = []int64{300, 70}, 2 // enough work for several threads
		}
		perm := rng.Perm(rank)
		red := perm[:1+rng.IntN(rank)]
		var kept []int64
		redText := make([]string, len(red))
		for i, d := range red {
			redText[i] = fmt.Sprint(d)
		}
		for d := range rank {
			if !containsInt(red, d) {
				kept = append(kept, dims[d])
			}
		}
		var text string
		if name == "max-nan" {
			comp := strings.ReplaceAll(maxNaNText, "V[]", ty[0].String()+"[]")
			root := fmt.Sprintf("%s reduce(p0, p1), dimensions={%s}, to_apply=r", shapeText(ty[0], kept), strings.Join(redText, ","))
			text = module([]string{shapeText(ty[0], dims), ty[0].String() + "[]"}, root, comp)
		} else {
			comp := selectionReducer(name, ty[0], ty[1])
			res := fmt.Sprintf("(%s, %s)", shapeText(ty[0], kept), shapeText(ty[1], kept))
			root := fmt.Sprintf("%s reduce(p0, p1, p2, p3), dimensions={%s}, to_apply=%s", res,
				strings.Join(redText, ","), strings.SplitN(comp, " ", 2)[0])
			text = module([]string{shapeText(ty[0], dims), shapeText(ty[1], dims), ty[0].String() + "[]", ty[1].String() + "[]"}, root, comp)
		}
		in := parseRoot(t, text)
		ops := randomOperands(in, rng)
		for k := range ops {
			if rng.IntN(3) > 0 || k >= len(ops)/2 {
				ops[k] = sortKeysLiteral(ops[k].Shape(), rng)
			}
		}
		t.Logf("iteration %d: %s %v over %v folding %v", iter, name, ty, dims, red)
		runWhole(t, reduceSelectWhole, in, ops, 1+rng.IntN(3))
	}
}

// TestReduceSelectDeclines: reducers that do arithmetic, compare with
// constants or in total order, or take a slot's result from another
// slot, and element types Go does not compare natively, are left to the
// lane programs.
func TestReduceSelectDeclines(t *testing.T) {
	argmax := selectionReducers["jax-argmax"]
	cases := map[string]struct{ comp, v, i string }{
		"arithmetic":  {sumMaxText, "f32", "s32"},
		"total order": {strings.Replace(argmax, "direction=GT", "direction=GT, type=TOTALORDER", 1), "f32", "s32"},
		"constant": {strings.Replace(argmax, "nan = pred[] compare(a, a), direction=NE",
			"z = f32[] constant(0)\n  nan = pred[] compare(a, z), direction=NE", 1), "f32", "s32"},
		"cross slot": {`r {
  a = s32[] parameter(0)
  i = s32[] parameter(1)
  b = s32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = s32[] select(gt, i, b)
  x = s32[] select(gt, i, j)
  ROOT t = (s32[], s32[]) tuple(v, x)
}`, "s32", "s32"},
		"bf16": {strings.ReplaceAll(argmax, "f32[]", "bf16[]"), "bf16", "s32"},
	}
	for name, c := range cases {
		res := fmt.Sprintf("(%s[4], %s[4])", c.v, c.i)
		cname := strings.SplitN(c.comp, " ", 2)[0]
		root := fmt.Sprintf("%s reduce(p0, p1, p2, p3), dimensions={1}, to_apply=%s", res, cname)
		in := parseRoot(t, module([]string{c.v + "[4,6]", c.i + "[4,6]", c.v + "[]", c.i + "[]"}, root, c.comp))
		if _, ok := lowerReduceSelect(in, 1); ok {
			t.Errorf("%s: lowered as a selection reduce", name)
		}
	}
}

func TestReduceSelectConformance(t *testing.T) {
	n, _ := conformanceOps(t, hlo.OpReduce, func(in *hlo.Instruction, threads int) (wholeKernel, bool) {
		return reduceSelectWhole(in, threads)
	})
	if n == 0 {
		t.Fatal("no conformance reduce is a selection reduce")
	}
	t.Logf("%d selection reduces", n)
}

func BenchmarkReduceSelectArgmax(b *testing.B) {
	root := "(f32[4096], s32[4096]) reduce(p0, p1, p2, p3), dimensions={1}, to_apply=argmax"
	in := parseRootB(b, module([]string{"f32[4096,1000]", "s32[4096,1000]", "f32[]", "s32[]"}, root, argmaxText))
	ops := randomOperands(in, rand.New(rand.NewPCG(1, 2)))
	idx := ops[1].Data().([]int32) // JAX's indices: an iota along the row
	for k := range idx {
		idx[k] = int32(k % 1000)
	}
	for _, threads := range []int{1, 2} {
		k, ok := lowerReduceSelect(in, threads)
		if !ok {
			b.Fatal("not a selection reduce")
		}
		b.Run(fmt.Sprint("threads=", threads), func(b *testing.B) {
			for b.Loop() {
				if _, err := k(ops); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReduceSelectIotaFusion compiles JAX-style argmax modules, whose
// index input is an iota, and checks that the iota is fused into the
// reduce (computed in the fold, never stored) and that results are the
// evaluator's, bit for bit: iotas along the folded dimension, along a
// kept one, along one of several folded ones, with other readers; row
// and strided folds; on 1 and 2 threads.
func TestReduceSelectIotaFusion(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	cases := []struct {
		x, kept, red string
		iotaDim      int
		v, i         hlo.DType
		iotaOut      bool
	}{
		{"[300,70]", "[300]", "1", 1, hlo.F32, hlo.S32, false},
		{"[40,30]", "[30]", "0", 0, hlo.F32, hlo.S32, false},
		{"[20,30]", "[20]", "1", 0, hlo.F32, hlo.S32, false},
		{"[6,7,8]", "[7]", "0,2", 2, hlo.F64, hlo.S64, false},
		{"[64,33]", "[64]", "1", 1, hlo.F32, hlo.S32, true},
		{"[9,1000]", "[9]", "1", 1, hlo.S32, hlo.U32, false},
		{"[30,40]", "[]", "1,0", 0, hlo.F32, hlo.S32, false}, // a transposed walk, not a row
		{"[0,5,3]", "[5]", "0,2", 2, hlo.F32, hlo.S32, false},
	}
	for k, c := range cases {
		v, i := c.v.String(), c.i.String()
		comp := selectionReducer("jax-argmax", c.v, c.i)
		root := "ROOT idx = " + i + c.kept + " get-tuple-element(r), index=1"
		if c.iotaOut {
			root = "g = " + i + c.kept + " get-tuple-element(r), index=1\n  ROOT t = (" + i + c.kept + ", " + i + c.x + ") tuple(g, iota)"
		}
		text := fmt.Sprintf(`HloModule m%d

%s

ENTRY main {
  p = %s%s parameter(0)
  iota = %s%s iota(), iota_dimension=%d
  init = %s[] constant(-1)
  zero = %s[] constant(0)
  r = (%s%s, %s%s) reduce(p, iota, init, zero), dimensions={%s}, to_apply=argmax
  %s
}`, k, comp, v, c.x, i, c.x, c.iotaDim, v, i, v, c.kept, i, c.kept, c.red, root)
		for _, threads := range []int{1, 2} {
			m, x := compileSingle(t, text, threads, "reduce-select")
			if !c.iotaOut && x.Lowering["movement"] > 0 {
				t.Fatalf("case %d: the iota was computed on its own (lowering %v)", k, x.Lowering)
			}
			arg := sortKeysLiteral(m.Entry.Params[0].Shape, rng)
			runSingle(t, text, []*hlo.Literal{arg}, rng, threads, "reduce-select")
		}
	}
}
