package spmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// Tile assignments worked by hand from XLA's sharding docs: <=[dims]
// lays out iota(n) in dims, T(perm) transposes it, and the result is read
// row-major into the tile shape.
func TestParseTiled(t *testing.T) {
	for _, c := range []struct {
		text     string
		tiles    []int64
		replicas int64
		devices  []int64
	}{
		{"{devices=[2,1]0,1}", []int64{2, 1}, 1, []int64{0, 1}},
		{"{devices=[2,2]3,2,1,0}", []int64{2, 2}, 1, []int64{3, 2, 1, 0}},
		{"{devices=[2,2]<=[4]}", []int64{2, 2}, 1, []int64{0, 1, 2, 3}},
		// iota [2,2] = {{0,1},{2,3}} transposed = {{0,2},{1,3}}.
		{"{devices=[2,2]<=[2,2]T(1,0)}", []int64{2, 2}, 1, []int64{0, 2, 1, 3}},
		// iota [2,2,2]: value 4a+2b+c at (a,b,c); T(2,1,0) reads (c,b,a).
		{"{devices=[4,2]<=[2,2,2]T(2,1,0)}", []int64{4, 2}, 1, []int64{0, 4, 2, 6, 1, 5, 3, 7}},
		{"{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", []int64{2, 1}, 2, []int64{0, 1, 2, 3}},
		{"{devices=[2,2]<=[4] last_tile_dims={replicated}}", []int64{2}, 2, []int64{0, 1, 2, 3}},
		{"{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate metadata={op_name=\"jit(f)/x{y}\" source_line=3}}",
			[]int64{2, 1}, 2, []int64{0, 2, 1, 3}},
	} {
		s, err := Parse(c.text)
		if err != nil {
			t.Errorf("%s: %v", c.text, err)
			continue
		}
		if s.Kind != Tiled || !slices.Equal(s.Tiles, c.tiles) || s.Replicas != c.replicas || !slices.Equal(s.Devices, c.devices) {
			t.Errorf("%s: got tiles %v ×%d devices %v, want %v ×%d %v", c.text, s.Tiles, s.Replicas, s.Devices, c.tiles, c.replicas, c.devices)
		}
		// The printed form (explicit devices) reads back the same.
		back, err := Parse(s.String())
		if err != nil || !back.Equal(s) {
			t.Errorf("%s: printed %s reads back as %v (%v)", c.text, s, back, err)
		}
	}
}

func TestParseOtherKinds(t *testing.T) {
	s, err := Parse("{{replicated}, {maximal device=1}, {manual}, {devices=[2]1,0}}")
	if err != nil {
		t.Fatal(err)
	}
	kinds := []Kind{Replicated, Maximal, Manual, Tiled}
	if s.Kind != TupleKind || len(s.Elements) != len(kinds) {
		t.Fatalf("got %v", s)
	}
	for i, k := range kinds {
		if s.Elements[i].Kind != k {
			t.Errorf("element %d is kind %d, want %d", i, s.Elements[i].Kind, k)
		}
	}
	if s.Elements[1].Device != 1 || !s.Elements[1].IsReplicated() {
		t.Errorf("maximal: %+v", s.Elements[1])
	}
	if got := s.String(); got != "{{replicated}, {maximal device=1}, {manual}, {devices=[2]1,0}}" {
		t.Errorf("printed %s", got)
	}
	if r, err := Parse("{replicated metadata={op_name=\"a\"}}"); err != nil || r.Kind != Replicated {
		t.Errorf("replicated with metadata: %v, %v", r, err)
	}
}

func TestParseErrors(t *testing.T) {
	for text, want := range map[string]string{
		"{devices=[2,2]0,1,2}": "3 devices",
		"{bogus}":              "unsupported sharding kind",
		"{devices=[2,2]<=[4] last_tile_dims={manual}}": "not supported",
		"{devices=[2,2]<=[2,2]T(0,0)}":                 "not a permutation",
		"{devices=[4]<=[8]}":                           "iota of 8",
		"{replicated":                                  "expects",
		"{replicated} x":                               "after the sharding",
		"{devices=[2]0,1 metadata={op_name=\"x}":       "unterminated",
		"{maximal}":                                    "device=",
		"{devices=[2,1]0,1 last_tile_dims={replicated": "expects",
	} {
		_, err := Parse(text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to mention %q", text, err, want)
		}
	}
}

func TestShardShape(t *testing.T) {
	s, _ := Parse("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}")
	got, err := s.ShardShape(hlo.ArrayShape(hlo.F32, 8, 6))
	if err != nil || !slices.Equal(got.Dims, []int64{4, 6}) {
		t.Errorf("shard of f32[8,6]: %v, %v", got, err)
	}
	// Uneven: ceil(7/2) = 4 rows each, the last tile one row short.
	if got, err := s.ShardShape(hlo.ArrayShape(hlo.F32, 7, 6)); err != nil || !slices.Equal(got.Dims, []int64{4, 6}) {
		t.Errorf("shard of f32[7,6]: %v, %v", got, err)
	}
	if !s.Pads(hlo.ArrayShape(hlo.F32, 7, 6)) || s.Pads(hlo.ArrayShape(hlo.F32, 8, 5)) {
		t.Error("Pads: f32[7,6] should pad, f32[8,5] (untiled 5) should not")
	}
	// 5 over 4: ceil = 2, tiles at 0, 2, 4 and 6 (all padding).
	four, _ := Parse("{devices=[4]<=[4]}")
	if got, err := four.ShardShape(hlo.ArrayShape(hlo.F32, 5)); err != nil || !slices.Equal(got.Dims, []int64{2}) {
		t.Errorf("shard of f32[5] over 4: %v, %v", got, err)
	}
	if _, err := s.ShardShape(hlo.ArrayShape(hlo.F32, 8)); err == nil {
		t.Error("rank mismatch accepted")
	}
	// Device 2 is the first copy of tile (1, 0).
	if idx, err := s.TileIndex(2, 2); err != nil || !slices.Equal(idx, []int64{1, 0}) {
		t.Errorf("TileIndex(2) = %v, %v", idx, err)
	}
}

// Groups along a dimension list each group in tile order.
func TestGroupsAlong(t *testing.T) {
	s, _ := Parse("{devices=[2,2]<=[2,2]T(1,0)}") // tile (i,j) on device 2j+i
	if got := s.groupsAlong(0); !slices.EqualFunc(got, [][]int64{{0, 1}, {2, 3}}, slices.Equal) {
		t.Errorf("along 0: %v", got)
	}
	if got := s.groupsAlong(1); !slices.EqualFunc(got, [][]int64{{0, 2}, {1, 3}}, slices.Equal) {
		t.Errorf("along 1: %v", got)
	}
}
