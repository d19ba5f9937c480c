package cpu

import (
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
