package ops

import (
	"fmt"
	"math"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// RoiAlign runs on the host: with sampling_ratio 0 the number of samples
// per bin depends on each roi's size, a data-dependent shape.

func init() {
	Register(Op{Name: "RoiAlign", Host: hostRoiAlign, Lower: lowerRoiAlign})
}

func hostRoiAlign(h *HostCtx) error {
	xt, rt, bt := h.Tensor(0), h.Tensor(1), h.Tensor(2)
	if xt == nil || rt == nil || bt == nil || xt.Lit == nil || rt.Lit == nil || bt.Lit == nil {
		return h.Errorf("RoiAlign needs X, rois and batch_indices tensors")
	}
	xd, rd := xt.Dims(), rt.Dims()
	if len(xd) != 4 || len(rd) != 2 || rd[1] != 4 {
		return h.Errorf("X %v and rois %v", xd, rd)
	}
	if !xt.Lit.DType().IsFloat() {
		return fmt.Errorf("%s: RoiAlign of %s: %w", h.Node.Describe(), xt.Lit.DType(), ErrUnsupported)
	}
	bi, err := Int64s(bt)
	if err != nil {
		return h.Errorf("batch_indices: %v", err)
	}
	nr := rd[0]
	if int64(len(bi)) != nr {
		return h.Errorf("%d batch indices for %d rois", len(bi), nr)
	}
	n := h.Node
	ctm := "half_pixel"
	if h.Opset < 16 {
		ctm = "output_half_pixel"
	}
	ctm = strings.ToLower(n.Str("coordinate_transformation_mode", ctm))
	halfPixel := ctm == "half_pixel"
	mode := strings.ToLower(n.Str("mode", "avg"))
	if mode != "avg" && mode != "max" {
		return h.Errorf("unknown mode %q", mode)
	}
	oh, ow := n.Int("output_height", 1), n.Int("output_width", 1)
	ratio := n.Int("sampling_ratio", 0)
	scale := float64(n.Float("spatial_scale", 1))
	if oh <= 0 || ow <= 0 {
		return h.Errorf("output size %dx%d", oh, ow)
	}
	nb, ch, height, width := xd[0], xd[1], xd[2], xd[3]
	x, rois := xt.Lit, rt.Lit
	y := hlo.NewLiteral(hlo.ArrayShape(x.DType(), nr, ch, oh, ow))
	type sample struct {
		pos [4]int64
		w   [4]float64
	}
	for r := range nr {
		b := bi[r]
		if b < 0 || b >= nb {
			return h.Errorf("batch index %d out of range [0, %d)", b, nb)
		}
		off := 0.0
		if halfPixel {
			off = 0.5
		}
		sw := rois.GetFloat64(int(r*4+0))*scale - off
		sh := rois.GetFloat64(int(r*4+1))*scale - off
		ew := rois.GetFloat64(int(r*4+2))*scale - off
		eh := rois.GetFloat64(int(r*4+3))*scale - off
		rw, rh := ew-sw, eh-sh
		if !halfPixel {
			rw, rh = math.Max(rw, 1), math.Max(rh, 1)
		}
		bh, bw := rh/float64(oh), rw/float64(ow)
		gh, gw := ratio, ratio
		if ratio <= 0 {
			gh, gw = int64(math.Ceil(rh/float64(oh))), int64(math.Ceil(rw/float64(ow)))
		}
		gh, gw = max(gh, 0), max(gw, 0)
		count := float64(max(gh*gw, 1))
		samples := make([]sample, 0, oh*ow*gh*gw)
		for ph := range oh {
			for pw := range ow {
				for iy := range gh {
					yy := sh + float64(ph)*bh + (float64(iy)+0.5)*bh/float64(gh)
					for ix := range gw {
						xx := sw + float64(pw)*bw + (float64(ix)+0.5)*bw/float64(gw)
						samples = append(samples, roiSample(yy, xx, height, width))
					}
				}
			}
		}
		for c := range ch {
			base := (b*ch + c) * height * width
			k := 0
			for ph := range oh {
				for pw := range ow {
					out := 0.0
					first := true
					for range gh * gw {
						s := samples[k]
						k++
						if mode == "avg" {
							for q := range 4 {
								out += s.w[q] * x.GetFloat64(int(base+s.pos[q]))
							}
							continue
						}
						v := math.Inf(-1)
						for q := range 4 {
							v = math.Max(v, s.w[q]*x.GetFloat64(int(base+s.pos[q])))
						}
						if first || v > out {
							out = v
						}
						first = false
					}
					if mode == "avg" {
						out /= count
					}
					y.SetFloat64(int(((r*ch+c)*oh+ph)*ow+pw), out)
				}
			}
		}
	}
	h.Set(0, onnx.LiteralValue(y))
	return nil
}

// roiSample is the bilinear interpolation of one sampling point: the four
// corner offsets and weights (all zero outside the feature map).
func roiSample(y, x float64, height, width int64) (s struct {
	pos [4]int64
	w   [4]float64
}) {
	if y < -1 || y > float64(height) || x < -1 || x > float64(width) {
		return s
	}
	y, x = math.Max(y, 0), math.Max(x, 0)
	yl, xl := int64(y), int64(x)
	var yh, xh int64
	if yl >= height-1 {
		yl, yh = height-1, height-1
		y = float64(yl)
	} else {
		yh = yl + 1
	}
	if xl >= width-1 {
		xl, xh = width-1, width-1
		x = float64(xl)
	} else {
		xh = xl + 1
	}
	ly, lx := y-float64(yl), x-float64(xl)
	hy, hx := 1-ly, 1-lx
	s.pos = [4]int64{yl*width + xl, yl*width + xh, yh*width + xl, yh*width + xh}
	s.w = [4]float64{hy * hx, hy * lx, ly * hx, ly * lx}
	return s
}

func init() {
	Register(Op{Name: "MaxRoiPool", Host: hostMaxRoiPool})
}

// hostMaxRoiPool: each roi (batch, x1, y1, x2, y2), scaled and rounded to
// pixels, is split into pooled_shape bins whose maximum is taken (0 for
// an empty bin).
func hostMaxRoiPool(h *HostCtx) error {
	xt, rt := h.Tensor(0), h.Tensor(1)
	if xt == nil || rt == nil || xt.Lit == nil || rt.Lit == nil {
		return h.Errorf("MaxRoiPool needs X and rois tensors")
	}
	xd, rd := xt.Dims(), rt.Dims()
	if len(xd) != 4 || len(rd) != 2 || rd[1] != 5 {
		return h.Errorf("X %v and rois %v", xd, rd)
	}
	if !xt.Lit.DType().IsFloat() {
		return fmt.Errorf("%s: MaxRoiPool of %s: %w", h.Node.Describe(), xt.Lit.DType(), ErrUnsupported)
	}
	ps := h.Node.Ints("pooled_shape")
	if len(ps) != 2 || ps[0] <= 0 || ps[1] <= 0 {
		return h.Errorf("pooled_shape %v", ps)
	}
	scale := float64(h.Node.Float("spatial_scale", 1))
	nb, ch, height, width := xd[0], xd[1], xd[2], xd[3]
	ph, pw := ps[0], ps[1]
	x, rois := xt.Lit, rt.Lit
	nr := rd[0]
	y := hlo.NewLiteral(hlo.ArrayShape(x.DType(), nr, ch, ph, pw))
	round := func(v float64) int64 { return int64(math.Round(v)) } // half away from zero
	for r := range nr {
		b := int64(rois.GetFloat64(int(r * 5)))
		if b < 0 || b >= nb {
			return h.Errorf("roi %d: batch index %d out of range [0, %d)", r, b, nb)
		}
		sw := round(rois.GetFloat64(int(r*5+1)) * scale)
		sh := round(rois.GetFloat64(int(r*5+2)) * scale)
		ew := round(rois.GetFloat64(int(r*5+3)) * scale)
		eh := round(rois.GetFloat64(int(r*5+4)) * scale)
		rw, rh := max(ew-sw+1, 1), max(eh-sh+1, 1)
		bh, bw := float64(rh)/float64(ph), float64(rw)/float64(pw)
		for c := range ch {
			base := (b*ch + c) * height * width
			for i := range ph {
				hs := min(max(int64(math.Floor(float64(i)*bh))+sh, 0), height)
				he := min(max(int64(math.Ceil(float64(i+1)*bh))+sh, 0), height)
				for j := range pw {
					ws := min(max(int64(math.Floor(float64(j)*bw))+sw, 0), width)
					we := min(max(int64(math.Ceil(float64(j+1)*bw))+sw, 0), width)
					out := 0.0
					if he > hs && we > ws {
						out = math.Inf(-1)
						for yy := hs; yy < he; yy++ {
							for xx := ws; xx < we; xx++ {
								out = math.Max(out, x.GetFloat64(int(base+yy*width+xx)))
							}
						}
					}
					y.SetFloat64(int(((r*ch+c)*ph+i)*pw+j), out)
				}
			}
		}
	}
	h.Set(0, onnx.LiteralValue(y))
	return nil
}

// lowerRoiAlign is RoiAlign with a fixed sampling_ratio (the sample count
// per bin is then static): the sampling points' corners gathered from the
// input as rows of channels, weighted, and averaged or maximized per bin.
// sampling_ratio 0 (adaptive, data-dependent) runs on the host.
func lowerRoiAlign(c *Ctx) error {
	x, rois, bi := c.Input(0), c.Input(1), c.Input(2)
	if x == nil || rois == nil || bi == nil {
		return c.Errorf("RoiAlign needs X, rois and batch_indices")
	}
	xd, rd := x.Dims(), rois.Dims()
	if len(xd) != 4 || len(rd) != 2 || rd[1] != 4 {
		return c.Errorf("X %v and rois %v", xd, rd)
	}
	if !x.DType().IsFloat() {
		return c.Unsupported("RoiAlign of %s", x.DType())
	}
	n := c.Node
	ratio := n.Int("sampling_ratio", 0)
	if ratio <= 0 {
		return c.Unsupported("adaptive sampling_ratio runs on the host")
	}
	ctm := "half_pixel"
	if c.Opset < 16 {
		ctm = "output_half_pixel"
	}
	halfPixel := strings.ToLower(n.Str("coordinate_transformation_mode", ctm)) == "half_pixel"
	mode := strings.ToLower(n.Str("mode", "avg"))
	if mode != "avg" && mode != "max" {
		return c.Errorf("unknown mode %q", mode)
	}
	oh, ow := n.Int("output_height", 1), n.Int("output_width", 1)
	if oh <= 0 || ow <= 0 {
		return c.Errorf("output size %dx%d", oh, ow)
	}
	scale := float64(n.Float("spatial_scale", 1))
	b := c.B
	outType := x.DType()
	t := hlo.F64 // coordinates as the reference computes them
	nb, ch, height, width := xd[0], xd[1], xd[2], xd[3]
	nr := rd[0]
	r64 := xb.Convert(rois, t)
	col := func(k int64) *xb.Op { return xb.Reshape(xb.SliceAxis(r64, 1, k, k+1), nr) }
	off := 0.0
	if halfPixel {
		off = 0.5
	}
	sc := func(v *xb.Op) *xb.Op { return xb.Sub(xb.Mul(v, FullLike(v, scale)), FullLike(v, off)) }
	sw, sh, ew, eh := sc(col(0)), sc(col(1)), sc(col(2)), sc(col(3))
	rw, rh := xb.Sub(ew, sw), xb.Sub(eh, sh)
	if !halfPixel {
		rw, rh = xb.Max(rw, FullLike(rw, 1)), xb.Max(rh, FullLike(rh, 1))
	}
	g := ratio
	// coords is start + p*bin + (i+0.5)*bin/g over [R, out, g].
	coords := func(start, size *xb.Op, out int64) *xb.Op {
		bin := xb.Div(size, FullLike(size, float64(out)))
		dims := []int64{nr, out, g}
		pi := xb.Convert(b.Iota(hlo.S64, 1, dims...), t)
		ii := xb.Convert(b.Iota(hlo.S64, 2, dims...), t)
		bb := xb.BroadcastInDim(bin, dims, 0)
		v := xb.Add(xb.BroadcastInDim(start, dims, 0), xb.Mul(pi, bb))
		return xb.Add(v, xb.Div(xb.Mul(xb.Add(ii, FullLike(ii, 0.5)), bb), FullLike(bb, float64(g))))
	}
	// axis prepares one axis's sampling: low and high indices, weights of
	// each, and whether the point is inside [-1, size].
	type axisSamples struct{ lo, hi, wlo, whi, in *xb.Op }
	axis := func(v *xb.Op, size int64) axisSamples {
		in := xb.And(xb.Ge(v, FullLike(v, -1)), xb.Le(v, FullLike(v, float64(size))))
		v = xb.Max(v, FullLike(v, 0))
		lo := xb.Floor(v)
		last := xb.Ge(lo, FullLike(lo, float64(size-1)))
		lo = xb.Select(last, FullLike(lo, float64(size-1)), lo)
		v = xb.Select(last, lo, v)
		hi := xb.Select(last, lo, xb.Add(lo, FullLike(lo, 1)))
		l := xb.Sub(v, lo)
		return axisSamples{lo: lo, hi: hi, wlo: xb.Sub(FullLike(l, 1), l), whi: l, in: in}
	}
	ys := axis(coords(sh, rh, oh), height) // [R, oh, g]
	xs := axis(coords(sw, rw, ow), width)  // [R, ow, g]
	dims := []int64{nr, oh, g, ow, g}
	by := func(v *xb.Op) *xb.Op { return xb.BroadcastInDim(v, dims, 0, 1, 2) }
	bx := func(v *xb.Op) *xb.Op { return xb.BroadcastInDim(v, dims, 0, 3, 4) }
	inside := xb.And(by(ys.in), bx(xs.in))
	bidx := xb.Convert(bi, hlo.S64)
	base := xb.BroadcastInDim(xb.Mul(bidx, xb.Scalar(b, height*width)), dims, 0)
	xf := x
	if xf.DType() != t {
		xf = xb.Convert(xf, t)
	}
	rows := xb.Reshape(xb.Transpose(xf, 0, 2, 3, 1), nb*height*width, ch)
	var acc *xb.Op
	for _, cy := range [][2]*xb.Op{{ys.lo, ys.wlo}, {ys.hi, ys.whi}} {
		for _, cx := range [][2]*xb.Op{{xs.lo, xs.wlo}, {xs.hi, xs.whi}} {
			yi := xb.Convert(by(cy[0]), hlo.S64)
			xi := xb.Convert(bx(cx[0]), hlo.S64)
			idx := xb.Add(base, xb.Add(xb.Mul(yi, xb.Scalar(b, width)), xi))
			w := xb.Mul(by(cy[1]), bx(cx[1]))
			w = xb.Select(inside, w, FullLike(w, 0))
			v := xb.Mul(xb.Take(rows, idx, 0), xb.BroadcastInDim(w, append(append([]int64(nil), dims...), ch), 0, 1, 2, 3, 4))
			switch {
			case acc == nil:
				acc = v
			case mode == "avg":
				acc = xb.Add(acc, v)
			default:
				acc = xb.Max(acc, v)
			}
		}
	}
	// acc: [R, oh, g, ow, g, C] per sample.
	var y *xb.Op
	if mode == "avg" {
		y = xb.ReduceSum(acc, 2, 4)
		y = xb.Div(y, FullLike(y, float64(g*g)))
	} else {
		y = xb.ReduceMax(acc, 2, 4)
	}
	y = xb.Transpose(y, 0, 3, 1, 2)
	if y.DType() != outType {
		y = xb.Convert(y, outType)
	}
	c.Set(0, y)
	return nil
}
