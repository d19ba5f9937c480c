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

// TestRoiAlignLoweringMatchesHost compares the lowering (fixed sampling
// ratio) with the host kernel, rois partly outside the image included.
func TestRoiAlignLoweringMatchesHost(t *testing.T) {
	xs := make([]float32, 2*3*6*7)
	for i := range xs {
		xs[i] = float32((i*37)%23) - 11
	}
	x, _ := hlo.LiteralFromSlice(xs, 2, 3, 6, 7)
	rois, _ := hlo.LiteralFromSlice([]float32{0, 0, 5, 4, 1.5, 2.2, 6.8, 5.9, -3, -2, 2, 9, 4, 1, 4.2, 1.1}, 4, 4)
	bi, _ := hlo.LiteralFromSlice([]int64{0, 1, 1, 0}, 4)
	for _, mode := range []string{"avg", "max"} {
		for _, ctm := range []string{"half_pixel", "output_half_pixel"} {
			attrs := map[string]*onnxpb.AttributeProto{}
			add := func(a *onnxpb.AttributeProto) { attrs[a.GetName()] = a }
			add(convTestInt("output_height", 3))
			add(convTestInt("output_width", 2))
			add(convTestInt("sampling_ratio", 2))
			for name, v := range map[string]string{"mode": mode, "coordinate_transformation_mode": ctm} {
				typ := onnxpb.AttributeProto_STRING
				add(&onnxpb.AttributeProto{Name: &name, Type: &typ, S: []byte(v)})
			}
			sc, typ := "spatial_scale", onnxpb.AttributeProto_FLOAT
			f := float32(0.75)
			add(&onnxpb.AttributeProto{Name: &sc, Type: &typ, F: &f})
			n := &onnx.Node{Op: "RoiAlign", Inputs: []string{"x", "r", "b"}, Outputs: []string{"y"}, Attrs: attrs}
			h := &HostCtx{Node: n, Opset: 22, In: []*onnx.Value{onnx.LiteralValue(x), onnx.LiteralValue(rois), onnx.LiteralValue(bi)}}
			if err := hostRoiAlign(h); err != nil {
				t.Fatal(err)
			}
			want := h.Out[0].Tensor.Lit
			l := &Lowerer{Opsets: map[string]int{"": 22}, Env: NewEnv(nil)}
			out, err := l.Evaluate(n, []*onnx.Tensor{onnx.TensorOf(x), onnx.TensorOf(rois), onnx.TensorOf(bi)})
			if err != nil {
				t.Fatal(err)
			}
			got := out[0].Lit
			if !got.Shape().Equal(want.Shape()) {
				t.Fatalf("shape %s, want %s", got.Shape(), want.Shape())
			}
			for i := range want.Len() {
				if d := got.GetFloat64(i) - want.GetFloat64(i); d > 1e-4 || d < -1e-4 {
					t.Fatalf("%s %s: element %d: %v, want %v", mode, ctm, i, got.GetFloat64(i), want.GetFloat64(i))
				}
			}
		}
	}
}
