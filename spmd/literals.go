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
		start, err := tileStart(s, int64(d), shard.Dims)
		if err != nil {
			return nil, err
		}
		out[d] = hlo.NewLiteral(shard)
		copyBox(out[d], whole, start, false)
	}
	return out, nil
}

// Assemble puts the devices' pieces of a value back together under s;
// devices holding the same piece (replicated, partially replicated) must
// hold the same bytes.
func Assemble(pieces []*hlo.Literal, s Sharding) (*hlo.Literal, error) {
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
	sh := pieces[0].Shape()
	dims := append([]int64(nil), sh.Dims...)
	for i, k := range s.Tiles {
		dims[i] *= k
	}
	whole := hlo.NewLiteral(hlo.ArrayShape(sh.DType, dims...))
	seen := map[string]int{}
	for d, p := range pieces {
		start, err := tileStart(s, int64(d), sh.Dims)
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
		copyBox(p, whole, start, true)
	}
	return whole, nil
}

// tileStart is where device d's tile of shard dims starts.
func tileStart(s Sharding, d int64, shard []int64) ([]int64, error) {
	idx, err := s.TileIndex(d, len(shard))
	if err != nil {
		return nil, err
	}
	for i := range idx {
		idx[i] *= shard[i]
	}
	return idx, nil
}

// copyBox copies between a shard and the box of whole at start: into the
// shard, or (toWhole) out of it; a row of the minor dimension at a time.
func copyBox(shard, whole *hlo.Literal, start []int64, toWhole bool) {
	dims := shard.Shape().Dims
	esize := int64(max(shard.DType().Bits()/8, 1))
	sb, wb := shard.RawBytes(), whole.RawBytes()
	if shard.Len() == 0 {
		return
	}
	rank := len(dims)
	if rank == 0 {
		copy(sb, wb)
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
