package ops

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// Pools: MaxPool, AveragePool and LpPool lower to one reduce-window over
// the spatial dimensions (window dilation for ONNX's dilations, extra high
// padding for ceil_mode); an average divides by a compile-time count of
// the elements each window covers. MaxPool's Indices output compares the
// strided slices of each kernel offset instead.

func init() {
	maxTypes := append([]onnx.ElemType{onnx.Int8, onnx.Uint8}, convFloatTypes...)
	Register(Op{Name: "MaxPool", Lower: lowerMaxPool, Types: maxTypes})
	Register(Op{Name: "AveragePool", Lower: lowerAveragePool, Types: convFloatTypes})
	Register(Op{Name: "LpPool", Lower: lowerLpPool, Types: convFloatTypes})
	Register(Op{Name: "GlobalMaxPool", Lower: lowerGlobalPool("max"), Types: convFloatTypes})
	Register(Op{Name: "GlobalAveragePool", Lower: lowerGlobalPool("avg"), Types: convFloatTypes})
	Register(Op{Name: "GlobalLpPool", Lower: lowerGlobalPool("lp"), Types: convFloatTypes})
	Register(Op{Name: "MaxUnpool", ConstInputs: []int{2}, Lower: lowerMaxUnpool})
}

// poolPlan is a pool's geometry: attributes, input and output spatial
// sizes, and the padding to give reduce-window (pads plus the ceil_mode
// extension at the end).
type poolPlan struct {
	a       *convSpatialAttrs
	in, out []int64
	hi      []int64 // high padding of the reduce-window (≥ a.padHi)
}

func poolPlanFor(c *Ctx, x *xb.Op) (*poolPlan, error) {
	xd := x.Dims()
	if len(xd) < 3 {
		return nil, c.Unsupported("input %v has no spatial dimensions", xd)
	}
	n := len(xd) - 2
	kernel := c.Node.Ints("kernel_shape")
	if len(kernel) != n {
		return nil, c.Errorf("kernel_shape %v does not fit input %v", kernel, xd)
	}
	a, err := convReadAttrs(c, n, kernel)
	if err != nil {
		return nil, err
	}
	in := xd[2:]
	p := &poolPlan{a: a, in: in, out: make([]int64, n), hi: make([]int64, n)}
	ceil := c.Node.Int("ceil_mode", 0) != 0
	switch a.autoPad {
	case "SAME_UPPER", "SAME_LOWER":
		a.sameAutoPads(in)
		for i := range n {
			p.out[i] = (in[i] + a.strides[i] - 1) / a.strides[i]
		}
	default:
		if a.autoPad == "VALID" {
			a.sameAutoPads(in)
		}
		for i := range n {
			span := in[i] + a.padLo[i] + a.padHi[i] - a.effKernel(i)
			if span < 0 {
				return nil, c.Errorf("the kernel %v (dilations %v) does not fit the padded input %v", kernel, a.dilations, xd)
			}
			o := span/a.strides[i] + 1
			if ceil && span%a.strides[i] != 0 {
				o++
				// A last window that would start in the end padding is dropped.
				if (o-1)*a.strides[i] >= in[i]+a.padLo[i] {
					o--
				}
			}
			p.out[i] = o
		}
	}
	for i := range n {
		if p.out[i] <= 0 {
			return nil, c.Errorf("output size %v", p.out)
		}
		need := (p.out[i]-1)*a.strides[i] + a.effKernel(i)
		p.hi[i] = a.padHi[i] + max(need-(in[i]+a.padLo[i]+a.padHi[i]), 0)
	}
	return p, nil
}

// window is the reduce-window window of the plan over N, C, spatial....
func (p *poolPlan) window() *hlo.Window {
	n := len(p.in)
	sizes := append([]int64{1, 1}, p.a.kernel...)
	w := hlo.NewWindow(sizes...)
	for i := range n {
		d := &w.Dims[i+2]
		d.Stride = p.a.strides[i]
		d.RhsDilation = p.a.dilations[i]
		d.PadLo, d.PadHi = p.a.padLo[i], p.hi[i]
	}
	return w
}

// poolReduce is a reduce-window of x under p's window, starting from init
// and combining with fn.
func poolReduce(b *xb.Builder, x *xb.Op, p *poolPlan, init float64, fn func(x, y *xb.Op) *xb.Op) *xb.Op {
	s := hlo.ScalarShape(x.DType())
	comp := b.Computation("pool_reducer", []hlo.Shape{s, s}, func(sb *xb.Builder, ps []*xb.Op) *xb.Op { return fn(ps[0], ps[1]) })
	return b.Emit(hlo.OpReduceWindow, hlo.Shape{}, []hlo.Attr{{Name: "window", Value: p.window()}, {Name: "to_apply", Value: comp}}, x, b.ScalarOf(x.DType(), init))
}

// poolSliceLimit is the largest kernel (in elements) pooled as strided
// slices combined elementwise rather than as a reduce-window: the slices
// fuse into one loop over the output, which beats a reduce-window whose
// window walks the innermost (spatial) dimensions of NCHW data.
var poolSliceLimit int64 = 64

// poolCombine pools x under p's window with the elementwise fn, padding
// with init: as strided slices of the padded input, one per kernel offset,
// for small kernels; as a reduce-window otherwise.
func poolCombine(b *xb.Builder, x *xb.Op, p *poolPlan, init float64, fn func(x, y *xb.Op) *xb.Op) *xb.Op {
	if numElems(p.a.kernel) > poolSliceLimit {
		return poolReduce(b, x, p, init, fn)
	}
	n := len(p.in)
	// Channels-last with the convolutions (see ConvChannelsLast), so that
	// the transposes around a pool between convolutions cancel too.
	last := ConvChannelsLast
	sp := func(i int) int { return i + 2 }
	var back []int64
	if last {
		toLast := []int64{0}
		back = []int64{0, int64(n + 1)}
		for i := range n {
			toLast = append(toLast, int64(i+2))
			back = append(back, int64(i+1))
		}
		x = xb.Transpose(x, append(toLast, 1)...)
		sp = func(i int) int { return i + 1 }
	}
	xd := x.Dims()
	cfg := make(hlo.PaddingConfig, n+2)
	pad := false
	for i := range n {
		cfg[sp(i)] = hlo.PadDim{Lo: p.a.padLo[i], Hi: p.hi[i]}
		pad = pad || p.a.padLo[i] != 0 || p.hi[i] != 0
	}
	padded := x
	if pad {
		padded = xb.Pad(x, b.ScalarOf(x.DType(), init), cfg)
	}
	outDims := append([]int64(nil), xd...)
	for i := range n {
		outDims[sp(i)] = p.out[i]
	}
	var acc *xb.Op
	poolOffsets(p.a.kernel, func(j []int64) {
		starts, limits, strides := make([]int64, n+2), append([]int64(nil), outDims...), make([]int64, n+2)
		for d := range strides {
			strides[d] = 1
		}
		for i := range n {
			d := sp(i)
			starts[d] = j[i] * p.a.dilations[i]
			limits[d] = starts[d] + (p.out[i]-1)*p.a.strides[i] + 1
			strides[d] = p.a.strides[i]
		}
		v := xb.Slice(padded, starts, limits, strides)
		if acc == nil {
			acc = v
		} else {
			acc = fn(acc, v)
		}
	})
	if last {
		acc = xb.Transpose(acc, back...)
	}
	return acc
}

// poolLowest is the identity of max for t: -inf, or the type's minimum.
func poolLowest(t hlo.DType) float64 {
	switch t {
	case hlo.S8:
		return math.MinInt8
	case hlo.S16:
		return math.MinInt16
	case hlo.S32:
		return math.MinInt32
	case hlo.S64:
		return math.MinInt64
	}
	if t.IsUnsigned() || t.IsPred() {
		return 0
	}
	return math.Inf(-1)
}

func lowerMaxPool(c *Ctx) error {
	x := c.Input(0)
	if x == nil {
		return c.Errorf("MaxPool needs X")
	}
	p, err := poolPlanFor(c, x)
	if err != nil {
		return err
	}
	if !poolWantsIndices(c) {
		c.Set(0, poolCombine(c.B, x, p, poolLowest(x.DType()), xb.Max))
		return nil
	}
	y, idx := poolArgMax(c, x, p)
	c.Set(0, y)
	c.Set(1, idx)
	return nil
}

func poolWantsIndices(c *Ctx) bool {
	return len(c.Node.Outputs) > 1 && c.Node.Outputs[1] != ""
}

// poolOffsets calls fn with every multi-index of a box of the given sizes
// in row-major order.
func poolOffsets(sizes []int64, fn func(j []int64)) {
	j := make([]int64, len(sizes))
	for _, s := range sizes {
		if s <= 0 {
			return
		}
	}
	for {
		fn(j)
		d := len(j) - 1
		for d >= 0 {
			j[d]++
			if j[d] < sizes[d] {
				break
			}
			j[d] = 0
			d--
		}
		if d < 0 {
			return
		}
	}
}

// poolArgMax is max pooling with ONNX's Indices: for each kernel offset in
// row-major order the strided slice of the padded input it reads, kept
// where it is strictly greater than the best so far (the first maximum
// wins), with the flattened input index of each position as a constant.
func poolArgMax(c *Ctx, x *xb.Op, p *poolPlan) (*xb.Op, *xb.Op) {
	b := c.B
	n := len(p.in)
	xd := x.Dims()
	cfg := make(hlo.PaddingConfig, n+2)
	for i := range n {
		cfg[i+2] = hlo.PadDim{Lo: p.a.padLo[i], Hi: p.hi[i]}
	}
	padded := xb.Pad(x, b.ScalarOf(x.DType(), poolLowest(x.DType())), cfg)
	colMajor := c.Node.Int("storage_order", 0) == 1
	// place[i] is the stride of spatial dimension i in the flattened index.
	place := make([]int64, n)
	acc := int64(1)
	if colMajor {
		for i := 0; i < n; i++ {
			place[i] = acc
			acc *= p.in[i]
		}
	} else {
		for i := n - 1; i >= 0; i-- {
			place[i] = acc
			acc *= p.in[i]
		}
	}
	spatialSize := acc
	outDims := append([]int64{xd[0], xd[1]}, p.out...)
	outSpatial := numElems(p.out)
	var best, bestIdx, bestPad *xb.Op
	poolOffsets(p.a.kernel, func(j []int64) {
		starts, limits, strides := make([]int64, n+2), append([]int64(nil), outDims...), make([]int64, n+2)
		strides[0], strides[1] = 1, 1
		for i := range n {
			starts[i+2] = j[i] * p.a.dilations[i]
			limits[i+2] = starts[i+2] + (p.out[i]-1)*p.a.strides[i] + 1
			strides[i+2] = p.a.strides[i]
		}
		v := xb.Slice(padded, starts, limits, strides)
		idx := make([]int64, outSpatial)
		pad := make([]bool, outSpatial)
		k := 0
		poolOffsets(p.out, func(o []int64) {
			flat, in := int64(0), true
			for i := range n {
				pos := o[i]*p.a.strides[i] - p.a.padLo[i] + j[i]*p.a.dilations[i]
				if pos < 0 || pos >= p.in[i] {
					in = false
				}
				flat += pos * place[i]
			}
			idx[k], pad[k] = flat, !in
			k++
		})
		idxOp := xb.BroadcastInDim(xb.Const(b, idx, p.out...), outDims, poolSpatialAxes(n)...)
		padOp := xb.BroadcastInDim(xb.Const(b, pad, p.out...), outDims, poolSpatialAxes(n)...)
		if best == nil {
			best, bestIdx, bestPad = v, idxOp, padOp
			return
		}
		take := xb.Or(xb.Gt(v, best), xb.And(bestPad, xb.Not(padOp)))
		best = xb.Select(take, v, best)
		bestIdx = xb.Select(take, idxOp, bestIdx)
		bestPad = xb.And(bestPad, padOp)
	})
	// The flattened index counts whole (n, c) images before it.
	nc := xb.Add(xb.Mul(b.Iota(hlo.S64, 0, outDims...), xb.Scalar(b, xd[1])), b.Iota(hlo.S64, 1, outDims...))
	bestIdx = xb.Add(bestIdx, xb.Mul(nc, xb.Scalar(b, spatialSize)))
	return best, bestIdx
}

// poolSpatialAxes are 2, 3, ..., n+1.
func poolSpatialAxes(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i + 2)
	}
	return out
}

// poolCounts is, per output position, how many window elements fall in
// [lo, hi) along every spatial dimension: the divisor of an average.
func poolCounts(p *poolPlan, includePad bool) []float64 {
	n := len(p.in)
	per := make([][]float64, n)
	for i := range n {
		lo, hi := int64(0), p.in[i]
		if includePad {
			lo, hi = -p.a.padLo[i], p.in[i]+p.a.padHi[i]
		}
		per[i] = make([]float64, p.out[i])
		for o := range p.out[i] {
			cnt := 0
			for k := range p.a.kernel[i] {
				pos := o*p.a.strides[i] - p.a.padLo[i] + k*p.a.dilations[i]
				if pos >= lo && pos < hi {
					cnt++
				}
			}
			per[i][o] = float64(cnt)
		}
	}
	out := make([]float64, 0, numElems(p.out))
	poolOffsets(p.out, func(o []int64) {
		v := 1.0
		for i := range n {
			v *= per[i][o[i]]
		}
		out = append(out, v)
	})
	return out
}

func lowerAveragePool(c *Ctx) error {
	x := c.Input(0)
	if x == nil {
		return c.Errorf("AveragePool needs X")
	}
	if !x.DType().IsFloat() {
		return c.Unsupported("AveragePool of %s", x.DType())
	}
	p, err := poolPlanFor(c, x)
	if err != nil {
		return err
	}
	x, outType := poolWiden(x)
	sum := poolCombine(c.B, x, p, 0, xb.Add)
	counts := poolCounts(p, c.Node.Int("count_include_pad", 0) != 0)
	uniform := true
	for _, v := range counts {
		uniform = uniform && v == counts[0]
	}
	var y *xb.Op
	if uniform {
		y = xb.Div(sum, xb.BroadcastTo(c.B.ScalarOf(x.DType(), counts[0]), sum.Dims()...))
	} else {
		div := c.B.Constant(literal(x.DType(), counts, p.out...))
		y = xb.Div(sum, xb.BroadcastInDim(div, sum.Dims(), poolSpatialAxes(len(p.in))...))
	}
	c.Set(0, poolNarrow(y, outType))
	return nil
}

// poolP is LpPool's and GlobalLpPool's p (an int, a float in version 1).
func poolP(c *Ctx) float64 {
	if c.Node.Has("p") && c.Node.AttrType("p") == 1 { // FLOAT
		return float64(c.Node.Float("p", 2))
	}
	return float64(c.Node.Int("p", 2))
}

// poolPowered is |x|^p, and poolRoot y^(1/p), with the common p exact.
func poolPowered(x *xb.Op, p float64) *xb.Op {
	switch p {
	case 1:
		return xb.Abs(x)
	case 2:
		return xb.Mul(x, x)
	}
	return xb.Pow(xb.Abs(x), FullLike(x, p))
}

func poolRoot(y *xb.Op, p float64) *xb.Op {
	switch p {
	case 1:
		return y
	case 2:
		return xb.Sqrt(y)
	}
	return xb.Pow(y, FullLike(y, 1/p))
}

func lowerLpPool(c *Ctx) error {
	x := c.Input(0)
	if x == nil {
		return c.Errorf("LpPool needs X")
	}
	if !x.DType().IsFloat() {
		return c.Unsupported("LpPool of %s", x.DType())
	}
	p, err := poolPlanFor(c, x)
	if err != nil {
		return err
	}
	pw := poolP(c)
	if pw <= 0 {
		return c.Errorf("p = %v", pw)
	}
	x, outType := poolWiden(x)
	sum := poolCombine(c.B, poolPowered(x, pw), p, 0, xb.Add)
	c.Set(0, poolNarrow(poolRoot(sum, pw), outType))
	return nil
}

func lowerGlobalPool(kind string) func(c *Ctx) error {
	return func(c *Ctx) error {
		x := c.Input(0)
		if x == nil {
			return c.Errorf("needs X")
		}
		xd := x.Dims()
		if len(xd) < 2 {
			return c.Unsupported("input %v", xd)
		}
		axes := poolSpatialAxes(len(xd) - 2)
		keep := append([]int64(nil), xd...)
		count := int64(1)
		for _, a := range axes {
			count *= xd[a]
			keep[a] = 1
		}
		var y *xb.Op
		outType := x.DType()
		if kind != "max" {
			x, outType = poolWiden(x)
		}
		switch kind {
		case "max":
			y = xb.Reduce(x, c.B.ScalarOf(x.DType(), poolLowest(x.DType())), func(_ *xb.Builder, a, b *xb.Op) *xb.Op { return xb.Max(a, b) }, axes...)
		case "avg":
			if !x.DType().IsFloat() {
				return c.Unsupported("GlobalAveragePool of %s", x.DType())
			}
			xs := x
			if mmWiden(x.DType()) { // float16/bfloat16: in float32, rounded once (as ONNX Runtime)
				xs = xb.Convert(x, hlo.F32)
			}
			y = xb.ReduceSum(xs, axes...)
			y = convRound(xb.Div(y, FullLike(y, float64(count))), x.DType())
		case "lp":
			if !x.DType().IsFloat() {
				return c.Unsupported("GlobalLpPool of %s", x.DType())
			}
			pw := poolP(c)
			y = poolRoot(xb.ReduceSum(poolPowered(x, pw), axes...), pw)
		}
		c.Set(0, xb.Reshape(poolNarrow(y, outType), keep...))
		return nil
	}
}

// poolWiden converts narrow floats to f32 for summing (as ONNX Runtime
// accumulates them), returning the type to convert the result back to.
func poolWiden(x *xb.Op) (*xb.Op, hlo.DType) {
	t := x.DType()
	if spatialNarrow(t) {
		return xb.Convert(x, hlo.F32), t
	}
	return x, t
}

// poolNarrow converts y back to t.
func poolNarrow(y *xb.Op, t hlo.DType) *xb.Op {
	if y.DType() != t {
		return xb.Convert(y, t)
	}
	return y
}

// lowerMaxUnpool scatters X into zeros at the flattened indices I (as
// MaxPool's Indices give them) of the output shape.
func lowerMaxUnpool(c *Ctx) error {
	x, ind := c.Input(0), c.Input(1)
	if x == nil || ind == nil {
		return c.Errorf("MaxUnpool needs X and I")
	}
	xd := x.Dims()
	if len(xd) < 3 {
		return c.Unsupported("input %v", xd)
	}
	n := len(xd) - 2
	kernel := c.Node.Ints("kernel_shape")
	a, err := convReadAttrs(c, n, kernel)
	if err != nil {
		return err
	}
	// The indices address the inferred shape; an output_shape input only
	// pads (or crops) that at the end of each dimension.
	outDims := []int64{xd[0], xd[1]}
	for i := range n {
		outDims = append(outDims, (xd[i+2]-1)*a.strides[i]+kernel[i]-a.padLo[i]-a.padHi[i])
	}
	var want []int64
	if c.Has(2) {
		s, err := c.ConstInts(2)
		if err != nil {
			return err
		}
		if len(s) != len(xd) {
			return c.Errorf("output_shape %v does not fit input %v", s, xd)
		}
		want = s
	}
	total := numElems(outDims)
	m := numElems(xd)
	idx := ind
	if idx.DType() != hlo.S64 {
		idx = xb.Convert(idx, hlo.S64)
	}
	idx = xb.Reshape(idx, m, 1)
	upd := xb.Reshape(x, m)
	zeros := c.B.Zeros(x.DType(), total)
	y := xb.Scatter(zeros, idx, upd, xb.ScatterDims{
		InsertedWindowDims: []int64{0}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1,
	}, func(_ *xb.Builder, _, b *xb.Op) *xb.Op { return b })
	y = xb.Reshape(y, outDims...)
	if want != nil {
		cfg := make(hlo.PaddingConfig, len(want))
		for i := range want {
			cfg[i].Hi = want[i] - outDims[i]
		}
		y = xb.Pad(y, c.B.ScalarOf(x.DType(), 0), cfg)
	}
	c.Set(0, y)
	return nil
}
