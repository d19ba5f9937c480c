package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

func convTestInts(name string, v ...int64) *onnxpb.AttributeProto {
	t := onnxpb.AttributeProto_INTS
	return &onnxpb.AttributeProto{Name: &name, Type: &t, Ints: v}
}

func convTestInt(name string, v int64) *onnxpb.AttributeProto {
	t := onnxpb.AttributeProto_INT
	return &onnxpb.AttributeProto{Name: &name, Type: &t, I: &v}
}

func convTestTensor(r *rand.Rand, dims ...int64) *onnx.Tensor {
	l := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, dims...))
	for i := range l.Len() {
		l.SetFloat64(i, r.Float64()*2-1)
	}
	return onnx.TensorOf(l)
}

// convTestCompare evaluates the node with the special lowerings and with
// the general convolution only, and compares.
func convTestCompare(t *testing.T, op string, attrs []*onnxpb.AttributeProto, in ...*onnx.Tensor) {
	t.Helper()
	n := &onnx.Node{Op: op, Outputs: []string{"y"}, Attrs: map[string]*onnxpb.AttributeProto{}}
	for _, a := range attrs {
		n.Attrs[a.GetName()] = a
	}
	for range in {
		n.Inputs = append(n.Inputs, "x")
	}
	l := &Lowerer{Opsets: map[string]int{"": 22}, Env: NewEnv(nil)}
	run := func(general bool) *hlo.Literal {
		convGeneralOnly = general
		defer func() { convGeneralOnly = false }()
		out, err := l.Evaluate(n, in)
		if err != nil {
			t.Fatal(err)
		}
		return out[0].Lit
	}
	got, want := run(false), run(true)
	if !got.Shape().Equal(want.Shape()) {
		t.Fatalf("%s: shape %s, want %s", op, got.Shape(), want.Shape())
	}
	for i := range want.Len() {
		if d := math.Abs(got.GetFloat64(i) - want.GetFloat64(i)); d > 1e-4 {
			t.Fatalf("%s: element %d: %v, want %v", op, i, got.GetFloat64(i), want.GetFloat64(i))
		}
	}
}

func TestConvTransposeTiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	convTestCompare(t, "ConvTranspose", []*onnxpb.AttributeProto{
		convTestInts("strides", 2, 3), convTestInts("pads", 0, 1, 1, 0), convTestInts("output_padding", 1, 0),
	}, convTestTensor(r, 2, 3, 4, 5), convTestTensor(r, 3, 2, 2, 3), convTestTensor(r, 2))
	convTestCompare(t, "ConvTranspose", []*onnxpb.AttributeProto{convTestInts("strides", 2, 2)},
		convTestTensor(r, 1, 4, 3, 3), convTestTensor(r, 4, 1, 2, 2))
	convTestCompare(t, "ConvTranspose", []*onnxpb.AttributeProto{convTestInts("strides", 4)},
		convTestTensor(r, 1, 2, 5), convTestTensor(r, 2, 3, 3))
	convTestCompare(t, "ConvTranspose", []*onnxpb.AttributeProto{convTestInts("strides", 2, 2), convTestInt("group", 2)},
		convTestTensor(r, 1, 4, 3, 3), convTestTensor(r, 4, 3, 2, 2))
}

func TestConvDepthwise(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	defer func(v bool) { ConvChannelsLast = v }(ConvChannelsLast)
	defer func(v bool) { ConvDepthwiseSlices = v }(ConvDepthwiseSlices)
	ConvDepthwiseSlices = true
	for _, last := range []bool{false, true} {
		ConvChannelsLast = last
		convTestCompare(t, "Conv", []*onnxpb.AttributeProto{
			convTestInt("group", 4), convTestInts("strides", 2, 1), convTestInts("pads", 1, 0, 2, 1), convTestInts("dilations", 1, 2),
		}, convTestTensor(r, 2, 4, 7, 6), convTestTensor(r, 8, 1, 3, 2), convTestTensor(r, 8))
		convTestCompare(t, "Conv", []*onnxpb.AttributeProto{convTestInt("group", 3)},
			convTestTensor(r, 1, 3, 5), convTestTensor(r, 3, 1, 3))
	}
}
