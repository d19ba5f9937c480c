package stablehlo

import "testing"

// A real_dynamic_slice whose bounds depend on an argument but whose size,
// limit − start, does not (start computed twice, as JAX writes it): rows
// [s, s+2) and columns [1, 3) of x[i][j] = 4i + j with s = 1 are
// {{5, 6}, {9, 10}} (hand-worked).
func TestRealDynamicSliceSymbolicSize(t *testing.T) {
	src := `// RUN: stablehlo-translate --interpret --args="[dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0]]> : tensor<5x4xf32>, dense<1> : tensor<i32>]" %s
func.func @main(%x: tensor<5x4xf32>, %s: tensor<i32>) -> tensor<?x?xf32> {
  %one = stablehlo.constant dense<1> : tensor<1xi32>
  %r0 = stablehlo.reshape %s : (tensor<i32>) -> tensor<1xi32>
  %start = stablehlo.concatenate %r0, %one, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %r1 = stablehlo.reshape %s : (tensor<i32>) -> tensor<1xi32>
  %again = stablehlo.concatenate %r1, %one, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %size = stablehlo.constant dense<2> : tensor<2xi32>
  %limit = stablehlo.add %again, %size : tensor<2xi32>
  %strides = stablehlo.constant dense<1> : tensor<2xi32>
  %0 = stablehlo.real_dynamic_slice %x, %start, %limit, %strides : (tensor<5x4xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x?xf32>
  check.expect_eq_const %0, dense<[[5.0, 6.0], [9.0, 10.0]]> : tensor<2x2xf32>
  return %0 : tensor<?x?xf32>
}`
	cases := fileCases("slice.mlir", []byte(src))
	for _, backend := range []string{"interp", "cpu"} {
		if o := RunCase(cases[0], clientExecutor(t, backend)); o.Status != "pass" {
			t.Errorf("%s: %s: %s", backend, o.Status, o.Reason)
		}
	}
}
