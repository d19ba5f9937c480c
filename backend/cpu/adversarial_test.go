package cpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// reduceF16WithF32Adder is valid HLO (XLA's verifier ignores
// floating-point precision in reducers) that panicked in Execute.
const reduceF16WithF32Adder = `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f16[2,3] parameter(0)
  z = f16[] constant(0)
  ROOT r = f16[2] reduce(x, z), dimensions={1}, to_apply=add
}`

// TestReduceF16WithF32Reducer: the reducer computes in f32, as the f32
// computation would: row 0 is 1+2+3 = 6; row 1 is 2048+1+1 = 2050, exact
// in f32 and in f16 (an f16 accumulator would round 2049 to 2048 twice).
// The evaluator and the compiled backend agree.
func TestReduceF16WithF32Reducer(t *testing.T) {
	m, err := hlotext.Parse(reduceF16WithF32Adder, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := hlo.LiteralFromSlice([]float32{1, 2, 3, 2048, 1, 1}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if x, err = x.Convert(hlo.F16); err != nil {
		t.Fatal(err)
	}
	want := []float64{6, 2050}
	check := func(who string, got *hlo.Literal, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		if got.DType() != hlo.F16 || got.Len() != 2 {
			t.Fatalf("%s: got %s", who, got.Shape())
		}
		for i, w := range want {
			if g := got.GetFloat64(i); g != w {
				t.Errorf("%s: element %d = %v, want %v", who, i, g, w)
			}
		}
	}
	got, err := eval.Run(m, x)
	check("evaluator", got, err)
	exe, err := Compile(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err = exe.Execute(x)
	check("cpu", got, err)
}

// TestCompileRejectsUnknownCustomCall: a custom-call target that neither
// the evaluator nor a kernel implements fails Compile, naming the
// instruction and target, rather than the first Execute.
func TestCompileRejectsUnknownCustomCall(t *testing.T) {
	m, err := hlotext.Parse(`HloModule m
ENTRY e {
  p0 = f32[2] parameter(0)
  ROOT s = f32[2] custom-call(p0), custom_call_target="my_kernel"
}`, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(m, Options{})
	if err == nil || !strings.Contains(err.Error(), `instruction "s"`) || !strings.Contains(err.Error(), `unsupported custom-call target "my_kernel"`) ||
		!errors.Is(err, eval.ErrUnimplemented) {
		t.Fatalf("err = %v", err)
	}
}

// TestCompileRejectsModulesThatPanicked: modules that panicked in Execute
// (index out of range, makeslice) now fail Compile, naming the
// instruction: the first two in verification, the last in
// eval.CheckSupported.
func TestCompileRejectsModulesThatPanicked(t *testing.T) {
	for _, c := range []struct{ text, instr string }{
		{`HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  ROOT t = (f32[4,9], s32[4,9]) custom-call(x), custom_call_target="TopK"
}`, "t"},
		{`HloModule m
ENTRY e {
  x = s32[2,3] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = s32[2,2] gather(x, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={7}, index_vector_dim=2, slice_sizes={1,1}
}`, "g"},
		// 2^52 bytes: fits int64, so it verifies, but no Go heap.
		{`HloModule m
ENTRY e {
  z = f32[] constant(0)
  ROOT b = f32[1125899906842624] broadcast(z), dimensions={}
}`, "b"},
	} {
		m, err := hlotext.Parse(c.text, hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Compile(m, Options{}); err == nil || !strings.Contains(err.Error(), `instruction "`+c.instr+`"`) {
			t.Errorf("%s: err = %v", c.instr, err)
		}
	}
}

// TestMixedPrecisionReducersAgree: every op that calls a reducer,
// comparator or mapped computation accepts one in f32 over f16/bf16 data
// (XLA's verifier ignores floating-point precision there); each runs on
// the evaluator and the compiled backend, which agree element for
// element. These panicked in Execute before (Axle issue 43).
func TestMixedPrecisionReducersAgree(t *testing.T) {
	add := "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\nmx {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b)\n}\nge {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = pred[] compare(a, b), direction=GE\n}\n"
	for _, body := range []string{
		"x = f16[64,48] parameter(0)\n z = f16[] constant(0)\n ROOT r = f16[64] reduce(x, z), dimensions={1}, to_apply=add",
		"x = f16[64,48] parameter(0)\n z = f16[] constant(0)\n ROOT r = f16[48] reduce(x, z), dimensions={0}, to_apply=mx",
		"x = bf16[64,48] parameter(0)\n z = bf16[] constant(0)\n ROOT r = bf16[] reduce(x, z), dimensions={0,1}, to_apply=add",
		"x = f16[64,48] parameter(0)\n z = f16[] constant(0)\n ROOT r = f16[32,24] reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=add",
		"x = f16[64] parameter(0)\n i = s32[10,1] parameter(1)\n u = f16[10] parameter(2)\n ROOT s = f16[64] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add",
		"x = f16[64,48] parameter(0)\n ROOT m = f16[64,48] map(x, x), dimensions={0,1}, to_apply=add",
		"x = f16[64,48] parameter(0)\n s = f16[32,24] parameter(1)\n z = f16[] constant(0)\n ROOT r = f16[64,48] select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=ge, scatter=add",
		"x = f16[64,48] parameter(0)\n ROOT s = f16[64,48] sort(x), dimensions={1}, to_apply=ge",
	} {
		m, err := hlotext.Parse("HloModule m\n"+add+"ENTRY e {\n "+body+"\n}\n", hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := hlo.Verify(m); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		args := eval.RandomArguments(m, 7)
		if len(args) > 1 && args[1].DType() == hlo.S32 { // scatter indices in range
			for i := range args[1].Len() {
				args[1].SetInt64(i, int64(i*5%64))
			}
		}
		want, err := eval.Run(m, args...)
		if err != nil {
			t.Errorf("eval %s: %v", body, err)
			continue
		}
		x, err := Compile(m, Options{})
		if err != nil {
			t.Errorf("compile %s: %v", body, err)
			continue
		}
		got, err := x.Execute(args...)
		if err != nil {
			t.Errorf("cpu %s: %v", body, err)
			continue
		}
		bad := 0
		for i := range want.Len() {
			if want.GetFloat64(i) != got.GetFloat64(i) {
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d elements differ from the evaluator's", body, bad, want.Len())
		}
	}
}
