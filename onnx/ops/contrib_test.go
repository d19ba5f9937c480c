package ops

import (
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
	"github.com/axle-ml/axle/xb"
)

// TestContribBadNodes: malformed contrib nodes (wrong shapes, ranks,
// types, missing inputs, unknown activations) fail to lower with an error
// naming the node, never a panic. Their semantics are tested against ONNX
// Runtime's outputs in onnxtest/testdata/ortopt.
func TestContribBadNodes(t *testing.T) {
	str := func(s string) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(s)}
	}
	one := func(v int64) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Type: onnxpb.AttributeProto_INT.Enum(), I: &v}
	}
	type in struct {
		name string
		t    hlo.DType
		dims []int64
	}
	for _, tc := range []struct {
		name  string
		op    string
		ins   []in
		attrs map[string]*onnxpb.AttributeProto
		want  string
	}{
		{"conv Z of another shape", "FusedConv", []in{{"x", hlo.F32, []int64{1, 2, 5, 5}}, {"w", hlo.F32, []int64{3, 2, 3, 3}}, {"", 0, nil}, {"z", hlo.F32, []int64{1, 3, 4, 4}}}, nil, "not of the output's shape"},
		{"unknown activation", "FusedConv", []in{{"x", hlo.F32, []int64{1, 2, 5, 5}}, {"w", hlo.F32, []int64{3, 2, 3, 3}}}, map[string]*onnxpb.AttributeProto{"activation": str("Swish")}, "activation"},
		{"clip without its bounds", "FusedConv", []in{{"x", hlo.F32, []int64{1, 2, 5, 5}}, {"w", hlo.F32, []int64{3, 2, 3, 3}}}, map[string]*onnxpb.AttributeProto{"activation": str("Clip")}, "activation_params"},
		{"gemm of vectors", "FusedGemm", []in{{"a", hlo.F32, []int64{4}}, {"b", hlo.F32, []int64{4, 2}}}, nil, "matrices"},
		{"transBatch on a matrix", "FusedMatMul", []in{{"a", hlo.F32, []int64{4, 3}}, {"b", hlo.F32, []int64{3, 2}}}, map[string]*onnxpb.AttributeProto{"transBatchA": one(1)}, "transBatch"},
		{"matmul of two types", "FusedMatMul", []in{{"a", hlo.F32, []int64{4, 3}}, {"b", hlo.F64, []int64{3, 2}}}, nil, "types"},
		{"biasgelu without bias", "BiasGelu", []in{{"a", hlo.F32, []int64{4, 3}}}, nil, "bias"},
		{"skip norm without gamma", "SkipLayerNormalization", []in{{"x", hlo.F32, []int64{2, 3}}, {"s", hlo.F32, []int64{2, 3}}}, nil, "gamma"},
		{"integer-to-float without scales", "MatMulIntegerToFloat", []in{{"a", hlo.U8, []int64{2, 3}}, {"b", hlo.S8, []int64{3, 2}}}, nil, "a_scale"},
		{"per-row A scale", "MatMulIntegerToFloat", []in{{"a", hlo.U8, []int64{2, 3}}, {"b", hlo.S8, []int64{3, 2}}, {"sa", hlo.F32, []int64{2}}, {"sb", hlo.F32, nil}}, nil, "per tensor"},
		{"qlinear add of s32", "QLinearAdd", []in{{"a", hlo.S32, []int64{2}}, {"sa", hlo.F32, nil}, {"za", hlo.S32, nil}, {"b", hlo.S32, []int64{2}}, {"sb", hlo.F32, nil}, {"zb", hlo.S32, nil}, {"sc", hlo.F32, nil}}, nil, "uint8 and int8"},
		{"qlinear add missing C scale", "QLinearAdd", []in{{"a", hlo.U8, []int64{2}}, {"sa", hlo.F32, nil}, {"za", hlo.U8, nil}, {"b", hlo.U8, []int64{2}}, {"sb", hlo.F32, nil}}, nil, "input 6"},
		{"concat of pairs", "QLinearConcat", []in{{"sy", hlo.F32, nil}, {"zy", hlo.U8, nil}, {"a", hlo.U8, []int64{2}}, {"sa", hlo.F32, nil}}, nil, "triples"},
		{"pool of a vector", "QLinearGlobalAveragePool", []in{{"x", hlo.U8, []int64{4}}, {"sx", hlo.F32, nil}, {"zx", hlo.U8, nil}, {"sy", hlo.F32, nil}}, nil, "rank 3"},
		{"nbits weights not initializers", "MatMulNBits", []in{{"a", hlo.F32, []int64{2, 16}}, {"b", hlo.U8, []int64{4, 1, 8}}, {"s", hlo.F32, []int64{4}}}, map[string]*onnxpb.AttributeProto{"K": one(16), "N": one(4), "block_size": one(16)}, "not known at compile time"},
		{"qgemm without b_scale", "QGemm", []in{{"a", hlo.U8, []int64{2, 3}}, {"sa", hlo.F32, nil}, {"za", hlo.U8, nil}, {"b", hlo.S8, []int64{3, 2}}}, nil, "b_scale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := xb.New("t")
			l := &Lowerer{Opsets: map[string]int{"": 17, msDomain: 1}, Env: NewEnv(nil)}
			n := &onnx.Node{Name: "bad", Op: tc.op, Domain: msDomain, Outputs: []string{"y"}, Attrs: tc.attrs}
			if tc.op == "SimplifiedLayerNormalization" {
				n.Domain = ""
			}
			for k, i := range tc.ins {
				n.Inputs = append(n.Inputs, i.name)
				if i.name != "" {
					l.Env.Set(i.name, FromOp(b.Param(i.name+strings.Repeat("_", k), i.t, i.dims...)))
				}
			}
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				err = l.LowerNode(b, n)
			}()
			if err == nil {
				t.Fatal("lowered without an error")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad") {
				t.Errorf("error %q does not name the node and say %q", err, tc.want)
			}
		})
	}
}
