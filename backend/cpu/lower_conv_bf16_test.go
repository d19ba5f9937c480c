package cpu

import (
	"fmt"
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
