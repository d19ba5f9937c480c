package stablehlo

import (
	"math"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// TestDenseLiterals converts dense attributes written every way MLIR
// writes them; the expected bits are worked out by hand from the IEEE and
// two's-complement encodings.
func TestDenseLiterals(t *testing.T) {
	tensor := func(elem mlir.Type, dims ...int64) mlir.Type { return mlir.TensorType{Dims: dims, Elem: elem} }
	f32, bf16 := mlir.FloatType{Name: "f32"}, mlir.FloatType{Name: "bf16"}
	for _, tc := range []struct {
		name string
		d    mlir.DenseAttr
		want []uint64 // element bit patterns
	}{
		{"decimal f32", mlir.DenseAttr{Type: tensor(f32, 2), Elems: []string{"1.5", "-2.0"}}, []uint64{0x3FC00000, 0xC0000000}},
		{"hex-bits f32 (NaN, -inf)", mlir.DenseAttr{Type: tensor(f32, 2), Elems: []string{"0x7FC00000", "0xFF800000"}}, []uint64{0x7FC00000, 0xFF800000}},
		{"splat", mlir.DenseAttr{Type: tensor(f32, 3), Elems: []string{"1.0"}, Splat: true}, []uint64{0x3F800000, 0x3F800000, 0x3F800000}},
		{"splat of 5 (doubling copies past a power of two)", mlir.DenseAttr{Type: tensor(f32, 5), Elems: []string{"-2.0"}, Splat: true}, []uint64{0xC0000000, 0xC0000000, 0xC0000000, 0xC0000000, 0xC0000000}},
		{"splat bf16", mlir.DenseAttr{Type: tensor(bf16, 3), Elems: []string{"1.0"}, Splat: true}, []uint64{0x3F80, 0x3F80, 0x3F80}},
		{"splat i4", mlir.DenseAttr{Type: tensor(mlir.IntType{Width: 4}, 2, 2), Elems: []string{"-1"}, Splat: true}, []uint64{0xF, 0xF, 0xF, 0xF}},
		{"splat i1", mlir.DenseAttr{Type: tensor(mlir.IntType{Width: 1}, 3), Elems: []string{"true"}, Splat: true}, []uint64{1, 1, 1}},
		{"blob f32 little-endian", mlir.DenseAttr{Type: tensor(f32, 2), Hex: []byte{0, 0, 0x80, 0x3F, 0, 0, 0, 0x40}}, []uint64{0x3F800000, 0x40000000}},
		{"blob splat bf16", mlir.DenseAttr{Type: tensor(bf16, 2), Hex: []byte{0x80, 0x3F}}, []uint64{0x3F80, 0x3F80}},
		{"blob i1 one byte each", mlir.DenseAttr{Type: tensor(mlir.IntType{Width: 1}, 3), Hex: []byte{1, 0, 1}}, []uint64{1, 0, 1}},
		{"i4 negatives wrap", mlir.DenseAttr{Type: tensor(mlir.IntType{Width: 4}, 2), Elems: []string{"-8", "7"}}, []uint64{0x8, 0x7}},
		{"ui64 above 2^63", mlir.DenseAttr{Type: tensor(mlir.IntType{Width: 64, Signedness: 'u'}, 1), Elems: []string{"18446744073709551615"}}, []uint64{math.MaxUint64}},
		{"booleans", mlir.DenseAttr{Type: tensor(mlir.IntType{Width: 1}, 2), Elems: []string{"true", "false"}}, []uint64{1, 0}},
	} {
		lit, err := denseLiteral(tc.d, hlo.Shape{})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		for i, w := range tc.want {
			if got := lit.Bits(i); got != w {
				t.Errorf("%s: element %d bits %#x, want %#x", tc.name, i, got, w)
			}
		}
	}
}

// TestComplexLiterals: complex tokens and blobs hold (real, imaginary)
// pairs, parts decimal or bit patterns of the component type.
func TestComplexLiterals(t *testing.T) {
	c64 := mlir.TensorType{Dims: []int64{2}, Elem: mlir.ComplexType{Elem: mlir.FloatType{Name: "f32"}}}
	lit, err := denseLiteral(mlir.DenseAttr{Type: c64, Elems: []string{"(1.0, -2.5)", "(0x3F800000, 0x7F800000)"}}, hlo.Shape{})
	if err != nil {
		t.Fatal(err)
	}
	if got := lit.GetComplex128(0); got != complex(1, -2.5) {
		t.Errorf("element 0 %v, want (1-2.5i)", got)
	}
	if got := lit.GetComplex128(1); got != complex(1, math.Inf(1)) {
		t.Errorf("element 1 %v, want (1+Inf i)", got)
	}
	blob := mlir.DenseAttr{Type: c64, Hex: []byte{0, 0, 0x80, 0x3F, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0x80, 0xBF}}
	if lit, err = denseLiteral(blob, hlo.Shape{}); err != nil {
		t.Fatal(err)
	}
	if a, b := lit.GetComplex128(0), lit.GetComplex128(1); a != complex(1, 2) || b != complex(0, -1) {
		t.Errorf("blob elements %v, %v, want (1+2i), (0-1i)", a, b)
	}
}

// TestTypes maps MLIR element types to HLO's.
func TestTypes(t *testing.T) {
	for _, tc := range []struct {
		in   mlir.Type
		want hlo.DType
	}{
		{mlir.IntType{Width: 1}, hlo.Pred}, {mlir.IntType{Width: 2}, hlo.S2}, {mlir.IntType{Width: 8, Signedness: 's'}, hlo.S8},
		{mlir.IntType{Width: 64, Signedness: 'u'}, hlo.U64}, {mlir.FloatType{Name: "bf16"}, hlo.BF16},
		{mlir.FloatType{Name: "f8E4M3FN"}, hlo.F8E4M3FN}, {mlir.FloatType{Name: "f8E5M2FNUZ"}, hlo.F8E5M2FNUZ},
		{mlir.FloatType{Name: "f4E2M1FN"}, hlo.F4E2M1FN},
		{mlir.FloatType{Name: "f6E2M3FN"}, hlo.F6E2M3FN}, {mlir.FloatType{Name: "f6E3M2FN"}, hlo.F6E3M2FN}, {mlir.ComplexType{Elem: mlir.FloatType{Name: "f64"}}, hlo.C128},
		{mlir.IndexType{}, hlo.S64},
		{mlir.QuantType{Storage: mlir.IntType{Width: 8}, Expressed: mlir.FloatType{Name: "f32"}, Axis: -1}, hlo.S8},
	} {
		if got, err := dtypeOf(tc.in); err != nil || got != tc.want {
			t.Errorf("%s: got %s, %v; want %s", typeString(tc.in), got, err, tc.want)
		}
	}
}
