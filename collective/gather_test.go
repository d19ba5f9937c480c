package collective_test

import (
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// grid is device d's s32[2,3] operand: 10d + [[0,1,2],[3,4,5]].
func grid(t *testing.T, d int) *hlo.Literal {
	v := make([]int32, 6)
	for i := range v {
		v[i] = int32(10*d + i)
	}
	return s32s(t, v, 2, 3)
}

// all-gather concatenates in group order: along dimension 0 the rows of
// each device follow each other; along dimension 1 each row is the
// devices' rows side by side. Groups {{1,0}} put device 1 first.
func TestAllGather(t *testing.T) {
	in := func(d, _, _ int) []*hlo.Literal { return []*hlo.Literal{grid(t, d)} }
	outs := launch{replicas: 2, partitions: 1, name: "ag", inputs: in,
		text: module(2, 1, `p = s32[2,3] parameter(0)
  ROOT ag = s32[4,3] all-gather(p), replica_groups={}, dimensions={0}`)}.mustRun(t)
	for _, o := range outs {
		wantData(t, "dim 0", o, []int32{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15})
	}
	outs = launch{replicas: 2, partitions: 1, name: "ag", inputs: in,
		text: module(2, 1, `p = s32[2,3] parameter(0)
  ROOT ag = s32[2,6] all-gather(p), replica_groups={{1,0}}, dimensions={1}`)}.mustRun(t)
	for _, o := range outs {
		wantData(t, "dim 1, group {1,0}", o, []int32{10, 11, 12, 0, 1, 2, 13, 14, 15, 3, 4, 5})
	}
}

// 8 devices gather along the middle dimension of s32[2,1,2] in groups
// {0..3},{4..7}: result [2,4,2] where [o][j][i] = member j's [o][0][i].
func TestAllGatherMiddleDimension(t *testing.T) {
	outs := launch{replicas: 8, partitions: 1, name: "ag",
		text: module(8, 1, `p = s32[2,1,2] parameter(0)
  ROOT ag = s32[2,4,2] all-gather(p), replica_groups=[2,4]<=[8], dimensions={1}`),
		inputs: func(d, _, _ int) []*hlo.Literal {
			return []*hlo.Literal{s32s(t, []int32{int32(10 * d), int32(10*d + 1), int32(10*d + 2), int32(10*d + 3)}, 2, 1, 2)}
		},
	}.mustRun(t)
	for d, o := range outs {
		b := int32(40 * (d / 4)) // the group's first device, times 10
		wantData(t, "middle", o, []int32{
			b, b + 1, b + 10, b + 11, b + 20, b + 21, b + 30, b + 31,
			b + 2, b + 3, b + 12, b + 13, b + 22, b + 23, b + 32, b + 33})
	}
}

// The combined form gathers each operand; all-gather-start's result part
// is the gathered tuple. Across partitions (channel_id, no global ids:
// cross-replica-and-partition with one replica) devices 0,1 are
// partitions 0,1 of replica 0.
func TestAllGatherTupleAndStart(t *testing.T) {
	outs := launch{replicas: 1, partitions: 2, name: "ags",
		text: module(1, 2, `p = s32[2,3] parameter(0)
  q = f32[1,1] parameter(1)
  ags = ((s32[2,3], f32[1,1]), (s32[2,6], f32[1,2])) all-gather-start(p, q), channel_id=1, replica_groups={{0}}, dimensions={1}
  ROOT agd = (s32[2,6], f32[1,2]) all-gather-done(ags)`),
		inputs: func(d, _, _ int) []*hlo.Literal {
			return []*hlo.Literal{grid(t, d), f32s(t, []float32{float32(d) + 0.5}, 1, 1)}
		},
	}.mustRun(t)
	for _, o := range outs {
		wantData(t, "p", o.Elements()[0], []int32{0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15})
		wantData(t, "q", o.Elements()[1], []float32{0.5, 1.5})
	}
}

// all-to-all along dimension 0 of s32[4] with 4 devices: device d sends
// element j to device j, so device d receives element d of each device
// in group order: [d, 10+d, 20+d, 30+d] for operands 10d + [0,1,2,3].
func TestAllToAll(t *testing.T) {
	outs := launch{replicas: 4, partitions: 1, name: "a2a",
		text: module(4, 1, `p = s32[4] parameter(0)
  ROOT a2a = s32[4] all-to-all(p), replica_groups={}, dimensions={0}`),
		inputs: func(d, _, _ int) []*hlo.Literal {
			return []*hlo.Literal{s32s(t, []int32{int32(10 * d), int32(10*d + 1), int32(10*d + 2), int32(10*d + 3)}, 4)}
		},
	}.mustRun(t)
	for d, o := range outs {
		e := int32(d)
		wantData(t, "dim 0", o, []int32{e, 10 + e, 20 + e, 30 + e})
	}
}

// Along dimension 1 of s32[2,4] between partitions 0 and 1 (channel_id:
// cross-partition for all-to-all): device d sends columns 2j,2j+1 to
// partition j and concatenates what it receives along dimension 1.
func TestAllToAllMinorDimension(t *testing.T) {
	outs := launch{replicas: 1, partitions: 2, name: "a2a",
		text: module(1, 2, `p = s32[2,4] parameter(0)
  ROOT a2a = s32[2,4] all-to-all(p), channel_id=1, replica_groups={{0,1}}, dimensions={1}`),
		inputs: func(d, _, _ int) []*hlo.Literal {
			v := make([]int32, 8)
			for i := range v {
				v[i] = int32(10*d + i)
			}
			return []*hlo.Literal{s32s(t, v, 2, 4)}
		},
	}.mustRun(t)
	wantData(t, "partition 0", outs[0], []int32{0, 1, 10, 11, 4, 5, 14, 15})
	wantData(t, "partition 1", outs[1], []int32{2, 3, 12, 13, 6, 7, 16, 17})
}

// The tuple form: operand j goes to member j; result i is what member i
// sent. With groups {{2,0}}, {{3,1}} member 0 is device 2.
func TestAllToAllTuple(t *testing.T) {
	outs := launch{replicas: 4, partitions: 1, name: "a2a",
		text: module(4, 1, `p = f32[1] parameter(0)
  q = f32[1] parameter(1)
  ROOT a2a = (f32[1], f32[1]) all-to-all(p, q), replica_groups={{2,0},{3,1}}`),
		inputs: func(d, _, _ int) []*hlo.Literal {
			return []*hlo.Literal{f32s(t, []float32{float32(10 * d)}, 1), f32s(t, []float32{float32(10*d + 1)}, 1)}
		},
	}.mustRun(t)
	// Device 2 is member 0, device 0 member 1: device 2 receives 20 (its
	// own operand 0) and 0 (device 0's operand 0); device 0 receives 21
	// and 1.
	want := map[int][2]float32{2: {20, 0}, 0: {21, 1}, 3: {30, 10}, 1: {31, 11}}
	for d, o := range outs {
		wantData(t, "element 0", o.Elements()[0], []float32{want[d][0]})
		wantData(t, "element 1", o.Elements()[1], []float32{want[d][1]})
	}
}

// collective-broadcast: every member gets the group's first member's
// operand: device 1 in {1,0}, device 2 in {2,3}. A device in no group
// gets zeros (StableHLO's collective_broadcast): with groups {{1,0}}
// devices 2 and 3.
func TestCollectiveBroadcast(t *testing.T) {
	outs0 := launch{replicas: 4, partitions: 1, name: "cb",
		text: module(4, 1, `p = s32[2,3] parameter(0)
  ROOT cb = s32[2,3] collective-broadcast(p), replica_groups={{1,0}}`),
		inputs: func(d, _, _ int) []*hlo.Literal { return []*hlo.Literal{grid(t, d)} },
	}.mustRun(t)
	for d, o := range outs0 {
		want := []int32{10, 11, 12, 13, 14, 15}
		if d >= 2 {
			want = []int32{0, 0, 0, 0, 0, 0}
		}
		wantData(t, "broadcast, some devices in no group", o, want)
	}
	outs := launch{replicas: 4, partitions: 1, name: "cb",
		text: module(4, 1, `p = s32[2,3] parameter(0)
  ROOT cb = s32[2,3] collective-broadcast(p), replica_groups={{1,0},{2,3}}`),
		inputs: func(d, _, _ int) []*hlo.Literal { return []*hlo.Literal{grid(t, d)} },
	}.mustRun(t)
	for d, o := range outs {
		b := int32(10 + 10*(d/2))
		wantData(t, "broadcast", o, []int32{b, b + 1, b + 2, b + 3, b + 4, b + 5})
	}
}

// collective-permute {0→1, 1→2, 3→3} on 4 replicas: device 1 gets device
// 0's operand, 2 gets 1's, 3 keeps its own, and 0, which no pair
// targets, gets zeros. The combined form moves both operands.
func TestCollectivePermute(t *testing.T) {
	outs := launch{replicas: 4, partitions: 1, name: "cp",
		text: module(4, 1, `p = s32[2,3] parameter(0)
  q = f32[1] parameter(1)
  ROOT cp = (s32[2,3], f32[1]) collective-permute(p, q), source_target_pairs={{0,1},{1,2},{3,3}}`),
		inputs: func(d, _, _ int) []*hlo.Literal {
			return []*hlo.Literal{grid(t, d), f32s(t, []float32{float32(d) + 1}, 1)}
		},
	}.mustRun(t)
	for d, from := range []int{-1, 0, 1, 3} {
		gp, gq := []int32{0, 0, 0, 0, 0, 0}, []float32{0}
		if from >= 0 {
			b := int32(10 * from)
			gp, gq = []int32{b, b + 1, b + 2, b + 3, b + 4, b + 5}, []float32{float32(from) + 1}
		}
		wantData(t, "p", outs[d].Elements()[0], gp)
		wantData(t, "q", outs[d].Elements()[1], gq)
	}
}

// collective-permute-start with a channel id permutes partitions: on 2
// replicas × 2 partitions {0→1, 1→0} swaps the partitions of each
// replica: devices 0↔2 and 1↔3.
func TestCollectivePermuteStartAcrossPartitions(t *testing.T) {
	outs := launch{replicas: 2, partitions: 2, name: "cps",
		text: module(2, 2, `p = f32[2] parameter(0)
  cps = (f32[2], f32[2], u32[], u32[]) collective-permute-start(p), channel_id=1, source_target_pairs={{0,1},{1,0}}
  ROOT cpd = f32[2] collective-permute-done(cps)`),
		inputs: func(d, _, _ int) []*hlo.Literal { return []*hlo.Literal{f32s(t, []float32{float32(d), -1}, 2)} },
	}.mustRun(t)
	for d, from := range []int{2, 3, 0, 1} {
		wantData(t, "swap", outs[d], []float32{float32(from), -1})
	}
}

// A result written over its own operand (an in-place buffer) is still
// right: all-reduce saves the chunk it folds over, all-to-all and
// permute copy what they send before receiving over it. Device d holds
// 10d + [0..7]; 4 devices.
func TestInPlace(t *testing.T) {
	in := func(d, _, _ int) []*hlo.Literal {
		v := make([]int32, 8)
		for i := range v {
			v[i] = int32(10*d + i)
		}
		return []*hlo.Literal{s32s(t, v, 8)}
	}
	run := func(body string) []*hlo.Literal {
		return launch{replicas: 4, partitions: 1, name: "x", inPlace: true, inputs: in,
			text: module(4, 1, "p = s32[8] parameter(0)\n  "+body)}.mustRun(t)
	}
	for _, o := range run(`ROOT x = s32[8] all-reduce(p), replica_groups={}, to_apply=adds`) {
		wantData(t, "all-reduce", o, []int32{60, 64, 68, 72, 76, 80, 84, 88})
	}
	for d, o := range run(`ROOT x = s32[8] all-to-all(p), replica_groups={}, dimensions={0}`) {
		e := int32(2 * d)
		wantData(t, "all-to-all", o, []int32{e, e + 1, 10 + e, 11 + e, 20 + e, 21 + e, 30 + e, 31 + e})
	}
	for d, o := range run(`ROOT x = s32[8] collective-permute(p), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}`) {
		b := int32(10 * ((d + 3) % 4))
		wantData(t, "permute", o, []int32{b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7})
	}
}
