package spmd

import (
	"fmt"
	"slices"
)

// remap moves a tiled sharding's tiles to other dimensions: data
// dimension i of s becomes dimension to[i] of a rank-r result (to[i] < 0
// drops a dimension, which must have one tile); result dimensions no
// source maps to have one tile. The device holding a source tile holds
// the corresponding result tile.
func (s Sharding) remap(r int, to []int) (Sharding, error) {
	if len(to) != len(s.Tiles) {
		return Sharding{}, fmt.Errorf("remapping %d tiled dimensions with %d targets", len(s.Tiles), len(to))
	}
	out := Sharding{Kind: Tiled, Tiles: make([]int64, r), Replicas: s.Replicas, Devices: make([]int64, len(s.Devices))}
	for i := range out.Tiles {
		out.Tiles[i] = 1
	}
	for i, j := range to {
		if j < 0 || j >= r {
			if s.Tiles[i] != 1 {
				return Sharding{}, fmt.Errorf("tiled dimension %d has no place in the result", i)
			}
			continue
		}
		if out.Tiles[j] != 1 {
			return Sharding{}, fmt.Errorf("two tiled dimensions map to result dimension %d", j)
		}
		out.Tiles[j] = s.Tiles[i]
	}
	srcDims := append(slices.Clone(s.Tiles), s.Replicas)
	dstDims := append(slices.Clone(out.Tiles), s.Replicas)
	for pos, d := range s.Devices {
		src := unflatten(int64(pos), srcDims)
		dst := make([]int64, len(dstDims))
		for i, j := range to {
			if j >= 0 && j < r {
				dst[j] = src[i]
			}
		}
		dst[r] = src[len(s.Tiles)]
		out.Devices[flatten(dst, dstDims)] = d
	}
	return out, nil
}

// grouped builds the sharding of a result whose tile is known for every
// device (tileOf(d) over tiles): devices holding the same tile become
// replicas of it. ok is false when some tile has no device or tiles have
// different numbers of copies.
func grouped(n int64, tiles []int64, tileOf func(d int64) []int64) (Sharding, bool) {
	count := prod(tiles)
	if n%count != 0 {
		return Sharding{}, false
	}
	byTile := make([][]int64, count)
	for d := range n {
		t := flatten(tileOf(d), tiles)
		byTile[t] = append(byTile[t], d)
	}
	out := Sharding{Kind: Tiled, Tiles: slices.Clone(tiles), Replicas: n / count}
	for _, g := range byTile {
		if int64(len(g)) != out.Replicas {
			return Sharding{}, false
		}
		out.Devices = append(out.Devices, g...)
	}
	if count == 1 {
		return Replicate(), true
	}
	return out, true
}

// view is s as a tiled sharding of rank r over n devices, a replicated
// value being one tile held by every device.
func (s Sharding) view(r int, n int64) Sharding {
	if s.Kind == Tiled {
		return s
	}
	v := Sharding{Kind: Tiled, Tiles: make([]int64, r), Replicas: n, Devices: make([]int64, n)}
	for i := range v.Tiles {
		v.Tiles[i] = 1
	}
	for d := range n {
		v.Devices[d] = d
	}
	return v
}
