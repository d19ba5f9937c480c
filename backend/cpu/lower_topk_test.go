package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// topk against the evaluator, bit for bit (values and indices): every
// element type, largest either way or absent, rows full of ties, NaNs of
// both signs and payloads, ±0 and ±inf, comparators, layouts.

// topkInstr parses `topk(p0)` of operand shape x with k and attrs.
func topkInstr(t testing.TB, x hlo.Shape, k int, attrs string, comps ...string) *hlo.Instruction {
	t.Helper()
	dims := append([]int64(nil), x.Dims...)
	dims[len(dims)-1] = int64(k)
	root := fmt.Sprintf("(%s, %s) topk(p0), k=%d%s", shapeText(x.DType, dims), shapeText(hlo.S32, dims), k, attrs)
	m, err := hlotext.Parse(module([]string{x.String()}, root, comps...), hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m.Entry.Root
}

// topkValues fills x with values drawn from a small set (many ties)
// including, for floats, NaNs of both signs and two payloads, ±0 and
// ±inf.
func topkValues(x *hlo.Literal, rng *rand.Rand) {
	t := x.DType()
	special := []uint64{}
	if t.IsFloat() {
		for _, v := range []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN()} {
			l := hlo.NewLiteral(hlo.ArrayShape(t, 1))
			l.SetFloat64(0, v)
			special = append(special, l.Bits(0))
		}
		if t == hlo.F32 {
			special = append(special, 0x7f800001, 0xffc00001, 0x7fc00000) // a signaling NaN, payloads
		}
		if t == hlo.F64 {
			special = append(special, 0x7ff0000000000001, 0xfff8000000000001)
		}
	}
	small := eval.RandomLiteral(hlo.ArrayShape(t, 5), rng)
	for i := range x.Len() {
		switch r := rng.IntN(10); {
		case r < 2 && len(special) > 0:
			x.SetBits(i, special[rng.IntN(len(special))])
		case r < 6:
			x.SetBits(i, small.Bits(rng.IntN(5)))
		default:
			x.SetBits(i, eval.RandomLiteral(hlo.ArrayShape(t, 1), rng).Bits(0))
		}
	}
}

// runTopK runs the kernel (into a poisoned tuple, or none) and the
// evaluator and compares them bit for bit.
func runTopK(t *testing.T, in *hlo.Instruction, x *hlo.Literal, threads int, poison bool) {
	t.Helper()
	k, ok := lowerTopK(in, threads)
	if !ok {
		t.Fatalf("%s: no kernel", in)
	}
	var ev eval.Evaluator
	want, err := ev.Instruction(in, []*hlo.Literal{x})
	if err != nil {
		t.Fatalf("%s: evaluator: %v", in, err)
	}
	var out *hlo.Literal
	if poison {
		out = poisoned(in.Shape)
	}
	got, err := k(&runState{}, out, []*hlo.Literal{x})
	if err != nil {
		t.Fatal(err)
	}
	checkSameBits(t, fmt.Sprintf("%s on %v", in, x), got, want)
}

var topkTypes = []hlo.DType{
	hlo.F32, hlo.F64, hlo.BF16, hlo.F16, hlo.F8E4M3FN, hlo.F8E5M2, hlo.S32, hlo.S64, hlo.S16, hlo.S8, hlo.S4,
	hlo.U8, hlo.U16, hlo.U32, hlo.U64, hlo.U4, hlo.Pred,
}

func TestTopKKernelMatchesEvaluator(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, typ := range topkTypes {
		for range 12 {
			dims := randDims(rng, 1+rng.IntN(3))
			n := int(dims[len(dims)-1])
			x := hlo.ArrayShape(typ, dims...)
			if len(dims) == 2 && rng.IntN(2) == 0 {
				x.Layout = &hlo.Layout{MinorToMajor: []int64{0, 1}}
			}
			attrs := []string{"", ", largest=true", ", largest=false"}[rng.IntN(3)]
			in := topkInstr(t, x, rng.IntN(n+1), attrs)
			v := hlo.NewLiteral(x)
			topkValues(v, rng)
			runTopK(t, in, v, 1+rng.IntN(2), rng.IntN(2) == 0)
		}
	}
}

// Long rows (the heap is replaced often when largest=false on ascending
// data), rows split among threads, and k = n.
func TestTopKKernelLongRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		dims []int64
		k    int
	}{{[]int64{3, 5000}, 50}, {[]int64{64, 1000}, 5}, {[]int64{200, 37}, 37}, {[]int64{4000, 9}, 1}} {
		for _, largest := range []string{"", ", largest=false"} {
			x := hlo.ArrayShape(hlo.F32, c.dims...)
			v := hlo.NewLiteral(x)
			topkValues(v, rng)
			if rng.IntN(2) == 0 {
				for i := range v.Len() {
					v.SetFloat64(i, float64(i%1000))
				}
			}
			runTopK(t, topkInstr(t, x, c.k, largest), v, 2, true)
		}
	}
}

// The XLA rule by hand: ties keep the lower index first, NaN is the
// largest value, -0 sorts below +0.
func TestTopKKernelHandWorked(t *testing.T) {
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	in := topkInstr(t, hlo.ArrayShape(hlo.F32, 7), 5, "")
	x, _ := hlo.LiteralFromSlice([]float32{1, 5, negZero, 5, nan, 0, 3})
	k, _ := lowerTopK(in, 1)
	r, err := k(nil, nil, []*hlo.Literal{x})
	if err != nil {
		t.Fatal(err)
	}
	vals, idx := r.Elements()[0].Data().([]float32), r.Elements()[1].Data().([]int32)
	if fmt.Sprint(idx) != "[4 1 3 6 0]" || !math.IsNaN(float64(vals[0])) || fmt.Sprint(vals[1:]) != "[5 5 3 1]" {
		t.Errorf("largest: %v %v", vals, idx)
	}
	in = topkInstr(t, hlo.ArrayShape(hlo.F32, 7), 3, ", largest=false")
	k, _ = lowerTopK(in, 1)
	if r, err = k(nil, nil, []*hlo.Literal{x}); err != nil {
		t.Fatal(err)
	}
	vals, idx = r.Elements()[0].Data().([]float32), r.Elements()[1].Data().([]int32)
	if fmt.Sprint(idx) != "[2 5 0]" || math.Float32bits(vals[0]) != 0x80000000 || vals[1] != 0 || vals[2] != 1 {
		t.Errorf("smallest: %v %v", vals, idx)
	}
}

// Comparators: a single compare (IEEE, so NaN ties with everything and
// the stable sort's order decides), a total-order one, and one the lane
// program runs (compare of absolute values).
func TestTopKKernelComparators(t *testing.T) {
	comps := map[string]string{
		"gt": "gt {\n  a = %[1]s[] parameter(0)\n  b = %[1]s[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GT\n}",
		"lt_total": "lt_total {\n  a = %[1]s[] parameter(0)\n  b = %[1]s[] parameter(1)\n" +
			"  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER\n}",
		"abs_ge": "abs_ge {\n  a = %[1]s[] parameter(0)\n  b = %[1]s[] parameter(1)\n  x = %[1]s[] abs(a)\n" +
			"  y = %[1]s[] abs(b)\n  ROOT c = pred[] compare(x, y), direction=GE\n}",
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for name, c := range comps {
		for _, typ := range []hlo.DType{hlo.F32, hlo.BF16, hlo.S32, hlo.F64} {
			if name == "abs_ge" && typ == hlo.BF16 {
				continue // no bf16 abs kernel over lanes (yet): declined, left to the evaluator
			}
			for range 4 {
				dims := []int64{int64(1 + rng.IntN(4)), int64(1 + rng.IntN(40))}
				x := hlo.ArrayShape(typ, dims...)
				in := topkInstr(t, x, rng.IntN(int(dims[1])+1), ", to_apply="+name, fmt.Sprintf(c, typ))
				v := hlo.NewLiteral(x)
				topkValues(v, rng)
				runTopK(t, in, v, 2, true)
			}
		}
	}
}

func TestTopKKernelDeclines(t *testing.T) {
	m, err := hlotext.Parse(module([]string{"f32[3,<=8]"}, "(f32[3,2], s32[3,2]) topk(p0), k=2"), hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lowerTopK(m.Entry.Root, 1); ok {
		t.Error("a dynamic operand lowered")
	}
}

func TestTopKCompiled(t *testing.T) {
	text := `HloModule m
ENTRY e {
  x = f32[16,100] parameter(0)
  t = (f32[16,7], s32[16,7]) topk(x), k=7, largest=true
  v = f32[16,7] get-tuple-element(t), index=0
  i = s32[16,7] get-tuple-element(t), index=1
  n = f32[16,7] negate(v)
  ROOT r = (f32[16,7], s32[16,7]) tuple(n, i)
}`
	for _, threads := range []int{1, 2} {
		x := compileRun(t, text, "topk", threads)
		arg := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 16, 100))
		topkValues(arg, rand.New(rand.NewPCG(1, 1)))
		got, err := x.Run([]*hlo.Literal{arg}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := eval.Run(x.Module(), arg)
		if err != nil {
			t.Fatal(err)
		}
		checkSameBits(t, "topk module", got, want)
	}
}

func BenchmarkTopK(b *testing.B) {
	for _, c := range []struct {
		rows, n int64
		k       int
	}{{64, 1000, 5}, {256, 32000, 50}} {
		in := topkInstr(b, hlo.ArrayShape(hlo.F32, c.rows, c.n), c.k, "")
		x := eval.RandomLiteral(in.Operands[0].Shape, rand.New(rand.NewPCG(1, 1)))
		name := strings.ReplaceAll(fmt.Sprintf("%dx%d-k%d", c.rows, c.n, c.k), " ", "")
		b.Run(name+"/evaluator", func(b *testing.B) {
			var ev eval.Evaluator
			for b.Loop() {
				if _, err := ev.Instruction(in, []*hlo.Literal{x}); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/compiled-%dt", name, threads), func(b *testing.B) {
				k, _ := lowerTopK(in, threads)
				out := newTuple(in.Shape)
				for b.Loop() {
					if _, err := k(nil, out, []*hlo.Literal{x}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestRandomTopKConformance compiles every shared case that has an rng,
// rng-bit-generator or topk (none so far) and checks that they are
// lowered to kernels, not left to the evaluator (`axle test-cases`
// checks their values).
func TestRandomTopKConformance(t *testing.T) {
	files, err := conformance.FindCases("/work/shared/conformance/cases", "/work/shared/conformance/xla-tests")
	if err != nil {
		t.Skipf("no shared cases: %v", err)
	}
	n := 0
	for _, f := range files {
		c, err := conformance.LoadCase(f)
		if err != nil || !(strings.Contains(c.HLO, " rng(") || strings.Contains(c.HLO, "rng-bit-generator(") || strings.Contains(c.HLO, "topk(")) {
			continue
		}
		m, err := hlotext.Parse(c.HLO, hlotext.Options{})
		if err != nil || hlo.Verify(m) != nil {
			continue
		}
		x, err := Compile(m, Options{Threads: 2})
		if err != nil {
			continue
		}
		n++
		for _, fb := range x.Fallbacks {
			if strings.HasPrefix(fb, "rng") || strings.HasPrefix(fb, "topk") {
				t.Errorf("%s: %s runs on the evaluator", c.Path, fb)
			}
		}
	}
	t.Logf("%d cases with rng or topk", n)
}

// ONNX TopK's comparators (the value with NaN greatest, descending or
// ascending; integers by value), which select through keys and the heap
// (topkLexKeys) rather than sorting the row, against the evaluator's
// stable sort: rows full of ties, NaNs of both signs, ±0, long and short.
func TestTopKKernelLexComparators(t *testing.T) {
	comps := map[string]string{
		"nan_first": "nan_first {\n  a = %[1]s[] parameter(0)\n  b = %[1]s[] parameter(1)\n" +
			"  gt = pred[] compare(a, b), direction=GT\n  an = pred[] compare(a, a), direction=NE\n" +
			"  bn = pred[] compare(b, b), direction=NE\n  nb = pred[] not(bn)\n  g = pred[] and(an, nb)\n" +
			"  ROOT c = pred[] or(g, gt)\n}",
		"nan_last": "nan_last {\n  a = %[1]s[] parameter(0)\n  b = %[1]s[] parameter(1)\n" +
			"  lt = pred[] compare(b, a), direction=GT\n  an = pred[] compare(a, a), direction=NE\n" +
			"  bn = pred[] compare(b, b), direction=NE\n  na = pred[] not(an)\n  g = pred[] and(na, bn)\n" +
			"  ROOT c = pred[] or(lt, g)\n}",
		"lt": "lt {\n  a = %[1]s[] parameter(0)\n  b = %[1]s[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=LT\n}",
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for name, c := range comps {
		types := []hlo.DType{hlo.F32, hlo.F64, hlo.F16, hlo.BF16}
		if name == "lt" {
			types = []hlo.DType{hlo.S32, hlo.S64, hlo.S8, hlo.U8, hlo.U16}
		}
		for _, typ := range types {
			for _, n := range []int{1, 7, 40, 300} {
				dims := []int64{int64(1 + rng.IntN(3)), int64(n)}
				x := hlo.ArrayShape(typ, dims...)
				in := topkInstr(t, x, rng.IntN(n+1), ", to_apply="+name, fmt.Sprintf(c, typ))
				if p, ok := planTopK(in, 2); !ok || p.keys == nil {
					t.Fatalf("%s on %s: not selected through keys", name, typ)
				}
				v := hlo.NewLiteral(x)
				topkValues(v, rng)
				runTopK(t, in, v, 2, true)
			}
		}
	}
}
