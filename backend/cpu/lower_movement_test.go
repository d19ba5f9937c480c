package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// The compiled movement kernels against the evaluator on random shapes:
// every case runs the kernel into a result pre-filled with 0xff bytes (NaN
// for floats), so an element left unwritten shows as a mismatch.

// moveTypes covers every storage width (pred 1, bf16 2, f32/s32 4, f64 8,
// c128 16) and the conversions' corner types.
var moveTypes = []hlo.DType{hlo.F32, hlo.BF16, hlo.S32, hlo.Pred, hlo.F64, hlo.U8, hlo.C128}

// lowerFunc is lowerMovement or lowerReduce.
type lowerFunc func(in *hlo.Instruction, threads int) (kernelFunc, bool)

func shapeText(t hlo.DType, dims []int64) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = fmt.Sprint(d)
	}
	return fmt.Sprintf("%s[%s]", t, strings.Join(s, ","))
}

func intsText(v []int64) string {
	s := make([]string, len(v))
	for i, d := range v {
		s[i] = fmt.Sprint(d)
	}
	return "{" + strings.Join(s, ",") + "}"
}

// randDims returns rank dimensions, mostly 1..7, sometimes 0.
func randDims(rng *rand.Rand, rank int) []int64 {
	d := make([]int64, rank)
	for i := range d {
		d[i] = []int64{0, 1, 1, 2, 3, 4, 5, 7}[rng.IntN(8)]
		if d[i] == 0 && rng.IntN(3) > 0 {
			d[i] = 3
		}
	}
	return d
}

// parseRoot parses a module of parameters and one root instruction (plus
// the computations it calls) and returns the root.
func parseRoot(t *testing.T, text string) *hlo.Instruction {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return m.Entry.Root
}

// module writes an entry computation with the given parameter shapes and
// root instruction text (operands p0, p1, ...).
func module(params []string, root string, comps ...string) string {
	var b strings.Builder
	b.WriteString("HloModule m\n")
	for _, c := range comps {
		b.WriteString(c + "\n")
	}
	b.WriteString("ENTRY e {\n")
	for i, p := range params {
		fmt.Fprintf(&b, "  p%d = %s parameter(%d)\n", i, p, i)
	}
	fmt.Fprintf(&b, "  ROOT r = %s\n}\n", root)
	return b.String()
}

// randomOperands are random values for the root's operands.
func randomOperands(in *hlo.Instruction, rng *rand.Rand) []*hlo.Literal {
	ops := make([]*hlo.Literal, len(in.Operands))
	for i, o := range in.Operands {
		ops[i] = eval.RandomLiteral(o.Shape, rng)
	}
	return ops
}

// poisoned returns a literal of shape s whose bytes are all 0xff.
func poisoned(s hlo.Shape) *hlo.Literal {
	l := hlo.NewLiteral(s)
	b := bytesOf(l)
	for i := range b {
		b[i] = 0xff
	}
	if d, ok := l.Data().([]bool); ok {
		for i := range d {
			d[i] = i%2 == 0 // 0xff is not a Go bool
		}
	}
	return l
}

// runKernel lowers in (failing the test if it cannot), runs it into a
// garbage result and returns that with the evaluator's.
func runKernel(t *testing.T, lower lowerFunc, in *hlo.Instruction, ops []*hlo.Literal, threads int) (got, want *hlo.Literal) {
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
	got = poisoned(in.Shape)
	if err := k(got, ops); err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	return got, want
}

// sameValue compares element i exactly; NaNs of any payload are equal.
func sameValue(a, b *hlo.Literal, i int) bool {
	if a.DType().IsFloat() {
		x, y := a.GetFloat64(i), b.GetFloat64(i)
		return x == y || (x != x && y != y)
	}
	if a.DType().IsComplex() {
		return a.GetComplex128(i) == b.GetComplex128(i)
	}
	return a.Bits(i) == b.Bits(i)
}

func checkExact(t *testing.T, in *hlo.Instruction, got, want *hlo.Literal) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("%s: %d elements, want %d", in, got.Len(), want.Len())
	}
	for i := range got.Len() {
		if !sameValue(got, want, i) {
			t.Fatalf("%s %v: element %d is %v, want %v", in, in.Attrs, i, got.GetFloat64(i), want.GetFloat64(i))
		}
	}
}

// movementCase is one random instruction of an op: its parameter shapes
// and root text, or ok false when the draw does not make one.
type movementCase func(rng *rand.Rand, t hlo.DType) (params []string, root string)

func TestLowerMovementRandom(t *testing.T) {
	cases := map[string]movementCase{
		"broadcast": caseBroadcast, "transpose": caseTranspose, "reverse": caseReverse,
		"slice": caseSlice, "concatenate": caseConcat, "pad": casePad, "iota": caseIota,
		"copy": caseCopy, "reshape": caseReshape, "bitcast": caseBitcast,
		"dynamic-slice": caseDynamicSlice, "dynamic-update-slice": caseDUS, "select": caseSelect,
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(name))))
			for range 60 {
				for _, dt := range moveTypes {
					params, root := c(rng, dt)
					in := parseRoot(t, module(params, root))
					ops := randomOperands(in, rng)
					randomStarts(in, ops, rng)
					got, want := runKernel(t, lowerMovement, in, ops, 1+rng.IntN(3))
					checkExact(t, in, got, want)
				}
			}
		})
	}
}

// randomStarts gives dynamic-(update-)slice start indices from below 0 to
// beyond the end, so clamping is exercised.
func randomStarts(in *hlo.Instruction, ops []*hlo.Literal, rng *rand.Rand) {
	first := map[hlo.Opcode]int{hlo.OpDynamicSlice: 1, hlo.OpDynamicUpdateSlice: 2}[in.Opcode]
	if first == 0 {
		return
	}
	for i := first; i < len(ops); i++ {
		ops[i].SetInt64(0, int64(rng.IntN(14)-4))
	}
}

func caseBroadcast(rng *rand.Rand, t hlo.DType) ([]string, string) {
	out := randDims(rng, rng.IntN(5))
	var dims, in []int64
	for d, n := range out {
		if rng.IntN(2) == 0 {
			dims, in = append(dims, int64(d)), append(in, n)
		}
	}
	return []string{shapeText(t, in)}, fmt.Sprintf("%s broadcast(p0), dimensions=%s", shapeText(t, out), intsText(dims))
}

func caseTranspose(rng *rand.Rand, t hlo.DType) ([]string, string) {
	in := randDims(rng, rng.IntN(5))
	if rng.IntN(4) == 0 {
		in = []int64{int64(20 + rng.IntN(60)), int64(20 + rng.IntN(60))} // tiled
		if rng.IntN(2) == 0 {
			in = append(in, 3)
		}
	}
	perm := make([]int64, len(in))
	for i, p := range rng.Perm(len(in)) {
		perm[i] = int64(p)
	}
	out := make([]int64, len(in))
	for i, p := range perm {
		out[i] = in[p]
	}
	return []string{shapeText(t, in)}, fmt.Sprintf("%s transpose(p0), dimensions=%s", shapeText(t, out), intsText(perm))
}

func caseReverse(rng *rand.Rand, t hlo.DType) ([]string, string) {
	in := randDims(rng, rng.IntN(5))
	var dims []int64
	for d := range in {
		if rng.IntN(2) == 0 {
			dims = append(dims, int64(d))
		}
	}
	return []string{shapeText(t, in)}, fmt.Sprintf("%s reverse(p0), dimensions=%s", shapeText(t, in), intsText(dims))
}

func caseSlice(rng *rand.Rand, t hlo.DType) ([]string, string) {
	in := randDims(rng, rng.IntN(5))
	out := make([]int64, len(in))
	var sl []string
	for d, n := range in {
		start := rng.Int64N(n + 1)
		limit := start + rng.Int64N(n-start+1)
		stride := 1 + rng.Int64N(3)
		out[d] = (limit - start + stride - 1) / stride
		sl = append(sl, fmt.Sprintf("[%d:%d:%d]", start, limit, stride))
	}
	return []string{shapeText(t, in)}, fmt.Sprintf("%s slice(p0), slice={%s}", shapeText(t, out), strings.Join(sl, ","))
}

func caseConcat(rng *rand.Rand, t hlo.DType) ([]string, string) {
	base := randDims(rng, 1+rng.IntN(4))
	d := rng.IntN(len(base))
	out := slices.Clone(base)
	out[d] = 0
	var params, names []string
	for i := range 1 + rng.IntN(3) {
		s := slices.Clone(base)
		s[d] = rng.Int64N(4)
		out[d] += s[d]
		params, names = append(params, shapeText(t, s)), append(names, fmt.Sprintf("p%d", i))
	}
	return params, fmt.Sprintf("%s concatenate(%s), dimensions={%d}", shapeText(t, out), strings.Join(names, ", "), d)
}

func casePad(rng *rand.Rand, t hlo.DType) ([]string, string) {
	in := randDims(rng, 1+rng.IntN(4)) // the text has no padding of rank 0
	out := make([]int64, len(in))
	var cfg []string
	for d, n := range in {
		lo, hi, interior := rng.Int64N(5)-2, rng.Int64N(5)-2, rng.Int64N(3)
		out[d] = lo + hi + n + max(n-1, 0)*interior
		if out[d] < 0 {
			lo, hi = 0, 0
			out[d] = n + max(n-1, 0)*interior
		}
		cfg = append(cfg, fmt.Sprintf("%d_%d_%d", lo, hi, interior))
	}
	return []string{shapeText(t, in), shapeText(t, nil)},
		fmt.Sprintf("%s pad(p0, p1), padding=%s", shapeText(t, out), strings.Join(cfg, "x"))
}

func caseIota(rng *rand.Rand, t hlo.DType) ([]string, string) {
	out := randDims(rng, 1+rng.IntN(4))
	if rng.IntN(3) == 0 {
		out[rng.IntN(len(out))] = 300 // beyond bf16's and u8's exact range
	}
	return nil, fmt.Sprintf("%s iota(), iota_dimension=%d", shapeText(t, out), rng.IntN(len(out)))
}

func caseCopy(rng *rand.Rand, t hlo.DType) ([]string, string) {
	in := randDims(rng, rng.IntN(5))
	return []string{shapeText(t, in)}, fmt.Sprintf("%s copy(p0)", shapeText(t, in))
}

func caseReshape(rng *rand.Rand, t hlo.DType) ([]string, string) {
	in := randDims(rng, rng.IntN(5))
	out := slices.Clone(in)
	slices.Reverse(out)
	if rng.IntN(2) == 0 {
		out = []int64{hlo.ArrayShape(t, in...).NumElements()}
	}
	return []string{shapeText(t, in)}, fmt.Sprintf("%s reshape(p0)", shapeText(t, out))
}

func caseBitcast(rng *rand.Rand, t hlo.DType) ([]string, string) {
	p, root := caseReshape(rng, t)
	return p, strings.Replace(root, "reshape", "bitcast", 1)
}

func caseDynamicSlice(rng *rand.Rand, t hlo.DType) ([]string, string) {
	in := randDims(rng, 1+rng.IntN(4))
	sizes := make([]int64, len(in))
	params := []string{shapeText(t, in)}
	var names []string
	for d, n := range in {
		sizes[d] = rng.Int64N(n + 1)
		params, names = append(params, "s32[]"), append(names, fmt.Sprintf("p%d", d+1))
	}
	return params, fmt.Sprintf("%s dynamic-slice(p0, %s), dynamic_slice_sizes=%s",
		shapeText(t, sizes), strings.Join(names, ", "), intsText(sizes))
}

func caseDUS(rng *rand.Rand, t hlo.DType) ([]string, string) {
	in := randDims(rng, 1+rng.IntN(4))
	upd := make([]int64, len(in))
	params := []string{shapeText(t, in), ""}
	var names []string
	for d, n := range in {
		upd[d] = rng.Int64N(n + 1)
		params, names = append(params, "s32[]"), append(names, fmt.Sprintf("p%d", d+2))
	}
	params[1] = shapeText(t, upd)
	return params, fmt.Sprintf("%s dynamic-update-slice(p0, p1, %s)", shapeText(t, in), strings.Join(names, ", "))
}

func caseSelect(rng *rand.Rand, t hlo.DType) ([]string, string) {
	out := randDims(rng, rng.IntN(5))
	pick := func(dt hlo.DType) string {
		if rng.IntN(4) == 0 {
			return shapeText(dt, nil)
		}
		return shapeText(dt, out)
	}
	return []string{pick(hlo.Pred), pick(t), pick(t)}, fmt.Sprintf("%s select(p0, p1, p2)", shapeText(t, out))
}

// In place, dynamic-update-slice writes only the update: operand 0 is the
// result's own storage, so the rest must be left as it is.
func TestLowerDynamicUpdateSliceInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 100 {
		for _, dt := range moveTypes {
			params, root := caseDUS(rng, dt)
			in := parseRoot(t, module(params, root))
			ops := randomOperands(in, rng)
			randomStarts(in, ops, rng)
			k, ok := lowerMovement(in, 2)
			if !ok {
				t.Fatalf("%s: no kernel", in)
			}
			var ev eval.Evaluator
			want, err := ev.Instruction(in, ops)
			if err != nil {
				t.Fatal(err)
			}
			ops[0] = ops[0].Clone()
			if err := k(ops[0], ops); err != nil {
				t.Fatal(err)
			}
			checkExact(t, in, ops[0], want)
		}
	}
}

// Conversions between every pair of covered types, from values that
// exercise saturation, NaN, infinities, wrapping and rounding.
func TestLowerConvert(t *testing.T) {
	types := []hlo.DType{hlo.Pred, hlo.S8, hlo.S16, hlo.S32, hlo.S64, hlo.U8, hlo.U16, hlo.U32, hlo.U64,
		hlo.F16, hlo.BF16, hlo.F32, hlo.F64}
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 0.5, -0.5, 1.5, -1.5,
		255.5, 256, -129, 65504, 65520, 70000.3, 3e9, -3e9, 1e19, -1e19, 1 << 63, 1 << 64, 16777217, 1.00390625}
	ints := []int64{0, 1, -1, 127, 128, -128, 255, 256, 32767, -32769, 65535, 1 << 31, -1 << 31, 1<<53 + 1, math.MaxInt64, math.MinInt64}
	rng := rand.New(rand.NewPCG(3, 3))
	for _, from := range types {
		for _, to := range types {
			in := parseRoot(t, module([]string{shapeText(from, []int64{64})}, shapeText(to, []int64{64})+" convert(p0)"))
			x := hlo.NewLiteral(in.Operands[0].Shape)
			for i := range x.Len() {
				switch {
				case from.IsFloat() && i < len(specials):
					x.SetFloat64(i, specials[i])
				case from.IsFloat():
					x.SetFloat64(i, (rng.Float64()*2-1)*math.Pow(2, float64(rng.IntN(70))))
				case i < len(ints):
					x.SetInt64(i, ints[i])
				default:
					x.SetInt64(i, int64(rng.Uint64()))
				}
			}
			got, want := runKernel(t, lowerMovement, in, []*hlo.Literal{x}, 1)
			checkExact(t, in, got, want)
		}
	}
}

// Dynamic shapes and the conversions lowerConvert leaves to
// lowerConvertAny are declined here. (Bitcasts between layouts are
// TestBitcastRelayout's; other ops ignore layouts: literals hold
// elements in logical order.)
func TestLowerMovementDeclines(t *testing.T) {
	for _, text := range []string{
		module([]string{"f32[<=4,3]"}, "f32[<=4,3] copy(p0)"),
		module([]string{"f32[4,3]"}, "s4[4,3] convert(p0)"),
		module([]string{"c64[4,3]"}, "f32[4,3] convert(p0)"),
	} {
		if _, ok := lowerMovement(parseRoot(t, text), 1); ok {
			t.Errorf("lowered\n%s", text)
		}
	}
}

func BenchmarkTranspose2048(b *testing.B) {
	in := parseRootB(b, module([]string{"f32[2048,2048]"}, "f32[2048,2048] transpose(p0), dimensions={1,0}"))
	benchKernel(b, lowerMovement, in, 2*2048*2048*4)
}

func parseRootB(b *testing.B, text string) *hlo.Instruction {
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return m.Entry.Root
}

// benchKernel times the compiled kernel and the evaluator on the same
// random operands; bytes is the traffic one run moves.
func benchKernel(b *testing.B, lower lowerFunc, in *hlo.Instruction, bytes int64) {
	ops := randomOperands(in, rand.New(rand.NewPCG(1, 1)))
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("compiled-%dt", threads), func(b *testing.B) {
			k, ok := lower(in, threads)
			if !ok {
				b.Fatal("no kernel")
			}
			out := hlo.NewLiteral(in.Shape)
			b.SetBytes(bytes)
			for b.Loop() {
				if err := k(out, ops); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("evaluator", func(b *testing.B) {
		var ev eval.Evaluator
		b.SetBytes(bytes)
		for b.Loop() {
			if _, err := ev.Instruction(in, ops); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Boxes big enough to be split across threads.
func TestLowerMovementLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, text := range []string{
		module([]string{"f32[700,500]"}, "f32[500,700] transpose(p0), dimensions={1,0}"),
		module([]string{"bf16[30,40,300]"}, "bf16[300,40,30] transpose(p0), dimensions={2,1,0}"),
		// A tiled transpose under outer dimensions, run a band of tile
		// columns at a time: 70 columns, the last band partial.
		module([]string{"f32[70,5,6,40]"}, "f32[40,5,6,70] transpose(p0), dimensions={3,1,2,0}"),
		// A pixel shuffle: runs of 2 read 6 apart (copyShortStrided).
		module([]string{"f32[2,11,11,2,2,6]"}, "f32[2,6,11,2,11,2] transpose(p0), dimensions={0,5,1,3,2,4}"),
		// A U-Net's skip concatenation: runs of 16 and 8 floats, then of
		// 3 bytes (under the vector kernel's 4) and of 40 (kernels.CopyRuns).
		module([]string{"f32[1,32,32,16]", "f32[1,32,32,8]"}, "f32[1,32,32,24] concatenate(p0, p1), dimensions={3}"),
		module([]string{"u8[9,70,3]", "u8[9,70,40]"}, "u8[9,70,43] concatenate(p0, p1), dimensions={2}"),
		module([]string{"s32[600]"}, "s32[600,700] broadcast(p0), dimensions={0}"),
		module([]string{"u8[3,400,300]", "u8[]"}, "u8[5,801,300] pad(p0, p1), padding=1_1x0_2_1x0_0"),
	} {
		in := parseRoot(t, text)
		ops := randomOperands(in, rng)
		for _, threads := range []int{1, 2, 3} {
			got, want := runKernel(t, lowerMovement, in, ops, threads)
			checkExact(t, in, got, want)
		}
	}
}

// BenchmarkTransposeConvInput is the relayout of a kernel-gradient
// convolution's input in the Fashion-MNIST CNN: NHWC [256,28,28,32] to
// [32,28,28,256], the examples innermost.
func BenchmarkTransposeConvInput(b *testing.B) {
	in := parseRootB(b, module([]string{"f32[256,28,28,32]"}, "f32[32,28,28,256] transpose(p0), dimensions={3,1,2,0}"))
	benchKernel(b, lowerMovement, in, 2*256*28*28*32*4)
}

// BenchmarkTransposeLayout is an ONNX model's relayouts at a MobileNetV2
// expansion's size: NHWC [1,112,112,96] to NCHW and back.
func BenchmarkTransposeLayout(b *testing.B) {
	for _, text := range map[string]string{
		"nhwc-nchw": module([]string{"f32[1,112,112,96]"}, "f32[1,96,112,112] transpose(p0), dimensions={0,3,1,2}"),
		"nchw-nhwc": module([]string{"f32[1,96,112,112]"}, "f32[1,112,112,96] transpose(p0), dimensions={0,2,3,1}"),
	} {
		in := parseRootB(b, text)
		b.Run(in.Shape.String(), func(b *testing.B) { benchKernel(b, lowerMovement, in, 2*112*112*96*4) })
	}
}
