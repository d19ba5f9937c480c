package spmd

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Uneven tilings, as XLA partitions them: a dimension of size D over k
// tiles gives every device S = ceil(D/k) of it, tile t holding global
// indices [t·S, (t+1)·S), so the shards together are the value padded at
// the end to k·S. What the padding holds is never known (an elementwise
// op on shards computes in it too, exp(0) is not 0), so every rule that
// would let padding reach real data masks it first:
//   - a reduce over a padded dimension fills the padding with its init
//     value (the reducer's identity) before reducing locally;
//   - a dot or convolution contracting a padded dimension fills both
//     operands' padding with zeros (one side alone is not enough: the
//     other side's padding may be Inf or NaN, and 0·Inf is NaN);
//   - all-gathering a whole value slices the padding off, and cutting a
//     whole value into tiles pads it to k·S first (a dynamic-slice would
//     otherwise clamp the last tiles' starts back into the data); between
//     two tilings the gathered padding is cut or extended to the new
//     tiles' without being sliced off first;
//   - @SPMDFullToShardShape hands a manual region zeros in the padding.
// Rules that keep every padded dimension in place (elementwise, batch
// and free dimensions of dot and convolution, transpose, broadcast, a
// reshape that leaves the dimension alone, a dynamic-slice taking it
// whole) need nothing: padding stays padding. Split pads with zeros and
// AssembleShape drops the padding.

// mask fills the padding of x (the local value of a value of shape sh
// placed by s) along those of dims that s tiles unevenly with the scalar
// fill; x itself when there is none.
func (p *partitioner) mask(x *hlo.Instruction, sh hlo.Shape, s Sharding, dims []int, fill *hlo.Instruction) (*hlo.Instruction, error) {
	var cond *hlo.Instruction
	for _, d := range s.padded(sh) {
		if !slices.Contains(dims, d) {
			continue
		}
		in, err := p.inData(x.Shape, sh, s, d)
		if err != nil {
			return nil, err
		}
		if cond == nil {
			cond = in
		} else {
			cond = p.add("in_data", hlo.OpAnd, in.Shape.Clone(), []*hlo.Instruction{cond, in})
		}
	}
	if cond == nil {
		return x, nil
	}
	f := p.add(fill.Name+".bcast", hlo.OpBroadcast, x.Shape.Clone(), []*hlo.Instruction{fill},
		hlo.Attr{Name: "dimensions", Value: []int64{}})
	return p.add(x.Name+".masked", hlo.OpSelect, x.Shape.Clone(), []*hlo.Instruction{cond, x, f}), nil
}

// inData is a pred array of the local shape, true where the index along
// dimension d is data on this device: iota < the number of data elements
// its tile holds, XLA's mask (its iota + offset < D, with the offset
// folded into the per-device table).
func (p *partitioner) inData(local, sh hlo.Shape, s Sharding, d int) (*hlo.Instruction, error) {
	size := tileSize(sh.Dims[d], s.Tiles[d])
	table := make([]int32, p.n)
	for dev := range p.n {
		t, err := s.TileIndex(dev, len(s.Tiles))
		if err != nil {
			return nil, err
		}
		table[dev] = int32(min(max(sh.Dims[d]-t[d]*size, 0), size))
	}
	limit, err := p.fromTable(table)
	if err != nil {
		return nil, err
	}
	idx := local.WithDType(hlo.S32)
	iota := p.add("iota", hlo.OpIota, idx, nil, hlo.Attr{Name: "iota_dimension", Value: int64(d)})
	lim := p.add("limit", hlo.OpBroadcast, idx.Clone(), []*hlo.Instruction{limit}, hlo.Attr{Name: "dimensions", Value: []int64{}})
	return p.add("in_data", hlo.OpCompare, local.WithDType(hlo.Pred), []*hlo.Instruction{iota, lim},
		hlo.Attr{Name: "direction", Value: hlo.Enum("LT")}), nil
}

// zeroOf is the scalar constant 0 (false) of t, made once.
func (p *partitioner) zeroOf(t hlo.DType) *hlo.Instruction {
	key := "zero." + t.String()
	if v, ok := p.offsets[key]; ok {
		return v
	}
	c := p.add("zero", hlo.OpConstant, hlo.ScalarShape(t), nil)
	c.Literal = hlo.NewLiteral(hlo.ScalarShape(t))
	p.offsets[key] = c
	return c
}

// unpad slices the padding off x, a gathered value of padded dimensions,
// leaving the value of shape sh.
func (p *partitioner) unpad(x *hlo.Instruction, sh hlo.Shape) *hlo.Instruction {
	return p.resize(x, sh.Dims)
}

// resize makes x, a whole value padded at the end of some dimensions,
// dims large: cut (slice) where it is larger, padded with zeros where it
// is smaller. Moving between two uneven tilings, the padding of one
// becomes the other's without being cut off first.
func (p *partitioner) resize(x *hlo.Instruction, dims []int64) *hlo.Instruction {
	if x.Shape.Rank() != len(dims) || slices.Equal(x.Shape.Dims, dims) {
		return x
	}
	cut := make([]hlo.SliceDim, len(dims))
	small := slices.Clone(x.Shape.Dims)
	for i, n := range dims {
		small[i] = min(n, small[i])
		cut[i] = hlo.SliceDim{Start: 0, Limit: small[i], Stride: 1}
	}
	if !slices.Equal(small, x.Shape.Dims) {
		x = p.add(x.Name+".cut", hlo.OpSlice, hlo.ArrayShape(x.Shape.DType, small...), []*hlo.Instruction{x},
			hlo.Attr{Name: "slice", Value: cut})
	}
	if slices.Equal(small, dims) {
		return x
	}
	cfg := make(hlo.PaddingConfig, len(dims))
	for i, n := range dims {
		cfg[i] = hlo.PadDim{Hi: n - small[i]}
	}
	return p.add(x.Name+".pad", hlo.OpPad, hlo.ArrayShape(x.Shape.DType, dims...),
		[]*hlo.Instruction{x, p.zeroOf(x.Shape.DType)}, hlo.Attr{Name: "padding", Value: cfg})
}

// maskContracted zeroes the padding of operand x (shape sh, placed by s)
// along the contracted dimensions dims of a dot or convolution.
func (p *partitioner) maskContracted(x *hlo.Instruction, sh hlo.Shape, s Sharding, dims []int64) (*hlo.Instruction, error) {
	ds := make([]int, len(dims))
	for i, d := range dims {
		ds[i] = int(d)
	}
	return p.mask(x, sh, s, ds, p.zeroOf(x.Shape.DType))
}
