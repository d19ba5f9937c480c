package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
)

// channelsLastPool is a reduce-window pooling the middle two dimensions
// of an [n,h,w,c] image with op, and the window it uses.
func channelsLastPool(in []int64, hw [2]hlo.WindowDim, op string) (string, bool) {
	out := []int64{in[0], 0, 0, in[3]}
	var size, stride, pad, rd []string
	for i, w := range hw {
		eff := (w.Size-1)*w.RhsDilation + 1
		padded := in[i+1] + w.PadLo + w.PadHi
		if padded < eff {
			return "", false
		}
		out[i+1] = (padded-eff)/w.Stride + 1
		size, stride = append(size, fmt.Sprint(w.Size)), append(stride, fmt.Sprint(w.Stride))
		pad, rd = append(pad, fmt.Sprintf("%d_%d", w.PadLo, w.PadHi)), append(rd, fmt.Sprint(w.RhsDilation))
	}
	j := func(s []string) string { return strings.Join(s, "x") }
	return module([]string{shapeText(hlo.F32, in), shapeText(hlo.F32, nil)},
		fmt.Sprintf("%s reduce-window(p0, p1), window={size=1x%sx1 stride=1x%sx1 pad=0_0x%sx0_0 rhs_dilate=1x%sx1}, to_apply=red",
			shapeText(hlo.F32, out), j(size), j(stride), j(pad), j(rd)), reducer(op, hlo.F32, false)), true
}

// TestPoolRuns runs f32 max and min reduce-windows over the middle two
// dimensions of channels-last images (strides, padding on both sides,
// window dilation, windows wider than the image, init not the identity,
// NaNs and signed zeros) on the channels-last kernel, against the
// evaluator and bit for bit against the general fold, on one and two
// threads. Half the images have whole vectors of channels and half the
// inits are the op's identity, which the window by window fold takes
// (rowsByWindow), the ResNet stem pool among them.
func TestPoolRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	cases, byWindow := 0, 0
	for i := range 400 {
		in := []int64{1 + rng.Int64N(3), 1 + rng.Int64N(12), 1 + rng.Int64N(20), 8 + rng.Int64N(40)}
		if rng.IntN(2) == 0 {
			in[3] = 16 * (1 + rng.Int64N(3))
		}
		var hw [2]hlo.WindowDim
		for d := range hw {
			hw[d] = hlo.WindowDim{Size: 1 + rng.Int64N(4), Stride: 1 + rng.Int64N(3), PadLo: rng.Int64N(3), PadHi: rng.Int64N(3), RhsDilation: 1 + rng.Int64N(2)}
		}
		if i == 0 { // ResNet's stem pool, big enough for two threads
			in = []int64{1, 112, 112, 32}
			hw[0] = hlo.WindowDim{Size: 3, Stride: 2, PadLo: 1, PadHi: 0, RhsDilation: 1}
			hw[1] = hw[0]
		}
		op := []string{"maximum", "minimum"}[rng.IntN(2)]
		text, ok := channelsLastPool(in, hw, op)
		if !ok {
			continue
		}
		root := parseRoot(t, text)
		args := randomOperands(root, rng)
		x := args[0]
		for range rng.IntN(4) {
			x.SetFloat64(rng.IntN(x.Len()), []float64{math.NaN(), 0, math.Copysign(0, -1)}[rng.IntN(3)])
		}
		if rng.IntN(3) == 0 {
			// Ties and NaNs everywhere: zeros of both signs and NaNs of
			// two payloads, whose bits say which tap a fold kept first.
			ties := []uint32{0, 0x80000000, 0x7fc00001, 0xffc00002, 0x3f800000}
			v := x.Data().([]float32)
			for j := range v {
				if rng.IntN(3) > 0 {
					v[j] = math.Float32frombits(ties[rng.IntN(len(ties))])
				}
			}
		}
		args[1].SetFloat64(0, []float64{math.Inf(-1), math.Inf(1), 0, math.Copysign(0, -1), 0.5}[rng.IntN(5)])
		if i == 0 || rng.IntN(2) == 0 {
			args[1].SetFloat64(0, map[string]float64{"maximum": math.Inf(-1), "minimum": math.Inf(1)}[op])
		}
		if args[1].GetFloat64(0) == identityValue(map[string]hlo.Opcode{"maximum": hlo.OpMaximum, "minimum": hlo.OpMinimum}[op]) && kernels.WindowFoldFast(int(in[3])) {
			byWindow++
		}
		var ev eval.Evaluator
		want, err := ev.Instruction(root, args)
		if err != nil {
			t.Fatal(err)
		}
		opc, _ := reducerOp(root.Computation("to_apply"), hlo.F32)
		for _, th := range []int{1, 2} {
			k, ok := lowerPoolRuns(root, opc, th)
			if !ok {
				if i == 0 {
					t.Fatalf("no channels-last kernel for\n%s", text)
				}
				break // a stride past the window: left to the general fold
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
			// The general fold's bits, signed zeros and NaNs included
			// (the evaluator orders -0 below +0 in reductions, while
			// maximum keeps the first of equal values).
			pl, _ := newWindowPlan(root.Window(), root.Operands[0].Shape.Dims, root.Shape.Dims, 1)
			general := poisoned(root.Shape)
			if err := windowKernelVec(pl, vectorCombineF32(opc))(general, args); err != nil {
				t.Fatal(err)
			}
			sameBits(t, root, got, general)
			cases++
		}
	}
	if cases < 300 || kernels.WindowFoldFast(16) && byWindow < 60 {
		t.Fatalf("only %d cases ran, %d window by window", cases, byWindow)
	}
}

// BenchmarkPoolRuns times ResNet's stem pool (3×3, stride 2, padding 1
// over [1,112,112,32] channels-last) on the channels-last kernel and on
// the general fold.
func BenchmarkPoolRuns(b *testing.B) {
	w := hlo.WindowDim{Size: 3, Stride: 2, PadLo: 1, PadHi: 0, RhsDilation: 1}
	text, _ := channelsLastPool([]int64{1, 112, 112, 32}, [2]hlo.WindowDim{w, w}, "maximum")
	in := parseRootB(b, text)
	ops := randomOperands(in, rand.New(rand.NewPCG(1, 1)))
	ops[1].SetFloat64(0, math.Inf(-1))
	pl, _ := newWindowPlan(in.Window(), in.Operands[0].Shape.Dims, in.Shape.Dims, 1)
	for _, threads := range []int{1, 2} {
		runs, _ := lowerPoolRuns(in, hlo.OpMaximum, threads)
		pl.threads = threads
		general := windowKernelVec(pl, vectorCombineF32(hlo.OpMaximum))
		for _, k := range []struct {
			name string
			f    kernelFunc
		}{{"runs", runs}, {"general", general}} {
			b.Run(fmt.Sprintf("%s-%dt", k.name, threads), func(b *testing.B) {
				out := hlo.NewLiteral(in.Shape)
				for b.Loop() {
					if err := k.f(out, ops); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(112*112*32*4)/1e9/(b.Elapsed().Seconds()/float64(b.N)), "GB/s")
			})
		}
	}
}
