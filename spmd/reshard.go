package spmd

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// reshard turns x, the local value of a global shape placed by from, into
// the local value placed by to. The method is the simple, always correct
// one: all-gather every tiled dimension to the whole value, then take
// this device's tile. (XLA's partitioner knows cheaper moves, such as
// all-to-all between two tilings; see doc.go.)
func (p *partitioner) reshard(x *hlo.Instruction, shape hlo.Shape, from, to Sharding) (*hlo.Instruction, error) {
	if from.Equal(to) {
		return x, nil
	}
	if shape.IsTuple() {
		return p.reshardTuple(x, shape, from, to)
	}
	if from.Kind == Manual || to.Kind == Manual {
		return nil, fmt.Errorf("cannot move %s between %s and %s: manual values cross only through @%s/@%s",
			x.Name, from, to, targetFullToShard, targetShardToFull)
	}
	if from.IsReplicated() && x.Opcode == hlo.OpBroadcast {
		if y, ok := p.broadcastShard(x, shape, to); ok {
			return y, nil
		}
	}
	full, err := p.gatherPadded(x, shape, from)
	if err != nil {
		return nil, err
	}
	if to.IsReplicated() {
		return p.unpad(full, shape), nil
	}
	return p.slice(full, shape, to)
}

func (p *partitioner) reshardTuple(x *hlo.Instruction, shape hlo.Shape, from, to Sharding) (*hlo.Instruction, error) {
	elems := make([]*hlo.Instruction, len(shape.Tuple))
	shapes := make([]hlo.Shape, len(shape.Tuple))
	for i, es := range shape.Tuple {
		f, err := from.element(i, len(shape.Tuple))
		if err != nil {
			return nil, err
		}
		t, err := to.element(i, len(shape.Tuple))
		if err != nil {
			return nil, err
		}
		if elems[i], err = p.reshard(p.element(x, i), es, f, t); err != nil {
			return nil, fmt.Errorf("tuple element %d: %w", i, err)
		}
		shapes[i] = elems[i].Shape
	}
	return p.add(x.Name+".tuple", hlo.OpTuple, hlo.TupleShape(shapes...), elems), nil
}

// element is element i of the tuple value x: the tuple's operand when x
// is made here (so a broadcast in it can be cut directly), else a
// get-tuple-element.
func (p *partitioner) element(x *hlo.Instruction, i int) *hlo.Instruction {
	if x.Opcode == hlo.OpTuple && i < len(x.Operands) {
		return x.Operands[i]
	}
	return p.add(x.Name+".elem", hlo.OpGetTupleElement, x.Shape.Tuple[i].Clone(), []*hlo.Instruction{x},
		hlo.Attr{Name: "index", Value: int64(i)})
}

// gatherPadded all-gathers each tiled dimension of x in turn, ending with
// the whole value on every device, still padded at the end of unevenly
// tiled dimensions.
func (p *partitioner) gatherPadded(x *hlo.Instruction, shape hlo.Shape, from Sharding) (*hlo.Instruction, error) {
	if from.IsReplicated() {
		return x, nil
	}
	cur := x
	for dim, k := range from.Tiles {
		if k == 1 {
			continue
		}
		s := cur.Shape.Clone()
		s.Dims[dim] *= k
		attrs := append(p.collectiveAttrs(from.groupsAlong(dim)), hlo.Attr{Name: "dimensions", Value: []int64{int64(dim)}})
		cur = p.add(x.Name+".ag", hlo.OpAllGather, s, []*hlo.Instruction{cur}, attrs...)
	}
	if cur.Shape.Rank() != shape.Rank() || !covers(cur.Shape.Dims, shape.Dims) {
		return nil, fmt.Errorf("gathering %s gave %s, want %s", x.Name, cur.Shape.HumanString(), shape.HumanString())
	}
	return cur, nil
}

// groupsAlong lists, for every position of the other tile dimensions
// (and replica), the devices that hold tiles 0, 1, ... along dim: the
// groups an all-gather or all-reduce along dim runs in, each in tile
// order so that all-gather concatenates tiles in place.
func (s Sharding) groupsAlong(dims ...int) [][]int64 {
	shape := append(slices.Clone(s.Tiles), s.Replicas)
	var groups [][]int64
	byKey := map[int64]int{}
	for pos, d := range s.Devices {
		idx := unflatten(int64(pos), shape)
		for _, dim := range dims {
			idx[dim] = 0
		}
		key := flatten(idx, shape)
		g, ok := byKey[key]
		if !ok {
			g = len(groups)
			byKey[key] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], d)
	}
	return groups
}

// slice takes this device's tile of the whole value x (which may hold
// padding at the end of its dimensions): a dynamic-slice at offsets read
// from per-device tables indexed by partition-id, of x resized to whole
// tiles when the tiling is uneven (a dynamic-slice would otherwise clamp
// the last tiles' starts back into the data).
func (p *partitioner) slice(x *hlo.Instruction, shape hlo.Shape, to Sharding) (*hlo.Instruction, error) {
	local, err := to.ShardShape(shape)
	if err != nil {
		return nil, err
	}
	full := slices.Clone(local.Dims)
	for dim, k := range to.Tiles {
		full[dim] *= k
	}
	starts := []*hlo.Instruction{p.resize(x, full)}
	for dim, k := range to.Tiles {
		if k == 1 {
			starts = append(starts, p.zero())
			continue
		}
		table := make([]int32, p.n)
		for d := range p.n {
			t, err := to.TileIndex(d, len(to.Tiles))
			if err != nil {
				return nil, err
			}
			table[d] = int32(t[dim] * local.Dims[dim])
		}
		off, err := p.fromTable(table)
		if err != nil {
			return nil, err
		}
		starts = append(starts, off)
	}
	local = local.WithDType(x.Shape.DType)
	return p.add(x.Name+".shard", hlo.OpDynamicSlice, local, starts,
		hlo.Attr{Name: "dynamic_slice_sizes", Value: slices.Clone(local.Dims)}), nil
}

// broadcastShard makes the tile of a broadcast of a whole value directly
// when the operand's dimensions are not tiled (a bias along features, a
// scalar splat): each device broadcasts into its tile instead of slicing
// the whole broadcast.
func (p *partitioner) broadcastShard(x *hlo.Instruction, shape hlo.Shape, to Sharding) (*hlo.Instruction, bool) {
	for _, d := range x.Dimensions() {
		if to.Tiles[d] > 1 {
			return nil, false
		}
	}
	local, err := to.ShardShape(shape)
	if err != nil {
		return nil, false
	}
	return p.add(x.Name+".shard", hlo.OpBroadcast, local.WithDType(x.Shape.DType), []*hlo.Instruction{x.Operands[0]},
		hlo.Attr{Name: "dimensions", Value: x.Dimensions()}), true
}

// covers reports whether dims are at least want, one by one.
func covers(dims, want []int64) bool {
	for i, n := range want {
		if dims[i] < n {
			return false
		}
	}
	return true
}
