package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Spatial sampling ops: AffineGrid (a constant base grid times theta),
// GridSample (gathers of the interpolation corners from the image
// flattened to rows of channels, weighted and summed), Col2Im (one
// scatter-add of the columns into the padded image).

func init() {
	Register(Op{Name: "AffineGrid", ConstInputs: []int{1}, Lower: lowerAffineGrid})
	Register(Op{Name: "GridSample", Lower: lowerGridSample, Types: convFloatTypes})
	Register(Op{Name: "Col2Im", ConstInputs: []int{1, 2}, Lower: lowerCol2Im})
}

func lowerAffineGrid(c *Ctx) error {
	theta := c.Input(0)
	size, err := c.ConstInts(1)
	if err != nil {
		return err
	}
	td := theta.Dims()
	r := len(size) - 2
	if r < 1 || len(td) != 3 || td[1] != int64(r) || td[2] != int64(r+1) || td[0] != size[0] {
		return c.Errorf("theta %v does not fit size %v", td, size)
	}
	if !theta.DType().IsFloat() {
		return c.Unsupported("AffineGrid of %s", theta.DType())
	}
	align := c.Node.Int("align_corners", 0) != 0
	sp := size[2:]
	p := numElems(sp)
	// base[pos, k]: k < r is the normalized coordinate along spatial
	// dimension r-1-k (x first), k == r is 1.
	coord := func(i, l int64) float64 {
		if align {
			if l == 1 {
				return -1
			}
			return -1 + 2*float64(i)/float64(l-1)
		}
		return -1 + float64(2*i+1)/float64(l)
	}
	base := make([]float64, 0, p*int64(r+1))
	poolOffsets(sp, func(o []int64) {
		for k := range r {
			d := r - 1 - k
			base = append(base, coord(o[d], sp[d]))
		}
		base = append(base, 1)
	})
	bop := c.B.Constant(literal(theta.DType(), base, p, int64(r+1)))
	g := xb.DotGeneral(theta, bop, xb.DotDims{LhsContracting: []int64{2}, RhsContracting: []int64{1}}) // [N, r, P]
	g = xb.Transpose(g, 0, 2, 1)
	c.Set(0, xb.Reshape(g, append(append([]int64{size[0]}, sp...), int64(r))...))
	return nil
}

// gsReflect reflects v into [lo, hi] by its nearer border, repeatedly
// (GridSample's reflection padding).
func gsReflect(v *xb.Op, lo, hi float64) *xb.Op {
	rng := hi - lo
	if rng <= 0 {
		return FullLike(v, lo)
	}
	fold := func(dx *xb.Op) (r, even *xb.Op) {
		n := xb.Floor(xb.Div(dx, FullLike(dx, rng)))
		r = xb.Sub(dx, xb.Mul(n, FullLike(n, rng)))
		even = xb.Eq(xb.Rem(n, FullLike(n, 2)), FullLike(n, 0))
		return r, even
	}
	rLo, evenLo := fold(xb.Sub(FullLike(v, lo), v))
	below := xb.Select(evenLo, xb.Add(FullLike(v, lo), rLo), xb.Sub(FullLike(v, hi), rLo))
	rHi, evenHi := fold(xb.Sub(v, FullLike(v, hi)))
	above := xb.Select(evenHi, xb.Sub(FullLike(v, hi), rHi), xb.Add(FullLike(v, lo), rHi))
	return xb.Select(xb.Lt(v, FullLike(v, lo)), below, xb.Select(xb.Gt(v, FullLike(v, hi)), above, v))
}

// gsCubic are Keys' cubic convolution weights (alpha -0.75) of the four
// taps at -1, 0, 1, 2 for the fraction t in [0, 1).
func gsCubic(t *xb.Op) [4]*xb.Op {
	const a = -0.75
	s := func(v float64) *xb.Op { return FullLike(t, v) }
	one := s(1)
	// far(x) for 1 <= x < 2, near(x) for x < 1.
	far := func(x *xb.Op) *xb.Op {
		// ((a*x - 5a)*x + 8a)*x - 4a
		return xb.Sub(xb.Mul(xb.Add(xb.Mul(xb.Sub(xb.Mul(s(a), x), s(5*a)), x), s(8*a)), x), s(4*a))
	}
	near := func(x *xb.Op) *xb.Op {
		// ((a+2)*x - (a+3))*x*x + 1
		return xb.Add(xb.Mul(xb.Mul(xb.Sub(xb.Mul(s(a+2), x), s(a+3)), x), x), one)
	}
	omt := xb.Sub(one, t)
	return [4]*xb.Op{far(xb.Add(t, one)), near(t), near(omt), far(xb.Add(omt, one))}
}

func lowerGridSample(c *Ctx) error {
	x, grid := c.Input(0), c.Input(1)
	if x == nil || grid == nil {
		return c.Errorf("GridSample needs X and grid")
	}
	xd, gd := x.Dims(), grid.Dims()
	r := len(xd) - 2
	if r < 1 || len(gd) != r+2 || gd[0] != xd[0] || gd[len(gd)-1] != int64(r) {
		return c.Errorf("grid %v does not fit X %v", gd, xd)
	}
	if !x.DType().IsFloat() || !grid.DType().IsFloat() {
		return c.Unsupported("GridSample of %s with a %s grid", x.DType(), grid.DType())
	}
	mode := c.Node.Str("mode", "")
	if mode == "" {
		mode = "linear"
		if c.Opset < 20 {
			mode = "bilinear"
		}
	}
	switch mode {
	case "bilinear":
		mode = "linear"
	case "bicubic":
		mode = "cubic"
	case "linear", "nearest", "cubic":
	default:
		return c.Errorf("unknown mode %q", mode)
	}
	padMode := c.Node.Str("padding_mode", "zeros")
	if padMode != "zeros" && padMode != "border" && padMode != "reflection" {
		return c.Errorf("unknown padding_mode %q", padMode)
	}
	align := c.Node.Int("align_corners", 0) != 0
	b := c.B
	nb, ch := xd[0], xd[1]
	sp := xd[2:]
	m := numElems(gd[1 : r+1])
	// Narrow floats compute in f32, as the reference does its coordinates.
	outType := x.DType()
	if spatialNarrow(outType) {
		x = xb.Convert(x, hlo.F32)
	}
	g := grid
	if g.DType() != x.DType() {
		g = xb.Convert(g, x.DType())
	}
	g = xb.Reshape(g, nb, m, int64(r))
	// v[i]: the unnormalized coordinate along spatial dimension i, [N, M].
	v := make([]*xb.Op, r)
	lo, hi := make([]float64, r), make([]float64, r)
	for i := range r {
		k := int64(r - 1 - i)
		gi := xb.Reshape(xb.SliceAxis(g, 2, k, k+1), nb, m)
		d := float64(sp[i])
		if align {
			v[i] = xb.Mul(xb.Add(gi, FullLike(gi, 1)), FullLike(gi, (d-1)/2))
			lo[i], hi[i] = 0, d-1
		} else {
			v[i] = xb.Div(xb.Sub(xb.Mul(xb.Add(gi, FullLike(gi, 1)), FullLike(gi, d)), FullLike(gi, 1)), FullLike(gi, 2))
			lo[i], hi[i] = -0.5, d-0.5
		}
		if mode == "nearest" {
			// Round half to even (nearbyint), as the test data do in every rank.
			v[i] = xb.Round(v[i])
		}
		out := xb.Or(xb.Lt(v[i], FullLike(gi, lo[i])), xb.Gt(v[i], FullLike(gi, hi[i])))
		switch padMode {
		case "border":
			v[i] = xb.Select(out, xb.Clamp(FullLike(gi, 0), v[i], FullLike(gi, d-1)), v[i])
		case "reflection":
			v[i] = xb.Select(out, gsReflect(v[i], lo[i], hi[i]), v[i])
		}
	}
	// Taps along each dimension: integer positions (as floats) and weights.
	type tap struct{ pos, w *xb.Op }
	taps := make([][]tap, r)
	for i := range r {
		switch mode {
		case "nearest":
			taps[i] = []tap{{pos: v[i]}}
		case "linear":
			f := xb.Floor(v[i])
			t := xb.Sub(v[i], f)
			taps[i] = []tap{{f, xb.Sub(FullLike(t, 1), t)}, {xb.Add(f, FullLike(f, 1)), t}}
		case "cubic":
			f := xb.Floor(v[i])
			t := xb.Sub(v[i], f)
			w := gsCubic(t)
			for k := range 4 {
				taps[i] = append(taps[i], tap{xb.Add(f, FullLike(f, float64(k-1))), w[k]})
			}
		}
	}
	// The image as rows of channels: [N*P, C].
	perm := []int64{0}
	for i := range r {
		perm = append(perm, int64(i+2))
	}
	perm = append(perm, 1)
	p := numElems(sp)
	rows := xb.Reshape(xb.Transpose(x, perm...), nb*p, ch)
	batchBase := xb.Mul(b.Iota(hlo.S64, 0, nb, m), xb.Scalar(b, p))
	var acc *xb.Op
	counts := make([]int64, r)
	for i := range r {
		counts[i] = int64(len(taps[i]))
	}
	poolOffsets(counts, func(j []int64) {
		var weight, valid *xb.Op
		flat := batchBase
		stride := p
		for i := range r {
			stride /= sp[i]
			tp := taps[i][j[i]]
			pos := tp.pos
			d := float64(sp[i])
			switch padMode {
			case "zeros":
				ok := xb.And(xb.Ge(pos, FullLike(pos, 0)), xb.Le(pos, FullLike(pos, d-1)))
				if valid == nil {
					valid = ok
				} else {
					valid = xb.And(valid, ok)
				}
			case "reflection":
				pos = gsReflect(pos, lo[i], hi[i])
			}
			pos = xb.Clamp(FullLike(pos, 0), pos, FullLike(pos, d-1))
			ip := xb.Convert(pos, hlo.S64) // truncation, as int()
			flat = xb.Add(flat, xb.Mul(ip, xb.Scalar(b, stride)))
			if tp.w != nil {
				if weight == nil {
					weight = tp.w
				} else {
					weight = xb.Mul(weight, tp.w)
				}
			}
		}
		if valid != nil {
			zero := FullLike(v[0], 0)
			if weight == nil {
				weight = xb.Select(valid, FullLike(v[0], 1), zero)
			} else {
				weight = xb.Select(valid, weight, zero)
			}
		}
		vals := xb.Take(rows, flat, 0) // [N, M, C]
		if weight != nil {
			vals = xb.Mul(vals, xb.BroadcastInDim(weight, []int64{nb, m, ch}, 0, 1))
		}
		if acc == nil {
			acc = vals
		} else {
			acc = xb.Add(acc, vals)
		}
	})
	y := xb.Transpose(acc, 0, 2, 1)
	if y.DType() != outType {
		y = xb.Convert(y, outType)
	}
	c.Set(0, xb.Reshape(y, append([]int64{nb, ch}, gd[1:r+1]...)...))
	return nil
}

// lowerCol2Im adds each column's block into the image: one scatter-add
// of [N, C, K*L] values into the padded image flattened to [N, C, P] at
// compile-time positions, then the pads cut off.
func lowerCol2Im(c *Ctx) error {
	x := c.Input(0)
	img, err := c.ConstInts(1)
	if err != nil {
		return err
	}
	block, err := c.ConstInts(2)
	if err != nil {
		return err
	}
	n := len(img)
	xd := x.Dims()
	if n == 0 || len(block) != n || len(xd) != 3 {
		return c.Errorf("input %v, image_shape %v, block_shape %v", xd, img, block)
	}
	a, err := convReadAttrs(c, n, block)
	if err != nil {
		return err
	}
	k := numElems(block)
	if k == 0 || xd[1]%k != 0 {
		return c.Errorf("input %v is not divisible by the block %v", xd, block)
	}
	ch := xd[1] / k
	// Blocks along each dimension and the padded image.
	nblk, padded := make([]int64, n), make([]int64, n)
	for i := range n {
		padded[i] = img[i] + a.padLo[i] + a.padHi[i]
		nblk[i] = (padded[i]-a.effKernel(i))/a.strides[i] + 1
		if nblk[i] <= 0 {
			return c.Errorf("no blocks fit image %v", img)
		}
	}
	l := numElems(nblk)
	if l != xd[2] {
		return c.Errorf("input has %d blocks, the image %v fits %d", xd[2], img, l)
	}
	p := numElems(padded)
	idx := make([]int64, 0, k*l)
	poolOffsets(block, func(j []int64) {
		poolOffsets(nblk, func(o []int64) {
			flat := int64(0)
			for i := range n {
				flat = flat*padded[i] + o[i]*a.strides[i] + j[i]*a.dilations[i]
			}
			idx = append(idx, flat)
		})
	})
	nb := xd[0]
	upd := xb.Reshape(x, nb, ch, k*l)
	ind := xb.Const(c.B, idx, k*l, 1)
	zeros := c.B.Zeros(x.DType(), nb, ch, p)
	y := xb.Scatter(zeros, ind, upd, xb.ScatterDims{
		UpdateWindowDims: []int64{0, 1}, InsertedWindowDims: []int64{2}, ScatterDimsToOperandDims: []int64{2}, IndexVectorDim: 1,
	}, func(_ *xb.Builder, a, b *xb.Op) *xb.Op { return xb.Add(a, b) })
	y = xb.Reshape(y, append([]int64{nb, ch}, padded...)...)
	starts, limits := make([]int64, n+2), append([]int64{nb, ch}, padded...)
	for i := range n {
		starts[i+2] = a.padLo[i]
		limits[i+2] = a.padLo[i] + img[i]
	}
	c.Set(0, xb.Slice(y, starts, limits, nil))
	return nil
}

// spatialNarrow reports whether t is a float narrower than f32, which the
// sampling ops compute in f32.
func spatialNarrow(t hlo.DType) bool {
	return t.IsFloat() && t != hlo.F32 && t != hlo.F64
}
