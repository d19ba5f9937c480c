package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// Sort (and the other kernels that run the evaluator's less common ops:
// bitcast-convert, reduce-precision, select-and-scatter, the generic
// convolution) against the evaluator, bit for bit.

// wholeKernel computes an instruction's whole result.
type wholeKernel func(ops []*hlo.Literal) (*hlo.Literal, error)

// wholeLowerer lowers to a wholeKernel.
type wholeLowerer func(in *hlo.Instruction, threads int) (wholeKernel, bool)

// intoWhole adapts a lowerer of kernels that write into a buffer: the
// buffer starts as garbage.
func intoWhole(lower lowerFunc) wholeLowerer {
	return func(in *hlo.Instruction, threads int) (wholeKernel, bool) {
		k, ok := lower(in, threads)
		if !ok {
			return nil, false
		}
		return func(ops []*hlo.Literal) (*hlo.Literal, error) {
			out := poisoned(in.Shape)
			return out, k(out, ops)
		}, true
	}
}

func sortWhole(in *hlo.Instruction, threads int) (wholeKernel, bool) {
	k, ok := lowerSortKernel(in, threads)
	return wholeKernel(k), ok
}

// sameBits fails unless got and want (arrays or tuples of them) have the
// same shape and bit patterns.
func sameBits(t *testing.T, in *hlo.Instruction, got, want *hlo.Literal) {
	t.Helper()
	if want.Shape().IsTuple() {
		g, w := got.Elements(), want.Elements()
		if len(g) != len(w) {
			t.Fatalf("%s: %d tuple elements, want %d", in, len(g), len(w))
		}
		for i := range w {
			sameBits(t, in, g[i], w[i])
		}
		return
	}
	if !got.Shape().Equal(want.Shape()) || got.Len() != want.Len() {
		t.Fatalf("%s: result %s, want %s", in, got.Shape(), want.Shape())
	}
	checkBits(t, in, "", got, want)
}

// conformanceOps runs every instruction of the given opcode in the
// shared cases' entry computations through its lowerer, with operand
// values from the evaluator, and returns how many lowered and declined.
func conformanceOps(t *testing.T, op hlo.Opcode, lower wholeLowerer) (lowered, declined int) {
	t.Helper()
	files, err := conformance.FindCases("/work/shared/conformance/cases", "/work/shared/conformance/xla-tests")
	if err != nil {
		t.Skipf("no shared cases: %v", err)
	}
	needle := " " + op.String() + "("
	for _, f := range files {
		c, err := conformance.LoadCase(f)
		if err != nil || !strings.Contains(c.HLO, needle) {
			continue
		}
		evalCaseSteps(c, func(in *hlo.Instruction, ops []*hlo.Literal, want *hlo.Literal) {
			if in.Opcode != op {
				return
			}
			k, ok := lower(in, 2)
			if !ok {
				declined++
				t.Logf("declined %s: %s", c.Path, in)
				return
			}
			lowered++
			got, err := k(ops)
			if err != nil {
				t.Fatalf("%s: %s: %v", c.Path, in, err)
			}
			sameBits(t, in, got, want)
		})
	}
	t.Logf("%s: %d instructions compiled, %d declined", op, lowered, declined)
	return lowered, declined
}

// runWhole lowers in (failing if it cannot) and compares its result
// with the evaluator's on ops.
func runWhole(t *testing.T, lower wholeLowerer, in *hlo.Instruction, ops []*hlo.Literal, threads int) {
	t.Helper()
	k, ok := lower(in, threads)
	if !ok {
		t.Fatalf("%s: no kernel", in)
	}
	var ev eval.Evaluator
	want, err := ev.Instruction(in, ops)
	if err != nil {
		t.Fatalf("%s: evaluator: %v", in, err)
	}
	got, err := k(ops)
	if err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	sameBits(t, in, got, want)
}

func TestSortConformance(t *testing.T) {
	if n, _ := conformanceOps(t, hlo.OpSort, sortWhole); n == 0 {
		t.Skip("no sorts")
	}
}

// sortKeysLiteral is a random key literal with many duplicates, NaNs of
// both signs, infinities and signed zeros for floats.
func sortKeysLiteral(s hlo.Shape, rng *rand.Rand) *hlo.Literal {
	l := eval.RandomLiteral(s, rng)
	t := s.DType
	for i := range l.Len() {
		switch r := rng.IntN(10); {
		case t.IsFloat() && r == 0:
			l.SetFloat64(i, math.NaN())
			if rng.IntN(2) == 0 {
				l.SetFloat64(i, math.Copysign(math.NaN(), -1))
			}
		case t.IsFloat() && r == 1:
			l.SetFloat64(i, []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1)}[rng.IntN(4)])
		case r < 6:
			l.SetInt64(i, int64(rng.IntN(4)))
			if t.IsFloat() {
				l.SetFloat64(i, float64(rng.IntN(4))-1.5)
			}
		}
	}
	return l
}

func sortComparatorText(name string, types []hlo.DType, dir, typ string, swap bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s {\n", name)
	for i, ty := range types {
		fmt.Fprintf(&b, "  a%d = %s[] parameter(%d)\n  b%d = %s[] parameter(%d)\n", i, ty, 2*i, i, ty, 2*i+1)
	}
	x, y := "a0", "b0"
	if swap {
		x, y = y, x
	}
	fmt.Fprintf(&b, "  ROOT c = pred[] compare(%s, %s), direction=%s%s\n}", x, y, dir, typ)
	return b.String()
}

func TestSortRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	keyTypes := []hlo.DType{hlo.F32, hlo.F64, hlo.BF16, hlo.F16, hlo.S32, hlo.S8, hlo.S64, hlo.U8, hlo.U32, hlo.U64, hlo.Pred, hlo.S16, hlo.U16}
	payloads := []hlo.DType{hlo.S32, hlo.F32, hlo.Pred, hlo.F64, hlo.BF16, hlo.C128}
	for iter := range 400 {
		kt := keyTypes[iter%len(keyTypes)]
		rank := 1 + rng.IntN(3)
		dims := randDims(rng, rank)
		if iter%50 == 0 {
			dims = []int64{3, 700} // past the parallel threshold
			rank = 2
		}
		dim := rng.IntN(rank)
		types := []hlo.DType{kt}
		for range rng.IntN(3) {
			types = append(types, payloads[rng.IntN(len(payloads))])
		}
		dir := []string{"LT", "GT", "LE", "GE"}[rng.IntN(4)]
		typ := ""
		if kt.IsFloat() && rng.IntN(2) == 0 {
			typ = ", type=TOTALORDER"
		}
		params := make([]string, len(types))
		opnds := make([]string, len(types))
		results := make([]string, len(types))
		for i, ty := range types {
			params[i] = shapeText(ty, dims)
			opnds[i] = fmt.Sprintf("p%d", i)
			results[i] = params[i]
		}
		res := results[0]
		if len(types) > 1 {
			res = "(" + strings.Join(results, ", ") + ")"
		}
		stable := ""
		if rng.IntN(2) == 0 {
			stable = ", is_stable=true"
		}
		root := fmt.Sprintf("%s sort(%s), dimensions={%d}%s, to_apply=cmp", res, strings.Join(opnds, ", "), dim, stable)
		in := parseRoot(t, module(params, root, sortComparatorText("cmp", types, dir, typ, rng.IntN(2) == 0)))
		ops := randomOperands(in, rng)
		ops[0] = sortKeysLiteral(ops[0].Shape(), rng)
		runWhole(t, sortWhole, in, ops, 1+rng.IntN(3))
		if len(types) == 1 {
			runWhole(t, intoWhole(lowerSort), in, ops, 2)
		}
	}
}

func TestSortDeclines(t *testing.T) {
	// A comparator with an instruction that is not a scalar elementwise op
	// has no lane program.
	cmp := "cmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  x = f32[1] reshape(a)\n  y = f32[] reshape(x)\n  ROOT c = pred[] compare(y, b), direction=LT\n}"
	in := parseRoot(t, module([]string{"f32[5]"}, "f32[5] sort(p0), dimensions={0}, to_apply=cmp", cmp))
	if _, ok := lowerSortKernel(in, 1); ok {
		t.Fatal("lowered a comparator with a reshape")
	}
}

// TestSortExprRandom runs comparators of compares, logic, selects and
// signs — ONNX TopK's (descending, NaN first, ties by index), a
// lexicographic two-key order, a select choosing which key decides,
// TOTALORDER on two keys, by magnitude, preds and unsigned keys — on the
// compiled closures, against the evaluator bit for bit, over keys full of
// ties, NaNs of both signs, infinities and signed zeros.
func TestSortExprRandom(t *testing.T) {
	type cmpCase struct {
		types []hlo.DType
		text  string
		lex   bool // run as a lexicographic order (lower_sort_lex.go)
	}
	cases := []cmpCase{
		{[]hlo.DType{hlo.F32, hlo.S64}, `cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s64[] parameter(2)
  j = s64[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  an = pred[] compare(a, a), direction=NE
  bn = pred[] compare(b, b), direction=NE
  nbn = pred[] not(bn)
  nanfirst = pred[] and(an, nbn)
  before = pred[] or(nanfirst, gt)
  bothnan = pred[] and(an, bn)
  same = pred[] or(eq, bothnan)
  lower = pred[] compare(i, j), direction=LT
  tie = pred[] and(same, lower)
  ROOT r = pred[] or(before, tie)
}`, true},
		{[]hlo.DType{hlo.S32, hlo.F16}, `cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f16[] parameter(2)
  d = f16[] parameter(3)
  lt = pred[] compare(a, b), direction=LT
  eq = pred[] compare(a, b), direction=EQ
  lt2 = pred[] compare(c, d), direction=GT
  tie = pred[] and(eq, lt2)
  ROOT r = pred[] or(lt, tie)
}`, true},
		// ONNX TopK's smallest-first (NaN last), its parts written the
		// other way round: the compares reversed, or's and and's operands
		// swapped.
		{[]hlo.DType{hlo.F32, hlo.S32}, `cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  lt = pred[] compare(b, a), direction=GT
  eq = pred[] compare(b, a), direction=EQ
  an = pred[] compare(a, a), direction=NE
  bn = pred[] compare(b, b), direction=NE
  nan = pred[] not(an)
  nanlast = pred[] and(nan, bn)
  before = pred[] or(lt, nanlast)
  bothnan = pred[] and(bn, an)
  same = pred[] or(bothnan, eq)
  lower = pred[] compare(j, i), direction=GT
  tie = pred[] and(lower, same)
  ROOT r = pred[] or(tie, before)
}`, true},
		// Three keys: an unsigned one descending, IEEE floats (a NaN ties
		// a pair outright), then a signed one.
		{[]hlo.DType{hlo.U8, hlo.F32, hlo.S64}, `cmp {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  e = s64[] parameter(4)
  f = s64[] parameter(5)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt2 = pred[] compare(c, d), direction=LT
  eq2 = pred[] compare(c, d), direction=EQ
  lt3 = pred[] compare(e, f), direction=LT
  tie2 = pred[] and(eq2, lt3)
  second = pred[] or(lt2, tie2)
  tie = pred[] and(eq, second)
  ROOT r = pred[] or(gt, tie)
}`, true},
		// Not lexicographic: the NaN guard on the wrong element (a NaN b
		// first in a descending order).
		{[]hlo.DType{hlo.F32, hlo.S64}, `cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s64[] parameter(2)
  j = s64[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  an = pred[] compare(a, a), direction=NE
  bn = pred[] compare(b, b), direction=NE
  nan = pred[] not(an)
  odd = pred[] and(bn, nan)
  before = pred[] or(odd, gt)
  lower = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lower)
  ROOT r = pred[] or(before, tie)
}`, false},
		{[]hlo.DType{hlo.BF16, hlo.U8}, `cmp {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  c = u8[] parameter(2)
  d = u8[] parameter(3)
  k = u8[] constant(1)
  odd = pred[] compare(c, k), direction=GE
  x = bf16[] select(odd, a, b)
  y = bf16[] select(odd, b, a)
  ROOT r = pred[] compare(x, y), direction=LT
}`, false},
		{[]hlo.DType{hlo.F64, hlo.F32}, `cmp {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  lt = pred[] compare(a, b), direction=LT, type=TOTALORDER
  eq = pred[] compare(a, b), direction=EQ, type=TOTALORDER
  lt2 = pred[] compare(d, c), direction=LT, type=TOTALORDER
  tie = pred[] and(eq, lt2)
  ROOT r = pred[] or(lt, tie)
}`, false},
		{[]hlo.DType{hlo.F32}, `cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  x = f32[] abs(a)
  y = f32[] negate(b)
  z = f32[] abs(y)
  ROOT c = pred[] compare(x, z), direction=LE
}`, false},
		{[]hlo.DType{hlo.Pred, hlo.S8}, `cmp {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  c = s8[] parameter(2)
  d = s8[] parameter(3)
  t = pred[] constant(true)
  gt = pred[] compare(a, b), direction=GT
  ne = pred[] xor(a, b)
  same = pred[] xor(ne, t)
  lt = pred[] compare(c, d), direction=LT
  tie = pred[] and(same, lt)
  ROOT r = pred[] or(gt, tie)
}`, false},
	}
	rng := rand.New(rand.NewPCG(17, 18))
	for iter := range 240 {
		c := cases[iter%len(cases)]
		rank := 1 + rng.IntN(2)
		dims := randDims(rng, rank)
		if iter%40 == 0 {
			dims, rank = []int64{3, 500}, 2 // past the parallel threshold
		}
		dim := rng.IntN(rank)
		params := make([]string, len(c.types))
		opnds := make([]string, len(c.types))
		for i, ty := range c.types {
			params[i], opnds[i] = shapeText(ty, dims), fmt.Sprintf("p%d", i)
		}
		res := params[0]
		if len(params) > 1 {
			res = "(" + strings.Join(params, ", ") + ")"
		}
		in := parseRoot(t, module(params, fmt.Sprintf("%s sort(%s), dimensions={%d}, to_apply=cmp", res, strings.Join(opnds, ", "), dim), c.text))
		if pl, _, ok := planSort(in, 1); !ok || pl.expr == nil {
			t.Fatalf("case %d: not compiled to closures", iter%len(cases))
		} else if lex := pl.expr.order != nil; lex != c.lex {
			t.Fatalf("case %d: lexicographic %v, want %v", iter%len(cases), lex, c.lex)
		}
		ops := randomOperands(in, rng)
		for k := range ops {
			ops[k] = sortKeysLiteral(ops[k].Shape(), rng)
		}
		runWhole(t, sortWhole, in, ops, 1+rng.IntN(3))
	}
}

// TestThreeWayOneCall: slices.SortStableFunc asks only whether cmp(a, b)
// < 0, so threeWay's one call of the comparator sorts every input as the
// evaluator's two-call three-way function does — checked here on random
// comparators, consistent or not (random outcome tables), for every
// length to 64, so that a Go release whose stable sort asked more would
// fail here rather than part from the evaluator quietly.
func TestThreeWayOneCall(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for n := range 65 {
		for range 20 {
			table := make([]bool, n*n)
			for i := range table {
				table[i] = rng.IntN(3) == 0
			}
			less := func(a, b int) bool { return table[a*n+b] }
			one, two := make([]int, n), make([]int, n)
			for i := range one {
				one[i], two[i] = i, i
			}
			slices.SortStableFunc(one, threeWay(less))
			slices.SortStableFunc(two, func(a, b int) int {
				switch {
				case less(a, b):
					return -1
				case less(b, a):
					return 1
				}
				return 0
			})
			if !slices.Equal(one, two) {
				t.Fatalf("n=%d: %v with one call, %v with two", n, one, two)
			}
		}
	}
}
