package mlir

import (
	"testing"
)

// A generic-form module: every op quoted, regions, properties, results
// with counts, forward-free uses, locations through aliases.
const genericModule = `#loc1 = loc("a.py":3:4)
"builtin.module"() <{sym_name = "m"}> ({
  "func.func"() <{function_type = (tensor<2xf32>) -> (tensor<2xf32>, tensor<f32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %1:2 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %2 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32> loc(#loc1)
      "stablehlo.return"(%2) : (tensor<f32>) -> ()
    }) : (tensor<2xf32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
    "func.return"(%arg0, %1#1) : (tensor<2xf32>, tensor<f32>) -> ()
  }) : () -> ()
}) : () -> ()
`

func TestGenericModule(t *testing.T) {
	m, err := Parse("g.mlir", []byte(genericModule))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "m" || len(m.Ops) != 1 {
		t.Fatalf("module %q with %d ops, want m with 1", m.Name, len(m.Ops))
	}
	f := m.Ops[0]
	if f.Name != "func.func" || len(f.Regions) != 1 || len(f.Regions[0].Blocks) != 1 {
		t.Fatalf("got %s with %d regions", f.Name, len(f.Regions))
	}
	body := f.Regions[0].Blocks[0]
	if len(body.Args) != 1 || len(body.Ops) != 3 {
		t.Fatalf("body has %d args, %d ops; want 1, 3", len(body.Args), len(body.Ops))
	}
	red, ret := body.Ops[1], body.Ops[2]
	if ret.Operands[0] != body.Args[0] || ret.Operands[1] != red.Results[1] {
		t.Errorf("return operands not resolved to their definitions")
	}
	if red.Results[1].Name != "%1#1" || red.Results[1].Index != 1 || red.Results[1].Def != red {
		t.Errorf("result %+v", red.Results[1])
	}
	add := red.Regions[0].Blocks[0].Ops[0]
	if add.Loc != (LocAttr{Text: `loc("a.py":3:4)`}) {
		t.Errorf("add loc = %#v", add.Loc)
	}
	if add.Operands[0] != red.Regions[0].Blocks[0].Args[0] {
		t.Errorf("add operand is not the block argument")
	}
	d, ok := red.Attr("dimensions").(DenseArrayAttr)
	if !ok || len(d.Ints) != 1 || d.Ints[0] != 0 || d.Elem != (IntType{Width: 64}) {
		t.Errorf("dimensions = %#v", red.Attr("dimensions"))
	}
}
