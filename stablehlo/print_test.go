package stablehlo

import (
	"slices"
	"testing"
)

// interpreter.print passes its value through and reports it: in the entry
// and in a function run_parallel inlines into it (once per process), in
// program order; the check after it still runs. Expected text: iota of 2
// is {0, 1}, and 3·{0, 1} + 1 = {1, 4}, printed as the hlo literal prints.
func TestInterpreterPrint(t *testing.T) {
	src := `// RUN: stablehlo-translate --interpret %s
func.func @f() -> tensor<2xi32> {
  %0 = stablehlo.iota dim = 0 : tensor<2xi32>
  interpreter.print %0 : tensor<2xi32>
  return %0 : tensor<2xi32>
}
func.func @main() {
  %r:2 = "interpreter.run_parallel"() {programs = [[@f, @f]]} : () -> (tensor<2xi32>, tensor<2xi32>)
  %c = stablehlo.constant dense<[1, 4]> : tensor<2xi32>
  interpreter.print %c : tensor<2xi32>
  %three = stablehlo.constant dense<3> : tensor<2xi32>
  %one = stablehlo.constant dense<1> : tensor<2xi32>
  %m = stablehlo.multiply %r#0, %three : tensor<2xi32>
  %a = stablehlo.add %m, %one : tensor<2xi32>
  check.expect_eq %a, %c : tensor<2xi32>
  func.return
}`
	c := Case{Name: "print.mlir", File: "print.mlir", Src: []byte(src), Interpret: true}
	for _, backend := range []string{"interp", "cpu"} {
		o := RunCase(c, clientExecutor(t, backend))
		if o.Status != "pass" {
			t.Fatalf("%s: %s: %s", backend, o.Status, o.Reason)
		}
		want := []string{"print.mlir:4:3: s32[2] {0, 1}", "print.mlir:4:3: s32[2] {0, 1}", "print.mlir:10:3: s32[2] {1, 4}"}
		if !slices.Equal(o.Printed, want) {
			t.Errorf("%s: printed %q, want %q", backend, o.Printed, want)
		}
	}
}
