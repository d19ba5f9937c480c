package xb_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Gradient checks: every rule against central finite differences of the
// same function, evaluated in f64 by the reference evaluator. A non-scalar
// f is reduced as sum(f(x)·w) with fixed random weights w, so every
// element of the Jacobian is exercised with a different cotangent.

// gradCase is one function to differentiate.
type gradCase struct {
	name   string
	shapes [][]int64
	// lo, hi bound the random inputs (default -2, 2); domains such as
	// log's need lo > 0.
	lo, hi float64
	// step and tol override fdStep and fdTol.
	step, tol float64
	// prepare adjusts the random inputs (e.g. to keep ties away from max).
	prepare func(xs [][]float64)
	f       func(b *xb.Builder, xs []*xb.Op) *xb.Op
}

// fdStep and fdTol suit f64 central differences of smooth functions of
// O(1) inputs: the truncation error is O(h²) ≈ 1e-10, rounding ≈ 1e-16/h.
const (
	fdStep = 1e-5
	fdTol  = 1e-6
)

func checkGrad(t *testing.T, c gradCase) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, uint64(len(c.name))))
	step, tol := fdStep, fdTol
	if c.step != 0 {
		step, tol = c.step, c.tol
	}
	lo, hi := c.lo, c.hi
	if lo == 0 && hi == 0 {
		lo, hi = -2, 2
	}
	xs := make([][]float64, len(c.shapes))
	for i, s := range c.shapes {
		xs[i] = make([]float64, numElems(s))
		for j := range xs[i] {
			xs[i][j] = lo + (hi-lo)*rng.Float64()
		}
	}
	if c.prepare != nil {
		c.prepare(xs)
	}
	// The cotangent weights depend only on the output shape, found by
	// building f once.
	var weights []float64
	objective := func(b *xb.Builder, params []*xb.Op) *xb.Op {
		y := c.f(b, params)
		if y.Rank() == 0 {
			return y
		}
		if weights == nil {
			wr := rand.New(rand.NewPCG(2, 3))
			weights = make([]float64, numElems(y.Dims()))
			for i := range weights {
				weights[i] = 0.5 + wr.Float64()
			}
		}
		w := xb.Const(b, weights, y.Dims()...)
		return xb.ReduceSum(xb.Mul(y, w), xb.AllAxes(y)...)
	}
	params := func(b *xb.Builder) []*xb.Op {
		ps := make([]*xb.Op, len(c.shapes))
		for i, s := range c.shapes {
			ps[i] = b.Param(fmt.Sprintf("x%d", i), hlo.F64, s...)
		}
		return ps
	}

	b := xb.New(c.name + "_grad")
	ps := params(b)
	y := objective(b, ps)
	grads := xb.Grad(y, ps...)
	m := build(t, b, b.Tuple(append([]*xb.Op{y}, grads...)...))

	fb := xb.New(c.name)
	fm := build(t, fb, objective(fb, params(fb)))
	eval := func(vals [][]float64) float64 {
		args := make([]*hlo.Literal, len(vals))
		for i, v := range vals {
			args[i] = lit(t, v, c.shapes[i]...)
		}
		return values[float64](t, run(t, fm, args...))[0]
	}

	args := make([]*hlo.Literal, len(xs))
	for i, v := range xs {
		args[i] = lit(t, v, c.shapes[i]...)
	}
	out := run(t, m, args...)
	if got, want := values[float64](t, out.Elements()[0])[0], eval(xs); !(math.Abs(got-want) <= 1e-12*(1+math.Abs(want))) {
		t.Fatalf("%s: the gradient module's value %v differs from the function's %v", c.name, got, want)
	}
	for i := range xs {
		g := values[float64](t, out.Elements()[1+i])
		for j := range xs[i] {
			orig := xs[i][j]
			xs[i][j] = orig + step
			up := eval(xs)
			xs[i][j] = orig - step
			down := eval(xs)
			xs[i][j] = orig
			fd := (up - down) / (2 * step)
			if !(math.Abs(g[j]-fd) <= tol*(1+math.Abs(fd))) {
				t.Fatalf("%s: d/dx%d[%d] is %.10g, finite differences give %.10g", c.name, i, j, g[j], fd)
			}
		}
	}
}

func numElems(dims []int64) int {
	n := 1
	for _, d := range dims {
		n *= int(d)
	}
	return n
}

// separate spreads values so that no two are within gap of each other
// (max, min, sort and friends have kinks at ties).
func separate(xs [][]float64) {
	for _, v := range xs {
		for j := range v {
			v[j] += 0.01 * float64(j*7%len(v))
		}
	}
}

func TestGradElementwise(t *testing.T) {
	s := [][]int64{{2, 3}}
	s2 := [][]int64{{2, 3}, {2, 3}}
	unary := func(f func(*xb.Op) *xb.Op) func(*xb.Builder, []*xb.Op) *xb.Op {
		return func(_ *xb.Builder, x []*xb.Op) *xb.Op { return f(x[0]) }
	}
	binary := func(f func(x, y *xb.Op) *xb.Op) func(*xb.Builder, []*xb.Op) *xb.Op {
		return func(_ *xb.Builder, x []*xb.Op) *xb.Op { return f(x[0], x[1]) }
	}
	for _, c := range []gradCase{
		{name: "add", shapes: s2, f: binary(xb.Add)},
		{name: "sub", shapes: s2, f: binary(xb.Sub)},
		{name: "mul", shapes: s2, f: binary(xb.Mul)},
		{name: "div", shapes: s2, lo: 0.5, hi: 2, f: binary(xb.Div)},
		{name: "max", shapes: s2, f: binary(xb.Max)},
		{name: "min", shapes: s2, f: binary(xb.Min)},
		{name: "pow", shapes: s2, lo: 0.5, hi: 2, f: binary(xb.Pow)},
		{name: "atan2", shapes: s2, lo: 0.5, hi: 2, f: binary(xb.Atan2)},
		{name: "rem", shapes: s2, lo: 0.3, hi: 2, prepare: func(xs [][]float64) {
			for j := range xs[0] {
				xs[0][j] = 1 + 3*xs[0][j] + 0.05 // keep x/y away from integers
			}
		}, f: binary(xb.Rem)},
		{name: "neg", shapes: s, f: unary(xb.Neg)},
		{name: "abs", shapes: s, f: unary(xb.Abs)},
		{name: "exp", shapes: s, f: unary(xb.Exp)},
		{name: "expm1", shapes: s, f: unary(xb.Expm1)},
		{name: "log", shapes: s, lo: 0.3, hi: 3, f: unary(xb.Log)},
		{name: "log1p", shapes: s, lo: -0.5, hi: 3, f: unary(xb.Log1p)},
		{name: "tanh", shapes: s, f: unary(xb.Tanh)},
		{name: "logistic", shapes: s, f: unary(xb.Logistic)},
		{name: "sqrt", shapes: s, lo: 0.3, hi: 3, f: unary(xb.Sqrt)},
		{name: "rsqrt", shapes: s, lo: 0.3, hi: 3, f: unary(xb.Rsqrt)},
		{name: "cbrt", shapes: s, lo: 0.3, hi: 3, f: unary(xb.Cbrt)},
		{name: "sin", shapes: s, f: unary(xb.Sin)},
		{name: "cos", shapes: s, f: unary(xb.Cos)},
		{name: "tan", shapes: s, lo: -1, hi: 1, f: unary(xb.Tan)},
		{name: "erf", shapes: s, f: unary(xb.Erf)},
		{name: "copy", shapes: s, f: unary(xb.Copy)},
		{name: "floor_times_x", shapes: s, lo: 0.1, hi: 0.9, f: unary(func(x *xb.Op) *xb.Op { return xb.Add(xb.Floor(x), x) })},
		{name: "convert_f32_roundtrip_scaled", shapes: s, step: 1e-2, tol: 1e-4, f: unary(func(x *xb.Op) *xb.Op {
			// Through f32 and back: the adjoint converts both ways. The
			// function is linear, so a large step keeps f32 rounding
			// (2e-7 of the value) small against the difference.
			return xb.Mul(xb.Convert(xb.Convert(x, hlo.F32), hlo.F64), x.Builder().ScalarOf(hlo.F64, 3))
		})},
		{name: "select", shapes: s2, f: binary(func(x, y *xb.Op) *xb.Op { return xb.Select(xb.Gt(x, y), xb.Mul(x, y), xb.Sin(y)) })},
		{name: "clamp", shapes: [][]int64{{2, 3}, {2, 3}, {2, 3}}, prepare: func(xs [][]float64) {
			for j := range xs[0] {
				xs[0][j], xs[2][j] = -0.5-0.1*float64(j), 0.5+0.1*float64(j)
				xs[1][j] = -1.5 + 0.53*float64(j) // below, inside and above
			}
		}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op { return xb.Clamp(x[0], x[1], x[2]) }},
		{name: "reuse", shapes: s, f: unary(func(x *xb.Op) *xb.Op { return xb.Mul(xb.Exp(x), xb.Sin(xb.Mul(x, x))) })},
	} {
		t.Run(c.name, func(t *testing.T) { checkGrad(t, c) })
	}
}

func TestGradShapeOps(t *testing.T) {
	for _, c := range []gradCase{
		{name: "broadcast", shapes: [][]int64{{3}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Sin(xb.BroadcastInDim(x[0], []int64{2, 3, 4}, 1))
		}},
		{name: "broadcast_transposing", shapes: [][]int64{{2, 3}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Sin(xb.BroadcastInDim(x[0], []int64{3, 4, 2}, 2, 0))
		}},
		{name: "reshape", shapes: [][]int64{{2, 6}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Sin(xb.Reshape(x[0], 3, 2, 2))
		}},
		{name: "transpose", shapes: [][]int64{{2, 3, 4}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Mul(xb.Transpose(x[0], 2, 0, 1), xb.Transpose(xb.Sin(x[0]), 2, 0, 1))
		}},
		{name: "slice_strided", shapes: [][]int64{{5, 7}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Exp(xb.Slice(x[0], []int64{1, 0}, []int64{5, 7}, []int64{2, 3}))
		}},
		{name: "pad", shapes: [][]int64{{3, 4}, {}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Sin(xb.Pad(x[0], x[1], hlo.PaddingConfig{{Lo: 1, Hi: 2, Interior: 1}, {Lo: -1, Hi: 1}}))
		}},
		{name: "pad_negative", shapes: [][]int64{{5, 4}, {}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Sin(xb.Pad(x[0], x[1], hlo.PaddingConfig{{Lo: -2, Hi: -1, Interior: 1}, {Lo: 2, Hi: -3}}))
		}},
		{name: "concatenate", shapes: [][]int64{{2, 3}, {2, 1}, {2, 2}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Sin(xb.Concatenate(1, x[0], xb.Exp(x[1]), x[2], x[0]))
		}},
		{name: "reverse", shapes: [][]int64{{3, 4}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Mul(xb.Reverse(x[0], 0, 1), xb.Sin(x[0]))
		}},
		{name: "dynamic_slice", shapes: [][]int64{{4, 5}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			// The second start is clamped from 4 to 2.
			return xb.Exp(xb.DynamicSlice(x[0], []*xb.Op{xb.Scalar(b, int32(1)), xb.Scalar(b, int32(4))}, 2, 3))
		}},
		{name: "dynamic_update_slice", shapes: [][]int64{{4, 5}, {2, 2}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Sin(xb.DynamicUpdateSlice(x[0], xb.Exp(x[1]), xb.Scalar(b, int32(2)), xb.Scalar(b, int32(1))))
		}},
		{name: "tuple", shapes: [][]int64{{3}, {3}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			t := b.Tuple(xb.Sin(x[0]), x[1], x[0])
			return xb.Add(xb.Mul(xb.GetTupleElement(t, 0), xb.GetTupleElement(t, 1)), xb.GetTupleElement(t, 0))
		}},
	} {
		t.Run(c.name, func(t *testing.T) { checkGrad(t, c) })
	}
}

func TestGradReduceAndDot(t *testing.T) {
	for _, c := range []gradCase{
		{name: "reduce_sum", shapes: [][]int64{{2, 3, 4}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Sin(xb.ReduceSum(x[0], 0, 2))
		}},
		{name: "reduce_max", shapes: [][]int64{{3, 4}}, prepare: separate, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Sin(xb.ReduceMax(x[0], 1))
		}},
		{name: "reduce_min_all", shapes: [][]int64{{3, 4}}, prepare: separate, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.ReduceMin(x[0])
		}},
		{name: "reduce_prod", shapes: [][]int64{{2, 3}}, lo: 0.5, hi: 1.5, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.ReduceProd(x[0], 1)
		}},
		{name: "matmul", shapes: [][]int64{{3, 4}, {4, 2}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.MatMul(x[0], x[1])
		}},
		{name: "dot_vector", shapes: [][]int64{{4}, {4, 3}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.Dot(x[0], x[1])
		}},
		{name: "dot_general_batched_permuted", shapes: [][]int64{{4, 2, 3, 5}, {3, 2, 6, 4}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			// Batch dims 1/1, contracting (0, 2) with (3, 0): the
			// contracting pairs appear in a different order on each side.
			return xb.DotGeneral(x[0], x[1], xb.DotDims{
				LhsBatch: []int64{1}, RhsBatch: []int64{1},
				LhsContracting: []int64{0, 2}, RhsContracting: []int64{3, 0},
			})
		}},
		{name: "dot_same_operand", shapes: [][]int64{{3, 3}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op {
			return xb.MatMul(x[0], xb.Tanh(x[0]))
		}},
	} {
		t.Run(c.name, func(t *testing.T) { checkGrad(t, c) })
	}
}

func TestGradNNHelpers(t *testing.T) {
	for _, c := range []gradCase{
		{name: "softmax", shapes: [][]int64{{2, 5}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op { return xb.Softmax(x[0], -1) }},
		{name: "log_softmax", shapes: [][]int64{{2, 5}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op { return xb.LogSoftmax(x[0], 1) }},
		{name: "relu", shapes: [][]int64{{2, 5}}, prepare: func(xs [][]float64) {
			for j := range xs[0] {
				if math.Abs(xs[0][j]) < 0.01 {
					xs[0][j] = 0.5
				}
			}
		}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op { return xb.ReLU(x[0]) }},
		{name: "linear_cross_entropy", shapes: [][]int64{{3, 4}, {4, 5}, {5}}, f: func(b *xb.Builder, x []*xb.Op) *xb.Op {
			labels := xb.Const(b, []int32{4, 0, 2}, 3)
			return xb.SparseCrossEntropy(xb.Linear(x[0], x[1], x[2]), labels)
		}},
		{name: "mean", shapes: [][]int64{{3, 4}}, f: func(_ *xb.Builder, x []*xb.Op) *xb.Op { return xb.Mean(xb.Mul(x[0], x[0]), 0) }},
	} {
		t.Run(c.name, func(t *testing.T) { checkGrad(t, c) })
	}
}

func TestGradErrors(t *testing.T) {
	t.Run("non-scalar y", func(t *testing.T) {
		b := xb.New("m")
		x := b.Param("x", hlo.F32, 3)
		g := xb.Grad(xb.Sin(x), x)
		if _, err := b.Build(g[0]); err == nil || !strings.Contains(err.Error(), "scalar") {
			t.Fatalf("Build: %v, want an error about a scalar y", err)
		}
	})
	t.Run("integer wrt", func(t *testing.T) {
		b := xb.New("m")
		i := b.Param("i", hlo.S32, 3)
		y := xb.ReduceSum(xb.Convert(i, hlo.F32))
		g := xb.Grad(y, i)
		if _, err := b.Build(g[0]); err == nil || !strings.Contains(err.Error(), "floating-point") {
			t.Fatalf("Build: %v, want an error about the wrt type", err)
		}
	})
	t.Run("no rule names the instruction and the caller", func(t *testing.T) {
		b := xb.New("m")
		x := b.Param("x", hlo.F32, 4)
		sorted := xb.Sort(0, func(sb *xb.Builder, p []*xb.Op) *xb.Op { return xb.Lt(p[0], p[1]) }, x)
		y := xb.ReduceSum(xb.Mul(sorted, sorted))
		line := here()
		g := xb.Grad(y, x)
		_, err := b.Build(g[0])
		if err == nil || !strings.Contains(err.Error(), "no gradient rule for sort") || !strings.Contains(err.Error(), fmt.Sprintf("grad_test.go:%d", line)) {
			t.Fatalf("Build: %v, want the missing sort rule at grad_test.go:%d", err, line)
		}
	})
	t.Run("unrelated wrt gets zeros", func(t *testing.T) {
		b := xb.New("m")
		x := b.Param("x", hlo.F32, 2)
		w := b.Param("w", hlo.F32, 3)
		g := xb.Grad(xb.ReduceSum(xb.Mul(x, x)), w)
		m := build(t, b, g[0])
		out := run(t, m, lit(t, []float32{1, 2}, 2), lit(t, []float32{5, 6, 7}, 3))
		near(t, "grad w", values[float32](t, out), []float64{0, 0, 0}, 0)
	})
}

// StopGradient cuts the gradient: for y = Σ x·stop(x), dy/dx is x (the
// stopped factor as a constant), not 2x. Worked by hand.
func TestStopGradient(t *testing.T) {
	b := xb.New("stop")
	x := b.Param("x", hlo.F64, 3)
	y := xb.ReduceSum(xb.Mul(x, xb.StopGradient(x)), 0)
	m := build(t, b, b.Tuple(y, xb.Grad(y, x)[0]))
	out := run(t, m, lit(t, []float64{1, -2, 3}, 3))
	if got := values[float64](t, out.Elements()[0])[0]; got != 14 {
		t.Fatalf("y = %v, want 14", got)
	}
	if got := values[float64](t, out.Elements()[1]); fmt.Sprint(got) != "[1 -2 3]" {
		t.Fatalf("dy/dx = %v, want [1 -2 3]", got)
	}
}
