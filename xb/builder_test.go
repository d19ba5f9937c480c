package xb_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// here is the line after the caller's.
func here() int {
	_, _, line, _ := runtime.Caller(1)
	return line + 1
}

func TestErrorNamesCallerLine(t *testing.T) {
	b := xb.New("bad")
	x := b.Param("x", hlo.F32, 100, 10)
	y := b.Param("y", hlo.F32, 10)
	line := here()
	sum := xb.Add(x, y)
	if !sum.Poisoned() {
		t.Fatal("a bad add gave a live op")
	}
	// Later ops are no-ops, and do not replace the first error.
	later := xb.Exp(xb.MatMul(sum, x))
	_, err := b.Build(later)
	want := fmt.Sprintf("builder_test.go:%d: add: shapes f32[100,10] and f32[10] differ", line)
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	var xe *xb.Error
	if !errors.As(err, &xe) || xe.Line != line || !strings.HasSuffix(xe.File, "builder_test.go") {
		t.Fatalf("error %#v does not carry the caller's position", xe)
	}
}

func TestErrorInsideHelperAndSubComputation(t *testing.T) {
	b := xb.New("bad")
	x := b.Param("x", hlo.S32, 4)
	// Softmax of integers fails inside the helper (at exp); the error
	// still names this line, not one of package xb.
	line := here()
	xb.Softmax(x, 0)
	_, err := b.Build(x)
	if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("builder_test.go:%d: exponential: ", line)) {
		t.Fatalf("err = %v", err)
	}

	b = xb.New("bad-body")
	f := b.Param("f", hlo.F32, 2)
	var bodyLine int
	xb.Reduce(f, b.ScalarOf(hlo.F32, 0), func(sb *xb.Builder, p, q *xb.Op) *xb.Op {
		bodyLine = here()
		return xb.Add(p, xb.Scalar(sb, int32(1)))
	}, 0)
	_, err = b.Build(f)
	if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("builder_test.go:%d: add: element types f32 and s32 differ", bodyLine)) {
		t.Fatalf("err = %v", err)
	}
}

func TestErrorsOnMisuse(t *testing.T) {
	cases := []struct {
		name, want string
		f          func() error
	}{
		{"two builders", "comes from another builder", func() error {
			b1, b2 := xb.New("a"), xb.New("b")
			_, err := b1.Build(xb.Add(b1.Param("x", hlo.F32), b2.Param("y", hlo.F32)))
			return err
		}},
		{"capture", "pass values into sub-computations as operands", func() error {
			b := xb.New("capture")
			x := b.Param("x", hlo.F32, 3)
			r := xb.Reduce(x, b.ScalarOf(hlo.F32, 0), func(_ *xb.Builder, p, _ *xb.Op) *xb.Op { return xb.Add(p, x) }, 0)
			_, err := b.Build(r)
			return err
		}},
		{"nil operand", "operand 1 is nil", func() error {
			b := xb.New("nil")
			_, err := b.Build(xb.Add(b.Param("x", hlo.F32), nil))
			return err
		}},
		{"foreign root", "the root comes from another builder", func() error {
			_, err := xb.New("a").Build(xb.New("b").Param("x", hlo.F32))
			return err
		}},
		{"foreign computation", "is not a computation of this module", func() error {
			other := xb.New("other")
			c := other.Computation("f", nil, func(sb *xb.Builder, _ []*xb.Op) *xb.Op { return xb.Scalar(sb, float32(1)) })
			b := xb.New("emit")
			_, err := b.Build(b.Emit(hlo.OpCall, hlo.Shape{}, []hlo.Attr{{Name: "to_apply", Value: c}}))
			return err
		}},
		{"nil root", "the root is nil", func() error {
			_, err := xb.New("nil").Build(nil)
			return err
		}},
		{"orphan root", "poisoned", func() error {
			_, err := xb.New("orphan").Build(xb.Add(nil, nil))
			return err
		}},
		{"root of sub-builder", "belongs to computation", func() error {
			b := xb.New("outer")
			var inner *xb.Op
			xb.While(b.Param("s", hlo.Pred), func(sb *xb.Builder, s *xb.Op) *xb.Op { inner = s; return s },
				func(_ *xb.Builder, s *xb.Op) *xb.Op { return s })
			_, err := b.Build(inner)
			return err
		}},
		{"bad axis", "axis 5 is out of range", func() error {
			b := xb.New("axis")
			_, err := b.Build(xb.Softmax(b.Param("x", hlo.F32, 2), 5))
			return err
		}},
		{"reshape count", "mismatched element counts", func() error {
			b := xb.New("reshape")
			_, err := b.Build(xb.Reshape(b.Param("x", hlo.F32, 2, 3), 4))
			return err
		}},
		{"while shape", "must all have the same shape", func() error {
			b := xb.New("while")
			w := xb.While(xb.Scalar(b, int32(0)), func(sb *xb.Builder, s *xb.Op) *xb.Op { return xb.Lt(s, xb.Scalar(sb, int32(3))) },
				func(sb *xb.Builder, s *xb.Op) *xb.Op { return xb.Convert(s, hlo.F32) })
			_, err := b.Build(w)
			return err
		}},
		{"negative dim", "negative dimension", func() error {
			b := xb.New("neg")
			_, err := b.Build(b.Param("x", hlo.F32, -1))
			return err
		}},
		{"build twice", "already built", func() error {
			b := xb.New("twice")
			x := b.Param("x", hlo.F32)
			if _, err := b.Build(x); err != nil {
				return err
			}
			_, err := b.Build(x)
			return err
		}},
		{"sub-builder build", "is a sub-computation", func() error {
			b := xb.New("sub")
			var err error
			xb.Reduce(b.Param("x", hlo.F32, 2), b.ScalarOf(hlo.F32, 0), func(sb *xb.Builder, p, q *xb.Op) *xb.Op {
				_, err = sb.Build(p)
				return p
			}, 0)
			return err
		}},
		{"poisoned from another builder", "comes from another builder, which failed", func() error {
			b1, b2 := xb.New("a"), xb.New("b")
			bad := xb.Exp(b1.Param("i", hlo.S32))
			_, err := b2.Build(xb.Add(b2.Param("j", hlo.S32), bad))
			return err
		}},
		{"finished sub-builder", "is already finished", func() error {
			b := xb.New("late")
			var kept *xb.Builder
			r := xb.ReduceSum(b.Param("x", hlo.F32, 2))
			xb.Reduce(r, b.ScalarOf(hlo.F32, 0), func(sb *xb.Builder, p, q *xb.Op) *xb.Op { kept = sb; return xb.Add(p, q) })
			_, err := b.Build(kept.ScalarOf(hlo.F32, 1))
			return err
		}},
		{"dropout rate", "rate 1 is not in [0, 1)", func() error {
			b := xb.New("drop")
			y, _ := xb.Dropout(b.Param("x", hlo.F32, 2), 1, b.Param("k", hlo.U64, 2))
			_, err := b.Build(y)
			return err
		}},
	}
	for _, c := range cases {
		err := c.f()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), "builder_test.go:") {
			t.Errorf("%s: err = %v does not name this file", c.name, err)
		}
	}
}

func TestNilSafety(t *testing.T) {
	// Nothing panics on nil builders and ops.
	var b *xb.Builder
	ops := []*xb.Op{
		b.Param("x", hlo.F32), b.Constant(nil), b.ScalarOf(hlo.F32, 1), b.Tuple(), b.Iota(hlo.S32, 0, 2),
		xb.Add(nil, nil), xb.Exp(nil), xb.Reshape(nil, 1), xb.Softmax(nil, 0), xb.MatMul(nil, nil),
		xb.Reduce(nil, nil, nil), xb.While(nil, nil, nil), xb.Conv2D(nil, nil, nil, xb.Same),
	}
	for i, o := range ops {
		if !o.Poisoned() || o.Shape().DType != hlo.Invalid {
			t.Errorf("op %d is live", i)
		}
	}
	if _, err := b.Build(nil); err == nil {
		t.Error("nil builder built")
	}
	var o *xb.Op
	if o.Inputs() != nil || o.Instruction() != nil || o.Opcode() != hlo.OpInvalid || o.String() != "<poisoned>" {
		t.Error("nil op accessors")
	}
}

func TestGraphIsWalkable(t *testing.T) {
	b := xb.New("walk")
	x := b.Param("x", hlo.F32, 2)
	y := xb.Mul(xb.Exp(x), b.ScalarOf(hlo.F32, 3))
	in := y.Inputs()
	if y.Opcode() != hlo.OpMultiply || len(in) != 2 || in[0].Opcode() != hlo.OpExp || in[0].Inputs()[0] != x {
		t.Fatalf("graph: %v <- %v", y, in)
	}
	// The scalar was broadcast explicitly, as HLO requires.
	if in[1].Opcode() != hlo.OpBroadcast || in[1].Inputs()[0].Opcode() != hlo.OpConstant {
		t.Fatalf("scalar operand: %v", in[1])
	}
	if got := len(b.Ops()); got != 5 {
		t.Fatalf("%d ops, want 5", got)
	}
	if ps := b.Params(); len(ps) != 1 || ps[0] != x {
		t.Fatal("Params")
	}
}

func TestEmitAnyOpcode(t *testing.T) {
	b := xb.New("emit")
	x := b.Param("x", hlo.F32, 4)
	// sort and cumulative ops have helpers or not; Emit reaches the rest.
	neg := b.Emit(hlo.OpNegate, hlo.Shape{}, nil, x)
	rev := b.Emit(hlo.OpReverse, hlo.Shape{}, []hlo.Attr{{Name: "dimensions", Value: []int64{0}}}, neg)
	sorted := xb.Sort(0, func(sb *xb.Builder, p []*xb.Op) *xb.Op { return xb.Lt(p[0], p[1]) }, rev)
	m := build(t, b, sorted)
	near(t, "emit", values[float32](t, run(t, m, lit(t, []float32{3, 1, 4, 2}))), []float64{-4, -3, -2, -1}, 0)

	// A custom-call's shape cannot be inferred: the written one is used.
	b = xb.New("custom")
	cc := b.Emit(hlo.OpCustomCall, hlo.ArrayShape(hlo.F32, 4), []hlo.Attr{{Name: "custom_call_target", Value: "my_op"}}, b.Param("x", hlo.F32, 4))
	if cc.Poisoned() || cc.Shape().HumanString() != "f32[4]" {
		t.Fatalf("custom-call: %v, %v", cc, b.Err())
	}
	build(t, b, cc)
}

func TestTextRoundTrip(t *testing.T) {
	b, root := mlp()
	x := root.Builder().Params()[0]
	loop := xb.While(b.Tuple(xb.Scalar(b, int32(0)), x),
		func(sb *xb.Builder, s *xb.Op) *xb.Op { return xb.Lt(xb.GetTupleElement(s, 0), xb.Scalar(sb, int32(3))) },
		func(sb *xb.Builder, s *xb.Op) *xb.Op {
			return sb.Tuple(xb.Add(xb.GetTupleElement(s, 0), xb.Scalar(sb, int32(1))), xb.Tanh(xb.GetTupleElement(s, 1)))
		})
	m := build(t, b, b.Tuple(root, xb.GetTupleElement(loop, 1), xb.MaxPool(xb.Reshape(x, 1, 2, 3, 1), []int64{2, 2}, []int64{1, 1}, xb.Same)))
	// build already checked print → parse → print; also check the parsed
	// module computes the same.
	back := roundTrip(t, m)
	arg := lit(t, []float32{1, 2, 3, -1, 0, 1}, 2, 3)
	want, got := run(t, m, arg), run(t, back, arg)
	if !want.Equal(got) {
		t.Fatal("the parsed module computes something else")
	}
}

func TestRuntimeMatchesEvaluator(t *testing.T) {
	b, root := mlp()
	m := build(t, b, root)
	c, err := axle.NewClient(axle.ClientOptions{Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := c.Compile(m, axle.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e := exe.Engine(); e != "compiled" {
		t.Fatalf("the cpu backend chose %q; the test means to compare compiled code", e)
	}
	data := []float32{1, 2, 3, -1, 0, 1}
	arg, err := axle.BufferFromSlice(c, data, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exe.Execute(arg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := axle.ToSlice[float32](outs[0])
	if err != nil {
		t.Fatal(err)
	}
	ref, err := eval.Run(m, lit(t, data, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	want := values[float32](t, ref)
	for i := range want {
		if d := got[i] - want[i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("cpu %v, evaluator %v", got, want)
		}
	}
}

func TestRuntimeMatchesEvaluatorOnCNN(t *testing.T) {
	b := xb.New("cnn")
	x := b.Param("x", hlo.F32, 2, 4, 4, 1)
	k := xb.Const(b, []float32{1, -1, 0.5, 2, 0, 1, -0.5, 1}, 2, 2, 1, 2)
	h := xb.MaxPool(xb.ReLU(xb.Conv2D(x, k, nil, xb.Same)), []int64{2, 2}, nil, xb.Valid)
	logits := xb.Reshape(h, 2, 8)
	loss := xb.SparseCrossEntropy(logits, xb.Const(b, []int32{3, 5}))
	m := build(t, b, b.Tuple(logits, loss))
	data := make([]float32, 32)
	for i := range data {
		data[i] = float32((i*7)%11) - 5
	}
	c, err := axle.NewClient(axle.ClientOptions{Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := c.Compile(m, axle.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	arg, _ := axle.BufferFromSlice(c, data, 2, 4, 4, 1)
	outs, err := exe.Execute(arg)
	if err != nil {
		t.Fatal(err)
	}
	ref := run(t, m, lit(t, data, 2, 4, 4, 1)).Elements()
	for i, o := range outs {
		got, err := axle.ToSlice[float32](o)
		if err != nil {
			t.Fatal(err)
		}
		want := values[float32](t, ref[i])
		for j := range want {
			if d := got[j] - want[j]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("output %d: cpu %v, evaluator %v", i, got, want)
			}
		}
	}
}

// TopK keeps the k first of each last-dimension row in its comparator's
// order, ties to the lower index (hand-worked: 5 and the two 3s of the
// first row, the second row ascending).
func TestTopK(t *testing.T) {
	b := xb.New("topk")
	x := b.Param("x", hlo.F32, 2, 4)
	s := xb.TopK(x, 3, true, func(sb *xb.Builder, p []*xb.Op) *xb.Op { return xb.Gt(p[0], p[1]) })
	m := build(t, b, b.Tuple(xb.GetTupleElement(s, 0), xb.GetTupleElement(s, 1)))
	out := run(t, m, lit(t, []float32{3, 5, 1, 3, -2, 0, 7, -2}, 2, 4))
	parts := out.Elements()
	near(t, "values", values[float32](t, parts[0]), []float64{5, 3, 3, 7, 0, -2}, 0)
	if got, want := values[int32](t, parts[1]), []int32{1, 0, 3, 2, 1, 0}; !slices.Equal(got, want) {
		t.Fatalf("indices %v, want %v", got, want)
	}
}
