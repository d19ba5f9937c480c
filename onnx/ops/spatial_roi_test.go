package ops

import (
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

func TestMaxRoiPool(t *testing.T) {
	xs := make([]float32, 16)
	for i := range xs {
		xs[i] = float32(i)
	}
	x, _ := hlo.LiteralFromSlice(xs, 1, 1, 4, 4)
	rois, _ := hlo.LiteralFromSlice([]float32{0, 0, 0, 3, 3, 0, 1, 1, 2, 2}, 2, 5)
	name := "pooled_shape"
	typ := onnxpb.AttributeProto_INTS
	n := &onnx.Node{Op: "MaxRoiPool", Inputs: []string{"x", "r"}, Outputs: []string{"y"},
		Attrs: map[string]*onnxpb.AttributeProto{name: {Name: &name, Type: &typ, Ints: []int64{2, 2}}}}
	h := &HostCtx{Node: n, Opset: 1, In: []*onnx.Value{onnx.LiteralValue(x), onnx.LiteralValue(rois)}}
	if err := hostMaxRoiPool(h); err != nil {
		t.Fatal(err)
	}
	got := h.Out[0].Tensor.Lit.Data().([]float32)
	want := []float32{5, 7, 13, 15, 5, 6, 9, 10}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
