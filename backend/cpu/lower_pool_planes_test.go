package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// TestPoolPlanes runs f32 reduce-windows over the last two dimensions of
// NCHW-like arrays (ONNX pooling: strides, padding on both sides, window
// dilation, windows wider than the image) on the plane kernel, against
// the evaluator bit for bit (NaNs included), on one and two threads.
func TestPoolPlanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	ops := []string{"maximum", "minimum", "add", "multiply"}
	cases := 0
	for i := range 300 {
		lead := []int64{1 + rng.Int64N(3), 1 + rng.Int64N(5)}[:1+rng.IntN(2)]
		in := append(append([]int64{}, lead...), 1+rng.Int64N(12), 1+rng.Int64N(40))
		if i == 0 { // ResNet's stem pool, big enough for two threads
			lead, in = []int64{1, 32}, []int64{1, 32, 112, 112}
		}
		out := append([]int64{}, in...)
		var size, stride, pad, rd string
		for range lead {
			size, stride, pad, rd = size+"1x", stride+"1x", pad+"0_0x", rd+"1x"
		}
		skip := false
		for d := len(lead); d < len(in); d++ {
			w := hlo.WindowDim{Size: 1 + rng.Int64N(4), Stride: 1 + rng.Int64N(3), PadLo: rng.Int64N(3), PadHi: rng.Int64N(3), RhsDilation: 1 + rng.Int64N(2)}
			if i == 0 {
				w = hlo.WindowDim{Size: 3, Stride: 2, PadLo: 1, PadHi: 1, RhsDilation: 1}
			}
			eff := (w.Size-1)*w.RhsDilation + 1
			padded := in[d] + w.PadLo + w.PadHi
			if padded < eff {
				skip = true
				break
			}
			out[d] = (padded-eff)/w.Stride + 1
			sep := "x"
			if d == len(in)-1 {
				sep = ""
			}
			size += fmt.Sprint(w.Size) + sep
			stride += fmt.Sprint(w.Stride) + sep
			pad += fmt.Sprintf("%d_%d", w.PadLo, w.PadHi) + sep
			rd += fmt.Sprint(w.RhsDilation) + sep
		}
		if skip || out[len(out)-1] == in[len(in)-1] && size[len(size)-1] == '1' {
			continue
		}
		op := ops[rng.IntN(len(ops))]
		text := module([]string{shapeText(hlo.F32, in), shapeText(hlo.F32, nil)},
			fmt.Sprintf("%s reduce-window(p0, p1), window={size=%s stride=%s pad=%s rhs_dilate=%s}, to_apply=red",
				shapeText(hlo.F32, out), size, stride, pad, rd), reducer(op, hlo.F32, false))
		root := parseRoot(t, text)
		args := randomOperands(root, rng)
		if rng.IntN(4) == 0 {
			args[0].SetFloat64(rng.IntN(args[0].Len()), math.NaN())
		}
		var ev eval.Evaluator
		want, err := ev.Instruction(root, args)
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range []int{1, 2} {
			opc, _ := reducerOp(root.Computation("to_apply"), hlo.F32)
			k, ok := lowerPoolPlanes(root, opc, th)
			if !ok {
				t.Fatalf("no plane kernel for\n%s", text)
			}
			got := poisoned(root.Shape)
			if err := k(got, args); err != nil {
				t.Fatal(err)
			}
			for j := range got.Len() {
				if !sameValue(got, want, j) {
					t.Fatalf("%d threads: element %d is %v, want %v\n%s", th, j, got.GetFloat64(j), want.GetFloat64(j), text)
				}
			}
		}
		cases++
	}
	if cases < 100 {
		t.Fatalf("only %d cases", cases)
	}
}
