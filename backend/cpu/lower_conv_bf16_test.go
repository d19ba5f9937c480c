package cpu

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
)

// bf16 convolutions agree with the evaluator within the bf16 GEMM's
// bound (TestDotBF16's, k the taps times the input channels), and run on
// it ("conv-bf16") exactly where kernels.BF16Direct holds and the image
// can be read in place with an even channel count; the others stay on
// the widening kernels ("conv").
func TestConvBF16(t *testing.T) {
	for _, c := range []struct {
		name, lhs, rhs, out, attrs string
		k                          int
		direct                     bool
	}{
		{"3x3 pad 1", "bf16[2,9,9,8]", "bf16[3,3,8,16]", "f32[2,9,9,16]", "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 72, true},
		{"stride 2, bf16 result", "bf16[1,11,12,16]", "bf16[3,3,16,40]", "bf16[1,5,5,40]", "window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f", 144, true},
		{"pointwise", "bf16[3,5,6,24]", "bf16[1,1,24,33]", "f32[3,5,6,33]", "window={size=1x1}, dim_labels=b01f_01io->b01f", 24, true},
		{"odd channels", "bf16[1,8,8,5]", "bf16[3,3,5,17]", "f32[1,8,8,17]", "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 45, false},
		{"channels first", "bf16[2,6,7,9]", "bf16[12,6,3,3]", "f32[2,12,7,9]", "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01", 54, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := fmt.Sprintf("HloModule c\nENTRY e {\n  a = %s parameter(0)\n  b = %s parameter(1)\n  ROOT c = %s convolution(a, b), %s\n}\n", c.lhs, c.rhs, c.out, c.attrs)
			want := "conv"
			if c.direct && kernels.BF16Direct() {
				want = "conv-bf16"
			}
			checkBF16(t, text, want, c.k, c.out[:4] == "bf16")
		})
	}
}

// A bf16 convolution whose kernel is a constant packs it once: its
// results are the bits of the same module given the kernel as an
// argument (packed per call), within the evaluator's tolerance, on every
// call and from several goroutines at once.
func TestConvBF16ConstantKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	var lit strings.Builder
	lit.WriteString("{")
	for i := range 3 {
		lit.WriteString("{")
		for j := range 3 {
			lit.WriteString("{")
			for c := range 8 {
				lit.WriteString("{")
				for o := range 16 {
					fmt.Fprintf(&lit, "%.3f", rng.Float64()*2-1)
					if o < 15 {
						lit.WriteString(",")
					}
				}
				lit.WriteString(map[bool]string{true: "},", false: "}"}[c < 7])
			}
			lit.WriteString(map[bool]string{true: "},", false: "}"}[j < 2])
		}
		lit.WriteString(map[bool]string{true: "},", false: "}"}[i < 2])
	}
	lit.WriteString("}")
	const text = "HloModule c\nENTRY e {\n  a = bf16[2,9,9,8] parameter(0)\n  w = %s\n" +
		"  ROOT c = bf16[2,9,9,16] convolution(a, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n"
	withConst := fmt.Sprintf(text, "bf16[3,3,8,16] constant("+lit.String()+")")
	withParam := fmt.Sprintf(text, "bf16[3,3,8,16] parameter(1)")
	want := map[bool]string{true: "conv-bf16", false: "conv"}[kernels.BF16Direct()]
	checkPackedWeights(t, withConst, withParam, true, want)
}
