package ops

import (
	"slices"
	"testing"

	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

func hsStrs(t *testing.T, strs []string, dims ...int64) *onnx.Value {
	t.Helper()
	st, err := onnx.NewStringTensor(strs, dims...)
	if err != nil {
		t.Fatal(err)
	}
	return onnx.TensorValue(st)
}

func hsRun(t *testing.T, op string, opset int, attrs map[string]*onnxpb.AttributeProto, in ...*onnx.Value) []*onnx.Value {
	t.Helper()
	o, ok := Lookup("", op, opset)
	if !ok {
		t.Fatalf("no %s", op)
	}
	n := &onnx.Node{Op: op, Attrs: attrs}
	for i := range in {
		n.Inputs = append(n.Inputs, string(rune('a'+i)))
	}
	n.Outputs = []string{"y", "y1", "y2", "y3"}
	if op == "Split" {
		n.Outputs = n.Outputs[:2]
	}
	h := &HostCtx{Node: n, Opset: opset, In: in}
	if err := o.Host(h); err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return h.Out
}

func TestHostStrings(t *testing.T) {
	one := int64(1)
	x := hsStrs(t, []string{"b", "a", "c", "a"}, 2, 2)
	out := hsRun(t, "Gather", 13, map[string]*onnxpb.AttributeProto{"axis": {I: &one}},
		x, onnx.TensorValue(IntTensor([]int64{1, -2, 1}, 3)))
	if got := out[0].Tensor; !slices.Equal(got.Strs, []string{"a", "b", "a", "a", "c", "a"}) || !slices.Equal(got.Dims(), []int64{2, 3}) {
		t.Errorf("Gather: got %v %v", got.Strs, got.Dims())
	}
	out = hsRun(t, "Pad", 13, nil, x, onnx.TensorValue(IntTensor([]int64{0, 1, 0, 0}, 4)))
	if got := out[0].Tensor; !slices.Equal(got.Strs, []string{"", "b", "a", "", "c", "a"}) {
		t.Errorf("Pad: got %v", got.Strs)
	}
	out = hsRun(t, "Unique", 11, nil, hsStrs(t, []string{"b", "a", "c", "a"}, 4))
	if got := out[0].Tensor; !slices.Equal(got.Strs, []string{"a", "b", "c"}) {
		t.Errorf("Unique: got %v", got.Strs)
	}
	if got, _ := Int64s(out[2].Tensor); !slices.Equal(got, []int64{1, 0, 2, 0}) {
		t.Errorf("Unique inverse: got %v", got)
	}
	out = hsRun(t, "Split", 13, nil, hsStrs(t, []string{"a", "b", "c"}, 3), onnx.TensorValue(IntTensor([]int64{1, 2}, 2)))
	if !slices.Equal(out[0].Tensor.Strs, []string{"a"}) || !slices.Equal(out[1].Tensor.Strs, []string{"b", "c"}) {
		t.Errorf("Split: got %v %v", out[0], out[1])
	}
}
