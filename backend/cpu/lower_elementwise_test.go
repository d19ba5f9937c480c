package cpu

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// The compiled elementwise kernels against the evaluator, bit for bit, on
// operands rich in edge values (0, ±1, the type's extremes, shift amounts
// around the width, ±0, ±Inf, NaNs of both signs). Each case runs into a
// result full of 0xff bytes, and again in place: the result sharing the
// storage of each operand elementwiseInPlace offers.

var (
	ewIntTypes  = []hlo.DType{hlo.S4, hlo.S8, hlo.S16, hlo.S32, hlo.S64, hlo.U4, hlo.U8, hlo.U16, hlo.U32, hlo.U64}
	ewIntBinary = []string{"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
		"and", "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical", "power", "mulhi"}
	ewIntUnary    = []string{"negate", "not", "abs", "sign", "popcnt", "count-leading-zeros"}
	ewPredBinary  = []string{"and", "or", "xor", "maximum", "minimum", "add", "multiply", "subtract"}
	ewFloatBinary = []string{"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
		"power", "atan2"}
	ewFloatUnary = []string{"negate", "abs", "sign", "sqrt", "rsqrt", "floor", "ceil", "round-nearest-afz",
		"round-nearest-even", "cbrt", "cosine", "erf", "exponential", "exponential-minus-one", "log",
		"log-plus-one", "logistic", "sine", "tan", "tanh", "atan", "atanh", "cosh", "sinh", "acos",
		"acosh", "asin", "asinh"}
	ewDirections = []string{"EQ", "NE", "LT", "LE", "GT", "GE"}
)

// ewCases lists the instructions covered, as module texts over n elements.
func ewCases(n int) []string {
	var cases []string
	add := func(t hlo.DType, arity int, root string) {
		params := make([]string, arity)
		for i := range params {
			params[i] = fmt.Sprintf("%s[%d]", t, n)
		}
		cases = append(cases, module(params, root))
	}
	shape := func(t hlo.DType) string { return fmt.Sprintf("%s[%d]", t, n) }
	for _, t := range ewIntTypes {
		for _, op := range ewIntBinary {
			add(t, 2, fmt.Sprintf("%s %s(p0, p1)", shape(t), op))
		}
		for _, op := range ewIntUnary {
			add(t, 1, fmt.Sprintf("%s %s(p0)", shape(t), op))
		}
		add(t, 3, fmt.Sprintf("%s clamp(p0, p1, p2)", shape(t)))
	}
	for _, op := range ewPredBinary {
		add(hlo.Pred, 2, fmt.Sprintf("%s %s(p0, p1)", shape(hlo.Pred), op))
	}
	add(hlo.Pred, 1, fmt.Sprintf("%s not(p0)", shape(hlo.Pred)))
	add(hlo.Pred, 3, fmt.Sprintf("%s clamp(p0, p1, p2)", shape(hlo.Pred)))
	for _, t := range []hlo.DType{hlo.F64, hlo.F32} {
		for _, op := range ewFloatBinary {
			add(t, 2, fmt.Sprintf("%s %s(p0, p1)", shape(t), op))
		}
		for _, op := range ewFloatUnary {
			add(t, 1, fmt.Sprintf("%s %s(p0)", shape(t), op))
		}
		add(t, 3, fmt.Sprintf("%s clamp(p0, p1, p2)", shape(t)))
	}
	for _, t := range append([]hlo.DType{hlo.Pred, hlo.F64, hlo.F32, hlo.BF16, hlo.F16}, ewIntTypes...) {
		for _, dir := range ewDirections {
			add(t, 2, fmt.Sprintf("%s compare(p0, p1), direction=%s", shape(hlo.Pred), dir))
			if t.IsFloat() {
				add(t, 2, fmt.Sprintf("%s compare(p0, p1), direction=%s, type=TOTALORDER", shape(hlo.Pred), dir))
			}
		}
		if t.IsFloat() {
			add(t, 1, fmt.Sprintf("%s is-finite(p0)", shape(hlo.Pred)))
		}
	}
	return cases
}

func TestLowerElementwiseRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	for _, n := range []int{0, 1, 9, 300} {
		for _, text := range ewCases(n) {
			checkElementwise(t, parseRoot(t, text), rng, 1+rng.IntN(2))
		}
	}
}

// Arrays big enough to be split across threads.
func TestLowerElementwiseLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	n := ewParallelMin + 4099
	for _, text := range []string{
		module([]string{fmt.Sprintf("s32[%d]", n), fmt.Sprintf("s32[%d]", n)}, fmt.Sprintf("s32[%d] divide(p0, p1)", n)),
		module([]string{fmt.Sprintf("u8[%d]", n), fmt.Sprintf("u8[%d]", n), fmt.Sprintf("u8[%d]", n)}, fmt.Sprintf("u8[%d] clamp(p0, p1, p2)", n)),
		module([]string{fmt.Sprintf("f32[%d]", n), fmt.Sprintf("f32[%d]", n)}, fmt.Sprintf("pred[%d] compare(p0, p1), direction=LT, type=TOTALORDER", n)),
		module([]string{fmt.Sprintf("s8[%d]", n), fmt.Sprintf("s8[%d]", n)}, fmt.Sprintf("pred[%d] compare(p0, p1), direction=GE", n)),
		module([]string{fmt.Sprintf("f64[%d]", n)}, fmt.Sprintf("f64[%d] tanh(p0)", n)),
	} {
		checkElementwise(t, parseRoot(t, text), rng, 2)
	}
}

func TestLowerElementwiseDeclines(t *testing.T) {
	for _, text := range []string{
		module([]string{"c64[4]", "c64[4]"}, "pred[4] compare(p0, p1), direction=LT"),
		module([]string{"bf16[4]", "bf16[4]"}, "bf16[4] add(p0, p1)"),
		module([]string{"f16[4]"}, "f16[4] exponential(p0)"),
		module([]string{"bf16[]", "bf16[4]", "bf16[]"}, "bf16[4] clamp(p0, p1, p2)"),
		module([]string{"f8e5m2[4]", "f8e5m2[4]"}, "pred[4] compare(p0, p1), direction=LT"),
		module([]string{"pred[4]", "s32[4]", "s32[4]"}, "s32[4] select(p0, p1, p2)"),
		module([]string{"f32[4]", "f32[4]"}, "f32[4] and(p0, p1)"),
	} {
		in := parseRoot(t, text)
		if _, ok := lowerElementwise(in, 1); ok {
			t.Errorf("%s: lowered, want declined", in)
		}
	}
}

// checkElementwise runs in's kernel into garbage and in place and
// compares both with the evaluator bit for bit.
func checkElementwise(t *testing.T, in *hlo.Instruction, rng *rand.Rand, threads int) {
	t.Helper()
	k, ok := lowerElementwise(in, threads)
	if !ok {
		t.Fatalf("%s: no kernel", in)
	}
	ops := make([]*hlo.Literal, len(in.Operands))
	for i, o := range in.Operands {
		ops[i] = edgeLiteral(o.Shape, rng)
	}
	var ev eval.Evaluator
	want, err := ev.Instruction(in, ops)
	if err != nil {
		t.Fatalf("%s: evaluator: %v", in, err)
	}
	got := garbage(in.Shape)
	if got == nil { // no elements: no buffer either
		got = hlo.NewLiteral(in.Shape)
	}
	if err := k(got, ops); err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	checkBits(t, in, "", got, want)
	for _, i := range elementwiseInPlace(in) {
		if want.Len() == 0 {
			break
		}
		mem := alignedBytes(arrayBytes(in.Shape))
		copy(mem, bytesOf(ops[i]))
		aliased := slices.Clone(ops)
		aliased[i] = viewBytes(ops[i].Shape(), mem)
		out := viewBytes(in.Shape, mem)
		if err := k(out, aliased); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		checkBits(t, in, fmt.Sprintf(" in place of operand %d", i), out, want)
	}
}

func checkBits(t *testing.T, in *hlo.Instruction, how string, got, want *hlo.Literal) {
	t.Helper()
	if bytes.Equal(bytesOf(got), bytesOf(want)) {
		return
	}
	for i := range want.Len() {
		if got.Bits(i) != want.Bits(i) {
			t.Fatalf("%s%s: element %d has bits %#x, want %#x", in, how, i, got.Bits(i), want.Bits(i))
		}
	}
	t.Fatalf("%s%s: bytes differ", in, how)
}

// edgeLiteral is a random literal of s, half of its elements edge values.
func edgeLiteral(s hlo.Shape, rng *rand.Rand) *hlo.Literal {
	l := hlo.NewLiteral(s)
	w := s.DType.Bits()
	switch d := l.Data().(type) {
	case []bool:
		for i := range d {
			d[i] = rng.IntN(2) == 0
		}
	case []int8:
		edgeInts(d, w, rng)
	case []int16:
		edgeInts(d, w, rng)
	case []int32:
		edgeInts(d, w, rng)
	case []int64:
		edgeInts(d, w, rng)
	case []uint8:
		edgeInts(d, w, rng)
	case []uint16:
		if f, ok := narrowFloat(s.DType); ok {
			for i := range d {
				d[i] = uint16(rng.Uint32())
				if rng.IntN(2) == 0 {
					d[i] = f.FromFloat64(edgeFloat(rng))
				}
			}
			break
		}
		edgeInts(d, w, rng)
	case []uint32:
		edgeInts(d, w, rng)
	case []uint64:
		edgeInts(d, w, rng)
	case []float32:
		for i := range d {
			d[i] = float32(edgeFloat(rng))
		}
	case []float64:
		for i := range d {
			d[i] = edgeFloat(rng)
		}
	}
	return l
}

// edgeInts fills d with width-bit values: the extremes, ±1, small
// amounts around every shift width, and random bits.
func edgeInts[T integer](d []T, width int, rng *rand.Rand) {
	var z T
	signed := ^z < z
	for i := range d {
		var p uint64
		switch rng.IntN(7) {
		case 0:
			p = 0
		case 1:
			p = 1
		case 2:
			p = math.MaxUint64
		case 3:
			p = 1 << (width - 1)
		case 4:
			p = 1<<(width-1) - 1
		case 5:
			p = uint64(rng.IntN(70)) - 3
		default:
			p = rng.Uint64()
		}
		if signed {
			d[i] = T(int64(p<<(64-width)) >> (64 - width))
		} else {
			d[i] = T(p & (math.MaxUint64 >> (64 - width)))
		}
	}
}

var ewFloatEdges = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2.5, -2.5, 2,
	math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(math.NaN(), -1),
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, math.MaxFloat32, 1e-40, 100, -1000}

func edgeFloat(rng *rand.Rand) float64 {
	if rng.IntN(2) == 0 {
		return ewFloatEdges[rng.IntN(len(ewFloatEdges))]
	}
	return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(9)-4))
}

func BenchmarkElementwiseAddS32(b *testing.B) {
	n := 4 << 20
	in := parseRootB(b, module([]string{fmt.Sprintf("s32[%d]", n), fmt.Sprintf("s32[%d]", n)}, fmt.Sprintf("s32[%d] add(p0, p1)", n)))
	benchKernel(b, lowerElementwise, in, int64(12*n))
}

func BenchmarkElementwiseCompareF32(b *testing.B) {
	n := 4 << 20
	in := parseRootB(b, module([]string{fmt.Sprintf("f32[%d]", n), fmt.Sprintf("f32[%d]", n)}, fmt.Sprintf("pred[%d] compare(p0, p1), direction=LT", n)))
	benchKernel(b, lowerElementwise, in, int64(9*n))
}

// ewBackend runs a module's entry computation instruction by instruction,
// elementwise ones on the compiled kernels (into garbage results), the
// rest on the evaluator.
type ewBackend struct{ lowered int }

func (*ewBackend) Name() string { return "cpu-elementwise" }

func (b *ewBackend) Run(m *hlo.Module, args []*hlo.Literal) (*hlo.Literal, error) {
	vals := map[*hlo.Instruction]*hlo.Literal{}
	var ev eval.Evaluator
	for _, in := range m.Entry.Instructions {
		ops := make([]*hlo.Literal, len(in.Operands))
		for i, o := range in.Operands {
			ops[i] = vals[o]
		}
		if in.Opcode == hlo.OpParameter {
			vals[in] = args[in.ParamNumber]
			continue
		}
		k, ok := lowerElementwise(in, 2)
		if !ok || in.Shape.NumElements() == 0 {
			v, err := ev.Instruction(in, ops)
			if err != nil {
				return nil, err
			}
			vals[in] = v
			continue
		}
		b.lowered++
		out := garbage(in.Shape)
		if err := k(out, ops); err != nil {
			return nil, err
		}
		vals[in] = out
	}
	return vals[m.Entry.Root], nil
}

// The shared conformance cases of the elementwise ops.
func TestLowerElementwiseConformance(t *testing.T) {
	const root = "/work/shared/conformance/cases"
	var dirs []string
	for _, op := range slices.Concat(ewIntBinary, ewIntUnary, ewFloatBinary, ewFloatUnary,
		[]string{"clamp", "compare", "is-finite"}) {
		if _, err := os.Stat(filepath.Join(root, op)); err == nil && !slices.Contains(dirs, filepath.Join(root, op)) {
			dirs = append(dirs, filepath.Join(root, op))
		}
	}
	if len(dirs) == 0 {
		t.Skip("no conformance cases here")
	}
	files, err := conformance.FindCases(dirs...)
	if err != nil {
		t.Fatal(err)
	}
	b := &ewBackend{}
	r := &conformance.Runner{Backend: b}
	for _, f := range files {
		c, err := conformance.LoadCase(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.RunCase(c); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	t.Logf("%d cases, %d instructions on compiled kernels", len(files), b.lowered)
}
