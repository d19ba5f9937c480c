package ops

import (
	"slices"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

func mvEval(t *testing.T, op string, opset int, attrs map[string]*onnxpb.AttributeProto, in ...*onnx.Tensor) []int64 {
	t.Helper()
	n := &onnx.Node{Op: op, Attrs: attrs, Outputs: []string{"y"}}
	for i := range in {
		n.Inputs = append(n.Inputs, string(rune('a'+i)))
	}
	l := &Lowerer{Opsets: map[string]int{"": opset}, Env: NewEnv(nil)}
	out, err := l.Evaluate(n, in)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	v, err := Int64s(out[0])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mvIota(n int64) *onnx.Tensor {
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(i)
	}
	return IntTensor(v, n)
}

func mvInts(v ...int64) *onnx.Tensor { return IntTensor(v, int64(len(v))) }

func mvInt(v int64) *onnxpb.AttributeProto { return &onnxpb.AttributeProto{I: &v} }

func mvStr(s string) *onnxpb.AttributeProto { return &onnxpb.AttributeProto{S: []byte(s)} }

func TestMovementSemantics(t *testing.T) {
	x := mvIota(10)
	cases := []struct {
		name  string
		op    string
		attrs map[string]*onnxpb.AttributeProto
		in    []*onnx.Tensor
		want  []int64
	}{
		{"slice neg step", "Slice", nil, []*onnx.Tensor{x, mvInts(-1), mvInts(-1000), mvInts(0), mvInts(-2)}, []int64{9, 7, 5, 3, 1}},
		{"slice neg step clamp", "Slice", nil, []*onnx.Tensor{x, mvInts(20), mvInts(-20), mvInts(0), mvInts(-3)}, []int64{9, 6, 3, 0}},
		{"slice big step", "Slice", nil, []*onnx.Tensor{x, mvInts(-100), mvInts(100), mvInts(0), mvInts(1 << 62)}, []int64{0}},
		{"slice min step", "Slice", nil, []*onnx.Tensor{x, mvInts(5), mvInts(-1 << 63), mvInts(0), mvInts(-1 << 63)}, []int64{5}},
		{"slice empty", "Slice", nil, []*onnx.Tensor{x, mvInts(5), mvInts(2), mvInts(0), mvInts(1)}, []int64{}},
		{"slice step 3", "Slice", nil, []*onnx.Tensor{x, mvInts(-100), mvInts(100), mvInts(0), mvInts(3)}, []int64{0, 3, 6, 9}},
		{"reflect big", "Pad", map[string]*onnxpb.AttributeProto{"mode": mvStr("reflect")}, []*onnx.Tensor{mvIota(3), mvInts(5, 4)}, []int64{1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2}},
		{"wrap", "Pad", map[string]*onnxpb.AttributeProto{"mode": mvStr("wrap")}, []*onnx.Tensor{mvIota(3), mvInts(4, 2)}, []int64{2, 0, 1, 2, 0, 1, 2, 0, 1}},
		{"edge cut", "Pad", map[string]*onnxpb.AttributeProto{"mode": mvStr("edge")}, []*onnx.Tensor{mvIota(4), mvInts(-1, 2)}, []int64{1, 2, 3, 3, 3}},
		{"constant cut", "Pad", nil, []*onnx.Tensor{mvIota(4), mvInts(2, -3), IntTensor([]int64{7})}, []int64{7, 7, 0}},
		{"cumsum excl rev", "CumSum", map[string]*onnxpb.AttributeProto{"exclusive": mvInt(1), "reverse": mvInt(1)}, []*onnx.Tensor{mvInts(1, 2, 3), IntTensor([]int64{0})}, []int64{5, 3, 0}},
		{"cumprod", "CumProd", nil, []*onnx.Tensor{mvInts(1, 2, 3, 4), IntTensor([]int64{0})}, []int64{1, 2, 6, 24}},
		{"topk ties", "TopK", nil, []*onnx.Tensor{mvInts(3, 1, 3, 2, 3), mvInts(3)}, []int64{3, 3, 3}},
		{"range neg", "Range", nil, []*onnx.Tensor{IntTensor([]int64{10}), IntTensor([]int64{4}), IntTensor([]int64{-3})}, []int64{10, 7}},
		{"onehot neg", "OneHot", nil, []*onnx.Tensor{mvInts(-1, 5), IntTensor([]int64{3}), mvInts(0, 1)}, []int64{0, 0, 1, 0, 0, 0}},
		{"gather neg", "Gather", nil, []*onnx.Tensor{x, mvInts(-1, 0, -10)}, []int64{9, 0, 0}},
		{"split num_outputs", "Split", map[string]*onnxpb.AttributeProto{"num_outputs": mvInt(3)}, []*onnx.Tensor{mvIota(7)}, []int64{0, 1, 2}},
	}
	for _, tc := range cases {
		got := mvEval(t, tc.op, 18, tc.attrs, tc.in...)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestTopKIndices(t *testing.T) {
	n := &onnx.Node{Op: "TopK", Inputs: []string{"x", "k"}, Outputs: []string{"v", "i"}, Attrs: map[string]*onnxpb.AttributeProto{"largest": mvInt(0)}}
	l := &Lowerer{Opsets: map[string]int{"": 11}, Env: NewEnv(nil)}
	x := onnx.TensorOf(literal(hlo.F32, []float64{2, 1, 2, 0.5, 1}, 5))
	out, err := l.Evaluate(n, []*onnx.Tensor{x, mvInts(4)})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := Int64s(out[1]); !slices.Equal(got, []int64{3, 1, 4, 0}) {
		t.Errorf("indices %v", got)
	}
}

func TestCumSumLong(t *testing.T) {
	const n = 300
	ones := make([]int64, n)
	want := make([]int64, n)
	for i := range ones {
		ones[i] = 1
		want[i] = int64(n - 1 - i)
	}
	got := mvEval(t, "CumSum", 14, map[string]*onnxpb.AttributeProto{"exclusive": mvInt(1), "reverse": mvInt(1)}, IntTensor(ones, n), IntTensor([]int64{-1}))
	if !slices.Equal(got, want) {
		t.Errorf("got %v", got)
	}
}
