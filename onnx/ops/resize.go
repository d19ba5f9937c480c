package ops

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Resize and Upsample. Interpolation is separable: each resized axis is
// resampled on its own, output position j of the axis being a weighted
// sum of a few input positions (taps) whose indices and weights are
// computed at compile time. Integer-ratio upsampling whose taps repeat
// with the ratio (nearest, and linear/cubic away from the borders) is
// done without gathers: shifted copies of the input weighted per phase,
// interleaved by a reshape.

func init() {
	Register(Op{Name: "Resize", Since: 10, ConstInputs: []int{1}, Lower: lowerResize})
	Register(Op{Name: "Resize", Since: 11, ConstInputs: []int{2, 3}, PreferConst: []int{1}, Lower: lowerResize})
	Register(Op{Name: "Upsample", Since: 7, Lower: lowerUpsample})
	Register(Op{Name: "Upsample", Since: 9, ConstInputs: []int{1}, Lower: lowerUpsample})
}

// resizeOpts are a Resize node's attributes.
type resizeOpts struct {
	mode, ctm, nearest string
	cubicA             float64
	exclude, antialias bool
	extrap             float64
}

// resizeTaps is the resampling of one axis: out positions, each with K
// taps (indices into the input axis, already clamped) and weights; oob
// marks positions that take the extrapolation value.
type resizeTaps struct {
	in, out int64
	k       int
	idx     [][]int64
	w       [][]float64
	oob     []bool
	anyOOB  bool
}

func resizeNearestCoeffs(ratio float64, isInt bool, mode string) ([]float64, bool) {
	if isInt {
		return []float64{0, 1}, true
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	switch mode {
	case "round_prefer_floor":
		return []float64{b(ratio <= 0.5), b(ratio > 0.5)}, true
	case "round_prefer_ceil":
		return []float64{b(ratio < 0.5), b(ratio >= 0.5)}, true
	case "floor":
		return []float64{1, 0}, true
	case "ceil":
		return []float64{0, 1}, true
	}
	return nil, false
}

// resizeSimpleNearest is opset 10's nearest rounding (as ONNX Runtime):
// ceil when downsampling, floor otherwise.
func resizeSimpleNearest(scale float64) string {
	if scale < 1 {
		return "ceil"
	}
	return "floor"
}

func resizeCubic(x, a float64) float64 {
	x = math.Abs(x)
	x2, x3 := x*x, x*x*x
	if x <= 1 {
		return (a+2)*x3 - (a+3)*x2 + 1
	}
	if x < 2 {
		return a*x3 - 5*a*x2 + 8*a*x - 4*a
	}
	return 0
}

func resizeCoeffs(o *resizeOpts, ratio float64, isInt bool, scale float64) ([]float64, bool) {
	switch o.mode {
	case "nearest":
		if o.nearest == "simple" {
			return resizeNearestCoeffs(ratio, isInt, resizeSimpleNearest(scale))
		}
		return resizeNearestCoeffs(ratio, isInt, o.nearest)
	case "linear":
		if !o.antialias {
			return []float64{1 - ratio, ratio}, true
		}
		s := min(scale, 1)
		start := int(math.Floor(-1/s) + 1)
		n := 2 - 2*start
		cs := make([]float64, n)
		sum := 0.0
		for i := range cs {
			v := 1 - math.Abs((float64(start+i)-ratio)*s)
			cs[i] = min(max(v, 0), 1)
			sum += cs[i]
		}
		for i := range cs {
			cs[i] /= sum
		}
		return cs, true
	case "cubic":
		a := o.cubicA
		if !o.antialias {
			r1 := 1 - ratio
			return []float64{
				((a*(ratio+1)-5*a)*(ratio+1)+8*a)*(ratio+1) - 4*a,
				((a+2)*ratio-(a+3))*ratio*ratio + 1,
				((a+2)*r1-(a+3))*r1*r1 + 1,
				((a*(r1+1)-5*a)*(r1+1)+8*a)*(r1+1) - 4*a,
			}, true
		}
		s := min(scale, 1)
		start := int(math.Floor(-2/s) + 1)
		end := 2 - start
		var cs []float64
		sum := 0.0
		for i := start; i < end; i++ {
			v := resizeCubic(s*(float64(i)-ratio), a)
			cs = append(cs, v)
			sum += v
		}
		for i := range cs {
			cs[i] /= sum
		}
		return cs, true
	}
	return nil, false
}

// resizePlan computes the taps of one axis. align_corners,
// tf_crop_and_resize and pytorch_half_pixel measure the resized axis by
// its length, out, as the operator's definition has it (length_resized)
// and as ONNX Runtime, PyTorch's interpolate and TensorRT do; ONNX's
// reference implementation takes in·scale there instead, which differs
// where that is not a whole number (a 9-long axis scaled by 1.5 is 13
// long, not 13.5): its expected outputs for
// test_resize_downsample_scales_{linear,cubic}_align_corners are that
// reading's, and ONNX Runtime fails those two tests as Axle now does.
func resizePlan(o *resizeOpts, in, out int64, scale, roiStart, roiEnd float64) (*resizeTaps, bool) {
	t := &resizeTaps{in: in, out: out, idx: make([][]int64, out), w: make([][]float64, out), oob: make([]bool, out)}
	for j := int64(0); j < out; j++ {
		xo, ok := resizeOrigin(o.ctm, j, in, out, scale, roiStart, roiEnd)
		if o.mode == "nearest" {
			var xo32 float32
			xo32, ok = resizeOrigin(o.ctm, j, in, out, float32(scale), float32(roiStart), float32(roiEnd))
			xo = float64(xo32)
		}
		if !ok {
			return nil, false
		}
		if o.ctm == "tf_crop_and_resize" && (xo < 0 || xo > float64(in-1)) {
			t.oob[j] = true
			t.anyOOB = true
		}
		base := math.Floor(xo)
		isInt := xo == base
		ratio := xo - base
		if isInt {
			ratio = 1
			base--
		}
		cs, ok := resizeCoeffs(o, ratio, isInt, scale)
		if !ok {
			return nil, false
		}
		n := len(cs)
		pad := int64((n + 1) / 2)
		// The n nearest indices of the edge-padded axis: a window of n
		// starting at base+1-n/2, kept inside the padded axis.
		s := int64(base) + 1 - int64(n/2) + pad
		s = max(min(s, in+2*pad-int64(n)), 0)
		idx := make([]int64, n)
		for k := range idx {
			idx[k] = s + int64(k) - pad
		}
		if o.exclude {
			sum := 0.0
			for k, i := range idx {
				if i < 0 || i >= in {
					cs[k] = 0
				}
				sum += cs[k]
			}
			for k := range cs {
				cs[k] /= sum
			}
		}
		// Drop zero taps, clamp the rest.
		var ti []int64
		var tw []float64
		for k, i := range idx {
			if cs[k] == 0 {
				continue
			}
			ti = append(ti, min(max(i, 0), in-1))
			tw = append(tw, cs[k])
		}
		t.idx[j], t.w[j] = ti, tw
		t.k = max(t.k, len(ti))
	}
	// Pad every position to k taps (weight 0).
	for j := range t.idx {
		for len(t.idx[j]) < t.k {
			t.idx[j] = append(t.idx[j], t.idx[j][0])
			t.w[j] = append(t.w[j], 0)
		}
	}
	return t, true
}

// resizeOrigin is where output position j of an axis resized from in
// to out samples the input, by coordinate transformation ctm, in F's
// arithmetic. Nearest modes take it in float32, as ONNX Runtime computes
// it (and PyTorch its nearest source indices): they floor or round the
// origin, so its rounding decides which input a position takes. 17/1.7
// is 10 in float32 and 9.9999997 in float64: a 12-wide axis scaled by
// 1.7 took input 9 for position 17 where ONNX Runtime and PyTorch take
// 10. (Linear and cubic weights take it in float64: there the origin
// moves a weight by an ulp, not a tap.)
func resizeOrigin[F float32 | float64](ctm string, j, in, out int64, scale, roiStart, roiEnd F) (F, bool) {
	x, fin, fout := F(j), F(in), F(out)
	switch ctm {
	case "align_corners":
		if out == 1 {
			return 0, true
		}
		return x * (fin - 1) / (fout - 1), true
	case "asymmetric":
		return x / scale, true
	case "tf_crop_and_resize":
		if out == 1 {
			return 0.5 * (roiStart + roiEnd) * (fin - 1), true
		}
		return F(roiStart*(fin-1)) + x*(roiEnd-roiStart)*(fin-1)/(fout-1), true // (no fused multiply-add)
	case "pytorch_half_pixel":
		if out == 1 {
			return 0, true
		}
		return (x+0.5)/scale - 0.5, true
	case "half_pixel":
		return (x+0.5)/scale - 0.5, true
	case "tf_half_pixel_for_nn":
		return (x + 0.5) / scale, true
	case "half_pixel_symmetric":
		adj := fout / (scale * fin)
		off := fin / 2 * (1 - adj)
		return off + (x+0.5)/scale - 0.5, true
	}
	return 0, false
}

// resizeLength is the length of an axis of in elements scaled by scale
// (a float32 of the graph's): floor(in·scale) in float32, as ONNX Runtime
// computes it, which gives a PyTorch export the length PyTorch computed
// in float64 from the Python scale the float32 one rounds: 10 by 0.7 is
// 7 (0.7f·10 = 6.99999988 rounds to 7.0 in float32; in float64 it
// floors to 6, and a UNet's skip connection would then not concatenate).
func resizeLength(scale float64, in int64) int64 {
	return int64(float32(scale) * float32(in))
}

func lowerUpsample(c *Ctx) error {
	x := c.Input(0)
	r := x.Rank()
	var scales []float64
	if c.Opset >= 9 {
		s, err := c.ConstFloats(1)
		if err != nil {
			return err
		}
		scales = s
	} else {
		for _, v := range c.Node.Floats("scales") {
			scales = append(scales, float64(v))
		}
	}
	if len(scales) != r {
		return c.Errorf("%d scales for a rank-%d input", len(scales), r)
	}
	mode := c.Node.Str("mode", "nearest")
	if mode == "bilinear" {
		mode = "linear"
	}
	o := &resizeOpts{mode: mode, ctm: "asymmetric", nearest: "floor", cubicA: -0.75}
	dims := x.Dims()
	out := make([]int64, r)
	for i := range out {
		out[i] = resizeLength(scales[i], dims[i])
	}
	y, err := resizeApply(c, x, o, scales, out, nil)
	if err != nil {
		return err
	}
	c.Set(0, y)
	return nil
}

func lowerResize(c *Ctx) error {
	x := c.Input(0)
	r := x.Rank()
	dims := x.Dims()
	o := &resizeOpts{
		mode:      c.Node.Str("mode", "nearest"),
		ctm:       c.Node.Str("coordinate_transformation_mode", "half_pixel"),
		nearest:   c.Node.Str("nearest_mode", "round_prefer_floor"),
		cubicA:    float64(c.Node.Float("cubic_coeff_a", -0.75)),
		exclude:   c.Node.Int("exclude_outside", 0) != 0,
		antialias: c.Node.Int("antialias", 0) != 0,
		extrap:    float64(c.Node.Float("extrapolation_value", 0)),
	}
	var scalesIn, sizesIn, roiIn []float64
	if c.Opset < 11 {
		o.ctm, o.nearest = "asymmetric", "simple"
		s, err := c.ConstFloats(1)
		if err != nil {
			return err
		}
		scalesIn = s
	} else {
		if c.Has(2) {
			s, err := c.ConstFloats(2)
			if err != nil {
				return err
			}
			scalesIn = s
		}
		if c.Has(3) {
			s, err := c.ConstFloats(3)
			if err != nil {
				return err
			}
			sizesIn = s
		}
		if c.Has(1) && o.ctm == "tf_crop_and_resize" {
			s, err := c.ConstFloats(1)
			if err != nil {
				return err
			}
			roiIn = s
		}
	}
	if o.antialias && o.mode == "nearest" {
		o.antialias = false
	}
	axes := make([]int64, 0, r)
	if a := c.Node.Ints("axes"); a != nil && c.Opset >= 18 {
		for _, v := range a {
			ax, ok := NormAxis(v, r)
			if !ok {
				return c.Errorf("axis %d out of range", v)
			}
			axes = append(axes, ax)
		}
	} else {
		for i := range r {
			axes = append(axes, int64(i))
		}
	}
	na := len(axes)
	scales := make([]float64, r)
	out := append([]int64(nil), dims...)
	for i := range scales {
		scales[i] = 1
	}
	switch {
	case len(sizesIn) > 0:
		if len(sizesIn) != na {
			return c.Errorf("%d sizes for %d axes", len(sizesIn), na)
		}
		for i, a := range axes {
			out[a] = int64(sizesIn[i])
			scales[a] = sizesIn[i] / float64(dims[a])
		}
		if p := c.Node.Str("keep_aspect_ratio_policy", "stretch"); p != "stretch" && c.Opset >= 18 {
			var s float64
			for i, a := range axes {
				v := scales[a]
				switch {
				case i == 0:
					s = v
				case p == "not_larger":
					s = min(s, v)
				case p == "not_smaller":
					s = max(s, v)
				default:
					return c.Unsupported("keep_aspect_ratio_policy %q", p)
				}
			}
			for _, a := range axes {
				scales[a] = s
				out[a] = int64(s*float64(dims[a]) + 0.5)
			}
		}
	case len(scalesIn) > 0:
		if len(scalesIn) != na {
			return c.Errorf("%d scales for %d axes", len(scalesIn), na)
		}
		for i, a := range axes {
			scales[a] = scalesIn[i]
			out[a] = resizeLength(scalesIn[i], dims[a])
		}
	default:
		return c.Errorf("neither scales nor sizes given")
	}
	var roi [][2]float64
	if o.ctm == "tf_crop_and_resize" {
		roi = make([][2]float64, r)
		for i := range roi {
			roi[i] = [2]float64{0, 1}
		}
		switch len(roiIn) {
		case 2 * na:
			for i, a := range axes {
				roi[a] = [2]float64{roiIn[i], roiIn[na+i]}
			}
		case 2 * r:
			for i := range r {
				roi[i] = [2]float64{roiIn[i], roiIn[r+i]}
			}
		default:
			return c.Errorf("roi has %d values for rank %d", len(roiIn), r)
		}
	}
	y, err := resizeApply(c, x, o, scales, out, roi)
	if err != nil {
		return err
	}
	c.Set(0, y)
	return nil
}

// resizeApply resamples x axis by axis to out.
func resizeApply(c *Ctx, x *xb.Op, o *resizeOpts, scales []float64, out []int64, roi [][2]float64) (*xb.Op, error) {
	dims := x.Dims()
	r := len(dims)
	dt := x.DType()
	calc := dt
	if o.mode != "nearest" && dt != hlo.F32 && dt != hlo.F64 {
		calc = hlo.F32
	}
	y := x
	if calc != dt {
		y = xb.Convert(x, calc)
	}
	type rsMask struct {
		axis int64
		lit  *hlo.Literal
	}
	var masks []rsMask
	for a := range r {
		if out[a] < 0 {
			return nil, c.Errorf("negative output size %d", out[a])
		}
		if scales[a] == 1 && out[a] == dims[a] && o.ctm != "tf_crop_and_resize" {
			continue
		}
		if dims[a] == 0 || out[a] == 0 {
			d := y.Dims()
			d[a] = out[a]
			y = c.B.Zeros(calc, d...)
			continue
		}
		if scales[a] <= 0 {
			return nil, c.Errorf("scale %v must be positive", scales[a])
		}
		rs, re := 0.0, 1.0
		if roi != nil {
			rs, re = roi[a][0], roi[a][1]
		}
		t, ok := resizePlan(o, dims[a], out[a], scales[a], rs, re)
		if !ok {
			return nil, c.Unsupported("mode %q, coordinate_transformation_mode %q, nearest_mode %q", o.mode, o.ctm, o.nearest)
		}
		y = resizeAxis(c.B, y, int64(a), t)
		if t.anyOOB {
			m := make([]float64, t.out)
			for j, b := range t.oob {
				if b {
					m[j] = 1
				}
			}
			masks = append(masks, rsMask{int64(a), literal(hlo.Pred, m, t.out)})
		}
	}
	if len(masks) > 0 {
		od := y.Dims()
		var outside *xb.Op
		for _, m := range masks {
			b := xb.BroadcastInDim(c.B.Constant(m.lit), od, m.axis)
			if outside == nil {
				outside = b
			} else {
				outside = xb.Or(outside, b)
			}
		}
		y = xb.Select(outside, xb.BroadcastTo(c.B.ScalarOf(calc, o.extrap), od...), y)
	}
	if calc != dt {
		y = xb.Convert(y, dt)
	}
	return y, nil
}

// resizeAxis resamples y along axis by the taps t.
func resizeAxis(b *xb.Builder, y *xb.Op, axis int64, t *resizeTaps) *xb.Op {
	n, m := t.in, t.out
	// One tap of weight 1 at evenly spaced indices: a strided slice.
	if t.k == 1 {
		unit := true
		for j := range t.w {
			if t.w[j][0] != 1 {
				unit = false
				break
			}
		}
		if unit {
			start := t.idx[0][0]
			step := int64(1)
			if m > 1 {
				step = t.idx[1][0] - start
			}
			even := step >= 1
			for j := int64(0); even && j < m; j++ {
				even = t.idx[j][0] == start+j*step
			}
			if even {
				if start == 0 && step == 1 && m == n {
					return y
				}
				d := y.Dims()
				st, lim, str := make([]int64, len(d)), append([]int64(nil), d...), make([]int64, len(d))
				for i := range str {
					str[i] = 1
				}
				st[axis], lim[axis], str[axis] = start, start+(m-1)*step+1, step
				return xb.Slice(y, st, lim, str)
			}
		}
	}
	if m%n == 0 {
		if z := resizePhases(b, y, axis, t); z != nil {
			return z
		}
	}
	od := y.Dims()
	od[axis] = m
	var acc *xb.Op
	for k := 0; k < t.k; k++ {
		iv := make([]int64, m)
		wv := make([]float64, m)
		allZero := true
		for j := range iv {
			iv[j] = t.idx[j][k]
			wv[j] = t.w[j][k]
			if wv[j] != 0 {
				allZero = false
			}
		}
		if allZero {
			continue
		}
		g := xb.Take(y, b.Constant(IntTensor(iv, m).Lit), axis)
		allOne := true
		for _, v := range wv {
			if v != 1 {
				allOne = false
				break
			}
		}
		if !allOne {
			g = xb.Mul(g, xb.BroadcastInDim(b.Constant(literal(y.DType(), wv, m)), od, axis))
		}
		if acc == nil {
			acc = g
		} else {
			acc = xb.Add(acc, g)
		}
	}
	if acc == nil {
		return b.Zeros(y.DType(), od...)
	}
	return acc
}

// resizeShift is y shifted along axis by off with edge values repeated:
// element i is y[clamp(i+off)].
func resizeShift(y *xb.Op, axis, off int64) *xb.Op {
	if off == 0 {
		return y
	}
	d := y.Dims()
	n := d[axis]
	edge := func(i int64) *xb.Op {
		s := xb.SliceAxis(y, axis, i, i+1)
		dd := append([]int64(nil), d...)
		dd[axis] = min(abs64(off), n)
		return xb.BroadcastTo(s, dd...)
	}
	if abs64(off) >= n {
		if off > 0 {
			return xb.BroadcastTo(xb.SliceAxis(y, axis, n-1, n), d...)
		}
		return xb.BroadcastTo(xb.SliceAxis(y, axis, 0, 1), d...)
	}
	if off > 0 {
		return xb.Concatenate(axis, xb.SliceAxis(y, axis, off, n), edge(n-1))
	}
	return xb.Concatenate(axis, edge(0), xb.SliceAxis(y, axis, 0, n+off))
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// resizePhases handles out = r·in when output position i·r+p takes, for
// every i, the inputs clamp(i+off) with the same weights (per phase p):
// r weighted sums of shifted copies, interleaved. nil if the taps do not
// have that form.
func resizePhases(b *xb.Builder, y *xb.Op, axis int64, t *resizeTaps) *xb.Op {
	n, m := t.in, t.out
	r := m / n
	type tap struct {
		off int64
		w   float64
	}
	phases := make([][]tap, r)
	i0 := n / 2
	for p := int64(0); p < r; p++ {
		j0 := i0*r + p
		for k := 0; k < t.k; k++ {
			if t.w[j0][k] == 0 {
				continue
			}
			phases[p] = append(phases[p], tap{t.idx[j0][k] - i0, t.w[j0][k]})
		}
		// Check every position of the phase against the pattern.
		for i := int64(0); i < n; i++ {
			j := i*r + p
			// Sum of weights per clamped index, pattern vs actual.
			want := map[int64]float64{}
			for _, tp := range phases[p] {
				want[min(max(i+tp.off, 0), n-1)] += tp.w
			}
			got := map[int64]float64{}
			for k := 0; k < t.k; k++ {
				if t.w[j][k] != 0 {
					got[t.idx[j][k]] += t.w[j][k]
				}
			}
			for key, v := range want {
				if math.Abs(got[key]-v) > 1e-12 {
					return nil
				}
				delete(got, key)
			}
			for _, v := range got {
				if math.Abs(v) > 1e-12 {
					return nil
				}
			}
		}
	}
	parts := make([]*xb.Op, r)
	same := true
	for p := range phases {
		var acc *xb.Op
		for _, tp := range phases[p] {
			s := resizeShift(y, axis, tp.off)
			if tp.w != 1 {
				s = xb.Mul(s, FullLike(s, tp.w))
			}
			if acc == nil {
				acc = s
			} else {
				acc = xb.Add(acc, s)
			}
		}
		if acc == nil {
			acc = FullLike(y, 0)
		}
		parts[p] = acc
		if len(phases[p]) != 1 || phases[p][0].off != 0 || phases[p][0].w != 1 {
			same = false
		}
	}
	d := y.Dims()
	ins := make([]int64, 0, len(d)+1)
	ins = append(ins, d[:axis+1]...)
	ins = append(ins, 1)
	ins = append(ins, d[axis+1:]...)
	od := append([]int64(nil), d...)
	od[axis] = m
	if same {
		// Nearest upsampling: every phase is the input itself.
		wide := append([]int64(nil), ins...)
		wide[axis+1] = r
		mapping := make([]int64, 0, len(d))
		for i := range d {
			if int64(i) <= axis {
				mapping = append(mapping, int64(i))
			} else {
				mapping = append(mapping, int64(i)+1)
			}
		}
		return xb.Reshape(xb.BroadcastInDim(y, wide, mapping...), od...)
	}
	for p := range parts {
		parts[p] = xb.Reshape(parts[p], ins...)
	}
	return xb.Reshape(xb.Concatenate(axis+1, parts...), od...)
}
