package spmd_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/spmd"
)

const maxComp = `
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
`

// Uneven tilings: dimensions of 5 and 7 do not divide by 2, 3 or 4, so
// every device count pads some tiles (7 over 4: 2 each, the last tile 1
// row short; 5 over 4: 2 each, the last tile all padding). The harness
// pads each argument shard with NaN (77 for integers): a rule that reads
// padding unmasked poisons the result. Each case must partition without
// the absent ops and without fallbacks.
var unevenCases = []struct {
	name   string
	text   string
	absent []string
	only4  bool
}{
	{name: "elementwise-chain", absent: []string{"all-gather", "all-reduce", "dynamic-slice"}, text: `HloModule ew, num_partitions=$N
ENTRY main {
  x = f32[7,5] parameter(0), sharding={devices=[$N,1]<=[$N]}
  y = f32[7,5] parameter(1), sharding={devices=[$N,1]<=[$N]}
  s = f32[7,5] add(x, y)
  e = f32[7,5] exponential(s)
  c = f32[] constant(0.5)
  h = f32[7,5] broadcast(c), dimensions={}
  m = f32[7,5] multiply(e, h)
  ROOT r = f32[7,5] maximum(m, x), sharding={devices=[$N,1]<=[$N]}
}`},
	// Two uneven tilings of the same value meet: one is moved to the
	// other's (gather, slice the padding off, pad, cut).
	{name: "reshard", text: `HloModule rs, num_partitions=$N
ENTRY main {
  x = f32[7,5] parameter(0), sharding={devices=[$N,1]<=[$N]}
  y = f32[7,5] parameter(1), sharding={devices=[1,$N]<=[$N]}
  z = f32[5,7] parameter(2), sharding={replicated}
  s = f32[7,5] subtract(x, y)
  n = f32[5,7] negate(z), sharding={devices=[1,$N]<=[$N]}
  ROOT r = (f32[7,5], f32[5,7]) tuple(s, n), sharding={{devices=[1,$N]<=[$N]}, {devices=[$N,1]<=[$N]}}
}`},
	{name: "dot-batch", absent: []string{"all-gather", "all-reduce"}, text: `HloModule db, num_partitions=$N
ENTRY main {
  x = f32[5,3,6] parameter(0), sharding={devices=[$N,1,1]<=[$N]}
  w = f32[5,6,4] parameter(1), sharding={devices=[$N,1,1]<=[$N]}
  ROOT d = f32[5,3,4] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, sharding={devices=[$N,1,1]<=[$N]}
}`},
	{name: "dot-lhs-free", absent: []string{"all-gather", "all-reduce"}, text: `HloModule dl, num_partitions=$N
ENTRY main {
  x = f32[7,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  w = f32[6,4] parameter(1), sharding={replicated}
  ROOT d = f32[7,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[$N,1]<=[$N]}
}`},
	{name: "dot-rhs-free", absent: []string{"all-gather", "all-reduce"}, text: `HloModule dr, num_partitions=$N
ENTRY main {
  x = f32[4,6] parameter(0), sharding={replicated}
  w = f32[6,7] parameter(1), sharding={devices=[1,$N]<=[$N]}
  ROOT d = f32[4,7] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[1,$N]<=[$N]}
}`},
	// Both operands' padding along the contracted 7 is zeroed before the
	// partial products are summed.
	{name: "dot-contracting", absent: []string{"all-gather"}, text: `HloModule dc, num_partitions=$N
ENTRY main {
  x = f32[4,7] parameter(0), sharding={devices=[1,$N]<=[$N]}
  w = f32[7,5] parameter(1), sharding={devices=[$N,1]<=[$N]}
  ROOT d = f32[4,5] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`},
	{name: "reduce-add-max", absent: []string{"all-gather"}, text: `HloModule ram, num_partitions=$N
` + addComp + maxComp + `
ENTRY main {
  x = f32[7,5] parameter(0), sharding={devices=[$N,1]<=[$N]}
  e = f32[7,5] exponential(x)
  z = f32[] constant(0)
  ninf = f32[] constant(-inf)
  s0 = f32[5] reduce(e, z), dimensions={0}, to_apply=add
  m0 = f32[5] reduce(x, ninf), dimensions={0}, to_apply=max
  s1 = f32[7] reduce(x, z), dimensions={1}, to_apply=add, sharding={devices=[$N]<=[$N]}
  ROOT t = (f32[5], f32[5], f32[7]) tuple(s0, m0, s1), sharding={{replicated}, {replicated}, {devices=[$N]<=[$N]}}
}`},
	{name: "transpose-reshape-broadcast", absent: []string{"all-gather", "all-reduce"}, text: `HloModule trb, num_partitions=$N
ENTRY main {
  x = f32[7,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  t = f32[6,7] transpose(x), dimensions={1,0}
  r = f32[7,2,3] reshape(x)
  v = f32[5] parameter(1), sharding={devices=[$N]<=[$N]}
  b = f32[5,3] broadcast(v), dimensions={0}
  ROOT o = (f32[6,7], f32[7,2,3], f32[5,3]) tuple(t, r, b), sharding={{devices=[1,$N]<=[$N]}, {devices=[$N,1,1]<=[$N]}, {devices=[$N,1]<=[$N]}}
}`},
	// Softmax over an unevenly tiled vocabulary: max and sum reduce over
	// the padded dimension.
	{name: "softmax-vocab", absent: []string{"all-gather"}, text: `HloModule sm, num_partitions=$N
` + addComp + maxComp + `
ENTRY main {
  h = f32[3,6] parameter(0), sharding={replicated}
  w = f32[6,7] parameter(1), sharding={devices=[1,$N]<=[$N]}
  l = f32[3,7] dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ninf = f32[] constant(-inf)
  m = f32[3] reduce(l, ninf), dimensions={1}, to_apply=max
  mb = f32[3,7] broadcast(m), dimensions={0}
  d = f32[3,7] subtract(l, mb)
  e = f32[3,7] exponential(d)
  z = f32[] constant(0)
  s = f32[3] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[3,7] broadcast(s), dimensions={0}
  ROOT p = f32[3,7] divide(e, sb), sharding={devices=[1,$N]<=[$N]}
}`},
	{name: "conv-batch", absent: []string{"all-gather", "all-reduce"}, text: `HloModule cb, num_partitions=$N
ENTRY main {
  x = f32[5,6,6,3] parameter(0), sharding={devices=[$N,1,1,1]<=[$N]}
  k = f32[3,3,3,4] parameter(1), sharding={replicated}
  ROOT c = f32[5,6,6,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, sharding={devices=[$N,1,1,1]<=[$N]}
}`},
	{name: "conv-out-feature", absent: []string{"all-gather", "all-reduce"}, text: `HloModule co, num_partitions=$N
ENTRY main {
  x = f32[2,5,5,3] parameter(0), sharding={replicated}
  k = f32[3,3,3,7] parameter(1), sharding={devices=[1,1,1,$N]<=[$N]}
  ROOT c = f32[2,5,5,7] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, sharding={devices=[1,1,1,$N]<=[$N]}
}`},
	{name: "conv-in-feature", absent: []string{"all-gather"}, text: `HloModule ci, num_partitions=$N
ENTRY main {
  x = f32[2,5,5,7] parameter(0), sharding={devices=[1,1,1,$N]<=[$N]}
  k = f32[3,3,7,4] parameter(1), sharding={devices=[1,1,$N,1]<=[$N]}
  ROOT c = f32[2,5,5,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}`},
	// The whole kernel is cut to the input's uneven feature tiles (padded
	// with zeros, then masked like the input).
	{name: "conv-in-feature-kernel-whole", absent: []string{"all-gather"}, text: `HloModule cik, num_partitions=$N
ENTRY main {
  x = f32[2,5,5,7] parameter(0), sharding={devices=[1,1,1,$N]<=[$N]}
  k = f32[3,3,7,4] parameter(1), sharding={replicated}
  ROOT c = f32[2,5,5,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}`},
	// A whole update is cut to the operand's uneven tiles.
	{name: "dynamic-update-slice-whole-update", absent: []string{"all-gather", "all-reduce"}, text: `HloModule dusw, num_partitions=$N
ENTRY main {
  x = f32[7,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  u = f32[7,3] parameter(1), sharding={replicated}
  j = s32[] parameter(2)
  ROOT d = f32[7,6] dynamic-update-slice(x, u, j, j), sharding={devices=[$N,1]<=[$N]}
}`},
	// Integers: the padding (77 in the harness) must not reach a sum or
	// a maximum either.
	{name: "reduce-s32", absent: []string{"all-gather"}, text: `HloModule ri, num_partitions=$N
addi {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
maxi {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY main {
  x = s32[5,3] parameter(0), sharding={devices=[$N,1]<=[$N]}
  z = s32[] constant(0)
  lo = s32[] constant(-1000)
  s = s32[3] reduce(x, z), dimensions={0}, to_apply=addi
  m = s32[3] reduce(x, lo), dimensions={0}, to_apply=maxi
  ROOT t = (s32[3], s32[3]) tuple(s, m)
}`},
	// The tiled (padded) rows are taken whole: each shard, padding and
	// all, is its own slice.
	{name: "dynamic-slice", absent: []string{"all-gather", "all-reduce"}, text: `HloModule ds, num_partitions=$N
ENTRY main {
  x = f32[7,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  u = f32[7,2] parameter(1), sharding={devices=[$N,1]<=[$N]}
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  d = f32[7,2] dynamic-slice(x, i, j), dynamic_slice_sizes={7,2}
  n = f32[7,6] dynamic-update-slice(x, u, i, j)
  ROOT t = (f32[7,2], f32[7,6]) tuple(d, n), sharding={{devices=[$N,1]<=[$N]}, {devices=[$N,1]<=[$N]}}
}`},
	{name: "mesh-2x2", only4: true, absent: []string{"all-gather"}, text: `HloModule mesh, num_partitions=4
` + addComp + `
ENTRY main {
  x = f32[5,7] parameter(0), sharding={devices=[2,2]<=[2,2]T(1,0)}
  w = f32[7,3] parameter(1), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  d = f32[5,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  r = f32[] reduce(x, z), dimensions={0,1}, to_apply=add
  ROOT t = (f32[5,3], f32[]) tuple(d, r), sharding={{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}, {replicated}}
}`},
}

func TestUnevenMatchesEvaluator(t *testing.T) {
	for _, c := range unevenCases {
		for _, n := range []int{2, 3, 4} {
			if c.only4 && n != 4 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", c.name, n), func(t *testing.T) {
				out := checkPartitioned(t, c.text, n)
				for _, op := range c.absent {
					if strings.Contains(out, " "+op+"(") {
						t.Errorf("contains %s:\n%s", op, out)
					}
				}
				_, st, err := spmd.PartitionWithStats(parseCase(t, c.text, n))
				if err != nil {
					t.Fatal(err)
				}
				if len(st.Fallbacks) > 0 {
					t.Errorf("fallbacks %v", st.Fallbacks)
				}
			})
		}
	}
}

// A reduce over a padded dimension masks (select) before reducing; over
// an evenly tiled one it does not.
func TestUnevenMasks(t *testing.T) {
	text := `HloModule red, num_partitions=2
` + addComp + `
ENTRY main {
  x = f32[$D,4] parameter(0), sharding={devices=[2,1]<=[2]}
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(x, z), dimensions={0}, to_apply=add
}`
	for d, want := range map[string]bool{"7": true, "8": false} {
		pm, err := spmd.Partition(parseCase(t, strings.ReplaceAll(text, "$D", d), 2))
		if err != nil {
			t.Fatal(err)
		}
		var ops []string
		for _, in := range pm.Entry.Instructions {
			ops = append(ops, in.Opcode.String())
		}
		if got := slices.Contains(ops, "select"); got != want {
			t.Errorf("f32[%s,4]: select %v, want %v (%v)", d, got, want, ops)
		}
	}
}
