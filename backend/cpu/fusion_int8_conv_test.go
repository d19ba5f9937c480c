package cpu

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// int8ConvCase is a quantized convolution as ONNX's ConvInteger lowers:
// the image (xt: u8 or s8) and kernel widened to s32, zero points
// subtracted, an s32 convolution.
type int8ConvCase struct {
	name                      string
	xt, wt                    string // element types of the image and kernel
	n, c, o, g, h, w, k       int    // h = 0: a 1-D convolution
	stride, pad, dil          int
	zx                        string // "": none, "const", "param"
	zw                        string // "": none, "param" (one per output channel)
	wConst                    string // "": a parameter; "s8": an s8 constant; "s32": an s32 constant (fits 8 bits); "split": s32 spanning 16 bits
	labels                    string // dim_labels (default channels-first)
	wantLowering, wantMissing string
}

func (tc int8ConvCase) out(n int) int { return (n+2*tc.pad-tc.dil*(tc.k-1)-1)/tc.stride + 1 }

// module writes the case's HLO text; rng fills constant kernels.
func (tc int8ConvCase) module(rng *rand.Rand) string {
	dims := func(d ...int) string { return strings.Trim(strings.ReplaceAll(fmt.Sprint(d), " ", ","), "[]") }
	xs, ws, os := []int{tc.n, tc.c, tc.h, tc.w}, []int{tc.o, tc.c / tc.g, tc.k, tc.k}, []int{tc.n, tc.o, tc.out(tc.h), tc.out(tc.w)}
	win := fmt.Sprintf("size=%dx%d stride=%dx%d pad=%d_%dx%d_%d rhs_dilate=%dx%d", tc.k, tc.k, tc.stride, tc.stride, tc.pad, tc.pad, tc.pad, tc.pad, tc.dil, tc.dil)
	labels := "bf01_oi01->bf01"
	if tc.h == 0 {
		xs, ws, os = []int{tc.n, tc.c, tc.w}, []int{tc.o, tc.c / tc.g, tc.k}, []int{tc.n, tc.o, tc.out(tc.w)}
		win = fmt.Sprintf("size=%d stride=%d pad=%d_%d rhs_dilate=%d", tc.k, tc.stride, tc.pad, tc.pad, tc.dil)
		labels = "bf0_oi0->bf0"
	}
	if tc.labels != "" { // channels-last: b01f_oi01->b01f
		labels = tc.labels
		xs, os = []int{tc.n, tc.h, tc.w, tc.c}, []int{tc.n, tc.out(tc.h), tc.out(tc.w), tc.o}
	}
	var b strings.Builder
	params := 0
	param := func(name, shape string) {
		fmt.Fprintf(&b, "  %s = %s parameter(%d)\n", name, shape, params)
		params++
	}
	param("x", fmt.Sprintf("%s[%s]", tc.xt, dims(xs...)))
	fmt.Fprintf(&b, "  xw = s32[%s] convert(x)\n", dims(xs...))
	xsrc := "xw"
	switch tc.zx {
	case "const":
		fmt.Fprintf(&b, "  zx = s32[] constant(%d)\n", map[string]int{"u8": 9, "s8": -3}[tc.xt])
	case "param":
		param("zx", "s32[]")
	}
	if tc.zx != "" {
		fmt.Fprintf(&b, "  zxb = s32[%s] broadcast(zx), dimensions={}\n  xz = s32[%[1]s] subtract(xw, zxb)\n", dims(xs...))
		xsrc = "xz"
	}
	wsrc := "ww"
	switch tc.wConst {
	case "":
		param("w", fmt.Sprintf("%s[%s]", tc.wt, dims(ws...)))
		fmt.Fprintf(&b, "  ww = s32[%s] convert(w)\n", dims(ws...))
	default:
		lit := hlo.NewLiteral(hlo.ArrayShape(map[string]hlo.DType{"s8": hlo.S8, "s32": hlo.S32, "split": hlo.S32}[tc.wConst], int64s(ws)...))
		per := lit.Len() / tc.o
		for i := range lit.Len() {
			v := int64(rng.IntN(256) - 128)
			if tc.wConst == "split" {
				v += int64(i/per%5*60 - 120) // each channel 256 values wide, −248…251 in all
			}
			lit.SetInt64(i, v)
		}
		body := lit.String()
		body = body[strings.Index(body, " ")+1:] // the values, without the shape
		if tc.wConst == "s8" {
			fmt.Fprintf(&b, "  w = %s constant(%s)\n  ww = s32[%s] convert(w)\n", lit.Shape(), body, dims(ws...))
		} else {
			fmt.Fprintf(&b, "  ww = %s constant(%s)\n", lit.Shape(), body)
		}
	}
	if tc.zw == "param" {
		param("zw", fmt.Sprintf("s32[%d]", tc.o))
		fmt.Fprintf(&b, "  zwb = s32[%s] broadcast(zw), dimensions={0}\n  wz = s32[%[1]s] subtract(%s, zwb)\n", dims(ws...), wsrc)
		wsrc = "wz"
	}
	fmt.Fprintf(&b, "  ROOT y = s32[%s] convolution(%s, %s), window={%s}, dim_labels=%s, feature_group_count=%d\n",
		dims(os...), xsrc, wsrc, win, labels, tc.g)
	return "HloModule int8conv\nENTRY e {\n" + b.String() + "}"
}

func int64s(d []int) []int64 {
	out := make([]int64, len(d))
	for i, v := range d {
		out[i] = int64(v)
	}
	return out
}

// Quantized convolutions run on the 8-bit GEMM as one kCustom fusion and
// equal the evaluator bit for bit: u8 and s8 images, zero points constant,
// at run time or none, per-channel kernel zero points, u8 kernels, s32
// constant kernels narrowed or split per channel, groups, strides,
// dilation, 1-D; extreme values; an image zero point outside u8 at run
// time (the evaluator takes that call); a channels-last convolution keeps
// the loop.
func TestInt8ConvFusion(t *testing.T) {
	cases := []int8ConvCase{
		{name: "u8-zx", xt: "u8", wt: "s8", n: 2, c: 5, o: 7, g: 1, h: 9, w: 8, k: 3, stride: 1, pad: 1, dil: 1, zx: "const"},
		{name: "s8-groups-stride", xt: "s8", wt: "s8", n: 1, c: 6, o: 4, g: 2, h: 11, w: 10, k: 3, stride: 2, pad: 1, dil: 1, wConst: "s8"},
		{name: "u8-zw-dilated", xt: "u8", wt: "u8", n: 2, c: 3, o: 5, g: 1, h: 10, w: 9, k: 3, stride: 1, pad: 2, dil: 2, zx: "param", zw: "param"},
		{name: "1d", xt: "s8", wt: "s8", n: 3, c: 4, o: 6, g: 1, w: 17, k: 5, stride: 1, pad: 2, dil: 1, zx: "const"},
		{name: "s32-kernel", xt: "u8", wt: "s8", n: 1, c: 16, o: 33, g: 1, h: 7, w: 7, k: 3, stride: 1, pad: 1, dil: 1, zx: "const", wConst: "s32"},
		{name: "split-kernel", xt: "u8", wt: "s8", n: 1, c: 8, o: 10, g: 1, h: 6, w: 6, k: 3, stride: 1, pad: 0, dil: 1, zx: "const", wConst: "split"},
		{name: "pointwise", xt: "u8", wt: "s8", n: 2, c: 70, o: 40, g: 1, h: 5, w: 6, k: 1, stride: 1, pad: 0, dil: 1, zx: "param"},
		{name: "nhwc", xt: "u8", wt: "s8", n: 1, c: 4, o: 4, g: 1, h: 5, w: 5, k: 3, stride: 1, pad: 1, dil: 1, zx: "const",
			labels: "b01f_oi01->b01f", wantLowering: "conv-loop", wantMissing: "conv-int8"},
	}
	rng := rand.New(rand.NewPCG(3, 33))
	for _, tc := range cases {
		if tc.wantLowering == "" {
			tc.wantLowering = "conv-int8"
		}
		text := tc.module(rng)
		for _, fill := range []string{"random", "extreme"} {
			for _, threads := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/%s/%d", tc.name, fill, threads), func(t *testing.T) {
					checkInt8Conv(t, text, tc, fill, threads, rng)
				})
			}
		}
	}
}

func checkInt8Conv(t *testing.T, text string, tc int8ConvCase, fill string, threads int, rng *rand.Rand) {
	t.Helper()
	m, x := compileText(t, text, Options{Threads: threads, Poison: true})
	if x.Lowering[tc.wantLowering] != 1 || tc.wantMissing != "" && x.Lowering[tc.wantMissing] != 0 {
		t.Fatalf("lowered as %v, want one %s\n%s", x.Lowering, tc.wantLowering, text)
	}
	args := eval.RandomArguments(m, 1)
	for i, a := range args {
		name := m.Entry.Param(i).Name
		for j := range a.Len() {
			a.SetInt64(j, int8Value(a.Shape().DType, name, fill, rng))
		}
	}
	got, want := evalAndRun(t, m, x, args)
	if !got.Equal(want) {
		t.Fatalf("the 8-bit convolution and the evaluator differ\n%s", text)
	}
}

// int8Value draws a parameter's value: 8-bit data at random or at the
// extreme (255, −128); zero points mostly in range, the image's out of a
// u8 image's range with the extremes.
func int8Value(t hlo.DType, name, fill string, rng *rand.Rand) int64 {
	switch {
	case name == "zx" && fill == "extreme":
		return -7 // below a u8 image's range: that call runs on the evaluator
	case name == "zx" || name == "zw":
		return int64(rng.IntN(200) - 50)
	case fill == "extreme" && t == hlo.U8:
		return 255
	case fill == "extreme":
		return -128
	case t == hlo.U8:
		return int64(rng.IntN(256))
	}
	return int64(rng.IntN(256) - 128)
}
