package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// TestConvLayouts runs f32 convolutions with shuffled dimension labels
// through the compiled backend: inputs whose feature dimension is not
// innermost (relaid out when there are 16+ channels), outputs in any
// order (through scratch), with strides, padding, dilation and feature
// groups, against the evaluator. Each must lower to the GEMM kernel.
func TestConvLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for i := range 60 {
		text := convLayoutCase(rng)
		m, x := compileConvCase(t, i, text)
		args := eval.RandomArguments(m, uint64(i))
		got, want := evalAndRun(t, m, x, args)
		closeF32(t, text, got, want)
	}
}

// The same convolutions in bf16: operands widened into scratch, each
// block of the result rounded into the output as soon as it is final
// (channels-last outputs) or in a pass after (the others). Each element
// may differ from the evaluator's by one bf16 rounding.
func TestConvLayoutsBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for i := range 40 {
		text := strings.ReplaceAll(convLayoutCase(rng), "f32", "bf16")
		m, x := compileConvCase(t, i, text)
		args := eval.RandomArguments(m, uint64(i))
		got, want := evalAndRun(t, m, x, args)
		if msg := closeEnough(got, want); msg != "" {
			t.Fatalf("case %d: %s\n%s", i, msg, text)
		}
	}
}

// compileConvCase compiles case i's module (1 or 2 threads, poisoned
// buffers) and checks that its convolution lowers to the conv kernel.
func compileConvCase(t *testing.T, i int, text string) (*hlo.Module, *Executable) {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatalf("case %d: %v\n%s", i, err, text)
	}
	x, err := Compile(m, Options{NoOptimize: true, Poison: true, Threads: 1 + i%2})
	if err != nil {
		t.Fatal(err)
	}
	if x.Lowering["conv"] != 1 {
		t.Fatalf("case %d lowered as %v, not the conv kernel:\n%s", i, x.Lowering, text)
	}
	return m, x
}

// convLayoutCase is a random 2-D f32 convolution module with random
// dimension orders on all three sides.
func convLayoutCase(rng *rand.Rand) string { return convCase(rng, false, false) }

// convCase is convLayoutCase, or with depthwise a depthwise convolution
// (one input channel per group, one or two output channels each), with
// nchw in ONNX's layouts (bf01_oi01->bf01).
func convCase(rng *rand.Rand, depthwise, nchw bool) string {
	fg := 1 + rng.IntN(2)
	batch := int64(1 + rng.IntN(3))
	inF := int64(fg * []int{2, 16, 24}[rng.IntN(3)])
	outF := int64(fg * (1 + rng.IntN(5)))
	if depthwise {
		fg = []int{2, 8, 16, 24}[rng.IntN(4)]
		inF, outF = int64(fg), int64(fg*(1+rng.IntN(2)))
	}
	var sp, kern, outS [2]int64
	var win [5][2]int64 // stride, lo, hi, rhs dilation
	for d := range 2 {
		sp[d], kern[d] = int64(3+rng.IntN(5)), int64(1+rng.IntN(3))
		st, lo, hi, rd := int64(1+rng.IntN(2)), int64(rng.IntN(2)), int64(rng.IntN(2)), int64(1+rng.IntN(2))
		k := (kern[d]-1)*rd + 1
		in := sp[d] + lo + hi
		if in < k {
			lo, hi, in = k, k, sp[d]+2*k
		}
		outS[d] = (in-k)/st + 1
		win[0][d], win[1][d], win[2][d], win[3][d] = st, lo, hi, rd
	}
	place := func(a, b int64, s [2]int64, p []int, first, second byte) ([]int64, string) {
		dims, labels := make([]int64, 4), make([]byte, 4)
		for pos, role := range p {
			switch role {
			case 0:
				dims[pos], labels[pos] = a, first
			case 1:
				dims[pos], labels[pos] = b, second
			default:
				dims[pos], labels[pos] = s[role-2], byte('0'+role-2)
			}
		}
		return dims, string(labels)
	}
	pl, pr, po := rng.Perm(4), rng.Perm(4), rng.Perm(4)
	if nchw {
		pl, pr, po = []int{0, 1, 2, 3}, []int{1, 0, 2, 3}, []int{0, 1, 2, 3}
	}
	ld, ll := place(batch, inF, sp, pl, 'b', 'f')
	rd, rl := place(inF/int64(fg), outF, kern, pr, 'i', 'o')
	od, ol := place(batch, outF, outS, po, 'b', 'f')
	window := fmt.Sprintf("size=%dx%d stride=%dx%d pad=%d_%dx%d_%d rhs_dilate=%dx%d",
		kern[0], kern[1], win[0][0], win[0][1], win[1][0], win[2][0], win[1][1], win[2][1], win[3][0], win[3][1])
	return fmt.Sprintf(`HloModule conv
ENTRY e {
  x = %s parameter(0)
  k = %s parameter(1)
  ROOT c = %s convolution(x, k), window={%s}, dim_labels=%s_%s->%s, feature_group_count=%d
}`, shapeText(hlo.F32, ld), shapeText(hlo.F32, rd), shapeText(hlo.F32, od), window, ll, rl, ol, fg)
}

// closeF32 compares within f32 accumulation error relative to the
// largest result.
func closeF32(t *testing.T, what string, got, want *hlo.Literal) {
	t.Helper()
	scale := 1e-30
	for i := range want.Len() {
		scale = math.Max(scale, math.Abs(want.GetFloat64(i)))
	}
	for i := range want.Len() {
		if d := math.Abs(got.GetFloat64(i) - want.GetFloat64(i)); !(d <= 1e-5*scale) { // NaN fails
			t.Fatalf("element %d is %v, want %v\n%s", i, got.GetFloat64(i), want.GetFloat64(i), what)
		}
	}
}

// TestConvDepthwiseLayouts runs depthwise convolutions with shuffled
// dimension labels (ONNX's NCHW images and OIHW kernels among them: the
// input and kernel are copied to channels-last for the depthwise
// kernel) against the evaluator, the kernel a parameter and a constant.
func TestConvDepthwiseLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	cases := []string{`HloModule conv
ENTRY e {
  x = f32[2,8,9,7] parameter(0)
  k = f32[8,1,3,3] parameter(1)
  ROOT c = f32[2,8,5,7] convolution(x, k), window={size=3x3 stride=2x1 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=8
}`}
	for i := range 40 {
		cases = append(cases, convCase(rng, true, i%2 == 0))
	}
	for i, text := range cases {
		m, x := compileConvCase(t, i, text)
		args := eval.RandomArguments(m, uint64(i))
		got, want := evalAndRun(t, m, x, args)
		closeF32(t, text, got, want)
		// The kernel a constant: copied once, kept across calls.
		k := args[1]
		ctext := strings.Replace(text, "parameter(1)", "constant("+literalText(k)+")", 1)
		m, x = compileConvCase(t, i, ctext)
		for range 2 {
			got, want = evalAndRun(t, m, x, args[:1])
			closeF32(t, ctext, got, want)
		}
	}
}

// TestConvNCHW runs convolutions in ONNX's layouts (NCHW image, OIHW
// kernel, NCHW result), which run as products of the kernel with the
// image's im2col matrix, against the evaluator: strides, padding, kernel
// dilation, input dilation (ConvTranspose), groups, 1×1 windows, wide
// ones and RGB stems (copied channels-last for the direct kernel), the
// kernel a parameter and a constant,
// in f32 and bf16.
func TestConvNCHW(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	cases := []string{`HloModule conv
ENTRY e {
  x = f32[2,5,7] parameter(0)
  k = f32[6,5,3] parameter(1)
  ROOT c = f32[2,6,4] convolution(x, k), window={size=3 stride=2 pad=1_1}, dim_labels=bf0_oi0->bf0
}`, `HloModule conv
ENTRY e {
  x = f32[1,16,20,20] parameter(0)
  k = f32[24,16,1,1] parameter(1)
  ROOT c = f32[1,24,20,20] convolution(x, k), window={size=1x1}, dim_labels=bf01_oi01->bf01
}`, `HloModule conv
ENTRY e {
  x = f32[1,4,5,5] parameter(0)
  k = f32[3,4,2,2] parameter(1)
  ROOT c = f32[1,3,10,10] convolution(x, k), window={size=2x2 pad=1_1x1_1 lhs_dilate=2x2}, dim_labels=bf01_oi01->bf01
}`, `HloModule conv
ENTRY e {
  x = f32[2,6,5,7] parameter(0)
  k = f32[4,3,3,3] parameter(1)
  ROOT c = f32[2,4,10,14] convolution(x, k), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}, dim_labels=bf01_oi01->bf01, feature_group_count=2
}`, `HloModule conv
ENTRY e {
  x = f32[2,16,9,11] parameter(0)
  k = f32[40,16,3,3] parameter(1)
  ROOT c = f32[2,40,5,11] convolution(x, k), window={size=3x3 stride=2x1 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
}`, `HloModule conv
ENTRY e {
  x = f32[2,3,20,30] parameter(0)
  k = f32[8,3,3,3] parameter(1)
  ROOT c = f32[2,8,10,15] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
}`}
	for range 40 {
		cases = append(cases, convCase(rng, false, true))
	}
	for i, text := range cases {
		m, x := compileConvCase(t, i, text)
		args := eval.RandomArguments(m, uint64(i))
		got, want := evalAndRun(t, m, x, args)
		closeF32(t, text, got, want)
		ctext := strings.Replace(text, "parameter(1)", "constant("+literalText(args[1])+")", 1)
		m, x = compileConvCase(t, i, ctext)
		for range 2 {
			got, want = evalAndRun(t, m, x, args[:1])
			closeF32(t, ctext, got, want)
		}
		btext := strings.ReplaceAll(text, "f32", "bf16")
		m, x = compileConvCase(t, i, btext)
		args = eval.RandomArguments(m, uint64(i))
		got, want = evalAndRun(t, m, x, args)
		if msg := closeEnough(got, want); msg != "" {
			t.Fatalf("case %d: %s\n%s", i, msg, btext)
		}
	}
}

// literalText writes an f32 array literal's values in HLO text's nested
// braces.
func literalText(l *hlo.Literal) string {
	dims := l.Shape().Dims
	var b strings.Builder
	i := 0
	var walk func(d int)
	walk = func(d int) {
		b.WriteByte('{')
		for j := range dims[d] {
			if j > 0 {
				b.WriteString(", ")
			}
			if d == len(dims)-1 {
				fmt.Fprintf(&b, "%v", l.GetFloat64(i))
				i++
			} else {
				walk(d + 1)
			}
		}
		b.WriteByte('}')
	}
	walk(0)
	return b.String()
}
