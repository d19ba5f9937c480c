package spmd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// Kind classifies a sharding.
type Kind uint8

const (
	// Replicated: every device holds the whole value.
	Replicated Kind = iota
	// Maximal: one device holds the value. The partitioner computes it on
	// every device (as if replicated), which gives each the right value.
	Maximal
	// Tiled: the value is cut into a grid of tiles, one per device
	// (or per group of devices when partially replicated).
	Tiled
	// Manual: the value is already per-device (inside a shard_map region);
	// the partitioner leaves it alone.
	Manual
	// TupleKind: one sharding per tuple element.
	TupleKind
)

// Sharding is a parsed `sharding={...}` attribute.
//
// A tiled sharding has a tile assignment: an array of devices of shape
// Tiles ++ [Replicas], listed row-major in Devices. The device at position
// (t_0, ..., t_{r-1}, k) holds tile (t_0, ..., t_{r-1}) of the data; the
// Replicas devices that differ only in k hold the same tile (partial
// replication, XLA's last_tile_dim_replicate).
type Sharding struct {
	Kind     Kind
	Device   int64      // Maximal
	Tiles    []int64    // Tiled: tiles along each data dimension
	Replicas int64      // Tiled: copies of each tile (1 when fully tiled)
	Devices  []int64    // Tiled: the tile assignment, row-major
	Elements []Sharding // TupleKind
}

// Replicate is the replicated sharding.
func Replicate() Sharding { return Sharding{Kind: Replicated} }

// IsReplicated reports whether every device holds the whole value:
// replicated, maximal (see Maximal), or tiled with one tile.
func (s Sharding) IsReplicated() bool {
	switch s.Kind {
	case Replicated, Maximal:
		return true
	case Tiled:
		return prod(s.Tiles) == 1
	}
	return false
}

// IsTuple reports whether s is a tuple sharding.
func (s Sharding) IsTuple() bool { return s.Kind == TupleKind }

// Equal reports whether s and o place data the same way.
func (s Sharding) Equal(o Sharding) bool {
	if s.IsReplicated() || o.IsReplicated() {
		return s.IsReplicated() && o.IsReplicated()
	}
	if s.Kind != o.Kind {
		return false
	}
	switch s.Kind {
	case Tiled:
		return slices.Equal(s.Tiles, o.Tiles) && s.Replicas == o.Replicas && slices.Equal(s.Devices, o.Devices)
	case TupleKind:
		return slices.EqualFunc(s.Elements, o.Elements, Sharding.Equal)
	}
	return true
}

// String prints s as XLA writes it, without the attribute name.
func (s Sharding) String() string {
	switch s.Kind {
	case Replicated:
		return "{replicated}"
	case Maximal:
		return fmt.Sprintf("{maximal device=%d}", s.Device)
	case Manual:
		return "{manual}"
	case TupleKind:
		parts := make([]string, len(s.Elements))
		for i, e := range s.Elements {
			parts[i] = e.String()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	dims := slices.Clone(s.Tiles)
	if s.Replicas > 1 {
		dims = append(dims, s.Replicas)
	}
	out := "{devices=[" + joinInts(dims) + "]" + joinInts(s.Devices)
	if s.Replicas > 1 {
		out += " last_tile_dim_replicate"
	}
	return out + "}"
}

func joinInts(v []int64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(parts, ",")
}

func prod(v []int64) int64 {
	p := int64(1)
	for _, x := range v {
		p *= x
	}
	return p
}

// NumDevices is the number of devices a tiled sharding places data on.
func (s Sharding) NumDevices() int { return len(s.Devices) }

// position returns the tile index and replica number of device d.
func (s Sharding) position(d int64) (tile []int64, replica int64, ok bool) {
	at := slices.Index(s.Devices, d)
	if at < 0 {
		return nil, 0, false
	}
	idx := unflatten(int64(at), append(slices.Clone(s.Tiles), s.Replicas))
	return idx[:len(s.Tiles)], idx[len(s.Tiles)], true
}

// TileIndex returns the tile device d holds (all zeros when replicated).
func (s Sharding) TileIndex(d int64, rank int) ([]int64, error) {
	if s.Kind != Tiled {
		return make([]int64, rank), nil
	}
	t, _, ok := s.position(d)
	if !ok {
		return nil, fmt.Errorf("device %d is not in sharding %s", d, s)
	}
	return t, nil
}

// unflatten is the row-major multi-index of linear position p in dims.
func unflatten(p int64, dims []int64) []int64 {
	idx := make([]int64, len(dims))
	for i := len(dims) - 1; i >= 0; i-- {
		idx[i] = p % dims[i]
		p /= dims[i]
	}
	return idx
}

// flatten is the row-major linear position of idx in dims.
func flatten(idx, dims []int64) int64 {
	p := int64(0)
	for i, x := range idx {
		p = p*dims[i] + x
	}
	return p
}

// ShardShape is the shape of one device's piece of a value of shape sh.
// A dimension of size D over k tiles gives every device ceil(D/k) of it,
// as in XLA: when k does not divide D the last tiles are padded past the
// end of the value (some may be all padding), and the padding holds
// anything (see padding.go).
func (s Sharding) ShardShape(sh hlo.Shape) (hlo.Shape, error) {
	if sh.IsTuple() {
		out := make([]hlo.Shape, len(sh.Tuple))
		for i, e := range sh.Tuple {
			es, err := s.element(i, len(sh.Tuple))
			if err != nil {
				return hlo.Shape{}, err
			}
			if out[i], err = es.ShardShape(e); err != nil {
				return hlo.Shape{}, fmt.Errorf("tuple element %d: %w", i, err)
			}
		}
		return hlo.TupleShape(out...), nil
	}
	if s.Kind == TupleKind {
		return hlo.Shape{}, fmt.Errorf("tuple sharding %s on array shape %s", s, sh.HumanString())
	}
	if s.Kind != Tiled {
		return sh.Clone(), nil
	}
	if len(s.Tiles) != sh.Rank() {
		return hlo.Shape{}, fmt.Errorf("sharding %s tiles %d dimensions, shape %s has %d", s, len(s.Tiles), sh.HumanString(), sh.Rank())
	}
	out := hlo.ArrayShape(sh.DType, sh.Dims...)
	for i, k := range s.Tiles {
		if sh.IsDynamicDim(i) && k > 1 {
			return hlo.Shape{}, fmt.Errorf("dimension %d of %s is dynamic and tiled (not supported)", i, sh.HumanString())
		}
		out.Dims[i] = tileSize(sh.Dims[i], k)
	}
	return out, nil
}

// tileSize is how much of a dimension of size d each of k tiles holds.
func tileSize(d, k int64) int64 { return (d + k - 1) / k }

// padded lists the dimensions of sh that s tiles unevenly: their last
// tiles hold padding.
func (s Sharding) padded(sh hlo.Shape) []int {
	if s.Kind != Tiled || len(s.Tiles) != sh.Rank() {
		return nil
	}
	var out []int
	for i, k := range s.Tiles {
		if sh.Dims[i]%k != 0 {
			out = append(out, i)
		}
	}
	return out
}

// Pads reports whether s tiles some dimension of the array shape sh
// unevenly, so that shards carry padding.
func (s Sharding) Pads(sh hlo.Shape) bool { return len(s.padded(sh)) > 0 }

// element is the sharding of tuple element i of n: a non-tuple sharding
// applies to every element, as in XLA.
func (s Sharding) element(i, n int) (Sharding, error) {
	if s.Kind != TupleKind {
		return s, nil
	}
	if len(s.Elements) != n {
		return Sharding{}, fmt.Errorf("tuple sharding %s has %d elements, the shape %d", s, len(s.Elements), n)
	}
	return s.Elements[i], nil
}

// forShape returns s with non-tuple shardings of tuple shapes expanded,
// checked against the shape.
func (s Sharding) forShape(sh hlo.Shape) (Sharding, error) {
	if !sh.IsTuple() {
		if _, err := s.ShardShape(sh); err != nil {
			return Sharding{}, err
		}
		return s, nil
	}
	out := Sharding{Kind: TupleKind, Elements: make([]Sharding, len(sh.Tuple))}
	for i, e := range sh.Tuple {
		es, err := s.element(i, len(sh.Tuple))
		if err != nil {
			return Sharding{}, err
		}
		if out.Elements[i], err = es.forShape(e); err != nil {
			return Sharding{}, err
		}
	}
	return out, nil
}

// checkDevices makes sure a tiled sharding uses each of the n devices once.
func (s Sharding) checkDevices(n int64) error {
	switch s.Kind {
	case TupleKind:
		for _, e := range s.Elements {
			if err := e.checkDevices(n); err != nil {
				return err
			}
		}
	case Maximal:
		if s.Device < 0 || s.Device >= n {
			return fmt.Errorf("sharding %s names a device outside 0..%d", s, n-1)
		}
	case Tiled:
		if int64(len(s.Devices)) != n {
			return fmt.Errorf("sharding %s uses %d devices, the module has %d partitions", s, len(s.Devices), n)
		}
		seen := make([]bool, n)
		for _, d := range s.Devices {
			if d < 0 || d >= n || seen[d] {
				return fmt.Errorf("sharding %s: device %d is out of range or repeated", s, d)
			}
			seen[d] = true
		}
	}
	return nil
}
