package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

// TestPoolSlicesMatchReduceWindow compares the strided-slice pools with
// the reduce-window ones.
func TestPoolSlicesMatchReduceWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	x := convTestTensor(r, 2, 3, 9, 8)
	cases := [][]*onnxpb.AttributeProto{
		{convTestInts("kernel_shape", 3, 2), convTestInts("strides", 2, 3), convTestInts("pads", 1, 0, 1, 1), convTestInt("ceil_mode", 1)},
		{convTestInts("kernel_shape", 2, 3), convTestInts("dilations", 2, 1), convTestInt("count_include_pad", 1), convTestInts("pads", 1, 1, 0, 1)},
	}
	defer func(v bool) { ConvChannelsLast = v }(ConvChannelsLast)
	for k := range 6 {
		ConvChannelsLast = k%2 == 0
		op := []string{"MaxPool", "AveragePool", "LpPool"}[k%3]
		for _, attrs := range cases {
			n := &onnx.Node{Op: op, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: map[string]*onnxpb.AttributeProto{}}
			for _, a := range attrs {
				n.Attrs[a.GetName()] = a
			}
			l := &Lowerer{Opsets: map[string]int{"": 22}, Env: NewEnv(nil)}
			run := func(limit int64) *hlo.Literal {
				defer func(v int64) { poolSliceLimit = v }(poolSliceLimit)
				poolSliceLimit = limit
				out, err := l.Evaluate(n, []*onnx.Tensor{x})
				if err != nil {
					t.Fatal(err)
				}
				return out[0].Lit
			}
			got, want := run(64), run(0)
			if !got.Shape().Equal(want.Shape()) {
				t.Fatalf("%s: shape %s, want %s", op, got.Shape(), want.Shape())
			}
			for i := range want.Len() {
				if d := math.Abs(got.GetFloat64(i) - want.GetFloat64(i)); d > 1e-5 {
					t.Fatalf("%s: element %d: %v, want %v", op, i, got.GetFloat64(i), want.GetFloat64(i))
				}
			}
		}
	}
}
