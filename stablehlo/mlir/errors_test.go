package mlir

import (
	"errors"
	"strings"
	"testing"
)

// TestErrors checks bad inputs against their exact messages; positions
// are counted by hand (1-based, columns in bytes; the nesting limit trips
// at the 200th bracket, after the dictionary took one level).
func TestErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"func.func @f() {\n  %0 = stablehlo.add %x, %x : tensor<f32>\n}",
			"e.mlir:2:22: use of undefined value %x"},
		{"func.func @f() {\n  stablehlo.frob\n}",
			"e.mlir:2:3: unknown op stablehlo.frob in pretty syntax (write it in generic form)"},
		{"func.func @f() attributes {a = \"abc\n}",
			"e.mlir:1:32: unterminated string"},
		{"func.func @f() { $ }",
			"e.mlir:1:18: unexpected character '$'"},
		{"func.func @f(%a: tensor<f32>) {\n  %a = stablehlo.abs %a : tensor<f32>\n}",
			"e.mlir:2:3: redefinition of value %a"},
		{"func.func @f() {\n  %0:2 = \"t.op\"() : () -> tensor<f32>\n}",
			"e.mlir:2:3: t.op has 1 results but 2 names are bound"},
		{"func.func @f(%a: tensor<2xf32) {\n}",
			"e.mlir:1:30: expected '>', found ')'"},
		{"func.func @f(%a: tensor<2 f32>) {\n}",
			"e.mlir:1:26: expected 'x' after a dimension"},
		{"func.func @f(%a: tensor<f32>) {\n  \"t.op\"(%a) : () -> ()\n}",
			"e.mlir:2:16: t.op has 1 operands but its type lists 0"},
		{"func.func @f() {\n  %0:2 = \"t.op\"() : () -> (i32, i32)\n  \"t.use\"(%0#2) : (i32) -> ()\n}",
			"e.mlir:3:11: %0 has only 2 results"},
		{"func.func @f() attributes {a = #foo} {\n}",
			"e.mlir:1:32: undefined attribute alias #foo"},
		{"func.func @f() attributes {a = " + strings.Repeat("[", 300) + "} {\n}",
			"e.mlir:1:231: nesting deeper than 200"},
		{"func.func @f() attributes {a = dense<" + strings.Repeat("(", 300) + "> : tensor<complex<f32>>} {\n}",
			"e.mlir:1:236: nesting deeper than 200"},
		{"func.func @f() {\n  func.return",
			"e.mlir:2:14: expected '}' to close the region, found end of file"},
		{"func.func @f() attributes {a = dense<[1, @x]> : tensor<2xi32>} {\n}",
			"e.mlir:1:42: expected a dense element, found '@x'"},
		{"func.func @f() {\n  \"t.op\"() : () -> () loc(#loc9)\n}",
			"e.mlir:2:23: undefined location alias #loc9"},
		{"func.func @f() attributes {a = dense<\"0xABC\"> : tensor<2xi8>} {\n}",
			"e.mlir:1:38: hex blob has an odd number of digits"},
		{"func.func @f() attributes {a = 99999999999999999999} {\n}",
			"e.mlir:1:32: integer 99999999999999999999 out of range"},
		{"func.func @f(%a: tensor<2xf32>) {\n  %0 = stablehlo.reduce(%a init: %a) applies across dimensions = [0] : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>\n}",
			"e.mlir:2:46: expected the reduction op's name after applies, found 'across'"},
		{"func.func @f(%a: tensor<2xf32>) {\n  %0 = stablehlo.transpose %a, dims = [1, x] : (tensor<2xf32>) -> tensor<2xf32>\n}",
			"e.mlir:2:43: expected an integer, found 'x'"},
		{"func.func @f(%a: tensor<2xf32>) {\n  %0 = stablehlo.compare %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n}",
			"e.mlir:2:26: expected a stablehlo.comparison_direction keyword, found '%a'"},
		{"module {\n}\nmodule {\n}",
			"e.mlir:3:1: only one module per file (or section)"},
		{"\"t.op\"() ({\n^bb0(%x: i32, %x: i32):\n}) : () -> ()",
			"e.mlir:2:15: redefinition of value %x"},
	}
	for _, c := range cases {
		_, err := Parse("e.mlir", []byte(c.src))
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: got %v, want an *Error", c.src, err)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%q:\n got  %s\n want %s", c.src, err, c.want)
		}
	}
}
