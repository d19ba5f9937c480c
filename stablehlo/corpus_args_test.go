package stablehlo

import (
	"slices"
	"strings"
	"testing"
)

// The entry's arguments come from the RUN line that interprets the file
// and is expected to succeed; the `not` lines test the flag's errors.
// Hand-worked: 1 + 2 = 3 in each element, 2.5·2 = 5.
func TestRunArgs(t *testing.T) {
	src := `// RUN: stablehlo-translate %s --interpret --args="[dense<1> : tensor<2xi32>, dense<2> : tensor<2xi32>, dense<[2.5, -1.0]> : tensor<2xf32>]"
// RUN: not stablehlo-translate %s --interpret --args="not_array"
func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>, %c: tensor<2xf32>) -> (tensor<2xi32>, tensor<2xf32>) {
  %0 = stablehlo.add %a, %b : tensor<2xi32>
  %1 = stablehlo.add %c, %c : tensor<2xf32>
  return %0, %1 : tensor<2xi32>, tensor<2xf32>
}`
	cases := fileCases("args.mlir", []byte(src))
	if len(cases) != 1 || !strings.HasPrefix(cases[0].Args, "[dense<1>") {
		t.Fatalf("cases %+v: want one with the first RUN line's --args", cases)
	}
	for _, backend := range []string{"interp", "cpu"} {
		o := RunCase(cases[0], clientExecutor(t, backend))
		want := []string{"result 0: s32[2] {3, 3}", "result 1: f32[2] {5, -2}"}
		if o.Status != "pass" || !slices.Equal(o.Printed, want) {
			t.Errorf("%s: %s %s, printed %q, want pass and %q", backend, o.Status, o.Reason, o.Printed, want)
		}
	}
}

func TestParseArgsErrors(t *testing.T) {
	for _, text := range []string{"not_array", "[4.0 : f32]", "[dense<1> : tensor<2xi32>, 7]"} {
		if _, err := parseArgs(text); err == nil {
			t.Errorf("parseArgs(%q) succeeded, want an error", text)
		}
	}
}
