package xb

import (
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Neural-network helpers, composed from the ops above so that they need no
// evaluator or backend support of their own (and a later Grad sees only
// primitive ops).

// like returns a scalar constant of x's element type.
func like(x *Op, v float64) *Op {
	b := builderOf(x)
	if b == nil {
		return orphan()
	}
	return b.ScalarOf(x.DType(), v)
}

// ReLU is max(x, 0).
func ReLU(x *Op) *Op { return Max(x, like(x, 0)) }

// Sigmoid is the logistic function 1/(1+e^-x).
func Sigmoid(x *Op) *Op { return Logistic(x) }

// normAxis resolves a negative axis (counted from the end) and checks it.
func normAxis(name string, x *Op, axis int) (int64, bool) {
	b := builderOf(x)
	if b == nil || !b.check(name, x) {
		return 0, false
	}
	r := x.Rank()
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		b.errorf("%s: axis %d is out of range for %s", name, axis, x.Shape().HumanString())
		return 0, false
	}
	return int64(axis), true
}

// expandBack broadcasts r, the result of reducing x over axes, back to x's
// shape: the usual second half of a normalization.
func expandBack(r, x *Op, axes ...int64) *Op {
	var mapping []int64
	for d := range int64(x.Rank()) {
		if !slices.Contains(axes, d) {
			mapping = append(mapping, d)
		}
	}
	return BroadcastInDim(r, x.Dims(), mapping...)
}

// Softmax is exp(x)/sum(exp(x)) along axis (negative counts from the end),
// computed with the maximum subtracted first so that large logits do not
// overflow.
func Softmax(x *Op, axis int) *Op {
	a, ok := normAxis("softmax", x, axis)
	if !ok {
		return poison(builderOf(x))
	}
	// The shift by the maximum changes nothing mathematically, so no
	// gradient flows through it (as in JAX): the backward pass then needs
	// no tie count of the maximum.
	e := Exp(Sub(x, expandBack(StopGradient(ReduceMax(x, a)), x, a)))
	return Div(e, expandBack(ReduceSum(e, a), e, a))
}

// LogSoftmax is log(Softmax(x, axis)), computed as x - max - log(sum(exp(x - max)))
// for stability.
func LogSoftmax(x *Op, axis int) *Op {
	a, ok := normAxis("log-softmax", x, axis)
	if !ok {
		return poison(builderOf(x))
	}
	shifted := Sub(x, expandBack(StopGradient(ReduceMax(x, a)), x, a)) // see Softmax
	lse := Log(ReduceSum(Exp(shifted), a))
	return Sub(shifted, expandBack(lse, shifted, a))
}

// Mean averages x over axes (all of them when none are given).
func Mean(x *Op, axes ...int64) *Op {
	b := builderOf(x)
	if b == nil || !b.check("mean", x) {
		return poison(b)
	}
	axes = defaultAxes(x, axes)
	n := int64(1)
	for _, a := range axes {
		if a < 0 || a >= int64(x.Rank()) {
			b.errorf("mean: axis %d is out of range for %s", a, x.Shape().HumanString())
			return b.poisoned()
		}
		n *= x.Shape().Dims[a]
	}
	return Div(ReduceSum(x, axes...), like(x, float64(n)))
}

// OneHot turns integer labels into vectors of n classes of type t along a
// new last dimension: 1 at the label, 0 elsewhere (all 0 out of range).
func OneHot(labels *Op, n int64, t hlo.DType) *Op {
	b := builderOf(labels)
	if b == nil || !b.check("one-hot", labels) {
		return poison(b)
	}
	if !labels.DType().IsInteger() {
		b.errorf("one-hot: labels must be integers, not %s", labels.DType())
		return b.poisoned()
	}
	r := int64(labels.Rank())
	dims := append(labels.Dims(), n)
	classes := b.Iota(labels.DType(), r, dims...)
	return Convert(Eq(BroadcastInDim(labels, dims, AllAxes(labels)...), classes), t)
}

// CrossEntropy is the mean over the batch of -sum(labels * log_softmax(logits))
// along the last (class) axis; labels are one-hot vectors or probabilities
// of the logits' shape.
func CrossEntropy(logits, labels *Op) *Op {
	b := builderOf(logits, labels)
	if b == nil || !b.check("cross-entropy", logits, labels) {
		return poison(b)
	}
	r := logits.Rank()
	if r < 1 {
		b.errorf("cross-entropy: logits must have a class axis, got %s", logits.Shape().HumanString())
		return b.poisoned()
	}
	perExample := Neg(ReduceSum(Mul(labels, LogSoftmax(logits, -1)), int64(r-1)))
	return Mean(perExample)
}

// SparseCrossEntropy is CrossEntropy with integer class labels, one per
// example (labels has the logits' shape without the class axis).
func SparseCrossEntropy(logits, labels *Op) *Op {
	b := builderOf(logits, labels)
	if b == nil || !b.check("cross-entropy", logits, labels) {
		return poison(b)
	}
	if logits.Rank() < 1 {
		b.errorf("cross-entropy: logits must have a class axis, got %s", logits.Shape().HumanString())
		return b.poisoned()
	}
	return CrossEntropy(logits, OneHot(labels, logits.Shape().Dims[logits.Rank()-1], logits.DType()))
}

// Linear is x·w + bias for x [..., in], w [in, out] and bias [out] (nil
// for none): a dense layer.
func Linear(x, w, bias *Op) *Op {
	b := builderOf(x, w)
	if b == nil || !b.check("linear", x, w) {
		return poison(b)
	}
	y := DotGeneral(x, w, DotDims{LhsContracting: []int64{int64(x.Rank() - 1)}, RhsContracting: []int64{0}})
	if bias == nil || y.Poisoned() {
		return y
	}
	return Add(y, BroadcastTo(bias, y.Dims()...))
}

// Padding is how convolution and pooling pad their input.
type Padding int

const (
	// Valid uses only windows that fit entirely inside the input.
	Valid Padding = iota
	// Same pads so that the output has ceil(input/stride) elements, extra
	// padding going after (TensorFlow's and XLA's convention).
	Same
)

// padFor returns the (lo, hi) padding of one spatial dimension.
func padFor(p Padding, in, window, stride, dilation int64) [2]int64 {
	if p != Same || stride <= 0 {
		return [2]int64{}
	}
	eff := (window-1)*dilation + 1
	out := (in + stride - 1) / stride
	total := max((out-1)*stride+eff-in, 0)
	return [2]int64{total / 2, total - total/2}
}

// nhwc are the dimension numbers of a 2-D convolution of NHWC input with
// an HWIO kernel (TensorFlow's default layout).
func nhwc() *ConvDims {
	return &ConvDims{
		InputBatch: 0, InputFeature: 3, InputSpatial: []int64{1, 2},
		KernelInput: 2, KernelOutput: 3, KernelSpatial: []int64{0, 1},
		OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2},
	}
}

// Conv2D convolves x [N, H, W, C] with kernel k [KH, KW, C, O] at the
// given strides (nil: 1), giving [N, H', W', O].
func Conv2D(x, k *Op, strides []int64, padding Padding) *Op {
	b := builderOf(x, k)
	if b == nil || !b.check("conv2d", x, k) {
		return poison(b)
	}
	if x.Rank() != 4 || k.Rank() != 4 {
		b.errorf("conv2d: want NHWC input and HWIO kernel, got %s and %s", x.Shape().HumanString(), k.Shape().HumanString())
		return b.poisoned()
	}
	if strides == nil {
		strides = []int64{1, 1}
	}
	if len(strides) != 2 {
		b.errorf("conv2d: want 2 strides, got %d", len(strides))
		return b.poisoned()
	}
	xd, kd := x.Shape().Dims, k.Shape().Dims
	pad := [][2]int64{padFor(padding, xd[1], kd[0], strides[0], 1), padFor(padding, xd[2], kd[1], strides[1], 1)}
	return Conv(x, k, ConvConfig{Dims: nhwc(), Strides: strides, Padding: pad})
}

// pool2D reduces NHWC windows of size window and the given strides (nil:
// the window size, the usual non-overlapping pooling).
func pool2D(name string, x *Op, window, strides []int64, padding Padding, init float64, fn Reducer) *Op {
	b := builderOf(x)
	if b == nil || !b.check(name, x) {
		return poison(b)
	}
	if strides == nil {
		strides = window
	}
	if x.Rank() != 4 || len(window) != 2 || len(strides) != 2 {
		b.errorf("%s: want NHWC input, 2 window sizes and 2 strides, got %s, %v, %v", name, x.Shape().HumanString(), window, strides)
		return b.poisoned()
	}
	d := x.Shape().Dims
	w := Window{
		Sizes:   []int64{1, window[0], window[1], 1},
		Strides: []int64{1, strides[0], strides[1], 1},
		Padding: [][2]int64{{}, padFor(padding, d[1], window[0], strides[0], 1), padFor(padding, d[2], window[1], strides[1], 1), {}},
	}
	return ReduceWindow(x, like(x, init), fn, w)
}

// MaxPool takes the maximum of each window of an NHWC input (strides nil:
// the window size). Padding never wins: it is -inf.
func MaxPool(x *Op, window, strides []int64, padding Padding) *Op {
	return pool2D("max-pool", x, window, strides, padding, math.Inf(-1), func(_ *Builder, a, c *Op) *Op { return Max(a, c) })
}

// AvgPool averages each window of an NHWC input (strides nil: the window
// size). With Same padding the padded zeros count in the average, as in
// XLA's AvgPool with counts including padding.
func AvgPool(x *Op, window, strides []int64, padding Padding) *Op {
	s := pool2D("avg-pool", x, window, strides, padding, 0, func(_ *Builder, a, c *Op) *Op { return Add(a, c) })
	if s.Poisoned() || len(window) != 2 {
		return s
	}
	return Div(s, like(s, float64(window[0]*window[1])))
}

// Dropout zeroes each element of x with probability rate and scales the
// others by 1/(1-rate), drawing bits from key (a u64[2] RNG state, see
// RngBitGenerator). It returns the result and the next key; the caller
// threads keys explicitly, so a step is reproducible. A rate of 0 returns
// x and key unchanged.
func Dropout(x *Op, rate float64, key *Op) (y, nextKey *Op) {
	b := builderOf(x, key)
	if b == nil || !b.check("dropout", x, key) {
		p := poison(b)
		return p, p
	}
	if !(rate >= 0 && rate < 1) {
		b.errorf("dropout: rate %v is not in [0, 1)", rate)
		return b.poisoned(), b.poisoned()
	}
	if rate == 0 {
		return x, key
	}
	bits, next := RngBitGenerator(key, RngDefault, hlo.U32, x.Dims()...)
	// keep when bits >= rate·2^32: an unsigned comparison of raw bits
	// needs no float conversion and is exact to 2^-32.
	threshold := uint32(min(rate*(1<<32), math.MaxUint32))
	keep := Ge(bits, Scalar(b, threshold))
	scaled := Mul(x, like(x, 1/(1-rate)))
	return Select(keep, scaled, like(x, 0)), next
}
