package ops

import (
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare,
// ArgMax/ArgMin. (The variadic Mean is elementwise.go's.)

// rdAxesFromInput lists the ONNX Reduce* ops and the opset from which
// their axes are an input rather than an attribute.
var rdAxesFromInput = map[string]int{
	"ReduceSum": 13, "ReduceMean": 18, "ReduceMax": 18, "ReduceMin": 18, "ReduceProd": 18,
	"ReduceL1": 18, "ReduceL2": 18, "ReduceLogSum": 18, "ReduceLogSumExp": 18, "ReduceSumSquare": 18,
}

func init() {
	for name := range rdAxesFromInput {
		Register(Op{Name: name, ConstInputs: []int{1}, Lower: lowerReduce})
	}
	Register(Op{Name: "ArgMax", Lower: lowerArgMinMax})
	Register(Op{Name: "ArgMin", Lower: lowerArgMinMax})
}

// rdAxes resolves the reduction axes of a Reduce* node: nil with noop
// true means the identity.
func rdAxes(c *Ctx, rank int) (axes []int64, noop bool, err error) {
	var raw []int64
	if c.Opset >= rdAxesFromInput[c.Node.Op] {
		if c.Has(1) {
			raw, err = c.ConstInts(1)
			if err != nil {
				return nil, false, err
			}
		}
		if len(raw) == 0 && c.Node.Int("noop_with_empty_axes", 0) != 0 {
			return nil, true, nil
		}
	} else {
		raw = c.Node.Ints("axes")
	}
	if len(raw) == 0 {
		axes = make([]int64, rank)
		for i := range axes {
			axes[i] = int64(i)
		}
		return axes, false, nil
	}
	for _, a := range raw {
		n, ok := NormAxis(a, rank)
		if !ok {
			return nil, false, c.Errorf("axis %d out of range for rank %d", a, rank)
		}
		if !slices.Contains(axes, n) {
			axes = append(axes, n)
		}
	}
	slices.Sort(axes)
	return axes, false, nil
}

// rdKeep reshapes r, x reduced over axes, to keep the reduced dimensions
// as 1s.
func rdKeep(r *xb.Op, xDims []int64, axes []int64) *xb.Op {
	out := slices.Clone(xDims)
	for _, a := range axes {
		out[a] = 1
	}
	return xb.Reshape(r, out...)
}

// rdBack broadcasts r (x reduced over axes, without kept dims) back to
// x's dims.
func rdBack(r *xb.Op, xDims []int64, axes []int64) *xb.Op {
	var mapping []int64
	for d := range int64(len(xDims)) {
		if !slices.Contains(axes, d) {
			mapping = append(mapping, d)
		}
	}
	return xb.BroadcastInDim(r, xDims, mapping...)
}

func rdCount(dims []int64, axes []int64) int64 {
	n := int64(1)
	for _, a := range axes {
		n *= dims[a]
	}
	return n
}

// rdWide is the type to compute a reduction of element type t in when the
// op needs a float (L2, log ...): t itself for floats, f64 for integers.
func rdWide(t hlo.DType) hlo.DType {
	switch {
	case t.IsFloat() && t.Bits() < 32:
		return hlo.F32
	case t.IsFloat():
		return t
	}
	return hlo.F64
}

// rdSum sums x over axes (all when none are given); floats narrower than
// 32 bits accumulate in f32 and round once at the end, as numpy does.
func rdSum(x *xb.Op, axes ...int64) *xb.Op {
	t := x.DType()
	if t.IsFloat() && t.Bits() < 32 {
		return xb.Convert(xb.ReduceSum(xb.Convert(x, hlo.F32), axes...), t)
	}
	return xb.ReduceSum(x, axes...)
}

func lowerReduce(c *Ctx) error {
	x := c.Input(0)
	t := x.DType()
	if t.IsComplex() {
		return c.Unsupported("complex input")
	}
	dims := x.Dims()
	axes, noop, err := rdAxes(c, len(dims))
	if err != nil {
		return err
	}
	if noop {
		c.Set(0, x)
		return nil
	}
	var r *xb.Op
	switch c.Node.Op {
	case "ReduceSum":
		r = rdSum(x, axes...)
	case "ReduceMax":
		r = xb.ReduceMax(x, axes...)
	case "ReduceMin":
		r = xb.ReduceMin(x, axes...)
	case "ReduceProd":
		r = xb.ReduceProd(x, axes...)
	case "ReduceL1":
		r = rdSum(xb.Abs(x), axes...)
	case "ReduceSumSquare":
		r = rdSum(xb.Mul(x, x), axes...)
	case "ReduceMean":
		w := rdWide(t)
		xs := xb.Convert(x, w)
		r = xb.Div(rdSum(xs, axes...), c.B.ScalarOf(w, float64(rdCount(dims, axes))))
		r = xb.Convert(r, t)
	case "ReduceL2":
		w := rdWide(t)
		xs := xb.Convert(x, w)
		r = xb.Convert(xb.Sqrt(rdSum(xb.Mul(xs, xs), axes...)), t)
	case "ReduceLogSum":
		w := rdWide(t)
		r = xb.Convert(xb.Log(rdSum(xb.Convert(x, w), axes...)), t)
	case "ReduceLogSumExp":
		w := rdWide(t)
		xs := xb.Convert(x, w)
		m := xb.ReduceMax(xs, axes...)
		// A max that is not finite (empty or all -inf) shifts by 0.
		m = xb.Select(xb.IsFinite(m), m, xb.BroadcastTo(c.B.ScalarOf(w, 0), m.Dims()...))
		s := rdSum(xb.Exp(xb.Sub(xs, rdBack(m, dims, axes))), axes...)
		r = xb.Convert(xb.Add(xb.Log(s), m), t)
	default:
		return c.Unsupported("unknown reduction")
	}
	if c.Node.Int("keepdims", 1) != 0 {
		r = rdKeep(r, dims, axes)
	}
	c.Set(0, r)
	return nil
}

// rdArgIndex is the index along axis of the first (or last) element of x
// equal to the broadcast extreme m, as int64 of reduced shape.
func rdArgIndex(c *Ctx, x, m *xb.Op, axis int64, last bool) *xb.Op {
	dims := x.Dims()
	hit := xb.Eq(x, rdBack(m, dims, []int64{axis}))
	if x.DType().IsFloat() {
		// NaN is the extreme where present (numpy's argmax).
		hit = xb.Or(hit, xb.And(xb.Ne(x, x), xb.Ne(rdBack(m, dims, []int64{axis}), rdBack(m, dims, []int64{axis}))))
	}
	iota := c.B.Iota(hlo.S64, axis, dims...)
	if last {
		return xb.ReduceMax(xb.Select(hit, iota, FullLike(iota, -1)), axis)
	}
	return xb.ReduceMin(xb.Select(hit, iota, FullLike(iota, math.MaxInt64)), axis)
}

func lowerArgMinMax(c *Ctx) error {
	x := c.Input(0)
	if x.DType().IsComplex() {
		return c.Unsupported("complex input")
	}
	dims := x.Dims()
	if len(dims) == 0 {
		return c.Unsupported("scalar input")
	}
	axis, ok := NormAxis(c.Node.Int("axis", 0), len(dims))
	if !ok {
		return c.Errorf("axis out of range")
	}
	if dims[axis] == 0 {
		return c.Errorf("arg reduction over an empty axis")
	}
	xt := x
	if x.DType().IsPred() {
		xt = xb.Convert(x, hlo.S32)
	}
	var m *xb.Op
	if c.Node.Op == "ArgMax" {
		m = xb.ReduceMax(xt, axis)
	} else {
		m = xb.ReduceMin(xt, axis)
	}
	if xt.DType().IsFloat() {
		// A NaN anywhere along the axis is the result (numpy).
		nan := xb.ReduceMax(xb.Convert(xb.Ne(xt, xt), hlo.S32), axis)
		m = xb.Select(xb.Eq(nan, FullLike(nan, 1)), FullLike(m, math.NaN()), m)
	}
	r := rdArgIndex(c, xt, m, axis, c.Node.Int("select_last_index", 0) != 0)
	if c.Node.Int("keepdims", 1) != 0 {
		r = rdKeep(r, dims, []int64{axis})
	}
	c.Set(0, r)
	return nil
}
