package ops

import (
	"slices"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

func TestNonMaxSuppression(t *testing.T) {
	boxes, _ := hlo.LiteralFromSlice([]float32{
		0, 0, 1, 1,
		0, 0.1, 1, 1.1, // overlaps the first (IoU 0.82)
		0, 10, 1, 11,
	}, 1, 3, 4)
	scores, _ := hlo.LiteralFromSlice([]float32{0.9, 0.95, 0.3}, 1, 1, 3)
	maxOut, _ := hlo.LiteralFromSlice([]int64{3}, 1)
	iou, _ := hlo.LiteralFromSlice([]float32{0.5}, 1)
	out := mlTestRun(t, hostNonMaxSuppression, mlTestNode("NonMaxSuppression", nil),
		onnx.TensorOf(boxes), onnx.TensorOf(scores), onnx.TensorOf(maxOut), onnx.TensorOf(iou))
	got, _ := Int64s(out[0].Tensor)
	if want := []int64{0, 0, 1, 0, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
