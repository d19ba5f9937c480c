package axle_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// cuDNN convolution calls on both backends: hand-worked small cases, and
// the backward kinds checked against the evaluator's forward convolution
// through the adjoint identities <dy, conv(x, w)> = <backward_input(dy, w), x>
// = <backward_filter(x, dy), w>, which hold for any x, w, dy.

const convWS = `backend_config={"cudnn_conv_backend_config":{"conv_result_scale":%s,"activation_mode":"%s","side_input_scale":%s}}`

// TestConvHandWorked: x = 1..9 as f32[1,3,3,1], a 2×2 filter of ones.
func TestConvHandWorked(t *testing.T) {
	x := lit(t, "f32[1,3,3,1]", 1, 2, 3, 4, 5, 6, 7, 8, 9)
	ones := lit(t, "f32[2,2,1,1]", 1, 1, 1, 1)
	dy := lit(t, "f32[1,2,2,1]", 1, 1, 1, 1)
	cases := []struct {
		name, text string
		args       []*hlo.Literal
		want       []float64
	}{
		// Sums of the four 2×2 blocks, [12,16,24,28], halved.
		{"forward", `  x = f32[1,3,3,1] parameter(0)
  w = f32[2,2,1,1] parameter(1)
  ROOT c = (f32[1,2,2,1], u8[0]) custom-call(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convForward", ` + fmt.Sprintf(convWS, "0.5", "kNone", "0"),
			[]*hlo.Literal{x, ones}, []float64{6, 8, 12, 14}},
		// relu(0.5·conv + 1·side + bias) with side ones, bias -13:
		// [6+1-13, 8+1-13, 12+1-13, 14+1-13] = [-6,-4,0,2] → [0,0,0,2].
		{"bias activation", `  x = f32[1,3,3,1] parameter(0)
  w = f32[2,2,1,1] parameter(1)
  bias = f32[1] constant({-13})
  side = f32[1,2,2,1] constant({{{{1},{1}},{{1},{1}}}})
  ROOT c = (f32[1,2,2,1], u8[0]) custom-call(x, w, bias, side), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBiasActivationForward", ` + fmt.Sprintf(convWS, "0.5", "kRelu", "1"),
			[]*hlo.Literal{x, ones}, []float64{0, 0, 0, 2}},
		// Each input position counts the 2×2 windows covering it.
		{"backward input", `  dy = f32[1,2,2,1] parameter(0)
  w = f32[2,2,1,1] parameter(1)
  ROOT c = (f32[1,3,3,1], u8[0]) custom-call(dy, w), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBackwardInput", ` + fmt.Sprintf(convWS, "1", "kNone", "0"),
			[]*hlo.Literal{dy, ones}, []float64{1, 2, 1, 2, 4, 2, 1, 2, 1}},
		// Each filter tap sums the inputs it meets: the block sums again.
		{"backward filter", `  x = f32[1,3,3,1] parameter(0)
  dy = f32[1,2,2,1] parameter(1)
  ROOT c = (f32[2,2,1,1], u8[0]) custom-call(x, dy), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBackwardFilter", ` + fmt.Sprintf(convWS, "1", "kNone", "0"),
			[]*hlo.Literal{x, dy}, []float64{12, 16, 24, 28}},
	}
	for _, c := range cases {
		for _, backend := range []string{"interp", "cpu"} {
			t.Run(c.name+"/"+backend, func(t *testing.T) {
				out := runGPU(t, backend, "HloModule c\nENTRY e {\n"+c.text+"\n}\n", c.args)
				wantValues(t, "result", out[0], c.want, 1e-6)
				if n := out[1].Shape().NumElements(); n != 0 {
					t.Errorf("workspace has %d elements, want 0", n)
				}
			})
		}
	}
}

// TestConvActivations: each activation of the fused forward on
// conv = x·1 (a 1×1 filter of one) over x = [-2, -0.5, 0.5, 3].
func TestConvActivations(t *testing.T) {
	x := lit(t, "f32[1,1,4,1]", -2, -0.5, 0.5, 3)
	one := lit(t, "f32[1,1,1,1]", 1)
	for _, c := range []struct {
		mode, extra string
		want        []float64
	}{
		{"kNone", "", []float64{-2, -0.5, 0.5, 3}},
		{"kRelu", "", []float64{0, 0, 0.5, 3}},
		{"kRelu6", "", []float64{0, 0, 0.5, 3}},
		{"kTanh", "", []float64{-0.9640275800758169, -0.46211715726000974, 0.46211715726000974, 0.9950547536867305}},
		{"kSigmoid", "", []float64{0.11920292202211755, 0.3775406687981454, 0.6224593312018546, 0.9525741268224334}},
		{"kElu", "", []float64{-0.8646647167633873, -0.3934693402873666, 0.5, 3}},
		{"kLeakyRelu", `,"leakyrelu_alpha":0.1`, []float64{-0.2, -0.05, 0.5, 3}},
		{"kGeluExact", "", []float64{-0.04550026389635842, -0.15426876936299347, 0.34573123063700656, 2.9959502680159006}},
	} {
		text := `HloModule a
ENTRY e {
  x = f32[1,1,4,1] parameter(0)
  w = f32[1,1,1,1] parameter(1)
  bias = f32[1] constant({0})
  ROOT c = (f32[1,1,4,1], u8[0]) custom-call(x, w, bias), window={size=1x1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBiasActivationForward", backend_config={"cudnn_conv_backend_config":{"conv_result_scale":1,"activation_mode":"` + c.mode + `","side_input_scale":0` + c.extra + `}}
}
`
		for _, backend := range []string{"interp", "cpu"} {
			out := runGPU(t, backend, text, []*hlo.Literal{x, one})
			wantValues(t, c.mode+"/"+backend, out[0], c.want, 1e-6)
		}
	}
}

// TestConvAdjoint checks the backward kinds against the evaluator's
// forward convolution for strides, padding, dilation, layouts and groups.
func TestConvAdjoint(t *testing.T) {
	for _, c := range []struct {
		x, w, window, labels string
		groups               int
	}{
		{"f32[2,5,5,3]", "f32[3,3,3,4]", "size=3x3 pad=1_1x1_1", "b01f_01io->b01f", 1},
		{"f32[1,7,6,2]", "f32[3,2,2,3]", "size=3x2 stride=2x2 pad=0_1x1_0", "b01f_01io->b01f", 1},
		{"f32[1,8,8,2]", "f32[2,2,2,2]", "size=2x2 pad=1_1x0_0 rhs_dilate=2x2", "b01f_01io->b01f", 1},
		{"f32[2,3,6,6]", "f32[4,3,3,3]", "size=3x3 stride=2x1", "bf01_oi01->bf01", 1},
		{"f32[1,8,5,1]", "f32[2,2,1,2]", "size=2x2 stride=3x2 pad=0_0x1_1", "b01f_01io->b01f", 1},
		{"f32[1,5,5,4]", "f32[3,3,2,6]", "size=3x3 pad=1_1x1_1", "b01f_01io->b01f", 2},
		{"f32[2,6,5,5]", "f32[6,2,3,2]", "size=3x2 stride=2x1 pad=1_1x0_1", "bf01_oi01->bf01", 3},
		{"f32[1,4,6,6]", "f32[2,4,3,3]", "size=2x3 stride=1x2", "b0f1_0oi1->b01f", 2},
	} {
		t.Run(c.window+"/"+c.labels, func(t *testing.T) { convAdjoint(t, c.x, c.w, c.window, c.labels, c.groups) })
	}
}

func convAdjoint(t *testing.T, xs, ws, window, labels string, groups int) {
	fwdText := fmt.Sprintf("HloModule f\nENTRY e {\n  x = %s parameter(0)\n  w = %s parameter(1)\n  ROOT y = convolution(x, w), window={%s}, dim_labels=%s, feature_group_count=%d\n}\n", xs, ws, window, labels, groups)
	fwd, err := hlotext.Parse(fwdText, hlotext.Options{File: "fwd.hlo"})
	if err != nil {
		t.Fatal(err)
	}
	args := eval.RandomArguments(fwd, 3)
	x, w := args[0], args[1]
	y, err := eval.Run(fwd, x, w)
	if err != nil {
		t.Fatal(err)
	}
	ys := y.Shape().HumanString()
	dy := eval.RandomArguments(mustParse(t, fmt.Sprintf("HloModule d\nENTRY e {\n  ROOT p = %s parameter(0)\n}\n", ys)), 4)[0]
	call := func(target, a, b, result string) string {
		return fmt.Sprintf("HloModule b\nENTRY e {\n  a = %s parameter(0)\n  b = %s parameter(1)\n  ROOT c = (%s, u8[16]) custom-call(a, b), window={%s}, dim_labels=%s, feature_group_count=%d, custom_call_target=%q, backend_config={\"conv_result_scale\":1,\"activation_mode\":\"kNone\",\"side_input_scale\":0}\n}\n",
			a, b, result, window, labels, groups, target)
	}
	ref := dotLit(dy, y)
	for _, backend := range []string{"interp", "cpu"} {
		dx := runGPU(t, backend, call("__cudnn$convBackwardInput", ys, ws, xs), []*hlo.Literal{dy, w})[0]
		if got := dotLit(dx, x); !near(got, ref) {
			t.Errorf("%s: <backward_input(dy, w), x> = %v, want <dy, conv(x, w)> = %v", backend, got, ref)
		}
		dw := runGPU(t, backend, call("__cudnn$convBackwardFilter", xs, ys, ws), []*hlo.Literal{x, dy})[0]
		if got := dotLit(dw, w); !near(got, ref) {
			t.Errorf("%s: <backward_filter(x, dy), w> = %v, want <dy, conv(x, w)> = %v", backend, got, ref)
		}
	}
}

func mustParse(t *testing.T, text string) *hlo.Module {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{File: "t.hlo"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// dotLit is the sum of the elementwise product of two literals of the same
// dimensions.
func dotLit(a, b *hlo.Literal) float64 {
	s := 0.0
	for i := range int(a.Shape().NumElements()) {
		s += a.GetFloat64(i) * b.GetFloat64(i)
	}
	return s
}

func near(a, b float64) bool {
	d := a - b
	return d*d <= 1e-8*(1+b*b)
}

// TestGPUCallErrors: what the pass cannot read is an error naming the
// instruction, not a silent wrong answer.
func TestGPUCallErrors(t *testing.T) {
	for _, c := range []struct{ name, call, want string }{
		{"epilogue", `f32[2,2] custom-call(a, b), custom_call_target="__cublas$lt$matmul", backend_config={"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]},"epilogue":"SILU"}`, "epilogue SILU is not supported"},
		{"beta without C", `f32[2,2] custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"alpha_real":1,"beta":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}`, "beta is 1 but there is no C operand"},
		{"no config", `f32[2,2] custom-call(a, b), custom_call_target="__cublas$gemm"`, "has no backend_config"},
		{"wrong dims", `f32[2,3] custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}`, "the dot of its operands is [2 2], but the call returns f32[2,3]"},
		{"backward input dilated", `(f32[1,3,3,2], u8[0]) custom-call(a, b), window={size=2x2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBackwardInput", backend_config={}`, "input dilation or reversal is not supported"},
	} {
		text := "HloModule e\nENTRY e {\n  a = f32[2,2] parameter(0)\n  b = f32[2,2] parameter(1)\n  ROOT call = " + c.call + "\n}\n"
		if strings.Contains(c.name, "backward") {
			text = "HloModule e\nENTRY e {\n  a = f32[1,2,2,2] parameter(0)\n  b = f32[2,2,1,2] parameter(1)\n  ROOT call = " + c.call + "\n}\n"
		}
		for _, backend := range []string{"interp", "cpu"} {
			c2 := newClient(t, backend)
			_, err := c2.CompileText(text, axle.CompileOptions{})
			if err == nil || !strings.Contains(err.Error(), "call: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s/%s: got %v, want an error naming call: ... %s", c.name, backend, err, c.want)
			}
		}
	}
}
