package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// The compiled reduce against the evaluator: exact for extrema, integer,
// pred and narrow-float reductions (the kernel folds in the evaluator's
// order and rounding), within a tolerance for f32/f64 sums and products.

// reducer is the text of a computation applying op to its parameters,
// swapped when swap is set.
func reducer(op string, t hlo.DType, swap bool) string {
	a, b := "a", "b"
	if swap {
		a, b = b, a
	}
	return fmt.Sprintf("red {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] %s(%s, %s)\n}", t, t, t, op, a, b)
}

func reduceOps(t hlo.DType) []string {
	switch {
	case t.IsPred(), t.IsInteger():
		return []string{"add", "multiply", "maximum", "minimum", "and", "or"}
	}
	return []string{"add", "multiply", "maximum", "minimum"}
}

// reduceText is a reduce of an operand of the given dimensions over dims.
func reduceText(t hlo.DType, in, dims []int64, op string, swap bool) string {
	var out []int64
	for d, n := range in {
		if !slices.Contains(dims, int64(d)) {
			out = append(out, n)
		}
	}
	return module([]string{shapeText(t, in), shapeText(t, nil)},
		fmt.Sprintf("%s reduce(p0, p1), dimensions=%s, to_apply=red", shapeText(t, out), intsText(dims)),
		reducer(op, t, swap))
}

// reduceClose allows float sums and products their reassociation error.
func reduceClose(t hlo.DType, op string, got, want float64, n int) bool {
	if got == want || (got != got && want != want) {
		return true
	}
	if (t != hlo.F32 && t != hlo.F64) || (op != "add" && op != "multiply") {
		return false
	}
	return math.Abs(got-want) <= 1e-5*(1+math.Abs(want))+1e-6*float64(n)
}

// checkReduce runs the reduce on each thread count against one
// evaluation; nan plants a NaN in float operands.
func checkReduce(t *testing.T, text, op string, threads []int, rng *rand.Rand, nan bool) {
	t.Helper()
	in := parseRoot(t, text)
	ops := randomOperands(in, rng)
	if nan && ops[0].Len() > 0 && ops[0].DType().IsFloat() {
		ops[0].SetFloat64(rng.IntN(ops[0].Len()), math.NaN())
	}
	n := ops[0].Len()/max(int(in.Shape.NumElements()), 1) + 1
	compareReduce(t, in, ops, threads, func(got, want float64) bool {
		return reduceClose(in.Shape.DType, op, got, want, n)
	})
}

// compareReduce runs in's kernel on ops on each thread count against
// the evaluator: every element the same value, or close by near (nil:
// exact).
func compareReduce(t *testing.T, in *hlo.Instruction, ops []*hlo.Literal, threads []int, near func(got, want float64) bool) {
	t.Helper()
	var ev eval.Evaluator
	want, err := ev.Instruction(in, ops)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range threads {
		k, ok := lowerReduce(in, th)
		if !ok {
			t.Fatalf("%s: no kernel", in)
		}
		got := poisoned(in.Shape)
		if err := k(got, ops); err != nil {
			t.Fatal(err)
		}
		for i := range got.Len() {
			if !sameValue(got, want, i) && (near == nil || !near(got.GetFloat64(i), want.GetFloat64(i))) {
				t.Fatalf("%s dims %v, %d threads: element %d is %v, want %v", in, in.Dimensions(), th, i, got.GetFloat64(i), want.GetFloat64(i))
			}
		}
	}
}

func TestLowerReduceRandom(t *testing.T) {
	types := []hlo.DType{hlo.F32, hlo.BF16, hlo.F16, hlo.S32, hlo.Pred, hlo.F64, hlo.U8, hlo.S64}
	rng := rand.New(rand.NewPCG(11, 11))
	for range 150 {
		for _, dt := range types {
			in := randDims(rng, rng.IntN(5))
			var dims []int64
			for _, d := range rng.Perm(len(in)) {
				if rng.IntN(2) == 0 {
					dims = append(dims, int64(d))
				}
			}
			ops := reduceOps(dt)
			op := ops[rng.IntN(len(ops))]
			checkReduce(t, reduceText(dt, in, dims, op, rng.IntN(2) == 0), op, []int{1 + rng.IntN(3)}, rng, rng.IntN(4) == 0)
		}
	}
}

// The row and column loops, big enough to run on several threads.
func TestLowerReduceRowsCols(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	shapes := []struct{ in, dims []int64 }{
		{[]int64{300, 300}, []int64{1}}, {[]int64{300, 300}, []int64{0}}, {[]int64{4, 100, 200}, []int64{1}},
		{[]int64{70000}, []int64{0}}, {[]int64{20, 30, 200}, []int64{1, 2}}, {[]int64{20, 30, 200}, []int64{0, 1}},
		{[]int64{3, 5, 7000}, []int64{0, 2}}, {[]int64{0, 5}, []int64{0}}, {[]int64{5, 0}, []int64{1}},
	}
	for _, s := range shapes {
		for _, dt := range []hlo.DType{hlo.F32, hlo.BF16, hlo.S32} {
			for _, op := range []string{"add", "maximum"} {
				checkReduce(t, reduceText(dt, s.in, s.dims, op, false), op, []int{1, 2, 3}, rng, op != "add")
			}
		}
	}
}

// Sums are deterministic: the same bits on every run for a thread count.
func TestLowerReduceDeterministic(t *testing.T) {
	in := parseRoot(t, reduceText(hlo.F32, []int64{512, 513}, []int64{1}, "add", false))
	ops := randomOperands(in, rand.New(rand.NewPCG(1, 2)))
	k, _ := lowerReduce(in, 2)
	first := hlo.NewLiteral(in.Shape)
	if err := k(first, ops); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again := poisoned(in.Shape)
		if err := k(again, ops); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(first.Data().([]float32), again.Data().([]float32)) {
			t.Fatal("two runs differ")
		}
	}
}

// Variadic reduces and reducers that are more than one op go to the
// evaluator.
func TestLowerReduceDeclines(t *testing.T) {
	sub := reduceText(hlo.F32, []int64{4, 3}, []int64{1}, "subtract", false)
	andF := reduceText(hlo.F32, []int64{4, 3}, []int64{1}, "and", false)
	c64 := reduceText(hlo.C64, []int64{4, 3}, []int64{1}, "add", false)
	for _, text := range []string{sub, andF, c64} {
		m := parseRootOrNil(text)
		if m == nil {
			continue // the parser already refuses it
		}
		if _, ok := lowerReduce(m, 1); ok {
			t.Errorf("lowered\n%s", text)
		}
	}
}

func parseRootOrNil(text string) *hlo.Instruction {
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		return nil
	}
	return m.Entry.Root
}

func BenchmarkReduceRows4096(b *testing.B) {
	in := parseRootB(b, reduceText(hlo.F32, []int64{4096, 4096}, []int64{1}, "add", false))
	benchKernel(b, lowerReduce, in, 4096*4096*4)
}

func BenchmarkReduceCols4096(b *testing.B) {
	in := parseRootB(b, reduceText(hlo.F32, []int64{4096, 4096}, []int64{0}, "add", false))
	benchKernel(b, lowerReduce, in, 4096*4096*4)
}

// reduceWindowCase draws a window per dimension (some left alone, as
// pooling leaves channels) and returns the module text.
func reduceWindowCase(rng *rand.Rand, t hlo.DType, op string) string {
	in := randDims(rng, 1+rng.IntN(4))
	out := make([]int64, len(in))
	var size, stride, pad, ld, rd []string
	for d, n := range in {
		w := hlo.WindowDim{Size: 1, Stride: 1, LhsDilation: 1, RhsDilation: 1}
		if d < len(in)-1 || rng.IntN(2) == 0 {
			w = hlo.WindowDim{Size: rng.Int64N(4), Stride: 1 + rng.Int64N(3), PadLo: rng.Int64N(3), PadHi: rng.Int64N(3),
				LhsDilation: 1 + rng.Int64N(2), RhsDilation: 1 + rng.Int64N(2)}
		}
		padded := w.PadLo + w.PadHi
		if n > 0 {
			padded += (n-1)*w.LhsDilation + 1
		}
		eff := max((w.Size-1)*w.RhsDilation+1, 0)
		if w.Size == 0 {
			eff = 0
		}
		if padded >= eff {
			out[d] = (padded-eff)/w.Stride + 1
		}
		size, stride = append(size, fmt.Sprint(w.Size)), append(stride, fmt.Sprint(w.Stride))
		pad = append(pad, fmt.Sprintf("%d_%d", w.PadLo, w.PadHi))
		ld, rd = append(ld, fmt.Sprint(w.LhsDilation)), append(rd, fmt.Sprint(w.RhsDilation))
	}
	win := fmt.Sprintf("window={size=%s stride=%s pad=%s lhs_dilate=%s rhs_dilate=%s}", strings.Join(size, "x"),
		strings.Join(stride, "x"), strings.Join(pad, "x"), strings.Join(ld, "x"), strings.Join(rd, "x"))
	return module([]string{shapeText(t, in), shapeText(t, nil)},
		fmt.Sprintf("%s reduce-window(p0, p1), %s, to_apply=red", shapeText(t, out), win), reducer(op, t, false))
}

func TestLowerReduceWindowRandom(t *testing.T) {
	types := []hlo.DType{hlo.F32, hlo.BF16, hlo.S32, hlo.Pred, hlo.F64, hlo.U8}
	rng := rand.New(rand.NewPCG(17, 17))
	for range 100 {
		for _, dt := range types {
			ops := reduceOps(dt)
			op := ops[rng.IntN(len(ops))]
			checkReduce(t, reduceWindowCase(rng, dt, op), op, []int{1, 2}, rng, rng.IntN(4) == 0)
		}
	}
}

// Max pooling of an NHWC image, big enough to run on two threads.
func TestLowerReduceWindowPool(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 19))
	for _, dt := range []hlo.DType{hlo.F32, hlo.BF16} {
		// f32 runs of channels fold on the vector kernels, every op.
		for _, op := range []string{"maximum", "minimum", "add", "multiply"} {
			text := module([]string{shapeText(dt, []int64{2, 56, 56, 32}), shapeText(dt, nil)},
				shapeText(dt, []int64{2, 28, 28, 32})+" reduce-window(p0, p1), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, to_apply=red",
				reducer(op, dt, false))
			checkReduce(t, text, op, []int{1, 2}, rng, true)
		}
	}
}

// kernelBackend runs a module's entry computation instruction by
// instruction: on the compiled movement and reduce kernels where they
// exist (into poisoned results), on the evaluator otherwise.
type kernelBackend struct{ lowered int }

func (*kernelBackend) Name() string { return "cpu-kernels" }

func (b *kernelBackend) Run(m *hlo.Module, args []*hlo.Literal) (*hlo.Literal, error) {
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
		k, ok := lowerMovement(in, 2)
		if !ok {
			k, ok = lowerReduce(in, 2)
		}
		if !ok {
			v, err := ev.Instruction(in, ops)
			if err != nil {
				return nil, err
			}
			vals[in] = v
			continue
		}
		b.lowered++
		out := poisoned(in.Shape)
		if err := k(out, ops); err != nil {
			return nil, err
		}
		vals[in] = out
	}
	return vals[m.Entry.Root], nil
}

// The shared conformance cases of the ops these kernels cover.
func TestLowerConformance(t *testing.T) {
	const root = "/work/shared/conformance/cases"
	var dirs []string
	for _, op := range []string{"broadcast", "transpose", "slice", "concatenate", "pad", "reverse", "iota", "copy",
		"reshape", "bitcast", "dynamic-slice", "dynamic-update-slice", "select", "convert", "reduce", "reduce-window"} {
		if _, err := os.Stat(filepath.Join(root, op)); err == nil {
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
	b := &kernelBackend{}
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

// Windows without operand dilation whose outputs lie partly inside the
// operand (folded through windowPlan.rel) and partly over padding (the
// recursion), bit for bit the evaluator's: the fold keeps its
// row-major order, so sums match exactly too. Among them a 3-D max pool
// as ONNX MaxPool3d writes it, runs of fewer channels than a vector.
func TestLowerReduceWindowInside(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 23))
	for _, c := range []struct {
		dt      hlo.DType
		op      string
		in, out []int64
		window  string
	}{
		{hlo.F32, "maximum", []int64{1, 4, 20, 20, 2}, []int64{1, 2, 10, 10, 2}, "size=1x2x2x2x1 stride=1x2x2x2x1"},
		{hlo.F32, "minimum", []int64{2, 6, 6, 3}, []int64{2, 3, 3, 3}, "size=1x2x2x1 stride=1x2x2x1"},
		{hlo.F32, "add", []int64{2, 9, 9, 3}, []int64{2, 9, 9, 3}, "size=1x3x3x1 pad=0_0x1_1x1_1x0_0"},
		{hlo.F32, "add", []int64{2, 11, 7}, []int64{2, 5, 3}, "size=1x3x3 stride=1x2x2 rhs_dilate=1x2x1"},
		{hlo.S32, "add", []int64{3, 40}, []int64{3, 13}, "size=1x4 stride=1x3"},
		{hlo.F64, "multiply", []int64{5, 6, 2}, []int64{5, 6, 2}, "size=3x2x1 pad=1_1x0_1x0_0"},
		{hlo.BF16, "minimum", []int64{2, 8, 8, 4}, []int64{2, 4, 4, 4}, "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_0x1_0x0_0"},
	} {
		text := module([]string{shapeText(c.dt, c.in), shapeText(c.dt, nil)},
			shapeText(c.dt, c.out)+" reduce-window(p0, p1), window={"+c.window+"}, to_apply=red", reducer(c.op, c.dt, false))
		in := parseRoot(t, text)
		ops := randomOperands(in, rng)
		if c.dt == hlo.F32 {
			// NaNs: two of different payloads in the first window (its
			// first element and the next pixel's), others anywhere.
			ops[0].SetBits(0, 0x7fc00001)
			ops[0].SetBits(int(c.in[len(c.in)-1]), 0xffc00002)
			for _, bits := range []uint64{0x7fc00003, 0xffc00004} {
				ops[0].SetBits(rng.IntN(ops[0].Len()), bits)
			}
		}
		compareReduce(t, in, ops, []int{1, 2}, nil)
	}
}
