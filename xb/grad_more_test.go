package xb_test

import (
	"math"
	"strings"
	"testing"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

func nhwcDims() *xb.ConvDims {
	return &xb.ConvDims{InputBatch: 0, InputFeature: 3, InputSpatial: []int64{1, 2},
		KernelInput: 2, KernelOutput: 3, KernelSpatial: []int64{0, 1},
		OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2}}
}

func TestGradConv(t *testing.T) {
	conv := func(cfg xb.ConvConfig) func(*xb.Builder, []*xb.Op) *xb.Op {
		return func(_ *xb.Builder, x []*xb.Op) *xb.Op { return xb.Conv(x[0], x[1], cfg) }
	}
	for _, c := range []gradCase{
		{name: "nhwc_same", shapes: [][]int64{{2, 4, 4, 2}, {3, 3, 2, 3}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Conv2D(x[0], x[1], nil, xb.Same)
		}},
		{name: "nhwc_stride2_valid", shapes: [][]int64{{1, 5, 6, 2}, {3, 2, 2, 2}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Conv2D(x[0], x[1], []int64{2, 2}, xb.Valid)
		}},
		{name: "asymmetric_padding_stride", shapes: [][]int64{{1, 5, 4, 2}, {2, 3, 2, 2}},
			f: conv(xb.ConvConfig{Dims: nhwcDims(), Strides: []int64{2, 1}, Padding: [][2]int64{{2, 0}, {0, 1}}})},
		{name: "rhs_dilation", shapes: [][]int64{{1, 6, 5, 1}, {2, 2, 1, 2}},
			f: conv(xb.ConvConfig{Dims: nhwcDims(), RhsDilation: []int64{2, 2}, Padding: [][2]int64{{1, 0}, {0, 1}}})},
		{name: "lhs_dilation", shapes: [][]int64{{1, 3, 3, 2}, {2, 2, 2, 1}},
			f: conv(xb.ConvConfig{Dims: nhwcDims(), LhsDilation: []int64{2, 2}, Strides: []int64{1, 2}, Padding: [][2]int64{{1, 1}, {0, 0}}})},
		{name: "feature_groups", shapes: [][]int64{{1, 4, 4, 4}, {2, 2, 2, 6}},
			f: conv(xb.ConvConfig{Dims: nhwcDims(), FeatureGroupCount: 2, Padding: [][2]int64{{1, 0}, {0, 1}}})},
		{name: "nchw_oihw", shapes: [][]int64{{2, 2, 4, 3}, {3, 2, 2, 2}},
			f: conv(xb.ConvConfig{Dims: &xb.ConvDims{InputBatch: 0, InputFeature: 1, InputSpatial: []int64{2, 3},
				KernelOutput: 0, KernelInput: 1, KernelSpatial: []int64{2, 3},
				OutputBatch: 0, OutputFeature: 1, OutputSpatial: []int64{2, 3}}, Padding: [][2]int64{{1, 1}, {1, 0}}})},
		{name: "stride3_wide_padding", shapes: [][]int64{{1, 8, 2}, {2, 2, 2}},
			// The high padding is wider than the window and the stride
			// skips input: both adjoints need negative paddings.
			f: conv(xb.ConvConfig{Dims: &xb.ConvDims{InputBatch: 0, InputFeature: 2, InputSpatial: []int64{1},
				KernelInput: 1, KernelOutput: 2, KernelSpatial: []int64{0},
				OutputBatch: 0, OutputFeature: 2, OutputSpatial: []int64{1}}, Strides: []int64{3}, Padding: [][2]int64{{0, 3}}})},
		{name: "conv1d", shapes: [][]int64{{2, 7, 2}, {3, 2, 2}},
			f: conv(xb.ConvConfig{Dims: &xb.ConvDims{InputBatch: 0, InputFeature: 2, InputSpatial: []int64{1},
				KernelInput: 1, KernelOutput: 2, KernelSpatial: []int64{0},
				OutputBatch: 0, OutputFeature: 2, OutputSpatial: []int64{1}}, Strides: []int64{2}, Padding: [][2]int64{{1, 2}}})},
	} {
		t.Run(c.name, func(t *testing.T) { checkGrad(t, c) })
	}
}

func TestGradWindows(t *testing.T) {
	for _, c := range []gradCase{
		{name: "max_pool_2x2", shapes: [][]int64{{1, 4, 4, 2}}, prepare: separate, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.MaxPool(x[0], []int64{2, 2}, nil, xb.Valid)
		}},
		{name: "max_pool_3x3_stride2_same", shapes: [][]int64{{1, 5, 5, 1}}, prepare: separate, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.MaxPool(x[0], []int64{3, 3}, []int64{2, 2}, xb.Same)
		}},
		{name: "min_window", shapes: [][]int64{{6, 5}}, prepare: separate, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.ReduceWindow(x[0], b.ScalarOf(hlo.F64, 1e30), func(_ *xb.Builder, a, c *xb.Op) *xb.Op { return xb.Min(a, c) },
				xb.Window{Sizes: []int64{2, 3}, Strides: []int64{2, 1}, Padding: [][2]int64{{0, 1}, {1, 1}}})
		}},
		{name: "avg_pool_same", shapes: [][]int64{{1, 5, 4, 2}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.AvgPool(x[0], []int64{2, 3}, []int64{2, 1}, xb.Same)
		}},
		{name: "window_sum_overlapping", shapes: [][]int64{{7, 6}, {}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.ReduceWindow(x[0], x[1], func(_ *xb.Builder, a, c *xb.Op) *xb.Op { return xb.Add(a, c) },
				xb.Window{Sizes: []int64{3, 2}, Strides: []int64{2, 3}, Padding: [][2]int64{{2, 1}, {0, 2}}})
		}},
	} {
		t.Run(c.name, func(t *testing.T) { checkGrad(t, c) })
	}
}

func TestGradGatherScatter(t *testing.T) {
	for _, c := range []gradCase{
		{name: "take_repeated", shapes: [][]int64{{5, 3}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			ids := xb.Const(b, []int32{4, 0, 4, 2, 4}, 5)
			return xb.Sin(xb.Take(x[0], ids, 0))
		}},
		{name: "take_axis1_2d_ids", shapes: [][]int64{{2, 4, 3}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			ids := xb.Const(b, []int32{3, 1, 1, 0}, 2, 2)
			return xb.Take(x[0], ids, 1)
		}},
		{name: "gather_2d_index_vectors", shapes: [][]int64{{4, 5}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			// Slices of size 2x3 at (row, col) starts, with a repeat.
			ids := xb.Const(b, []int32{0, 1, 2, 2, 0, 1}, 3, 2)
			return xb.Gather(x[0], ids, xb.GatherDims{OffsetDims: []int64{1, 2}, StartIndexMap: []int64{0, 1}, IndexVectorDim: 1}, 2, 3)
		}},
		{name: "gather_batching_dims", shapes: [][]int64{{2, 4, 3}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			// Row ids[i][j] of batch i: operand and index dimension 0 are
			// batching dimensions.
			ids := xb.Const(b, []int32{3, 3, 0, 2}, 2, 2)
			return xb.Sin(xb.Gather(x[0], ids, xb.GatherDims{OffsetDims: []int64{2}, CollapsedSliceDims: []int64{1}, StartIndexMap: []int64{1},
				OperandBatchingDims: []int64{0}, StartIndicesBatchingDims: []int64{0}, IndexVectorDim: 2}, 1, 1, 3))
		}},
		{name: "scatter_add", shapes: [][]int64{{5, 3}, {4, 3}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			ids := xb.Const(b, []int32{1, 3, 1, 0}, 4)
			dims := xb.ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1}
			return xb.Sin(xb.Scatter(xb.Mul(x[0], x[0]), ids, x[1], dims, func(_ *xb.Builder, a, c *xb.Op) *xb.Op { return xb.Add(a, c) }))
		}},
		{name: "scatter_add_batching_dims", shapes: [][]int64{{2, 4, 3}, {2, 2, 3}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			ids := xb.Const(b, []int32{1, 1, 3, 0}, 2, 2)
			dims := xb.ScatterDims{UpdateWindowDims: []int64{2}, InsertedWindowDims: []int64{1}, ScatterDimsToOperandDims: []int64{1},
				InputBatchingDims: []int64{0}, ScatterIndicesBatchingDims: []int64{0}, IndexVectorDim: 2}
			return xb.Sin(xb.Scatter(x[0], ids, xb.Exp(x[1]), dims, func(_ *xb.Builder, a, c *xb.Op) *xb.Op { return xb.Add(a, c) }))
		}},
		{name: "scatter_overwrite", shapes: [][]int64{{5, 3}, {3, 3}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			ids := xb.Const(b, []int32{4, 0, 2}, 3)
			dims := xb.ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1}
			return xb.Sin(xb.Scatter(x[0], ids, xb.Exp(x[1]), dims, nil))
		}},
	} {
		t.Run(c.name, func(t *testing.T) { checkGrad(t, c) })
	}
}

// Forms without a rule record an error naming the unsupported feature.
func TestGradMoreErrors(t *testing.T) {
	for _, c := range []struct {
		name, want string
		f          func(b *xb.Builder, x *xb.Op) *xb.Op
	}{
		{"batch groups", "no gradient rule for a convolution with batch_group_count 2", func(b *xb.Builder, x *xb.Op) *xb.Op {
			k := b.Param("k", hlo.F32, 2, 1, 2)
			dims := &xb.ConvDims{InputBatch: 0, InputFeature: 2, InputSpatial: []int64{1},
				KernelInput: 1, KernelOutput: 2, KernelSpatial: []int64{0},
				OutputBatch: 0, OutputFeature: 2, OutputSpatial: []int64{1}}
			return xb.Conv(x, k, xb.ConvConfig{Dims: dims, BatchGroupCount: 2})
		}},
		{"multiplying scatter", "no gradient rule for scatter with combiner", func(b *xb.Builder, x *xb.Op) *xb.Op {
			dims := xb.ScatterDims{UpdateWindowDims: []int64{1, 2}, InsertedWindowDims: []int64{0}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1}
			return xb.Scatter(x, xb.Const(b, []int32{1}, 1), xb.Slice(x, []int64{0, 0, 0}, []int64{1, 4, 1}, []int64{1, 1, 1}), dims, func(_ *xb.Builder, a, c *xb.Op) *xb.Op { return xb.Mul(a, c) })
		}},
		{"product window", "no gradient rule for reduce-window with body", func(b *xb.Builder, x *xb.Op) *xb.Op {
			return xb.ReduceWindow(x, b.ScalarOf(hlo.F32, 1), func(_ *xb.Builder, a, c *xb.Op) *xb.Op { return xb.Mul(a, c) },
				xb.Window{Sizes: []int64{1, 2, 1}})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := xb.New("m")
			x := b.Param("x", hlo.F32, 2, 4, 1)
			g := xb.Grad(xb.ReduceSum(c.f(b, x)), x)
			if _, err := b.Build(g[0]); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Build: %v, want an error mentioning %q", err, c.want)
			}
		})
	}
}

// A CNN's loss and its gradient with respect to every weight, compiled by
// the CPU backend, match the reference evaluator; the backward
// convolutions lower to the GEMM convolution kernel, not the generic loop.
func TestGradCNNCompiled(t *testing.T) {
	b := xb.New("cnn_grad")
	x := b.Param("x", hlo.F32, 4, 8, 8, 3)
	k1 := b.Param("k1", hlo.F32, 3, 3, 3, 16)
	k2 := b.Param("k2", hlo.F32, 3, 3, 16, 16)
	w := b.Param("w", hlo.F32, 3*3*16, 5)
	bias := b.Param("bias", hlo.F32, 5)
	h := xb.ReLU(xb.Conv2D(x, k1, nil, xb.Same))
	h = xb.ReLU(xb.Conv2D(h, k2, nil, xb.Valid))
	h = xb.MaxPool(h, []int64{2, 2}, nil, xb.Valid)
	logits := xb.Linear(xb.Reshape(h, 4, 3*3*16), w, bias)
	loss := xb.SparseCrossEntropy(logits, xb.Const(b, []int32{0, 4, 2, 1}, 4))
	grads := xb.Grad(loss, k1, k2, w, bias)
	m := build(t, b, b.Tuple(append([]*xb.Op{loss}, grads...)...))

	c, err := axle.NewClient(axle.ClientOptions{Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := c.Compile(m, axle.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Five convolutions: two forward, two kernel gradients and one input
	// gradient (x is not differentiated, so the first layer needs none).
	// All must take the fast kernel (alone or with an epilogue fused),
	// none the generic loop or evaluator.
	t.Logf("engine %s, lowering %v", exe.Engine(), exe.Lowering())
	if l := exe.Lowering(); l["conv"]+l["conv+epilogue"] != 5 || l["conv-loop"] != 0 || l["evaluator"] != 0 {
		t.Errorf("lowering %v: want all 5 convolutions on the conv kernel", l)
	}
	args := eval.RandomArguments(m, 5)
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatal(err)
	}
	var bufs []*axle.Buffer
	for _, a := range args {
		buf, err := c.BufferFromLiteral(a)
		if err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, buf)
	}
	outs, err := exe.Execute(bufs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		got, err := o.ToLiteral()
		if err != nil {
			t.Fatal(err)
		}
		wantI := want.Elements()[i]
		scale := 1e-30
		for j := range wantI.Len() {
			scale = math.Max(scale, math.Abs(wantI.GetFloat64(j)))
		}
		for j := range wantI.Len() {
			if d := math.Abs(got.GetFloat64(j) - wantI.GetFloat64(j)); d > 1e-4*scale {
				t.Fatalf("output %d element %d: cpu %v, evaluator %v", i, j, got.GetFloat64(j), wantI.GetFloat64(j))
			}
		}
	}
}

func TestGradCall(t *testing.T) {
	for _, c := range []gradCase{
		{name: "call_func", shapes: [][]int64{{2, 3}, {3}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.CallFunc("layer", func(sb *xb.Builder, p []*xb.Op) *xb.Op {
				h := xb.Tanh(xb.Add(p[0], xb.BroadcastTo(p[1], 2, 3)))
				return xb.Mul(h, xb.ReduceSum(xb.Mul(p[0], p[0]), 0, 1))
			}, x[0], x[1])
		}},
		{name: "nested_call_used_twice", shapes: [][]int64{{4}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			c := b.Computation("sq", []hlo.Shape{hlo.ArrayShape(hlo.F64, 4)}, func(sb *xb.Builder, p []*xb.Op) *xb.Op {
				return xb.CallFunc("inner", func(ib *xb.Builder, q []*xb.Op) *xb.Op { return xb.Mul(q[0], xb.Sin(q[0])) }, p[0])
			})
			return xb.Add(xb.Call(c, x[0]), xb.Call(c, xb.Exp(x[0])))
		}},
	} {
		t.Run(c.name, func(t *testing.T) { checkGrad(t, c) })
	}
}
