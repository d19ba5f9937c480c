package cpu

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// slicePoolText is a pool over the middle two dimensions of an
// [n,h,w,c] image written as the ONNX front end writes small pools:
// the image padded with pad (by lo and hi on both spatial dimensions),
// then op of the strided slices, one per window offset, in row-major
// order with the running value on the left. order, when set, lists the
// offsets' order instead.
func slicePoolText(n, h, w, c, k, stride, dil, lo, hi int, op, pad string, order []int) string {
	oh := (h+lo+hi-(k-1)*dil-1)/stride + 1
	ow := (w+lo+hi-(k-1)*dil-1)/stride + 1
	var b strings.Builder
	fmt.Fprintf(&b, "HloModule pool\nENTRY e {\n  x = f32[%d,%d,%d,%d] parameter(0)\n  v = f32[] constant(%s)\n", n, h, w, c, pad)
	fmt.Fprintf(&b, "  p = f32[%d,%d,%d,%d] pad(x, v), padding=0_0x%d_%dx%d_%dx0_0\n", n, h+lo+hi, w+lo+hi, c, lo, hi, lo, hi)
	if order == nil {
		for i := range k * k {
			order = append(order, i)
		}
	}
	acc := ""
	for i, at := range order {
		y0, x0 := at/k*dil, at%k*dil
		fmt.Fprintf(&b, "  s%d = f32[%d,%d,%d,%d] slice(p), slice={[0:%d:1], [%d:%d:%d], [%d:%d:%d], [0:%d:1]}\n", i, n, oh, ow, c,
			n, y0, y0+(oh-1)*stride+1, stride, x0, x0+(ow-1)*stride+1, stride, c)
		if i == 0 {
			acc = "s0"
			continue
		}
		root := ""
		if i == len(order)-1 {
			root = "ROOT "
		}
		fmt.Fprintf(&b, "  %sm%d = f32[%d,%d,%d,%d] %s(%s, s%d)\n", root, i, n, oh, ow, c, op, acc, i)
		acc = fmt.Sprintf("m%d", i)
	}
	b.WriteString("}\n")
	return b.String()
}

// BenchmarkSlicePool times ResNet's stem pool (3×3, stride 2, padding
// 1, over [1,112,112,32]) written as slices, with the slices made a
// reduce-window and without; -count interleaves the two.
func BenchmarkSlicePool(b *testing.B) {
	m, err := hlotext.Parse(slicePoolText(1, 112, 112, 32, 3, 2, 1, 1, 1, "maximum", "-inf", nil), hlotext.Options{})
	if err != nil {
		b.Fatal(err)
	}
	args := eval.RandomArguments(m, 1)
	for _, on := range []bool{true, false} {
		b.Run(fmt.Sprintf("window=%v", on), func(b *testing.B) {
			defer func(was bool) { poolWindows = was }(poolWindows)
			poolWindows = on
			x, err := Compile(m, Options{Threads: 2})
			if err != nil {
				b.Fatal(err)
			}
			poolWindows = true
			for b.Loop() {
				out, err := x.Execute(args...)
				if err != nil {
					b.Fatal(err)
				}
				x.Recycle(out)
			}
			b.ReportMetric(float64(112*112*32*4)/1e9/(b.Elapsed().Seconds()/float64(b.N)), "GB/s")
		})
	}
}

// poolOps counts the compiled entry's instructions by opcode, and
// returns its reduce-windows' windows.
func poolOps(x *Executable) (map[hlo.Opcode]int, []string) {
	n := map[hlo.Opcode]int{}
	var windows []string
	for _, in := range x.Module().Entry.Instructions {
		n[in.Opcode]++
		if in.Opcode == hlo.OpReduceWindow {
			windows = append(windows, strings.Trim(in.Window().String(), "{}"))
		}
	}
	return n, windows
}

// checkPoolBits runs x and the evaluator on m with random images holding
// NaNs and signed zeros: the bits are equal (the compiled reduce-window
// keeps the first of equal values and the first NaN, as the chain of
// maxima does).
func checkPoolBits(t *testing.T, m *hlo.Module, x *Executable) {
	t.Helper()
	args := eval.RandomArguments(m, 5)
	img := args[0]
	for i := range img.Len() {
		switch i % 7 {
		case 1:
			img.SetFloat64(i, 0)
		case 2:
			img.SetFloat64(i, math.Copysign(0, -1))
		}
	}
	img.SetFloat64(img.Len()/2, math.NaN())
	got, want := evalAndRun(t, m, x, args)
	for i := range want.Len() {
		if got.Bits(i) != want.Bits(i) {
			t.Fatalf("element %d is %v (%#x), want %v (%#x)", i, got.GetFloat64(i), got.Bits(i), want.GetFloat64(i), want.Bits(i))
		}
	}
}

// Max and min pools written as slices of an image padded with the op's
// identity become one reduce-window over the image, the padding in its
// window (XLA's window: size, stride, low and high padding, window
// dilation); nothing of the chain, the slices or the pad is left.
func TestPoolWindowFusion(t *testing.T) {
	for _, c := range []struct {
		name                         string
		h, w, k, stride, dil, lo, hi int
		op, pad, window              string
	}{
		// ResNet's stem pool on a small image: 9+1+1 rows give 5 windows
		// of 3 at stride 2, which end on the last padding row.
		{"stem", 9, 9, 3, 2, 1, 1, 1, "maximum", "-inf", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0"},
		// 8+1+1 rows give 4 windows, the last ending on row 7: the high
		// padding row is never read.
		{"even", 8, 8, 3, 2, 1, 1, 1, "maximum", "-inf", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_0x1_0x0_0"},
		{"min", 7, 6, 2, 1, 1, 1, 0, "minimum", "inf", "size=1x2x2x1 pad=0_0x1_0x1_0x0_0"},
		{"dilated", 10, 10, 3, 1, 2, 2, 2, "maximum", "-inf", "size=1x3x3x1 pad=0_0x2_2x2_2x0_0 rhs_dilate=1x2x2x1"},
		// Padding with 0 is no identity: the pad stays, and the window
		// reads it.
		{"zero-pad", 6, 6, 2, 2, 1, 1, 1, "maximum", "0", "size=1x2x2x1 stride=1x2x2x1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := slicePoolText(2, c.h, c.w, 8, c.k, c.stride, c.dil, c.lo, c.hi, c.op, c.pad, nil)
			m, x := compileText(t, text, Options{Threads: 1, Poison: true})
			n, windows := poolOps(x)
			if len(windows) != 1 || windows[0] != c.window {
				t.Fatalf("windows %v, want [%s]\n%s", windows, c.window, hlotext.Print(x.Module(), hlotext.Short))
			}
			wantPads := 0
			if c.pad == "0" && (c.lo > 0 || c.hi > 0) {
				wantPads = 1
			}
			if n[hlo.OpSlice] != 0 || n[hlo.OpMaximum]+n[hlo.OpMinimum] != 0 || n[hlo.OpPad] != wantPads || n[hlo.OpFusion] != 0 {
				t.Fatalf("left %v\n%s", n, hlotext.Print(x.Module(), hlotext.Short))
			}
			checkCompiledModule(t, m, x)
			checkPoolBits(t, m, x)
		})
	}
}

// Chains that are not a whole window in row-major order stay as they
// are: two offsets swapped (the fold's order would change which of
// equal values is kept), an offset missing, and a running value read
// elsewhere.
func TestPoolWindowFusionDeclines(t *testing.T) {
	swapped := slicePoolText(1, 9, 9, 8, 3, 2, 1, 1, 1, "maximum", "-inf", []int{0, 2, 1, 3, 4, 5, 6, 7, 8})
	missing := slicePoolText(1, 9, 9, 8, 3, 2, 1, 1, 1, "maximum", "-inf", []int{0, 1, 2, 3, 4, 5, 6, 7})
	shared := strings.Replace(slicePoolText(1, 9, 9, 8, 3, 2, 1, 1, 1, "maximum", "-inf", nil),
		"ROOT m8 = f32[1,5,5,8] maximum(m7, s8)", "m8 = f32[1,5,5,8] maximum(m7, s8)\n  ROOT t = (f32[1,5,5,8], f32[1,5,5,8]) tuple(m8, m4)", 1)
	for name, text := range map[string]string{"swapped": swapped, "missing": missing, "shared": shared} {
		t.Run(name, func(t *testing.T) {
			m, x := compileText(t, text, Options{Threads: 1, Poison: true})
			if _, windows := poolOps(x); len(windows) != 0 {
				t.Fatalf("made reduce-windows %v", windows)
			}
			checkCompiledModule(t, m, x)
			args := eval.RandomArguments(m, 5)
			got, want := evalAndRun(t, m, x, args)
			if !got.Equal(want) {
				t.Fatal("results differ from the evaluator's")
			}
		})
	}
}
