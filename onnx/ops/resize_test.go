package ops

import (
	"math"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

// resizeTestRun resizes x ([1, 1, len(x)]) by scale along its last
// axis and returns the result.
func resizeTestRun(t *testing.T, mode, ctm string, x []float64, scale float32, nearest ...string) []float64 {
	t.Helper()
	in := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 1, 1, int64(len(x))))
	for i, v := range x {
		in.SetFloat64(i, v)
	}
	sc := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 3))
	for i, v := range []float32{1, 1, scale} {
		sc.SetFloat64(i, float64(v))
	}
	n := &onnx.Node{Op: "Resize", Inputs: []string{"x", "", "scales"}, Outputs: []string{"y"}, Attrs: map[string]*onnxpb.AttributeProto{}}
	attrs := map[string]string{"mode": mode, "coordinate_transformation_mode": ctm}
	if len(nearest) > 0 {
		attrs["nearest_mode"] = nearest[0]
	}
	for name, v := range attrs {
		n.Attrs[name] = &onnxpb.AttributeProto{Name: &name, Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
	}
	l := &Lowerer{Opsets: map[string]int{"": 19}, Env: NewEnv(nil)}
	out, err := l.Evaluate(n, []*onnx.Tensor{onnx.TensorOf(in), nil, onnx.TensorOf(sc)})
	if err != nil {
		t.Fatal(err)
	}
	y := out[0].Lit
	got := make([]float64, y.Len())
	for i := range got {
		got[i] = y.GetFloat64(i)
	}
	return got
}

// Resize measures the resized axis by its length where the operator's
// definition says length_resized (align_corners, pytorch_half_pixel),
// as ONNX Runtime, PyTorch and TensorRT do, not by in·scale (ONNX's
// reference implementation). Hand-worked on a ramp x[i] = i, whose
// linear interpolation at x_original is x_original itself: a 9-long axis
// scaled by 1.5 is 13 long, so align_corners samples j·8/12 (j·8/12.5
// by the other reading); scaled by 1/9 it is one long, where
// pytorch_half_pixel samples position 0 and cubic gives x[0] exactly
// (at -0.5, the other reading, a blend of the edge: 0.90625 for the
// ramp 1, 2, ...).
func TestResizeLengthResized(t *testing.T) {
	ramp := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8}
	got := resizeTestRun(t, "linear", "align_corners", ramp, 1.5)
	if len(got) != 13 {
		t.Fatalf("align_corners: %d outputs, want 13", len(got))
	}
	for j, v := range got {
		if want := float64(j) * 8 / 12; math.Abs(v-want) > 1e-6 {
			t.Fatalf("linear align_corners ×1.5, output %d: %v, want %v", j, v, want)
		}
	}
	// Nearest (round_prefer_floor) at j·8/12: 0, 0.67, 1.33, 2, ...
	got = resizeTestRun(t, "nearest", "align_corners", ramp, 1.5)
	for j, v := range got {
		if want := math.Round(float64(j) * 8 / 12); v != want { // no position is halfway
			t.Fatalf("nearest align_corners ×1.5, output %d: %v, want %v", j, v, want)
		}
	}
	got = resizeTestRun(t, "cubic", "pytorch_half_pixel", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 1.0/9)
	if len(got) != 1 || got[0] != 1 {
		t.Fatalf("cubic pytorch_half_pixel to one element: %v, want [1]", got)
	}
}

// Nearest modes round each position's origin in float32, as ONNX
// Runtime and PyTorch compute it: a 12-wide ramp scaled by 1.7
// (asymmetric, floor) has position 17's origin at 17/1.7, 10 in float32
// (9.9999997 in float64, which floors to 9). Positions 0..19 floor
// j/1.7 otherwise: 0 0 1 1 2 2 3 4 4 5 5 6 7 7 8 8 9 10 10 11.
func TestResizeNearestFloat32Origin(t *testing.T) {
	ramp := make([]float64, 12)
	for i := range ramp {
		ramp[i] = float64(i)
	}
	got := resizeTestRun(t, "nearest", "asymmetric", ramp, 1.7, "floor")
	want := []float64{0, 0, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6, 7, 7, 8, 8, 9, 10, 10, 11}
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("nearest asymmetric floor x1.7, output %d: %v, want %v (all: %v)", j, got[j], want[j], got)
		}
	}
}

// A scaled axis is floor(in·scale) long in float32, as ONNX Runtime
// computes it: 10 by 0.7 (0.699999988 as a float32) is 7 long, the
// length PyTorch gave the model it exported (in float64 it would floor
// to 6).
func TestResizeLengthFloat32(t *testing.T) {
	for _, c := range []struct {
		in    int
		scale float32
		want  int
	}{{10, 0.7, 7}, {7, 1.5, 10}, {12, 1.7, 20}, {5, 0.2, 1}, {30, 0.3, 9}} {
		x := make([]float64, c.in)
		if got := len(resizeTestRun(t, "nearest", "asymmetric", x, c.scale)); got != c.want {
			t.Errorf("%d by %v: %d long, want %d", c.in, c.scale, got, c.want)
		}
	}
}
