package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

func init() {
	Register(Op{Name: "DeformConv", Lower: lowerDeformConv, Types: convFloatTypes})
}

// lowerDeformConv samples the input bilinearly (zero outside) at each
// kernel tap moved by its offset: gathers of the 2^r corners from the
// input as rows of channels per offset group, weighted (and masked) into
// columns [N, C, K, O], then one batched dot per group with the kernel.
func lowerDeformConv(c *Ctx) error {
	x, w, off := c.Input(0), c.Input(1), c.Input(2)
	if x == nil || w == nil || off == nil {
		return c.Errorf("DeformConv needs X, W and offset")
	}
	xd, wd, od := x.Dims(), w.Dims(), off.Dims()
	r := len(xd) - 2
	if r < 1 || len(wd) != r+2 || len(od) != r+2 || od[0] != xd[0] {
		return c.Errorf("X %v, W %v, offset %v", xd, wd, od)
	}
	if !x.DType().IsFloat() {
		return c.Unsupported("DeformConv of %s", x.DType())
	}
	outType := x.DType()
	if spatialNarrow(outType) {
		x = xb.Convert(x, hlo.F32)
	}
	t := x.DType()
	group := c.Node.Int("group", 1)
	og := c.Node.Int("offset_group", 1)
	nb, ch, oc := xd[0], xd[1], wd[0]
	if group <= 0 || og <= 0 || ch%og != 0 || wd[1]*group != ch || oc%group != 0 {
		return c.Errorf("group %d, offset_group %d do not fit X %v and W %v", group, og, xd, wd)
	}
	a, err := convReadAttrs(c, r, wd[2:])
	if err != nil {
		return err
	}
	sp, out := xd[2:], od[2:]
	k := numElems(a.kernel)
	if od[1] != og*k*int64(r) {
		return c.Errorf("offset %v does not fit offset_group %d and kernel %v", od, og, a.kernel)
	}
	o := numElems(out)
	p := numElems(sp)
	cg := ch / og
	b := c.B
	if w.DType() != t {
		w = xb.Convert(w, t)
	}
	if off.DType() != t {
		off = xb.Convert(off, t)
	}
	// off as [N, og, K, r, O].
	off = xb.Reshape(off, nb, og, k, int64(r), o)
	dims := []int64{nb, og, k, o}
	// pos[i]: the sampling coordinate along spatial dimension i.
	pos := make([]*xb.Op, r)
	for i := range r {
		base := make([]float64, 0, k*o)
		poolOffsets(a.kernel, func(j []int64) {
			poolOffsets(out, func(q []int64) {
				base = append(base, float64(q[i]*a.strides[i]-a.padLo[i]+j[i]*a.dilations[i]))
			})
		})
		bop := xb.BroadcastInDim(b.Constant(literal(t, base, k, o)), dims, 2, 3)
		oi := xb.Reshape(xb.SliceAxis(off, 3, int64(i), int64(i+1)), dims...)
		pos[i] = xb.Add(bop, oi)
	}
	var mask *xb.Op
	if c.Has(4) {
		mask = c.Input(4)
		if mask.DType() != t {
			mask = xb.Convert(mask, t)
		}
		mask = xb.Reshape(mask, dims...)
	}
	// X as rows of per-offset-group channels: [N*og*P, cg].
	perm := []int64{0, 1}
	for i := range r {
		perm = append(perm, int64(i+3))
	}
	perm = append(perm, 2)
	rows := xb.Reshape(xb.Transpose(xb.Reshape(x, append([]int64{nb, og, cg}, sp...)...), perm...), nb*og*p, cg)
	rowBase := xb.Mul(xb.Add(xb.Mul(b.Iota(hlo.S64, 0, dims...), xb.Scalar(b, og)), b.Iota(hlo.S64, 1, dims...)), xb.Scalar(b, p))
	floors, fracs := make([]*xb.Op, r), make([]*xb.Op, r)
	for i := range r {
		floors[i] = xb.Floor(pos[i])
		fracs[i] = xb.Sub(pos[i], floors[i])
	}
	var cols *xb.Op
	corners := make([]int64, r)
	for i := range corners {
		corners[i] = 2
	}
	poolOffsets(corners, func(j []int64) {
		var weight, valid *xb.Op
		flat := rowBase
		stride := p
		for i := range r {
			stride /= sp[i]
			idx, wt := floors[i], xb.Sub(FullLike(fracs[i], 1), fracs[i])
			if j[i] == 1 {
				idx, wt = xb.Add(floors[i], FullLike(floors[i], 1)), fracs[i]
			}
			ok := xb.And(xb.Ge(idx, FullLike(idx, 0)), xb.Le(idx, FullLike(idx, float64(sp[i]-1))))
			if valid == nil {
				valid, weight = ok, wt
			} else {
				valid, weight = xb.And(valid, ok), xb.Mul(weight, wt)
			}
			ci := xb.Convert(xb.Clamp(FullLike(idx, 0), idx, FullLike(idx, float64(sp[i]-1))), hlo.S64)
			flat = xb.Add(flat, xb.Mul(ci, xb.Scalar(b, stride)))
		}
		weight = xb.Select(valid, weight, FullLike(weight, 0))
		if mask != nil {
			weight = xb.Mul(weight, mask)
		}
		vals := xb.Take(rows, flat, 0) // [N, og, K, O, cg]
		vals = xb.Mul(vals, xb.BroadcastInDim(weight, append(append([]int64(nil), dims...), cg), 0, 1, 2, 3))
		if cols == nil {
			cols = vals
		} else {
			cols = xb.Add(cols, vals)
		}
	})
	// Columns [N, og, cg, K, O] = [N, group, C/group, K, O].
	cols = xb.Transpose(cols, 0, 1, 4, 2, 3)
	cols = xb.Reshape(cols, nb, group, ch/group, k, o)
	wk := xb.Reshape(w, group, oc/group, ch/group, k)
	y := xb.DotGeneral(cols, wk, xb.DotDims{
		LhsBatch: []int64{1}, RhsBatch: []int64{0},
		LhsContracting: []int64{2, 3}, RhsContracting: []int64{2, 3},
	}) // [group, N, O, oc/group]
	y = xb.Transpose(y, 1, 0, 3, 2)
	y = xb.Reshape(y, append([]int64{nb, oc}, out...)...)
	y = convAddBias(y, c.Input(3))
	if y.DType() != outType {
		y = xb.Convert(y, outType)
	}
	c.Set(0, y)
	return nil
}
