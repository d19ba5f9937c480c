package spmd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/spmd"
)

const addComp = `
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
`

// Each case is a global module for $N partitions; native lists opcodes
// that must not appear (the case partitions without them), fallback says
// the case needs a gather.
var cases = []struct {
	name   string
	text   string
	absent []string // ops the partitioned program must not contain
	only4  bool     // needs 4 devices (2-D meshes)
}{
	{name: "elementwise", absent: []string{"all-gather", "all-reduce"}, text: `HloModule ew, num_partitions=$N
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[$N,1]<=[$N]}
  y = f32[8,4] parameter(1), sharding={devices=[$N,1]<=[$N]}
  s = f32[8,4] add(x, y)
  e = f32[8,4] exponential(s)
  c = f32[] constant(0.5)
  h = f32[8,4] broadcast(c), dimensions={}
  m = f32[8,4] multiply(e, h)
  ROOT r = f32[8,4] maximum(m, x), sharding={devices=[$N,1]<=[$N]}
}`},
	{name: "elementwise-reshard", text: `HloModule ewr, num_partitions=$N
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[$N,1]<=[$N]}
  y = f32[8,4] parameter(1), sharding={devices=[1,$N]<=[$N]}
  z = f32[8,4] parameter(2)
  s = f32[8,4] subtract(x, y)
  ROOT r = (f32[8,4], f32[8,4]) tuple(s, z), sharding={{devices=[1,$N]<=[$N]}, {devices=[$N,1]<=[$N]}}
}`},
	{name: "dot-batch", absent: []string{"all-gather", "all-reduce"}, text: `HloModule dotb, num_partitions=$N
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  w = f32[6,4] parameter(1), sharding={replicated}
  ROOT d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[$N,1]<=[$N]}
}`},
	{name: "dot-batch-dims", absent: []string{"all-gather", "all-reduce"}, text: `HloModule dotbd, num_partitions=$N
ENTRY main {
  x = f32[4,8,6] parameter(0), sharding={devices=[$N,1,1]<=[$N]}
  w = f32[4,6,4] parameter(1), sharding={devices=[$N,1,1]<=[$N]}
  ROOT d = f32[4,8,4] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, sharding={devices=[$N,1,1]<=[$N]}
}`},
	{name: "dot-contracting", absent: []string{"all-gather"}, text: `HloModule dotc, num_partitions=$N
ENTRY main {
  x = f32[4,8] parameter(0), sharding={devices=[1,$N]<=[$N]}
  w = f32[8,6] parameter(1), sharding={devices=[$N,1]<=[$N]}
  ROOT d = f32[4,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`},
	// Contracting tiles held twice each: two all-reduce groups per
	// result tile.
	{name: "dot-contracting-replicated", only4: true, absent: []string{"all-gather"}, text: `HloModule dotcr, num_partitions=4
ENTRY main {
  x = f32[4,8] parameter(0), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
  w = f32[8,6] parameter(1), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  ROOT d = f32[4,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`},
	{name: "dot-rhs-free", absent: []string{"all-gather", "all-reduce"}, text: `HloModule dotf, num_partitions=$N
ENTRY main {
  x = f32[4,6] parameter(0), sharding={replicated}
  w = f32[6,8] parameter(1), sharding={devices=[1,$N]<=[$N]}
  ROOT d = f32[4,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[1,$N]<=[$N]}
}`},
	{name: "reduce-sharded", absent: []string{"all-gather"}, text: `HloModule red, num_partitions=$N
` + addComp + `
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  z = f32[] constant(0)
  r0 = f32[6] reduce(x, z), dimensions={0}, to_apply=add
  r1 = f32[8] reduce(x, z), dimensions={1}, to_apply=add, sharding={devices=[$N]<=[$N]}
  ROOT t = (f32[6], f32[8]) tuple(r0, r1), sharding={{replicated}, {devices=[$N]<=[$N]}}
}`},
	{name: "transpose", absent: []string{"all-gather", "all-reduce"}, text: `HloModule tr, num_partitions=$N
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[$N,1]<=[$N]}
  ROOT t = f32[4,8] transpose(x), dimensions={1,0}, sharding={devices=[1,$N]<=[$N]}
}`},
	{name: "broadcast-reshape", absent: []string{"all-gather", "all-reduce"}, text: `HloModule br, num_partitions=$N
ENTRY main {
  x = f32[8] parameter(0), sharding={devices=[$N]<=[$N]}
  b = f32[8,3] broadcast(x), dimensions={0}
  ROOT r = f32[4,2,3] reshape(b), sharding={devices=[$N,1,1]<=[$N]}
}`},
	{name: "mlp-fsdp", absent: []string{"dynamic-slice"}, text: `HloModule mlp, num_partitions=$N
ENTRY main {
  x = f32[16,8] parameter(0), sharding={devices=[$N,1]<=[$N]}
  w1 = f32[8,16] parameter(1), sharding={devices=[$N,1]<=[$N]}
  b1 = f32[16] parameter(2), sharding={replicated}
  w2 = f32[16,4] parameter(3), sharding={devices=[$N,1]<=[$N]}
  b2 = f32[4] parameter(4), sharding={replicated}
  xw = f32[16,16] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb1 = f32[16,16] broadcast(b1), dimensions={1}
  z1 = f32[16,16] add(xw, bb1)
  zero = f32[] constant(0)
  zeros = f32[16,16] broadcast(zero), dimensions={}
  h = f32[16,16] maximum(z1, zeros)
  hw = f32[16,4] dot(h, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb2 = f32[16,4] broadcast(b2), dimensions={1}
  ROOT y = f32[16,4] add(hw, bb2), sharding={devices=[$N,1]<=[$N]}
}`},
	{name: "fallback-sort", text: `HloModule srt, num_partitions=$N
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[4,8] parameter(0), sharding={devices=[1,$N]<=[$N]}
  ROOT s = f32[4,8] sort(x), dimensions={1}, to_apply=lt, sharding={devices=[1,$N]<=[$N]}
}`},
	{name: "conv-gather-kernel", absent: []string{"all-reduce"}, text: `HloModule convk, num_partitions=$N
ENTRY main {
  x = f32[4,8,2] parameter(0), sharding={devices=[$N,1,1]<=[$N]}
  k = f32[3,2,4] parameter(1), sharding={devices=[1,1,$N]<=[$N]}
  ROOT c = f32[4,8,4] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, sharding={devices=[$N,1,1]<=[$N]}
}`},
	{name: "fallback-conv", text: `HloModule conv, num_partitions=$N
ENTRY main {
  x = f32[4,8,2] parameter(0), sharding={devices=[1,$N,1]<=[$N]}
  k = f32[3,2,4] parameter(1), sharding={replicated}
  ROOT c = f32[4,8,4] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, sharding={devices=[$N,1,1]<=[$N]}
}`},
	{name: "sharding-custom-call", text: `HloModule cc, num_partitions=$N
ENTRY main {
  x = f32[8,4] parameter(0)
  s = f32[8,4] custom-call(x), custom_call_target="Sharding", sharding={devices=[$N,1]<=[$N]}
  n = f32[8,4] negate(s)
  ROOT r = f32[8,4] custom-call(n), custom_call_target="Sharding", sharding={devices=[1,$N]<=[$N]}
}`},
	{name: "shard-map", text: `HloModule smap, num_partitions=$N
` + addComp + `
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[$N,1]<=[$N]}
  s = f32[8,4] custom-call(x), custom_call_target="Sharding", sharding={devices=[$N,1]<=[$N]}
  l = f32[$LOCAL,4] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
  two = f32[] constant(2)
  t = f32[$LOCAL,4] broadcast(two), dimensions={}
  m = f32[$LOCAL,4] multiply(l, t)
  p = f32[$LOCAL,4] all-reduce(m), channel_id=1, replica_groups=[1,$N]<=[$N], use_global_device_ids=true, to_apply=add
  q = f32[$LOCAL,4] add(p, l), sharding={manual}
  g = f32[$LOCAL,4] custom-call(q), custom_call_target="Sharding", sharding={manual}
  f = f32[8,4] custom-call(g), custom_call_target="SPMDShardToFullShape", sharding={devices=[$N,1]<=[$N]}
  fr = f32[8,4] copy(f)
  ROOT r = (f32[8,4], f32[8,4]) tuple(f, fr), sharding={{devices=[$N,1]<=[$N]}, {replicated}}
}`},
	{name: "mesh-2x2", only4: true, text: `HloModule mesh, num_partitions=4
` + addComp + `
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[2,2]<=[2,2]T(1,0)}
  w = f32[6,4] parameter(1), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  r = f32[4] reduce(d, z), dimensions={0}, to_apply=add
  ROOT t = (f32[8,4], f32[4]) tuple(d, r), sharding={{devices=[2,1,2]<=[4] last_tile_dims={replicated}}, {replicated}}
}`},
	{name: "partial-replication-reduce", only4: true, text: `HloModule prr, num_partitions=4
` + addComp + `
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}
  z = f32[] constant(0)
  ROOT r = f32[6] reduce(x, z), dimensions={0}, to_apply=add
}`},
}

func TestPartitionMatchesEvaluator(t *testing.T) {
	for _, c := range cases {
		for _, n := range []int{2, 4} {
			if c.only4 && n != 4 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", c.name, n), func(t *testing.T) {
				text := strings.ReplaceAll(c.text, "$LOCAL", fmt.Sprint(8/n))
				var out string
				if c.name == "shard-map" {
					out = checkPartitionedWith(t, text, n, shardMapOracle(n))
				} else {
					out = checkPartitioned(t, text, n)
				}
				for _, op := range c.absent {
					if strings.Contains(out, " "+op+"(") {
						t.Errorf("partitioned %s contains %s:\n%s", c.name, op, out)
					}
				}
			})
		}
	}
}

func TestUnannotatedModuleUnchanged(t *testing.T) {
	for _, text := range []string{`HloModule plain, num_partitions=2
ENTRY main {
  x = f32[8] parameter(0)
  ROOT n = f32[8] negate(x)
}`, `HloModule one, num_partitions=1
ENTRY main {
  x = f32[8] parameter(0), sharding={devices=[2]0,1}
  ROOT n = f32[8] negate(x)
}`} {
		m := parseCase(t, text, 2)
		got, err := spmd.Partition(m)
		if err != nil {
			t.Fatal(err)
		}
		if got != m {
			t.Errorf("%s: Partition made a new module", m.Name)
		}
		if spmd.NeedsPartitioning(m) {
			t.Errorf("%s: NeedsPartitioning is true", m.Name)
		}
	}
}

func TestNeedsPartitioning(t *testing.T) {
	for _, c := range cases[:5] {
		m := parseCase(t, c.text, 2)
		if !spmd.NeedsPartitioning(m) {
			t.Errorf("%s: the global module does not need partitioning", c.name)
		}
	}
	// A partitioned dump: shard shapes, shardings kept, collectives.
	dump := parseCase(t, `HloModule dotc_spmd, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[4,4] parameter(0), sharding={devices=[1,2]0,1}
  w = f32[4,6] parameter(1), sharding={devices=[2,1]0,1}
  d = f32[4,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[4,6] all-reduce(d), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add, sharding={replicated}
}`, 2)
	if spmd.NeedsPartitioning(dump) {
		t.Error("a partitioned dump needs partitioning")
	}
	// shard_map regions hold collectives, but @Sharding calls remain.
	m := parseCase(t, strings.ReplaceAll(caseText(t, "shard-map"), "$LOCAL", "4"), 2)
	if !spmd.NeedsPartitioning(m) {
		t.Error("a module with @Sharding custom-calls does not need partitioning")
	}
}

// Channel ids of new collectives do not collide with the module's own.
func TestChannelIDsUnique(t *testing.T) {
	m := parseCase(t, strings.ReplaceAll(caseText(t, "shard-map"), "$LOCAL", "4"), 2)
	pm, err := spmd.Partition(m)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]string{}
	for _, in := range pm.Entry.Instructions {
		if id, ok := in.Int("channel_id"); ok {
			if other, dup := seen[id]; dup {
				t.Errorf("channel_id %d on %s and %s", id, other, in.Name)
			}
			seen[id] = in.Name
		}
	}
	if len(seen) < 2 {
		t.Errorf("%d collectives, want the region's and the gather's", len(seen))
	}
	_ = hlo.Verify(pm)
}

// shardMapOracle computes the shard-map case by hand: device d's rows of
// the result are 2·Σ_e x_e + x_d, where x_e is device e's block of rows
// (the region doubles its block, sums it over devices, adds its block).
func shardMapOracle(n int) func(*hlo.Module, ...*hlo.Literal) (*hlo.Literal, error) {
	return func(_ *hlo.Module, args ...*hlo.Literal) (*hlo.Literal, error) {
		x, err := hlo.LiteralToSlice[float32](args[0])
		if err != nil {
			return nil, err
		}
		block := len(x) / n
		out := make([]float32, len(x))
		for d := range n {
			for i := range block {
				var s float32
				for e := range n {
					s += 2 * x[e*block+i]
				}
				out[d*block+i] = s + x[d*block+i]
			}
		}
		l, err := hlo.LiteralFromSlice(out, 8, 4)
		if err != nil {
			return nil, err
		}
		return hlo.MakeTupleLiteral(l, l.Clone()), nil
	}
}

// Which instructions take the fallback: none in the native cases, the
// sort and the spatially tiled convolution in theirs.
func TestFallbacks(t *testing.T) {
	want := map[string][]string{"fallback-sort": {"s"}, "fallback-conv": {"c"}}
	for _, c := range cases {
		if c.only4 || c.name == "shard-map" {
			continue
		}
		_, st, err := spmd.PartitionWithStats(parseCase(t, c.text, 2))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(st.Fallbacks) != fmt.Sprint(want[c.name]) {
			t.Errorf("%s: fallbacks %v, want %v", c.name, st.Fallbacks, want[c.name])
		}
	}
}

// caseText is the text of the case named name.
func caseText(t *testing.T, name string) string {
	t.Helper()
	for _, c := range cases {
		if c.name == name {
			return c.text
		}
	}
	t.Fatalf("no case %s", name)
	return ""
}
