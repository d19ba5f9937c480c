package collective_test

import (
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// Device d of 4 replicas holds [d+1, 10(d+1), 100(d+1), 1000(d+1),
// -(d+1)]: five elements, so the chunks are uneven (2,1,1,1). The sums
// are 10, 100, 1000, 10000, -10 on every device.
func TestAllReduceSum(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		outs := launch{replicas: n, partitions: 1, name: "ar",
			text: module(n, 1, `p = f32[5] parameter(0)
  ROOT ar = f32[5] all-reduce(p), replica_groups={}, to_apply=add`),
			inputs: func(d, _, _ int) []*hlo.Literal {
				v := float32(d + 1)
				return []*hlo.Literal{f32s(t, []float32{v, 10 * v, 100 * v, 1000 * v, -v}, 5)}
			},
		}.mustRun(t)
		s := float32(n * (n + 1) / 2)
		for d, o := range outs {
			wantData(t, "device result", o, []float32{s, 10 * s, 100 * s, 1000 * s, -s})
			_ = d
		}
	}
}

// The fold is left to right in group order: with x = (1e8, 1, -1e8, 1)
// in float32, ((1e8+1)-1e8)+1 = 1 (1e8+1 rounds to 1e8), where another
// order gives 0 or 2. Reversing the group ({3,2,1,0}) folds
// ((1+(-1e8))+1)+1e8 = 0: -1e8+1 and -1e8+2 round back to -1e8.
func TestAllReduceFoldsInGroupOrder(t *testing.T) {
	x := []float32{1e8, 1, -1e8, 1}
	for groups, want := range map[string]float32{"{}": 1, "{{0,1,2,3}}": 1, "{{3,2,1,0}}": 0} {
		outs := launch{replicas: 4, partitions: 1, name: "ar",
			text: module(4, 1, `p = f32[1] parameter(0)
  ROOT ar = f32[1] all-reduce(p), replica_groups=`+groups+`, to_apply=add`),
			inputs: func(d, _, _ int) []*hlo.Literal { return []*hlo.Literal{f32s(t, x[d:d+1], 1)} },
		}.mustRun(t)
		for _, o := range outs {
			wantData(t, "groups "+groups, o, []float32{want})
		}
	}
}

// Groups {{0,2},{1,3}}, written as lists and as iota groups: devices 0
// and 2 sum to 1+3, devices 1 and 3 to 2+4. The tuple form reduces each
// operand.
func TestAllReduceGroupsAndTuple(t *testing.T) {
	for _, groups := range []string{"{{0,2},{1,3}}", "[2,2]<=[2,2]T(1,0)"} {
		outs := launch{replicas: 4, partitions: 1, name: "ar",
			text: module(4, 1, `p = f32[2] parameter(0)
  q = f32[3] parameter(1)
  ROOT ar = (f32[2], f32[3]) all-reduce(p, q), replica_groups=`+groups+`, to_apply=add`),
			inputs: func(d, _, _ int) []*hlo.Literal {
				v := float32(d + 1)
				return []*hlo.Literal{f32s(t, []float32{v, -v}, 2), f32s(t, []float32{float32(d), 1, 100}, 3)}
			},
		}.mustRun(t)
		for d, o := range outs {
			s := float32(4 + 2*(d%2))
			wantData(t, groups, o.Elements()[0], []float32{s, -s})
			wantData(t, groups, o.Elements()[1], []float32{float32(2 + 2*(d%2)), 2, 200})
		}
	}
}

// 2 replicas × 2 partitions: DefaultAssignment puts (r, p) on device
// 2p+r. Device d holds 1<<d, so a sum names the devices it covers.
func TestAllReduceModes(t *testing.T) {
	cases := []struct {
		attrs string
		want  []float32 // by device
	}{
		// cross-replica: replicas of one partition: {0,1}, {2,3}.
		{"replica_groups={}", []float32{3, 3, 12, 12}},
		// cross-replica-and-partition: replica group {0,1} with every
		// partition: all four devices.
		{"channel_id=1, replica_groups={{0,1}}", []float32{15, 15, 15, 15}},
		// and replica group {0} and {1} each with both partitions:
		// {0,2}, {1,3}.
		{"channel_id=1, replica_groups={{0},{1}}", []float32{5, 10, 5, 10}},
		// flattened ids r*2+p: {0,1} is (0,0),(0,1) = devices 0 and 2;
		// {2,3} is devices 1 and 3.
		{"channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true", []float32{5, 10, 5, 10}},
		// flattened {0,3} = devices 0 and 3, {1,2} = devices 2 and 1.
		{"channel_id=1, replica_groups={{0,3},{1,2}}, use_global_device_ids=true", []float32{9, 6, 6, 9}},
	}
	for _, c := range cases {
		outs := launch{replicas: 2, partitions: 2, name: "ar",
			text: module(2, 2, `p = f32[1] parameter(0)
  ROOT ar = f32[1] all-reduce(p), `+c.attrs+`, to_apply=add`),
			inputs: func(d, _, _ int) []*hlo.Literal { return []*hlo.Literal{f32s(t, []float32{float32(int(1) << d)}, 1)} },
		}.mustRun(t)
		for d, o := range outs {
			wantData(t, c.attrs, o, []float32{c.want[d]})
		}
	}
}

// all-reduce-start gives the all-reduce result.
func TestAllReduceStart(t *testing.T) {
	outs := launch{replicas: 2, partitions: 1, name: "ars",
		text: module(2, 1, `p = s32[2] parameter(0)
  ars = s32[2] all-reduce-start(p), replica_groups={}, to_apply=adds
  ROOT d = s32[2] all-reduce-done(ars)`),
		inputs: func(d, _, _ int) []*hlo.Literal { return []*hlo.Literal{s32s(t, []int32{int32(d + 1), 5}, 2)} },
	}.mustRun(t)
	for _, o := range outs {
		wantData(t, "all-reduce-start", o, []int32{3, 10})
	}
}

// reduce-scatter along dimension 0 of s32[4,2] with 2 devices: device d
// holds rows [10d+r, 10d+r+100]; device 0 gets the sums of rows 0-1,
// device 1 of rows 2-3. Along dimension 1 of s32[2,4], device 0 gets
// columns 0-1 and device 1 columns 2-3.
func TestReduceScatter(t *testing.T) {
	outs := launch{replicas: 2, partitions: 1, name: "rs",
		text: module(2, 1, `p = s32[4,2] parameter(0)
  ROOT rs = s32[2,2] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=adds`),
		inputs: func(d, _, _ int) []*hlo.Literal {
			var v []int32
			for r := range 4 {
				v = append(v, int32(10*d+r), int32(10*d+r+100))
			}
			return []*hlo.Literal{s32s(t, v, 4, 2)}
		},
	}.mustRun(t)
	// rows r of devices 0 and 1: r+10 and r+110... summed: 2r+10, 2r+210.
	wantData(t, "device 0", outs[0], []int32{10, 210, 12, 212})
	wantData(t, "device 1", outs[1], []int32{14, 214, 16, 216})

	outs = launch{replicas: 2, partitions: 1, name: "rs",
		text: module(2, 1, `p = s32[2,4] parameter(0)
  ROOT rs = s32[2,2] reduce-scatter(p), replica_groups={}, dimensions={1}, to_apply=adds`),
		inputs: func(d, _, _ int) []*hlo.Literal {
			return []*hlo.Literal{s32s(t, []int32{int32(d), 1, 2, 3, 4, 5, 6, int32(7 + d)}, 2, 4)}
		},
	}.mustRun(t)
	wantData(t, "device 0", outs[0], []int32{1, 2, 8, 10})
	wantData(t, "device 1", outs[1], []int32{4, 6, 12, 15})
}

// The tuple form with 4 devices in groups {{0,1},{2,3}}: each operand is
// scattered; device d holds d+1 everywhere.
func TestReduceScatterTuple(t *testing.T) {
	outs := launch{replicas: 4, partitions: 1, name: "rs",
		text: module(4, 1, `p = f32[4] parameter(0)
  q = f32[2,2] parameter(1)
  ROOT rs = (f32[2], f32[1,2]) reduce-scatter(p, q), replica_groups={{0,1},{2,3}}, dimensions={0}, to_apply=add`),
		inputs: func(d, _, _ int) []*hlo.Literal {
			v := float32(d + 1)
			return []*hlo.Literal{f32s(t, []float32{v, 2 * v, 3 * v, 4 * v}, 4), f32s(t, []float32{v, v, -v, -v}, 2, 2)}
		},
	}.mustRun(t)
	for d, o := range outs {
		s := float32(3 + 4*(d/2)) // 1+2 or 3+4
		if d%2 == 0 {
			wantData(t, "p", o.Elements()[0], []float32{s, 2 * s})
			wantData(t, "q", o.Elements()[1], []float32{s, s})
		} else {
			wantData(t, "p", o.Elements()[0], []float32{3 * s, 4 * s})
			wantData(t, "q", o.Elements()[1], []float32{-s, -s})
		}
	}
}
