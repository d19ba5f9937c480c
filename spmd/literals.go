package spmd

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// Whole values and their shards: what a caller of a partitioned module
// does with its arguments (Split each by its parameter's sharding) and
// results (Assemble each by the root's), so that it sees the unpartitioned
// module's values.

// Split cuts a whole array value into the piece each of devices devices
// holds under s (the whole value for a replicated or maximal sharding).
// Pieces of an uneven tiling are padded with zeros to the shard shape.
func Split(whole *hlo.Literal, s Sharding, devices int) ([]*hlo.Literal, error) {
	if !whole.Shape().IsArray() {
		return nil, fmt.Errorf("spmd: Split takes arrays, not %s", whole.Shape().HumanString())
	}
	shard, err := s.ShardShape(whole.Shape())
	if err != nil {
		return nil, err
	}
	out := make([]*hlo.Literal, devices)
	for d := range devices {
		if s.Kind != Tiled {
			out[d] = whole
			continue
		}
		start, size, err := tileBox(s, int64(d), whole.Shape().Dims)
		if err != nil {
			return nil, err
		}
		out[d] = hlo.NewLiteral(shard)
		copyBox(out[d], whole, start, size, false)
	}
	return out, nil
}

// Assemble puts the devices' pieces of a value back together under s;
// devices holding the same piece (replicated, partially replicated) must
// hold the same bytes. The whole shape is taken to be a piece's times the
// tiles, which holds for even tilings only: AssembleShape takes it from
// the caller and drops the padding of uneven ones.
func Assemble(pieces []*hlo.Literal, s Sharding) (*hlo.Literal, error) {
	if len(pieces) == 0 {
		return nil, fmt.Errorf("spmd: no pieces to assemble")
	}
	sh := pieces[0].Shape().Clone()
	if s.Kind == Tiled && sh.IsArray() && len(s.Tiles) == sh.Rank() {
		for i, k := range s.Tiles {
			sh.Dims[i] *= k
		}
	}
	return AssembleShape(pieces, s, sh)
}

// AssembleShape is Assemble for a whole value of shape whole: each
// piece must have s's shard shape of it, and the padding of uneven tiles
// is dropped.
func AssembleShape(pieces []*hlo.Literal, s Sharding, whole hlo.Shape) (*hlo.Literal, error) {
	if len(pieces) == 0 {
		return nil, fmt.Errorf("spmd: no pieces to assemble")
	}
	if s.Kind != Tiled {
		for d, p := range pieces[1:] {
			if !p.Equal(pieces[0]) {
				return nil, fmt.Errorf("spmd: device %d's copy of a replicated value differs from device 0's", d+1)
			}
		}
		return pieces[0], nil
	}
	if !whole.IsArray() {
		return nil, fmt.Errorf("spmd: Assemble takes arrays, not %s", whole.HumanString())
	}
	shard, err := s.ShardShape(whole)
	if err != nil {
		return nil, err
	}
	out := hlo.NewLiteral(hlo.ArrayShape(pieces[0].DType(), whole.Dims...))
	seen := map[string]int{}
	for d, p := range pieces {
		if !p.Shape().SameDims(shard) {
			return nil, fmt.Errorf("spmd: device %d's piece is %s, a shard of %s under %s is %s",
				d, p.Shape().HumanString(), whole.HumanString(), s, shard.HumanString())
		}
		start, size, err := tileBox(s, int64(d), whole.Dims)
		if err != nil {
			return nil, err
		}
		key := fmt.Sprint(start)
		if first, ok := seen[key]; ok {
			if !p.Equal(pieces[first]) {
				return nil, fmt.Errorf("spmd: devices %d and %d hold different copies of tile %v", first, d, start)
			}
			continue
		}
		seen[key] = d
		copyBox(p, out, start, size, true)
	}
	return out, nil
}

// tileBox is where device d's tile of a value of dims starts, and how
// much of it is data rather than padding.
func tileBox(s Sharding, d int64, dims []int64) (start, size []int64, err error) {
	idx, err := s.TileIndex(d, len(dims))
	if err != nil {
		return nil, nil, err
	}
	start, size = make([]int64, len(dims)), make([]int64, len(dims))
	for i, n := range dims {
		k := int64(1)
		if s.Kind == Tiled {
			k = s.Tiles[i]
		}
		t := tileSize(n, k)
		start[i] = min(idx[i]*t, n)
		size[i] = min(t, n-start[i])
	}
	return start, size, nil
}

// copyBox copies the box of size dims at start of whole to the start of
// shard, or (toWhole) back; a row of the minor dimension at a time.
func copyBox(shard, whole *hlo.Literal, start, dims []int64, toWhole bool) {
	esize := int64(max(shard.DType().Bits()/8, 1))
	sb, wb := shard.RawBytes(), whole.RawBytes()
	for _, n := range dims {
		if n == 0 {
			return
		}
	}
	rank := len(dims)
	if rank == 0 {
		if toWhole {
			copy(wb, sb)
		} else {
			copy(sb, wb)
		}
		return
	}
	row := dims[rank-1] * esize
	idx := make([]int64, rank)
	at := make([]int64, rank)
	for {
		copy(at, idx)
		for i := range at {
			at[i] += start[i]
		}
		w := int64(whole.LinearIndex(at)) * esize
		sOff := int64(shard.LinearIndex(idx)) * esize
		if toWhole {
			copy(wb[w:w+row], sb[sOff:sOff+row])
		} else {
			copy(sb[sOff:sOff+row], wb[w:w+row])
		}
		k := rank - 2
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < dims[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}
