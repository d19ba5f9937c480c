package graph_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxbuild"
)

// qConvLayer is a convolution as ONNX Runtime's dynamic quantization
// writes one: DynamicQuantizeLinear(X), ConvInteger with the 8-bit
// kernel and both zero points, Cast to f32, Mul by x_scale·w_scale.
type qConvLayer struct {
	n, c, o, hw, k, group, stride, dil int
	w                                  onnx.ElemType // Int8 or Uint8
	perChannel                         bool          // w_zero_point of shape [O], nonzero
}

func (q qConvLayer) String() string {
	return fmt.Sprintf("%dx%dx%d²→%d k%d g%d s%d d%d %s zp-per-channel=%v", q.n, q.c, q.hw, q.o, q.k, q.group, q.stride, q.dil, q.w, q.perChannel)
}

func (q qConvLayer) model(t *testing.T, rng *rand.Rand) *onnx.Model {
	pad := int64(q.k / 2 * q.dil)
	out := (int64(q.hw)+2*pad-int64(q.dil*(q.k-1))-1)/int64(q.stride) + 1
	g := onnxbuild.New("qconv", 13)
	g.Input("X", onnxbuild.TensorType(onnx.Float, int64(q.n), int64(q.c), int64(q.hw), int64(q.hw)))
	g.Output("Y", onnxbuild.TensorType(onnx.Float, int64(q.n), int64(q.o), out, out))
	w := make([]byte, q.o*q.c/q.group*q.k*q.k)
	for i := range w {
		w[i] = byte(rng.IntN(256))
	}
	g.Raw("W", q.w, w, int64(q.o), int64(q.c/q.group), int64(q.k), int64(q.k))
	inputs := []string{"Xq", "W", "X_zp"}
	if q.perChannel {
		zps := make([]byte, q.o)
		for i := range zps {
			zps[i] = byte(rng.IntN(256))
		}
		g.Raw("W_zero_point", q.w, zps, int64(q.o))
		inputs = append(inputs, "W_zero_point")
	}
	g.Floats("W_scale", []float32{0.002})
	g.Node("DynamicQuantizeLinear", "quantize", []string{"X"}, []string{"Xq", "X_scale", "X_zp"})
	g.Node("ConvInteger", "conv", inputs, []string{"Acc"}, onnxbuild.IntsAttr("pads", pad, pad, pad, pad),
		onnxbuild.IntsAttr("strides", int64(q.stride), int64(q.stride)), onnxbuild.IntsAttr("dilations", int64(q.dil), int64(q.dil)),
		onnxbuild.IntAttr("group", int64(q.group)))
	g.Node("Cast", "cast", []string{"Acc"}, []string{"Accf"}, onnxbuild.IntAttr("to", int64(onnx.Float)))
	g.Node("Mul", "scales", []string{"X_scale", "W_scale"}, []string{"S"})
	g.Node("Mul", "scale", []string{"Accf", "S"}, []string{"Y"})
	m, err := g.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A quantized convolution as ONNX Runtime writes it runs on the compiled
// device as the 8-bit convolution's fusion and gives the evaluator's
// result bit for bit: s8 and u8 kernels, per-channel zero points, groups,
// strides, dilation, a 1×1 kernel.
func TestQuantizedConv(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []qConvLayer{
		{n: 2, c: 16, o: 32, hw: 14, k: 3, group: 1, stride: 1, dil: 1, w: onnx.Int8},
		{n: 1, c: 16, o: 24, hw: 15, k: 3, group: 2, stride: 2, dil: 1, w: onnx.Uint8, perChannel: true},
		{n: 1, c: 8, o: 16, hw: 13, k: 3, group: 1, stride: 1, dil: 2, w: onnx.Int8, perChannel: true},
		{n: 2, c: 40, o: 20, hw: 9, k: 1, group: 1, stride: 1, dil: 1, w: onnx.Uint8},
	}
	for _, q := range cases {
		t.Run(q.String(), func(t *testing.T) {
			m := q.model(t, rng)
			x := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, int64(q.n), int64(q.c), int64(q.hw), int64(q.hw)))
			for i := range x.Len() {
				x.SetFloat64(i, rng.NormFloat64())
			}
			got, prof := runLayer(t, m, "cpu", x)
			want, _ := runLayer(t, m, "interp", x)
			if !got.Equal(want) {
				t.Fatalf("the cpu backend and the evaluator differ\n%s", prof)
			}
			lowerings := profileLowerings(prof)
			if lowerings["conv-int8"] != 1 || lowerings["conv-loop"]+lowerings["conv"]+lowerings["evaluator"]+lowerings["fusion-body"] > 0 {
				t.Fatalf("lowered as %v, want the 8-bit convolution's fusion\n%s", lowerings, prof)
			}
		})
	}
}
