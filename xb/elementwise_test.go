package xb_test

import (
	"math"
	"math/bits"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

func TestUnaryFloat(t *testing.T) {
	pos := []float32{0.5, 0.25, 2}
	mixed := []float32{-1.5, 0.5, 2.5}
	cases := []struct {
		name string
		fn   func(*xb.Op) *xb.Op
		in   []float32
		want func(float64) float64
	}{
		{"abs", xb.Abs, mixed, math.Abs},
		{"neg", xb.Neg, mixed, func(v float64) float64 { return -v }},
		{"exp", xb.Exp, pos, math.Exp},
		{"expm1", xb.Expm1, pos, math.Expm1},
		{"log", xb.Log, pos, math.Log},
		{"log1p", xb.Log1p, pos, math.Log1p},
		{"tanh", xb.Tanh, mixed, math.Tanh},
		{"logistic", xb.Logistic, mixed, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
		{"sigmoid", xb.Sigmoid, mixed, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
		{"sqrt", xb.Sqrt, pos, math.Sqrt},
		{"rsqrt", xb.Rsqrt, pos, func(v float64) float64 { return 1 / math.Sqrt(v) }},
		{"cbrt", xb.Cbrt, mixed, math.Cbrt},
		{"sin", xb.Sin, mixed, math.Sin},
		{"cos", xb.Cos, mixed, math.Cos},
		{"tan", xb.Tan, pos, math.Tan},
		{"erf", xb.Erf, mixed, math.Erf},
		{"floor", xb.Floor, mixed, math.Floor},
		{"ceil", xb.Ceil, mixed, math.Ceil},
		{"round-even", xb.Round, mixed, math.RoundToEven},
		{"sign", xb.Sign, mixed, func(v float64) float64 { return math.Copysign(1, v) }},
		{"relu", xb.ReLU, mixed, func(v float64) float64 { return math.Max(v, 0) }},
		{"copy", xb.Copy, mixed, func(v float64) float64 { return v }},
		{"reduce-precision", func(x *xb.Op) *xb.Op { return xb.ReducePrecision(x, 8, 23) }, mixed, func(v float64) float64 { return v }},
	}
	for _, c := range cases {
		b := xb.New(c.name)
		m := build(t, b, c.fn(b.Param("x", hlo.F32, 3)))
		want := make([]float64, len(c.in))
		for i, v := range c.in {
			want[i] = float64(float32(c.want(float64(v))))
		}
		near(t, c.name, values[float32](t, run(t, m, lit(t, c.in))), want, 2e-6)
	}
}

func TestBinaryFloat(t *testing.T) {
	x, y := []float32{1.5, -2, 3}, []float32{0.5, 3, -2}
	cases := []struct {
		name string
		fn   func(a, b *xb.Op) *xb.Op
		want func(a, b float64) float64
	}{
		{"add", xb.Add, func(a, b float64) float64 { return a + b }},
		{"sub", xb.Sub, func(a, b float64) float64 { return a - b }},
		{"mul", xb.Mul, func(a, b float64) float64 { return a * b }},
		{"div", xb.Div, func(a, b float64) float64 { return a / b }},
		{"rem", xb.Rem, math.Mod},
		{"max", xb.Max, math.Max},
		{"min", xb.Min, math.Min},
		{"pow", xb.Pow, math.Pow},
		{"atan2", xb.Atan2, math.Atan2},
		{"real∘complex", func(a, b *xb.Op) *xb.Op { return xb.Real(xb.Complex(a, b)) }, func(a, _ float64) float64 { return a }},
		{"imag∘complex", func(a, b *xb.Op) *xb.Op { return xb.Imag(xb.Complex(a, b)) }, func(_, b float64) float64 { return b }},
		{"clamp", func(a, b *xb.Op) *xb.Op { return xb.Clamp(a.Builder().ScalarOf(hlo.F32, -1), a, b) },
			func(a, b float64) float64 { return math.Min(math.Max(a, -1), b) }},
		{"select", func(a, b *xb.Op) *xb.Op { return xb.Select(xb.Gt(a, b), a, b) }, math.Max},
		{"scalar-rhs", func(a, _ *xb.Op) *xb.Op { return xb.Sub(a, xb.Scalar(a.Builder(), float32(1))) },
			func(a, _ float64) float64 { return a - 1 }},
		{"scalar-lhs", func(a, _ *xb.Op) *xb.Op { return xb.Sub(xb.Scalar(a.Builder(), float32(1)), a) },
			func(a, _ float64) float64 { return 1 - a }},
	}
	for _, c := range cases {
		b := xb.New("binary")
		m := build(t, b, c.fn(b.Param("x", hlo.F32, 3), b.Param("y", hlo.F32, 3)))
		want := make([]float64, len(x))
		for i := range x {
			want[i] = float64(float32(c.want(float64(x[i]), float64(y[i]))))
		}
		near(t, c.name, values[float32](t, run(t, m, lit(t, x), lit(t, y))), want, 2e-6)
	}
}

func TestIntegerAndCompare(t *testing.T) {
	x, y := []int32{-8, 5, 12}, []int32{1, 2, 12}
	cases := []struct {
		name string
		fn   func(a, b *xb.Op) *xb.Op
		want func(a, b int32) int32
	}{
		{"and", xb.And, func(a, b int32) int32 { return a & b }},
		{"or", xb.Or, func(a, b int32) int32 { return a | b }},
		{"xor", xb.Xor, func(a, b int32) int32 { return a ^ b }},
		{"shl", xb.ShiftLeft, func(a, b int32) int32 { return a << b }},
		{"sra", xb.ShiftRightArithmetic, func(a, b int32) int32 { return a >> b }},
		{"srl", xb.ShiftRightLogical, func(a, b int32) int32 { return int32(uint32(a) >> b) }},
		{"not", func(a, _ *xb.Op) *xb.Op { return xb.Not(a) }, func(a, _ int32) int32 { return ^a }},
		{"clz", func(a, _ *xb.Op) *xb.Op { return xb.Clz(a) }, func(a, _ int32) int32 { return int32(bits.LeadingZeros32(uint32(a))) }},
		{"popcnt", func(a, _ *xb.Op) *xb.Op { return xb.PopCount(a) }, func(a, _ int32) int32 { return int32(bits.OnesCount32(uint32(a))) }},
		{"bitcast", func(a, _ *xb.Op) *xb.Op { return xb.BitcastConvert(xb.BitcastConvert(a, hlo.F32), hlo.S32) }, func(a, _ int32) int32 { return a }},
	}
	cmp := func(name string, f func(a, b *xb.Op) *xb.Op, g func(a, b int32) bool) {
		cases = append(cases, struct {
			name string
			fn   func(a, b *xb.Op) *xb.Op
			want func(a, b int32) int32
		}{name, func(a, b *xb.Op) *xb.Op { return xb.Convert(f(a, b), hlo.S32) }, func(a, b int32) int32 {
			if g(a, b) {
				return 1
			}
			return 0
		}})
	}
	cmp("eq", xb.Eq, func(a, b int32) bool { return a == b })
	cmp("ne", xb.Ne, func(a, b int32) bool { return a != b })
	cmp("lt", xb.Lt, func(a, b int32) bool { return a < b })
	cmp("le", xb.Le, func(a, b int32) bool { return a <= b })
	cmp("gt", xb.Gt, func(a, b int32) bool { return a > b })
	cmp("ge", xb.Ge, func(a, b int32) bool { return a >= b })
	for _, c := range cases {
		b := xb.New(c.name)
		m := build(t, b, c.fn(b.Param("x", hlo.S32, 3), b.Param("y", hlo.S32, 3)))
		want := make([]int32, len(x))
		for i := range x {
			want[i] = c.want(x[i], y[i])
		}
		equal(t, c.name, values[int32](t, run(t, m, lit(t, x), lit(t, y))), want)
	}

	b := xb.New("finite")
	m := build(t, b, xb.IsFinite(b.Param("x", hlo.F32, 3)))
	equal(t, "is-finite", values[bool](t, run(t, m, lit(t, []float32{1, float32(math.Inf(1)), float32(math.NaN())}))), []bool{true, false, false})

	b = xb.New("bad-direction")
	_, err := b.Build(xb.Compare(b.Param("x", hlo.F32), b.Param("y", hlo.F32), "LTE"))
	if err == nil {
		t.Fatal("an unknown direction built")
	}
}

func TestCallMapAndDynamicSlices(t *testing.T) {
	b := xb.New("calls")
	x := b.Param("x", hlo.F32, 4)
	sq := b.Computation("square", []hlo.Shape{hlo.ArrayShape(hlo.F32, 4)}, func(sb *xb.Builder, p []*xb.Op) *xb.Op { return xb.Mul(p[0], p[0]) })
	called := xb.Call(sq, x)
	fused := xb.CallFunc("axpy", func(sb *xb.Builder, p []*xb.Op) *xb.Op {
		return xb.Add(xb.Mul(p[0], sb.ScalarOf(hlo.F32, 2)), p[1])
	}, x, called)
	mapped := xb.Map(func(sb *xb.Builder, p []*xb.Op) *xb.Op { return xb.Sub(p[0], p[1]) }, x, called)
	start := xb.Scalar(b, int32(1))
	ds := xb.DynamicSlice(x, []*xb.Op{start}, 2)
	dus := xb.DynamicUpdateSlice(x, xb.Const(b, []float32{9, 9}), start)
	parts := xb.Split(b.Tuple(ds, dus))
	m := build(t, b, b.Tuple(called, fused, mapped, parts[0], parts[1], xb.AvgPool(xb.Reshape(x, 1, 2, 2, 1), []int64{2, 2}, nil, xb.Valid)))
	e := run(t, m, lit(t, []float32{1, 2, 3, 4})).Elements()
	near(t, "call", values[float32](t, e[0]), []float64{1, 4, 9, 16}, 0)
	near(t, "call-func", values[float32](t, e[1]), []float64{3, 8, 15, 24}, 0)
	near(t, "map", values[float32](t, e[2]), []float64{0, -2, -6, -12}, 0)
	near(t, "dynamic-slice", values[float32](t, e[3]), []float64{2, 3}, 0)
	near(t, "dynamic-update-slice", values[float32](t, e[4]), []float64{1, 9, 9, 4}, 0)
	near(t, "avg-pool", values[float32](t, e[5]), []float64{2.5}, 0)
}

func TestGatherAndRng(t *testing.T) {
	b := xb.New("gather")
	x := b.Param("x", hlo.F32, 3, 2)
	// Rows 2 and 0 as [2, 2] (XLA's canonical row gather).
	rows := xb.Gather(x, xb.Const(b, []int32{2, 0}, 2, 1),
		xb.GatherDims{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1}, 1, 2)
	bitsA, next := xb.RngBitGenerator(b.Param("key", hlo.U64, 2), xb.RngThreeFry, hlo.U32, 4)
	bitsB, _ := xb.RngBitGenerator(next, xb.RngThreeFry, hlo.U32, 4)
	m := build(t, b, b.Tuple(rows, bitsA, bitsB))
	e := run(t, m, lit(t, []float32{1, 2, 3, 4, 5, 6}, 3, 2), lit(t, []uint64{7, 0})).Elements()
	near(t, "gather", values[float32](t, e[0]), []float64{5, 6, 1, 2}, 0)
	a, c := values[uint32](t, e[1]), values[uint32](t, e[2])
	if a[0] == c[0] && a[1] == c[1] {
		t.Fatalf("the next state drew the same bits: %v %v", a, c)
	}

	b = xb.New("bad-rng")
	_, err := b.Build(first(xb.RngBitGenerator(b.Param("k", hlo.U64, 2), "mersenne", hlo.U32, 2)))
	if err == nil {
		t.Fatal("an unknown algorithm built")
	}
}

func first(x, _ *xb.Op) *xb.Op { return x }
