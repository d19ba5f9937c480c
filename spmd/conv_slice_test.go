package spmd_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/spmd"
)

// Convolution and dynamic-(update-)slice cases: each is compared with the
// evaluator on 2 and 4 devices (4 only when only4), must not contain the
// absent ops, must contain the present ones, and takes the fallback for
// exactly the instructions in fallbacks.
var convSliceCases = []struct {
	name      string
	text      string
	absent    []string
	present   []string
	fallbacks []string
	only4     bool
}{
	// Batch tiled, kernel whole: each device convolves its images.
	{name: "conv-batch-b01f", absent: []string{"all-gather", "all-reduce"}, text: `HloModule cb, num_partitions=$N
ENTRY main {
  x = f32[4,6,6,3] parameter(0), sharding={devices=[$N,1,1,1]<=[$N]}
  k = f32[3,3,3,5] parameter(1), sharding={replicated}
  ROOT c = f32[4,6,6,5] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, sharding={devices=[$N,1,1,1]<=[$N]}
}`},
	// Kernel output features tiled, input whole, strided and dilated
	// window: each device computes its output channels.
	{name: "conv-out-feature-bf01", absent: []string{"all-gather", "all-reduce"}, text: `HloModule cf, num_partitions=$N
ENTRY main {
  x = f32[2,3,7,7] parameter(0), sharding={replicated}
  k = f32[8,3,3,3] parameter(1), sharding={devices=[$N,1,1,1]<=[$N]}
  ROOT c = f32[2,8,4,3] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_dilate=1x2}, dim_labels=bf01_oi01->bf01, sharding={devices=[1,$N,1,1]<=[$N]}
}`},
	// Input features and kernel input features tiled alike: partial sums,
	// one all-reduce, nothing gathered.
	{name: "conv-in-feature", absent: []string{"all-gather"}, present: []string{"all-reduce"}, text: `HloModule ci, num_partitions=$N
ENTRY main {
  x = f32[2,5,5,8] parameter(0), sharding={devices=[1,1,1,$N]<=[$N]}
  k = f32[3,3,8,4] parameter(1), sharding={devices=[1,1,$N,1]<=[$N]}
  ROOT c = f32[2,5,5,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}`},
	// Input features tiled, kernel whole: the kernel is cut to the
	// matching rows on each device, not the input gathered.
	{name: "conv-in-feature-kernel-whole", absent: []string{"all-gather"}, present: []string{"all-reduce"}, text: `HloModule cik, num_partitions=$N
ENTRY main {
  x = f32[2,5,5,8] parameter(0), sharding={devices=[1,1,1,$N]<=[$N]}
  k = f32[3,3,8,4] parameter(1), sharding={replicated}
  ROOT c = f32[2,5,5,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}`},
	// And the other way round, on a mesh whose device order is transposed.
	{name: "conv-in-feature-input-whole", only4: true, absent: []string{"all-gather"}, present: []string{"all-reduce"}, text: `HloModule cii, num_partitions=4
ENTRY main {
  x = f32[2,5,5,8] parameter(0), sharding={replicated}
  k = f32[3,3,8,4] parameter(1), sharding={devices=[1,1,2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  ROOT c = f32[2,5,5,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}`},
	// Features first, batch last, output in yet another order.
	{name: "conv-odd-layout", absent: []string{"all-gather"}, present: []string{"all-reduce"}, text: `HloModule co, num_partitions=$N
ENTRY main {
  x = f32[8,5,5,2] parameter(0), sharding={devices=[$N,1,1,1]<=[$N]}
  k = f32[8,3,3,4] parameter(1), sharding={devices=[$N,1,1,1]<=[$N]}
  ROOT c = f32[5,4,2,5] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=f01b_i01o->0fb1
}`},
	// Depthwise-style grouped convolution (8 groups) with features tiled:
	// whole groups per device, a local convolution of 8/N groups.
	{name: "conv-grouped", absent: []string{"all-gather", "all-reduce"}, text: `HloModule cg, num_partitions=$N
ENTRY main {
  x = f32[2,8,5,5] parameter(0), sharding={devices=[1,$N,1,1]<=[$N]}
  k = f32[16,1,3,3] parameter(1), sharding={devices=[$N,1,1,1]<=[$N]}
  ROOT c = f32[2,16,5,5] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=8, sharding={devices=[1,$N,1,1]<=[$N]}
}`},
	// Depthwise with the kernel whole: each device cuts its groups' filters.
	{name: "conv-depthwise-kernel-whole", absent: []string{"all-gather", "all-reduce"}, text: `HloModule cdk, num_partitions=$N
ENTRY main {
  x = f32[2,5,5,8] parameter(0), sharding={devices=[1,1,1,$N]<=[$N]}
  k = f32[3,3,1,8] parameter(1), sharding={replicated}
  ROOT c = f32[2,5,5,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=8, sharding={devices=[1,1,1,$N]<=[$N]}
}`},
	// 2 groups cannot split over 4 feature tiles.
	{name: "conv-grouped-split", only4: true, fallbacks: []string{"c"}, text: `HloModule cgs, num_partitions=4
ENTRY main {
  x = f32[2,4,5,5] parameter(0), sharding={devices=[1,4,1,1]<=[4]}
  k = f32[4,2,3,3] parameter(1), sharding={devices=[4,1,1,1]<=[4]}
  ROOT c = f32[2,4,5,5] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=2, sharding={devices=[1,4,1,1]<=[4]}
}`},
	// A 2x2 mesh: batch over one axis, output features over the other.
	{name: "conv-mesh-2x2", only4: true, absent: []string{"all-gather", "all-reduce"}, text: `HloModule cm, num_partitions=4
ENTRY main {
  x = f32[4,5,5,3] parameter(0), sharding={devices=[2,1,1,1,2]<=[4] last_tile_dim_replicate}
  k = f32[3,3,3,6] parameter(1), sharding={devices=[1,1,1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  ROOT c = f32[4,5,5,6] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, sharding={devices=[2,1,1,2]<=[4]}
}`},
	// Spatially tiled input (XLA would exchange halos) and batch groups
	// take the fallback.
	{name: "conv-spatial", fallbacks: []string{"c"}, text: `HloModule cs, num_partitions=$N
ENTRY main {
  x = f32[2,8,4,3] parameter(0), sharding={devices=[1,$N,1,1]<=[$N]}
  k = f32[3,3,3,4] parameter(1), sharding={replicated}
  ROOT c = f32[2,8,4,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, sharding={devices=[1,$N,1,1]<=[$N]}
}`},
	{name: "conv-batch-groups", fallbacks: []string{"c"}, text: `HloModule cbg, num_partitions=$N
ENTRY main {
  x = f32[4,5,5,3] parameter(0), sharding={devices=[$N,1,1,1]<=[$N]}
  k = f32[3,3,3,4] parameter(1), sharding={replicated}
  ROOT c = f32[2,5,5,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, batch_group_count=2
}`},
	// The tiled rows are taken whole: the start index of dimension 0
	// clamps to 0 on every shard as on the whole value.
	{name: "dynamic-slice-local", absent: []string{"all-gather", "all-reduce"}, text: `HloModule ds, num_partitions=$N
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT d = f32[8,2] dynamic-slice(x, i, j), dynamic_slice_sizes={8,2}, sharding={devices=[$N,1]<=[$N]}
}`},
	{name: "dynamic-slice-mesh", only4: true, absent: []string{"all-gather", "all-reduce"}, text: `HloModule dsm, num_partitions=4
ENTRY main {
  x = f32[4,6,8] parameter(0), sharding={devices=[2,1,2]<=[4]}
  i = s32[] parameter(1)
  j = s32[] constant(2)
  ROOT d = f32[4,3,8] dynamic-slice(x, i, j, i), dynamic_slice_sizes={4,3,8}, sharding={devices=[2,1,2]<=[4]}
}`},
	// The slice cuts the tiled dimension: fallback.
	{name: "dynamic-slice-cut", fallbacks: []string{"d"}, text: `HloModule dsc, num_partitions=$N
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT d = f32[2,6] dynamic-slice(x, i, j), dynamic_slice_sizes={2,6}
}`},
	{name: "dynamic-update-slice-local", absent: []string{"all-gather", "all-reduce"}, text: `HloModule dus, num_partitions=$N
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  u = f32[8,2] parameter(1), sharding={devices=[$N,1]<=[$N]}
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT d = f32[8,6] dynamic-update-slice(x, u, i, j), sharding={devices=[$N,1]<=[$N]}
}`},
	// A whole update is cut to the operand's tiling locally.
	{name: "dynamic-update-slice-whole-update", absent: []string{"all-gather", "all-reduce"}, text: `HloModule dusw, num_partitions=$N
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  u = f32[8,3] parameter(1), sharding={replicated}
  j = s32[] parameter(2)
  ROOT d = f32[8,6] dynamic-update-slice(x, u, j, j), sharding={devices=[$N,1]<=[$N]}
}`},
	{name: "dynamic-update-slice-cut", fallbacks: []string{"d"}, text: `HloModule dusc, num_partitions=$N
ENTRY main {
  x = f32[8,6] parameter(0), sharding={devices=[$N,1]<=[$N]}
  u = f32[2,6] parameter(1), sharding={replicated}
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT d = f32[8,6] dynamic-update-slice(x, u, i, j), sharding={devices=[$N,1]<=[$N]}
}`},
}

func TestConvolutionAndSlices(t *testing.T) {
	for _, c := range convSliceCases {
		for _, n := range []int{2, 4} {
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
				for _, op := range c.present {
					if !strings.Contains(out, " "+op+"(") {
						t.Errorf("has no %s:\n%s", op, out)
					}
				}
				_, st, err := spmd.PartitionWithStats(parseCase(t, c.text, n))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(st.Fallbacks, c.fallbacks) {
					t.Errorf("fallbacks %v, want %v", st.Fallbacks, c.fallbacks)
				}
			})
		}
	}
}
