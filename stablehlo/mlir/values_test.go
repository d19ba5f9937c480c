package mlir

import (
	"math"
	"reflect"
	"testing"
)

// attrOf parses `func.func @f() attributes {a = TEXT}` and returns a.
func attrOf(t *testing.T, text string) Attr {
	t.Helper()
	m, err := Parse("a.mlir", []byte("func.func private @f() attributes {a = "+text+"}\n"))
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return m.Ops[0].Attr("a")
}

// TestAttrValues checks attributes against values worked out by hand.
func TestAttrValues(t *testing.T) {
	f32, i64 := FloatType{Name: "f32"}, IntType{Width: 64}
	cases := []struct {
		text string
		want Attr
	}{
		{`7`, IntAttr{Value: 7, Type: i64}},
		{`-7 : i32`, IntAttr{Value: -7, Type: IntType{Width: 32}}},
		{`0xFF : ui8`, IntAttr{Value: 255, Type: IntType{Width: 8, Signedness: 'u'}}},
		{`18446744073709551615 : ui64`, IntAttr{Value: -1, Type: IntType{Width: 64, Signedness: 'u'}}},
		{`2.5`, FloatAttr{Value: 2.5, Type: FloatType{Name: "f64"}}},
		{`-1.5e3 : f32`, FloatAttr{Value: -1500, Type: f32}},
		{`0x3FC00000 : f32`, FloatAttr{Value: 1.5, Type: f32}},              // 1.5 = 0x3FC00000
		{`0x3C00 : f16`, FloatAttr{Value: 1, Type: FloatType{Name: "f16"}}}, // f16 1.0
		{`0xC000 : bf16`, FloatAttr{Value: -2, Type: FloatType{Name: "bf16"}}},
		{`0x7C00 : f16`, FloatAttr{Value: math.Inf(1), Type: FloatType{Name: "f16"}}},
		{`0x38 : f8E4M3FN`, FloatAttr{Value: 1, Type: FloatType{Name: "f8E4M3FN"}}}, // e=7 (bias 7), m=0
		{`0xC0 : f8E5M2`, FloatAttr{Value: -2, Type: FloatType{Name: "f8E5M2"}}},    // sign, e=16 (bias 15)
		{`0x7FF0000000000000 : f64`, FloatAttr{Value: math.Inf(1), Type: FloatType{Name: "f64"}}},
		{`true`, BoolAttr{Value: true}},
		{`unit`, UnitAttr{}},
		{`"a\"b\\c\n\41"`, StringAttr{Value: "a\"b\\c\nA"}},
		{`[1, "x", [true]]`, ArrayAttr{Elems: []Attr{IntAttr{Value: 1, Type: i64}, StringAttr{Value: "x"},
			ArrayAttr{Elems: []Attr{BoolAttr{Value: true}}}}}},
		{`array<i64: 1, -2>`, DenseArrayAttr{Elem: i64, Ints: []int64{1, -2}}},
		{`array<i64>`, DenseArrayAttr{Elem: i64}},
		{`array<i1: true, false>`, DenseArrayAttr{Elem: IntType{Width: 1}, Ints: []int64{1, 0}}},
		{`array<f32: 1.5, -2.0>`, DenseArrayAttr{Elem: f32, Floats: []float64{1.5, -2}}},
		{`{b = 1 : i32, a}`, DictAttr{Entries: []NamedAttr{{Name: "a", Value: UnitAttr{}},
			{Name: "b", Value: IntAttr{Value: 1, Type: IntType{Width: 32}}}}}},
		{`@a::@b`, SymbolRefAttr{Name: "a::b"}},
		{`(i32, f32) -> tensor<2xf32>`, TypeAttr{Type: FunctionType{Inputs: []Type{IntType{Width: 32}, f32},
			Results: []Type{TensorType{Dims: []int64{2}, Elem: f32}}}}},
		{`#stablehlo<comparison_direction LT>`, DialectAttr{Name: "stablehlo.comparison_direction", Raw: "LT"}},
		{`#stablehlo.channel_handle<handle = 1, type = 2>`, DialectAttr{Name: "stablehlo.channel_handle",
			Raw: "handle = 1, type = 2", Fields: []NamedAttr{{Name: "handle", Value: IntAttr{Value: 1, Type: i64}},
				{Name: "type", Value: IntAttr{Value: 2, Type: i64}}}}},
		{`#sdy.sharding<@mesh, [{"a"}, {}]>`, DialectAttr{Name: "sdy.sharding", Raw: `@mesh, [{"a"}, {}]`}},
		{`#stablehlo.conv<[b, 1, 0, f]x[o, i, 0, 1]->[f, b, 0, 1]>`, DialectAttr{Name: "stablehlo.conv",
			Raw: "[b, 1, 0, f]x[o, i, 0, 1]->[f, b, 0, 1]", Fields: []NamedAttr{
				{Name: "input_batch_dimension", Value: IntAttr{Value: 0, Type: i64}},
				{Name: "input_feature_dimension", Value: IntAttr{Value: 3, Type: i64}},
				{Name: "input_spatial_dimensions", Value: i64List([]int64{2, 1})},
				{Name: "kernel_input_feature_dimension", Value: IntAttr{Value: 1, Type: i64}},
				{Name: "kernel_output_feature_dimension", Value: IntAttr{Value: 0, Type: i64}},
				{Name: "kernel_spatial_dimensions", Value: i64List([]int64{2, 3})},
				{Name: "output_batch_dimension", Value: IntAttr{Value: 1, Type: i64}},
				{Name: "output_feature_dimension", Value: IntAttr{Value: 0, Type: i64}},
				{Name: "output_spatial_dimensions", Value: i64List([]int64{2, 3})}}}},
		{`loc("f.py":1:2)`, LocAttr{Text: `loc("f.py":1:2)`}},
	}
	for _, c := range cases {
		if got := attrOf(t, c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got  %#v\n want %#v", c.text, got, c.want)
		}
	}
}

// TestDenseValues checks dense literals: element tokens kept as written,
// nested lists flattened row-major, hex blobs decoded little-endian.
func TestDenseValues(t *testing.T) {
	tensor := func(elem Type, dims ...int64) TensorType { return TensorType{Dims: dims, Elem: elem} }
	i16, f32 := IntType{Width: 16}, FloatType{Name: "f32"}
	cases := []struct {
		text string
		want DenseAttr
	}{
		{`dense<[[1, -2], [3, 4]]> : tensor<2x2xi16>`,
			DenseAttr{Type: tensor(i16, 2, 2), Elems: []string{"1", "-2", "3", "4"}}},
		{`dense<0.5> : tensor<3xf32>`, DenseAttr{Type: tensor(f32, 3), Elems: []string{"0.5"}, Splat: true}},
		{`dense<[true, false]> : tensor<2xi1>`,
			DenseAttr{Type: tensor(IntType{Width: 1}, 2), Elems: []string{"true", "false"}}},
		{`dense<[1, -2, 0, -1]> : tensor<4xi2>`,
			DenseAttr{Type: tensor(IntType{Width: 2}, 4), Elems: []string{"1", "-2", "0", "-1"}}},
		{`dense<[15, 3]> : tensor<2xui4>`,
			DenseAttr{Type: tensor(IntType{Width: 4, Signedness: 'u'}, 2), Elems: []string{"15", "3"}}},
		{`dense<[(1.0, -2.0), (0x7FC00000, 3.0)]> : tensor<2xcomplex<f32>>`,
			DenseAttr{Type: tensor(ComplexType{Elem: f32}, 2), Elems: []string{"(1.0, -2.0)", "(0x7FC00000, 3.0)"}}},
		{`dense<[0x7FC00000, -inf, nan]> : tensor<3xf32>`,
			DenseAttr{Type: tensor(f32, 3), Elems: []string{"0x7FC00000", "-inf", "nan"}}},
		// 0x0700FDFF = int16 7, -3 little-endian.
		{`dense<"0x0700FDFF"> : tensor<2xi16>`, DenseAttr{Type: tensor(i16, 2), Hex: []byte{7, 0, 0xFD, 0xFF}}},
		// A blob of one element for a bigger shape is a splat, as in MLIR.
		{`dense<"0x0000803F"> : tensor<2x2xf32>`,
			DenseAttr{Type: tensor(f32, 2, 2), Hex: []byte{0, 0, 0x80, 0x3F}, Splat: true}},
		{`dense<> : tensor<0x2xi8>`, DenseAttr{Type: tensor(IntType{Width: 8}, 0, 2)}},
	}
	for _, c := range cases {
		if got := attrOf(t, c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got  %#v\n want %#v", c.text, got, c.want)
		}
	}
}

// TestTypes checks types against their hand-written structure.
func TestTypes(t *testing.T) {
	f32, i8 := FloatType{Name: "f32"}, IntType{Width: 8}
	cases := []struct {
		text string
		want Type
	}{
		{`tensor<2x?x3xf32>`, TensorType{Dims: []int64{2, -1, 3}, Elem: f32}},
		{`tensor<*xbf16>`, TensorType{Unranked: true, Elem: FloatType{Name: "bf16"}}},
		{`tensor<f8E4M3FN>`, TensorType{Elem: FloatType{Name: "f8E4M3FN"}}},
		{`tensor<4xf4E2M1FN>`, TensorType{Dims: []int64{4}, Elem: FloatType{Name: "f4E2M1FN"}}},
		{`tensor<?xf32, #stablehlo.bounds<4>>`, TensorType{Dims: []int64{-1}, Elem: f32,
			Encoding: DialectAttr{Name: "stablehlo.bounds", Raw: "4"}}},
		{`tensor<2xsi4>`, TensorType{Dims: []int64{2}, Elem: IntType{Width: 4, Signedness: 's'}}},
		{`complex<f64>`, ComplexType{Elem: FloatType{Name: "f64"}}},
		{`tuple<tensor<i32>, tuple<>>`, TupleType{Elems: []Type{TensorType{Elem: IntType{Width: 32}}, TupleType{}}}},
		{`index`, IndexType{}},
		{`!stablehlo.token`, TokenType{}},
		{`!quant.uniform<i8:f32, 0.5:-3>`, QuantType{Storage: i8, StorageMin: -128, StorageMax: 127,
			Expressed: f32, Axis: -1, Scales: []float64{0.5}, ZeroPoints: []int64{-3}}},
		{`!quant.uniform<i8:f32, 2.0>`, QuantType{Storage: i8, StorageMin: -128, StorageMax: 127,
			Expressed: f32, Axis: -1, Scales: []float64{2}, ZeroPoints: []int64{0}}},
		{`!quant.uniform<i8<-127:127>:f32:1, {0.1:-1, 2.000000e-01:0}>`, QuantType{Storage: i8,
			StorageMin: -127, StorageMax: 127, HasRange: true, Expressed: f32, Axis: 1,
			Scales: []float64{0.1, 0.2}, ZeroPoints: []int64{-1, 0}}},
		{`!quant.uniform<ui4:f16, 1.0:8>`, QuantType{Storage: IntType{Width: 4, Signedness: 'u'}, StorageMin: 0,
			StorageMax: 15, Expressed: FloatType{Name: "f16"}, Axis: -1, Scales: []float64{1}, ZeroPoints: []int64{8}}},
		{`!foo.bar<1, [2]>`, OpaqueType{Text: `!foo.bar<1, [2]>`}},
		{`() -> ()`, FunctionType{}},
		{`memref<4xf64>`, OpaqueType{Text: `memref<4xf64>`}},
		{`none`, OpaqueType{Text: `none`}},
	}
	for _, c := range cases {
		got := attrOf(t, c.text)
		if ta, ok := got.(TypeAttr); !ok || !reflect.DeepEqual(ta.Type, c.want) {
			t.Errorf("%s:\n got  %#v\n want %#v", c.text, got, c.want)
		}
	}
}

// TestSplitFile checks that sections keep their line numbers.
func TestSplitFile(t *testing.T) {
	src := "// RUN: x\nfunc.func @a() {\n  func.return\n}\n// -----\nfunc.func @b() {\n  %0 = stablehlo.bogus\n}\n"
	secs := SplitFile([]byte(src))
	if len(secs) != 2 {
		t.Fatalf("%d sections, want 2", len(secs))
	}
	if _, err := Parse("s.mlir", secs[0]); err != nil {
		t.Fatal(err)
	}
	_, err := Parse("s.mlir", secs[1])
	want := "s.mlir:7:8: unknown op stablehlo.bogus in pretty syntax (write it in generic form)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestDenseResource checks that dense_resource constants take their bytes
// from the file's resource section, without the 4-byte alignment header.
func TestDenseResource(t *testing.T) {
	src := `func.func @f() -> tensor<2xf32> {
  %0 = stablehlo.constant dense_resource<blob.a> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      blob.a: "0x040000000000803F00000040",
      "other": "0x04000000"
    }
  }
#-}
`
	m, err := Parse("r.mlir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := m.Ops[0].Regions[0].Blocks[0].Ops[0].Attr("value")
	want := DenseAttr{Type: TensorType{Dims: []int64{2}, Elem: FloatType{Name: "f32"}},
		Hex: []byte{0, 0, 0x80, 0x3F, 0, 0, 0, 0x40}} // 1.0, 2.0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
	_, err = Parse("r.mlir", []byte("func.func private @g() attributes {a = dense_resource<__elided__> : tensor<2xf32>}"))
	if err == nil || err.Error() != "r.mlir:1:55: dense_resource __elided__ has no data in the file" {
		t.Errorf("elided resource: got %v", err)
	}
}

// TestSdyMesh checks the top-level mesh op against its generic attributes.
func TestSdyMesh(t *testing.T) {
	m, err := Parse("m.mlir", []byte(`sdy.mesh @mesh = <["a"=2, "b"=4]>`))
	if err != nil {
		t.Fatal(err)
	}
	op := m.Ops[0]
	want := []NamedAttr{
		{Name: "mesh", Value: DialectAttr{Name: "sdy.mesh", Raw: `["a" = 2, "b" = 4]`}},
		{Name: "sym_name", Value: StringAttr{Value: "mesh"}},
	}
	if op.Name != "sdy.mesh" || !reflect.DeepEqual(op.Attrs, want) {
		t.Errorf("got %s %#v", op.Name, op.Attrs)
	}
}

// TestByteOrderMark checks that a leading UTF-8 BOM is skipped and
// columns still count from the line's first byte.
func TestByteOrderMark(t *testing.T) {
	if _, err := Parse("b.mlir", []byte("\xef\xbb\xbffunc.func private @f()")); err != nil {
		t.Fatal(err)
	}
	_, err := Parse("b.mlir", []byte("\xef\xbb\xbf$"))
	if err == nil || err.Error() != "b.mlir:1:4: unexpected character '$'" {
		t.Errorf("got %v", err)
	}
}

// TestForwardReference checks that a use before its definition in a graph
// region (the module body) resolves, and that results carry their def.
func TestForwardReference(t *testing.T) {
	src := `"test.graph"() ({
  %1 = "test.use"(%0) : (tensor<f32>) -> tensor<f32>
  %0 = "test.def"() : () -> tensor<f32>
}) : () -> ()`
	m, err := Parse("g.mlir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ops := m.Ops[0].Regions[0].Blocks[0].Ops
	if ops[0].Operands[0] != ops[1].Results[0] {
		t.Errorf("forward use not resolved to its definition")
	}
}
