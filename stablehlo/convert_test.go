package stablehlo

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// TestHandWritten runs the hand-worked programs of testdata/ (generic
// form, expected values worked out by hand in each file's checks).
func TestHandWritten(t *testing.T) {
	cases, err := FindCases("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"interp", "cpu"} {
		exec := clientExecutor(t, backend)
		for _, c := range cases {
			if o := RunCase(c, exec); o.Status != "pass" {
				t.Errorf("%s on %s: %s: %s", c.Name, backend, o.Status, o.Reason)
			}
		}
	}
}

// dynamicProgram is a shape-polymorphic entry as jax.export writes it:
// %arg0 is the dimension variable, the size of %arg1's first dimension.
const dynamicProgram = `
func.func public @main(%arg0: tensor<i64>, %arg1: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
  %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  %2 = stablehlo.constant dense<3> : tensor<1xi32>
  %3 = stablehlo.concatenate %1, %2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %4 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %5 = stablehlo.dynamic_broadcast_in_dim %4, %3, dims = [1] : (tensor<3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  %6 = stablehlo.add %arg1, %5 : tensor<?x3xf32>
  return %6 : tensor<?x3xf32>
}`

// TestDynamicRefinement refines ?x3 to 2x3 from the argument shapes and
// runs the result: arg1 + [1, 2, 3] per row (worked by hand).
func TestDynamicRefinement(t *testing.T) {
	opts := Options{ArgShapes: []hlo.Shape{hlo.ArrayShape(hlo.S64), hlo.ArrayShape(hlo.F32, 2, 3)}}
	m, err := ParseText("dyn.mlir", dynamicProgram, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := hlo.Verify(m); err != nil {
		t.Fatal(err)
	}
	x, _ := hlo.LiteralFromSlice([]float32{10, 20, 30, 40, 50, 60}, 2, 3)
	out, err := eval.Run(m, hlo.ScalarLiteral[int64](2), x)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := hlo.LiteralToSlice[float32](out)
	want := []float32{11, 22, 33, 41, 52, 63}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestDynamicArgumentErrors: a shape that contradicts the type names the
// argument; no shapes for a dynamic type is ErrUnsupported.
func TestDynamicArgumentErrors(t *testing.T) {
	_, err := ParseText("dyn.mlir", dynamicProgram, Options{ArgShapes: []hlo.Shape{hlo.ArrayShape(hlo.S64), hlo.ArrayShape(hlo.F32, 2, 4)}})
	if err == nil || !strings.Contains(err.Error(), "argument 1 (%arg1)") || !strings.HasPrefix(err.Error(), "dyn.mlir:2:1:") {
		t.Errorf("inconsistent shape: got %v, want an error at dyn.mlir:2:1 naming argument 1 (%%arg1)", err)
	}
	_, err = ParseText("dyn.mlir", dynamicProgram, Options{})
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("no shapes: got %v, want ErrUnsupported", err)
	}
}

// TestUnsupportedOpPosition: an op the converter lacks is ErrUnsupported
// with the op's FILE:LINE:COL, and UnsupportedReason names it.
func TestUnsupportedOpPosition(t *testing.T) {
	src := "func.func @main() -> tensor<f32> {\n  %0 = \"stablehlo.no_such_op\"() : () -> tensor<f32>\n  return %0 : tensor<f32>\n}"
	_, err := ParseText("u.mlir", src, Options{})
	if !errors.Is(err, ErrUnsupported) || !strings.HasPrefix(err.Error(), "u.mlir:2:8: ") {
		t.Fatalf("got %v, want ErrUnsupported at u.mlir:2:8", err)
	}
	if r := UnsupportedReason(err); r != "op stablehlo.no_such_op" {
		t.Errorf("reason %q, want %q", r, "op stablehlo.no_such_op")
	}
}

// TestModuleConfig: mhlo.num_replicas / num_partitions become the
// module's counts; unknown attributes are dropped.
func TestModuleConfig(t *testing.T) {
	src := `module @m attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 4 : i32, foo.bar = "x"} {
  func.func @main(%a: tensor<2xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<2xf32> {jax.result_info = ""}) {
    return %a : tensor<2xf32>
  }
}`
	m, err := ParseText("m.mlir", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.ReplicaCount != 4 || m.NumPartitions != 2 || m.Name != "m" {
		t.Errorf("got replicas %d partitions %d name %q, want 4, 2, m", m.ReplicaCount, m.NumPartitions, m.Name)
	}
}

// TestShardingKept: mhlo.sharding on an argument and on an op is HLO
// sharding text and lands on the parameter and the instruction.
func TestShardingKept(t *testing.T) {
	src := `func.func @main(%a: tensor<2xf32> {mhlo.sharding = "{replicated}"}) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{maximal device=0}"} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`
	m, err := ParseText("s.mlir", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Entry.Params[0].Attr("sharding"); v != hlo.Raw("{replicated}") {
		t.Errorf("parameter sharding %v, want {replicated}", v)
	}
	if v, _ := m.Entry.Root.Attr("sharding"); v != hlo.Raw("{maximal device=0}") {
		t.Errorf("custom-call sharding %v, want {maximal device=0}", v)
	}
}

// TestUnknownCustomCall: an imported module keeps any custom-call target;
// a program converted to run refuses one Axle does not implement.
func TestUnknownCustomCall(t *testing.T) {
	src := `func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @my_project_kernel(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`
	m, err := ParseText("c.mlir", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tgt, _ := m.Entry.Root.StringAttr("custom_call_target"); tgt != "my_project_kernel" {
		t.Errorf("root target %q, want my_project_kernel", tgt)
	}
	mod, err := mlir.Parse("c.mlir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConvertProgram(mod, Options{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ConvertProgram: got %v, want ErrUnsupported", err)
	}
}

// TestAnnotationsKept: jax.result_info and sdy argument shardings have no
// HLO field and become frontend attributes; op frontend attributes carry
// over; the printed module parses back.
func TestAnnotationsKept(t *testing.T) {
	src := `func.func @main(%a: tensor<2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<2xf32> {jax.result_info = "out"}) {
  %0 = stablehlo.negate %a {mhlo.frontend_attributes = {_xla_stream = "1"}} : tensor<2xf32>
  return %0 : tensor<2xf32>
}`
	m, err := ParseText("a.mlir", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Entry.Params[0].Attr("frontend_attributes"); v != hlo.Raw(`{sdy.sharding="#sdy.sharding<@mesh, [{\"x\"}]>"}`) {
		t.Errorf("parameter frontend attributes %v", v)
	}
	if v, _ := m.Entry.Root.Attr("frontend_attributes"); v != hlo.Raw(`{_xla_stream="1"}`) {
		t.Errorf("negate frontend attributes %v", v)
	}
	if v, _ := m.Attr("frontend_attributes"); v != hlo.Raw(`{result0.jax.result_info="out"}`) {
		t.Errorf("module frontend attributes %v", v)
	}
	text := hlotext.Print(m, hlotext.PrintOptions{})
	if _, err := hlotext.Parse(text, hlotext.Options{}); err != nil {
		t.Errorf("printed module does not parse back: %v\n%s", err, text)
	}
}

// TestMalformedOpIsAnError: an op missing operands the converter indexes
// is an error at its position, not a panic.
func TestMalformedOpIsAnError(t *testing.T) {
	src := "func.func @main() -> tensor<f32> {\n  %0 = \"stablehlo.dot\"() : () -> tensor<f32>\n  return %0 : tensor<f32>\n}"
	_, err := ParseText("bad.mlir", src, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "bad.mlir:2:") {
		t.Errorf("got %v (%T), want an error at bad.mlir:2", err, err)
	}
}

// TestDotAlgorithm: a dot_general's algorithm becomes HLO's enum.
func TestDotAlgorithm(t *testing.T) {
	src := `func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3, allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}`
	m, err := ParseText("d.mlir", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Entry.Root.EnumAttr("algorithm"); v != "dot_bf16_bf16_f32_x3" {
		t.Errorf("algorithm %q, want dot_bf16_bf16_f32_x3", v)
	}
	if err := hlo.Verify(m); err != nil {
		t.Error(err)
	}
	if _, err := hlotext.Parse(hlotext.Print(m, hlotext.PrintOptions{}), hlotext.Options{}); err != nil {
		t.Errorf("printed module does not parse back: %v", err)
	}
}
