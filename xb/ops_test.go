package xb_test

import (
	"math"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// mlp builds a 2-layer MLP: relu(x·w1 + b1)·w2 + b2, then softmax.
func mlp() (*xb.Builder, *xb.Op) {
	b := xb.New("mlp")
	x := b.Param("x", hlo.F32, 2, 3)
	w1 := xb.Const(b, []float32{1, 0, -1, 0, 1, 1, 1, -1, 0, 0, 0, 1}, 3, 4)
	b1 := xb.Const(b, []float32{0, 0, 1, -10}, 4)
	w2 := xb.Const(b, []float32{1, 0, 0, 1, 1, 1, 0, 0}, 4, 2)
	b2 := xb.Const(b, []float32{0.5, -0.5}, 2)
	h := xb.ReLU(xb.Linear(x, w1, b1))
	return b, xb.Softmax(xb.Linear(h, w2, b2), -1)
}

func TestMLPForward(t *testing.T) {
	b, root := mlp()
	m := build(t, b, root)
	out := run(t, m, lit(t, []float32{1, 2, 3, -1, 0, 1}, 2, 3))
	if got := out.Shape().HumanString(); got != "f32[2,2]" {
		t.Fatalf("shape %s", got)
	}
	// w1's rows are [1,0,-1,0], [1,1,1,-1], [0,0,0,1]; w2's [1,0], [0,1], [1,1], [0,0].
	// Row 0: x·w1 = [1+2, 2, -1+2, -2+3] = [3,2,1,1]; +b1 = [3,2,2,-9];
	// relu = [3,2,2,0]; ·w2 = [3+2, 2+2] = [5,4]; +b2 = [5.5,3.5];
	// softmax = [1/(1+e^-2), e^-2/(1+e^-2)].
	// Row 1: x·w1 = [-1, 0, 1, 1]; +b1 = [-1,0,2,-9]; relu = [0,0,2,0];
	// ·w2 = [2,2]; +b2 = [2.5,1.5]; softmax = [1/(1+e^-1), e^-1/(1+e^-1)].
	e2, e1 := math.Exp(-2), math.Exp(-1)
	near(t, "mlp", values[float32](t, out), []float64{1 / (1 + e2), e2 / (1 + e2), 1 / (1 + e1), e1 / (1 + e1)}, 1e-6)
}

func TestSoftmaxAndLogSoftmax(t *testing.T) {
	b := xb.New("softmax")
	x := b.Param("x", hlo.F32, 3)
	m := build(t, b, b.Tuple(xb.Softmax(x, 0), xb.LogSoftmax(x, -1)))
	out := run(t, m, lit(t, []float32{1, 2, 3}))
	want := []float64{0.09003057, 0.24472847, 0.66524096}
	near(t, "softmax", values[float32](t, out.Elements()[0]), want, 1e-6)
	logs := make([]float64, 3)
	for i, w := range want {
		logs[i] = math.Log(w)
	}
	near(t, "log-softmax", values[float32](t, out.Elements()[1]), logs, 1e-5)
}

func TestReduceCustomReducer(t *testing.T) {
	b := xb.New("reduce")
	x := b.Param("x", hlo.F32, 2, 3)
	// The largest magnitude per row, keeping its sign out: max(|a|, |b|).
	maxAbs := func(sb *xb.Builder, a, c *xb.Op) *xb.Op { return xb.Max(xb.Abs(a), xb.Abs(c)) }
	rows := xb.Reduce(x, b.ScalarOf(hlo.F32, 0), maxAbs, 1)
	m := build(t, b, b.Tuple(rows, xb.ReduceSum(x), xb.ReduceMax(x, 0), xb.ReduceMin(x, 1), xb.ReduceProd(x, 1), xb.Mean(x, 1)))
	out := run(t, m, lit(t, []float32{1, -5, 2, -3, 0.5, 2}, 2, 3))
	e := out.Elements()
	near(t, "max-abs", values[float32](t, e[0]), []float64{5, 3}, 0)
	near(t, "sum", values[float32](t, e[1]), []float64{-2.5}, 1e-6)
	near(t, "max", values[float32](t, e[2]), []float64{1, 0.5, 2}, 0)
	near(t, "min", values[float32](t, e[3]), []float64{-5, -3}, 0)
	near(t, "prod", values[float32](t, e[4]), []float64{-10, -3}, 1e-6)
	near(t, "mean", values[float32](t, e[5]), []float64{-2.0 / 3, -0.5 / 3}, 1e-6)
}

func TestReduceIdentities(t *testing.T) {
	b := xb.New("identities")
	i := b.Param("i", hlo.S32, 3)
	p := b.Param("p", hlo.Pred, 3)
	m := build(t, b, b.Tuple(xb.ReduceMax(i), xb.ReduceMin(i), xb.ReduceMax(p), xb.ReduceMin(p)))
	e := run(t, m, lit(t, []int32{-7, -9, -8}), lit(t, []bool{false, true, false})).Elements()
	equal(t, "max s32", values[int32](t, e[0]), []int32{-7})
	equal(t, "min s32", values[int32](t, e[1]), []int32{-9})
	equal(t, "any", values[bool](t, e[2]), []bool{true})
	equal(t, "all", values[bool](t, e[3]), []bool{false})
}

func TestWhileSumsOneToTen(t *testing.T) {
	b := xb.New("loop")
	init := b.Tuple(xb.Scalar(b, int32(1)), xb.Scalar(b, int32(0)))
	cond := func(sb *xb.Builder, s *xb.Op) *xb.Op {
		return xb.Le(xb.GetTupleElement(s, 0), xb.Scalar(sb, int32(10)))
	}
	body := func(sb *xb.Builder, s *xb.Op) *xb.Op {
		i, sum := xb.GetTupleElement(s, 0), xb.GetTupleElement(s, 1)
		return sb.Tuple(xb.Add(i, xb.Scalar(sb, int32(1))), xb.Add(sum, i))
	}
	m := build(t, b, xb.GetTupleElement(xb.While(init, cond, body), 1))
	equal(t, "sum 1..10", values[int32](t, run(t, m)), []int32{55})
}

func TestConditional(t *testing.T) {
	b := xb.New("cond")
	p := b.Param("p", hlo.Pred)
	x := b.Param("x", hlo.F32, 2)
	double := func(sb *xb.Builder, v *xb.Op) *xb.Op { return xb.Mul(v, sb.ScalarOf(hlo.F32, 2)) }
	plus10 := func(sb *xb.Builder, v *xb.Op) *xb.Op { return xb.Add(v, sb.ScalarOf(hlo.F32, 10)) }
	m := build(t, b, xb.Cond(p, x, double, x, plus10))
	arg := lit(t, []float32{1, 2})
	near(t, "true", values[float32](t, run(t, m, hlo.ScalarLiteral(true), arg)), []float64{2, 4}, 0)
	near(t, "false", values[float32](t, run(t, m, hlo.ScalarLiteral(false), arg)), []float64{11, 12}, 0)

	b = xb.New("switch")
	i := b.Param("i", hlo.S32)
	y := b.Param("y", hlo.F32, 2)
	m = build(t, b, xb.Switch(i, []*xb.Op{y, y, y}, double, plus10, func(_ *xb.Builder, v *xb.Op) *xb.Op { return xb.Neg(v) }))
	near(t, "branch 1", values[float32](t, run(t, m, hlo.ScalarLiteral(int32(1)), arg)), []float64{11, 12}, 0)
	near(t, "branch 2", values[float32](t, run(t, m, hlo.ScalarLiteral(int32(2)), arg)), []float64{-1, -2}, 0)
}

func TestShapeOps(t *testing.T) {
	b := xb.New("shapes")
	x := b.Param("x", hlo.F32, 2, 3) // [[0,1,2],[3,4,5]]
	tr := xb.Transpose(x, 1, 0)
	rs := xb.Reshape(x, 3, 2)
	sl := xb.Slice(x, []int64{0, 1}, []int64{2, 3}, nil)
	cat := xb.Concatenate(0, x, x)
	pad := xb.Pad(xb.SliceAxis(x, 0, 0, 1), b.ScalarOf(hlo.F32, -1), hlo.PaddingConfig{{}, {Lo: 1, Hi: 0, Interior: 1}})
	rev := xb.Reverse(x, 1)
	bc := xb.BroadcastTo(xb.Const(b, []float32{7, 8, 9}, 1, 3), 2, 3)
	io := b.Iota(hlo.S32, 1, 2, 3)
	tk := xb.Take(x, xb.Const(b, []int32{2, 0}), 1)
	m := build(t, b, b.Tuple(tr, rs, sl, cat, pad, rev, bc, io, tk))
	e := run(t, m, lit(t, []float32{0, 1, 2, 3, 4, 5}, 2, 3)).Elements()
	near(t, "transpose", values[float32](t, e[0]), []float64{0, 3, 1, 4, 2, 5}, 0)
	near(t, "reshape", values[float32](t, e[1]), []float64{0, 1, 2, 3, 4, 5}, 0)
	near(t, "slice", values[float32](t, e[2]), []float64{1, 2, 4, 5}, 0)
	near(t, "concat", values[float32](t, e[3]), []float64{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}, 0)
	near(t, "pad", values[float32](t, e[4]), []float64{-1, 0, -1, 1, -1, 2}, 0)
	near(t, "reverse", values[float32](t, e[5]), []float64{2, 1, 0, 5, 4, 3}, 0)
	near(t, "broadcast", values[float32](t, e[6]), []float64{7, 8, 9, 7, 8, 9}, 0)
	equal(t, "iota", values[int32](t, e[7]), []int32{0, 1, 2, 0, 1, 2})
	if got := e[8].Shape().HumanString(); got != "f32[2,2]" {
		t.Fatalf("take shape %s", got)
	}
	near(t, "take", values[float32](t, e[8]), []float64{2, 0, 5, 3}, 0)
}

func TestConvAndPool(t *testing.T) {
	b := xb.New("conv")
	x := b.Param("x", hlo.F32, 1, 3, 3, 1) // 1..9
	k := b.Ones(hlo.F32, 2, 2, 1, 1)
	valid := xb.Conv2D(x, k, nil, xb.Valid)
	same := xb.Conv2D(x, k, nil, xb.Same)
	pool := xb.MaxPool(b.Param("y", hlo.F32, 1, 4, 4, 1), []int64{2, 2}, nil, xb.Valid)
	m := build(t, b, b.Tuple(valid, same, pool))
	y := make([]float32, 16)
	for i := range y {
		y[i] = float32(i + 1)
	}
	e := run(t, m, lit(t, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, 3, 3, 1), lit(t, y, 1, 4, 4, 1)).Elements()
	near(t, "valid", values[float32](t, e[0]), []float64{12, 16, 24, 28}, 0)
	// SAME with stride 1 pads one row and column after.
	near(t, "same", values[float32](t, e[1]), []float64{12, 16, 9, 24, 28, 15, 15, 17, 9}, 0)
	near(t, "maxpool", values[float32](t, e[2]), []float64{6, 8, 14, 16}, 0)
}

func TestCrossEntropy(t *testing.T) {
	b := xb.New("xent")
	logits := b.Param("logits", hlo.F32, 2, 3)
	labels := b.Param("labels", hlo.S32, 2)
	onehot := xb.OneHot(labels, 3, hlo.F32)
	m := build(t, b, b.Tuple(xb.SparseCrossEntropy(logits, labels), xb.CrossEntropy(logits, onehot), onehot))
	// Row 0: uniform logits, -log(1/3). Row 1: logits [ln 2, 0, 0] and
	// label 0: -log(2/4).
	e := run(t, m, lit(t, []float32{0, 0, 0, float32(math.Ln2), 0, 0}, 2, 3), lit(t, []int32{2, 0})).Elements()
	want := (math.Log(3) + math.Log(2)) / 2
	near(t, "sparse", values[float32](t, e[0]), []float64{want}, 1e-6)
	near(t, "dense", values[float32](t, e[1]), []float64{want}, 1e-6)
	near(t, "onehot", values[float32](t, e[2]), []float64{0, 0, 1, 1, 0, 0}, 0)
}

func TestDropout(t *testing.T) {
	b := xb.New("dropout")
	x := b.Ones(hlo.F32, 1000)
	key := b.Param("key", hlo.U64, 2)
	y, next := xb.Dropout(x, 0.25, key)
	same, sameKey := xb.Dropout(x, 0, key)
	m := build(t, b, b.Tuple(y, next, same, sameKey))
	e := run(t, m, lit(t, []uint64{42, 0})).Elements()
	zeros := 0
	for _, v := range values[float32](t, e[0]) {
		switch v {
		case 0:
			zeros++
		case 1 / 0.75:
		default:
			t.Fatalf("dropout value %v is neither 0 nor 1/0.75", v)
		}
	}
	if zeros < 180 || zeros > 320 {
		t.Fatalf("%d of 1000 dropped at rate 0.25", zeros)
	}
	if k := values[uint64](t, e[1]); k[0] != 42 || k[1] == 0 {
		t.Fatalf("next key %v: want the key kept and the counter advanced", k)
	}
	for _, v := range values[float32](t, e[2]) {
		if v != 1 {
			t.Fatal("rate 0 changed the input")
		}
	}
	// The same key gives the same mask: randomness is explicit.
	again := run(t, m, lit(t, []uint64{42, 0})).Elements()
	equal(t, "same key", values[float32](t, again[0]), values[float32](t, e[0]))
}

func TestDotGeneralAndScatter(t *testing.T) {
	b := xb.New("dot")
	x := b.Param("x", hlo.F32, 2, 2, 3)
	y := b.Param("y", hlo.F32, 2, 3, 1)
	bm := xb.MatMul(x, y)
	v := xb.Dot(xb.Const(b, []float32{1, 2, 3}), xb.Const(b, []float32{4, 5, 6}))
	acc := xb.Scatter(b.Zeros(hlo.F32, 4), xb.Const(b, []int32{1, 3, 1}, 3, 1), xb.Const(b, []float32{1, 2, 3}),
		xb.ScatterDims{InsertedWindowDims: []int64{0}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1},
		func(_ *xb.Builder, a, u *xb.Op) *xb.Op { return xb.Add(a, u) })
	m := build(t, b, b.Tuple(bm, v, acc))
	xs := []float32{1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0}
	ys := []float32{1, 1, 1, 2, 3, 4}
	e := run(t, m, lit(t, xs, 2, 2, 3), lit(t, ys, 2, 3, 1)).Elements()
	near(t, "batched matmul", values[float32](t, e[0]), []float64{6, 15, 2, 3}, 0)
	near(t, "dot", values[float32](t, e[1]), []float64{32}, 0)
	near(t, "scatter-add", values[float32](t, e[2]), []float64{0, 4, 0, 2}, 0)
}
