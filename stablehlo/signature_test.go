package stablehlo

import (
	"fmt"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// twoVars is an entry in the leading-argument form with two dimension
// variables (b, n) and three dynamic dimensions, the third repeating b.
const twoVars = `func.func public @main(%b: tensor<i64> {jax.global_constant = "b"}, %n: tensor<i64> {jax.global_constant = "n"}, %x: tensor<?x?xf32>, %y: tensor<?xf32>, %w: tensor<3xf32>) -> tensor<?x?xf32> {
  return %x : tensor<?x?xf32>
}`

// TestEntrySignature: declared shapes keep `?` as hlo.Unbounded; the
// leading scalar integers of a dynamic entry are its dimension
// variables, named by jax.global_constant; the variables' values are the
// sizes of the `?`s in order, and a later `?` of a size no variable has
// is an error naming the argument and dimension (worked by hand).
func TestEntrySignature(t *testing.T) {
	src, err := mlir.Parse("v.mlir", []byte(twoVars))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := EntrySignature(src, "")
	if err != nil {
		t.Fatal(err)
	}
	if sig.DimVars != 2 || fmt.Sprint(sig.VarNames) != "[b n]" || sig.Args[2].HumanString() != hlo.ArrayShape(hlo.F32, hlo.Unbounded, hlo.Unbounded).HumanString() {
		t.Fatalf("signature %+v, want 2 variables b, n and argument 2 f32[?,?]", sig)
	}
	shapes := func(x0, x1, y int64) []hlo.Shape {
		return []hlo.Shape{hlo.ArrayShape(hlo.S64), hlo.ArrayShape(hlo.S64), hlo.ArrayShape(hlo.F32, x0, x1), hlo.ArrayShape(hlo.F32, y), hlo.ArrayShape(hlo.F32, 3)}
	}
	vals, err := sig.DimensionValues(shapes(4, 7, 4))
	if err != nil || fmt.Sprint(vals) != "[4 7]" {
		t.Errorf("values %v, %v; want [4 7]", vals, err)
	}
	_, err = sig.DimensionValues(shapes(4, 7, 5))
	if want := "argument 3: dimension 0 has size 5, which no dimension variable has (b = 4, n = 7)"; err == nil || err.Error() != want {
		t.Errorf("inconsistent: got %v, want %q", err, want)
	}
	static, _ := mlir.Parse("s.mlir", []byte("func.func @main(%i: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {\n  return %x : tensor<2xf32>\n}"))
	if sig, err := EntrySignature(static, ""); err != nil || sig.DimVars != 0 {
		t.Errorf("a static entry's leading scalar is no dimension variable: got %+v, %v", sig, err)
	}
}

// assertion is jax.export's check that the two arguments' leading
// dimensions agree, as it writes it.
const assertion = `func.func public @main(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>
  %1 = stablehlo.get_dimension_size %y, dim = 0 : (tensor<?xf32>) -> tensor<i32>
  %2 = stablehlo.compare  EQ, %1, %0,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%2, %1, %0) {api_version = 2 : i32, error_message = "args[1].shape[0] (= {0}) is not 'b' (= {1})", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>) -> ()
  %3 = stablehlo.add %x, %y : tensor<?xf32>
  return %3 : tensor<?xf32>
}`

// TestShapeAssertion: a shape assertion that holds leaves no trace in the
// module (no custom-call for a backend to run); one that fails is an
// error at the op with the values put in the message.
func TestShapeAssertion(t *testing.T) {
	ok := Options{ArgShapes: []hlo.Shape{hlo.ArrayShape(hlo.F32, 3), hlo.ArrayShape(hlo.F32, 3)}}
	m, err := ParseText("a.mlir", assertion, ok)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range m.Entry.Instructions {
		if in.Opcode == hlo.OpCustomCall {
			t.Errorf("the assertion that held is still in the module: %s", in.Name)
		}
	}
	bad := Options{ArgShapes: []hlo.Shape{hlo.ArrayShape(hlo.F32, 3), hlo.ArrayShape(hlo.F32, 4)}}
	_, err = ParseText("a.mlir", assertion, bad)
	if want := "a.mlir:5:3: stablehlo.custom_call: args[1].shape[0] (= 4) is not 'b' (= 3)"; err == nil || err.Error() != want {
		t.Errorf("failed assertion: got %v, want %q", err, want)
	}
}
