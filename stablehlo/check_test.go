package stablehlo

import "testing"

// The custom_call form of check.expect_almost_eq compares with 1e-3 (as
// stablehlo-translate's fallback does), the op form with its tolerance
// attribute, 1e-4 by default; custom_call @check.eq compares floats with
// 1e-4. Values differ by 0.0005 (hand-worked: 1.0 against 1.0005).
func TestCheckTolerances(t *testing.T) {
	prog := func(check string) Case {
		src := `// RUN: stablehlo-translate --interpret %s
func.func @main() {
  %a = stablehlo.constant dense<1.0> : tensor<f64>
  %b = stablehlo.constant dense<1.0005> : tensor<f64>
  ` + check + `
  func.return
}`
		return Case{Name: "tol.mlir", File: "tol.mlir", Src: []byte(src), Interpret: true}
	}
	exec := clientExecutor(t, "interp")
	for _, c := range []struct {
		check, want string
	}{
		{`stablehlo.custom_call @check.expect_almost_eq(%a, %b) {has_side_effect = true} : (tensor<f64>, tensor<f64>) -> ()`, "pass"},
		{`check.expect_almost_eq %a, %b : tensor<f64>`, "fail"},
		{`check.expect_almost_eq %a, %b, tolerance = 1.0e-3 : tensor<f64>`, "pass"},
		{`%e = stablehlo.custom_call @check.eq(%a, %b) : (tensor<f64>, tensor<f64>) -> tensor<i1>`, "fail"},
		{`%e = stablehlo.custom_call @check.eq(%a, %a) : (tensor<f64>, tensor<f64>) -> tensor<i1>`, "pass"},
	} {
		if o := RunCase(prog(c.check), exec); o.Status != c.want {
			t.Errorf("%s: %s (%s), want %s", c.check, o.Status, o.Reason, c.want)
		}
	}
}
