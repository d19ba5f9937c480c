package graph_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/graph"
	"github.com/axle-ml/axle/onnx/onnxbuild"
)

// qLayer is a dense layer as ONNX Runtime's dynamic quantization writes
// it: DynamicQuantizeLinear(X), MatMulInteger with the 8-bit weights and
// both zero points, Cast to f32, Mul by x_scale·w_scale, Add the bias.
type qLayer struct {
	x          []int64 // X's shape: [..., K]
	n          int64
	w          onnx.ElemType // Int8 or Uint8
	perColumn  bool          // w_scale and w_zero_point of shape [N]
	zeroPoints bool          // nonzero weight zero points (else 0, symmetric)
}

func (q qLayer) String() string {
	return fmt.Sprintf("X%v·W[%d,%d] %s per-column=%v zp=%v", q.x, q.x[len(q.x)-1], q.n, q.w, q.perColumn, q.zeroPoints)
}

// model builds the layer with seeded weights.
func (q qLayer) model(t *testing.T, rng *rand.Rand) *onnx.Model {
	k := q.x[len(q.x)-1]
	g := onnxbuild.New("qlinear", 13)
	g.Input("X", onnxbuild.TensorType(onnx.Float, q.x...))
	out := append(append([]int64(nil), q.x[:len(q.x)-1]...), q.n)
	g.Output("Y", onnxbuild.TensorType(onnx.Float, out...))
	w := make([]byte, k*q.n)
	for i := range w {
		w[i] = byte(rng.IntN(256))
	}
	g.Raw("W", q.w, w, k, q.n)
	cols := int64(1)
	if q.perColumn {
		cols = q.n
	}
	scales, zps := make([]float32, cols), make([]byte, cols)
	for j := range scales {
		scales[j] = 0.001 + rng.Float32()*0.01
		if q.zeroPoints {
			zps[j] = byte(rng.IntN(256))
		} else if q.w == onnx.Uint8 {
			zps[j] = 128
		}
	}
	var dims []int64
	if q.perColumn {
		dims = []int64{q.n}
	}
	g.Floats("W_scale", scales, dims...)
	g.Raw("W_zero_point", q.w, zps, dims...)
	bias := make([]float32, q.n)
	for j := range bias {
		bias[j] = rng.Float32() - 0.5
	}
	g.Floats("B", bias, q.n)
	g.Node("DynamicQuantizeLinear", "quantize", []string{"X"}, []string{"Xq", "X_scale", "X_zp"})
	g.Node("MatMulInteger", "matmul", []string{"Xq", "W", "X_zp", "W_zero_point"}, []string{"XWq"})
	g.Node("Cast", "cast", []string{"XWq"}, []string{"XWf"}, onnxbuild.IntAttr("to", int64(onnx.Float)))
	g.Node("Mul", "scales", []string{"X_scale", "W_scale"}, []string{"S"})
	g.Node("Mul", "scale", []string{"XWf", "S"}, []string{"XW"})
	g.Node("Add", "bias", []string{"XW", "B"}, []string{"Y"})
	m, err := g.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// run runs m on backend ("cpu" with its profile) for input x.
func runLayer(t *testing.T, m *onnx.Model, backend string, x *hlo.Literal) (*hlo.Literal, string) {
	t.Helper()
	s, err := graph.New(m, graph.Options{Backend: backend, Compile: axle.CompileOptions{Profile: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.RunOrdered(context.Background(), []*onnx.Value{onnx.LiteralValue(x)})
	if err != nil {
		t.Fatal(err)
	}
	return out[0].Tensor.Lit, s.ProfileTable(100)
}

// profileLowerings counts the lowerings of a profile table's kernels
// (ProfileTable's rows).
func profileLowerings(prof string) map[string]int {
	lowerings := map[string]int{}
	for _, line := range strings.Split(prof, "\n") {
		if f := strings.Fields(line); len(f) == 6 && f[0] != "instruction" { // instruction, opcode, lowering, calls, total, median
			lowerings[f[2]]++
		}
	}
	return lowerings
}

// A quantized layer as ONNX Runtime writes it runs on the compiled device
// as the 8-bit GEMM's fusion with the zero points folded in, one pass
// quantizing X and one finishing the product (s32 read, scaled, biased),
// and gives the evaluator's result bit for bit: odd sizes, a batch of
// rows, s8 and u8 weights, zero points per tensor or per column, zero or
// not.
func TestQuantizedLayer(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var cases []qLayer
	for _, w := range []onnx.ElemType{onnx.Int8, onnx.Uint8} {
		for _, perColumn := range []bool{false, true} {
			for _, zp := range []bool{false, true} {
				cases = append(cases, qLayer{x: []int64{64, 256}, n: 96, w: w, perColumn: perColumn, zeroPoints: zp})
			}
		}
	}
	cases = append(cases, qLayer{x: []int64{7, 33}, n: 5, w: onnx.Int8}, qLayer{x: []int64{1, 100}, n: 17, w: onnx.Uint8, zeroPoints: true},
		qLayer{x: []int64{2, 9, 40}, n: 11, w: onnx.Int8, perColumn: true, zeroPoints: true})
	for _, q := range cases {
		t.Run(q.String(), func(t *testing.T) {
			m := q.model(t, rng)
			x := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, q.x...))
			for i := range x.Len() {
				x.SetFloat64(i, rng.NormFloat64()*3)
			}
			x.SetFloat64(x.Len()/2, 0) // (X's range always holds 0)
			got, prof := runLayer(t, m, "cpu", x)
			want, _ := runLayer(t, m, "interp", x)
			if !got.Equal(want) {
				t.Fatalf("the cpu backend and the evaluator differ\n%s", prof)
			}
			if q.x[0] < 64 {
				return // (small clusters may run on the evaluator: the cost model)
			}
			lowerings := profileLowerings(prof)
			fused := "jit-fusion"
			if !jit.Available {
				fused = "tile-fusion"
			}
			if lowerings["gemm-int8"] != 1 || lowerings[fused] < 2 || lowerings["reduce-fusion"] != 2 ||
				lowerings["dot"]+lowerings["elementwise"]+lowerings["reduce"]+lowerings["fusion-body"]+lowerings["evaluator"] > 0 {
				t.Fatalf("lowered as %v, want the 8-bit GEMM's fusion, the quantizing and finishing fusions and the range's two reductions\n%s", lowerings, prof)
			}
		})
	}
}
