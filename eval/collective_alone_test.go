package eval_test

import (
	"testing"
)

// The in-place collective-permute alone: a pair {0,0} writes the box of
// the input at (1) into a copy of the output at (2); as a -start op the
// tuple carries the input and the result.
func TestSingleReplicaInPlacePermute(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  in = s32[3] parameter(0)
  out = s32[5] parameter(1)
  one = s32[] constant(1)
  two = s32[] constant(2)
  ii = (s32[]) tuple(one)
  oi = (s32[]) tuple(two)
  cps = (s32[3], s32[5], u32[], u32[]) collective-permute-start(in, out, ii, oi), source_target_pairs={{0,0}}, slice_sizes={{2}}
  ROOT cpd = s32[5] collective-permute-done(cps)
}`, laLit(t, []int32{7, 8, 9}, 3), laLit(t, []int32{-1, -1, -1, -1, -1}, 5))
	laWant(t, got, int32(-1), -1, 8, 9, -1)
	// No pair targets replica 0: the output comes back unchanged.
	got = laRunHLO(t, `HloModule m
ENTRY e {
  in = s32[3] parameter(0)
  out = s32[2] parameter(1)
  zero = s32[] constant(0)
  i = (s32[]) tuple(zero)
  ROOT cp = s32[2] collective-permute(in, out, i, i), source_target_pairs={}, slice_sizes={{1}}
}`, laLit(t, []int32{7, 8, 9}, 3), laLit(t, []int32{4, 5}, 2))
	laWant(t, got, int32(4), 5)
}

// JAX's test_ragged_all_to_all_degenerate_groups, device 1: a group of
// one sends rows [0,3) of its input to rows [1,4) of its own output.
func TestSingleReplicaRaggedAllToAll(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  in = s32[4] parameter(0)
  out = s32[4] parameter(1)
  zero = s32[] constant(0)
  io = s32[1] broadcast(zero), dimensions={}
  n = s32[1] constant({3})
  oo = s32[1] constant({1})
  ROOT ra = s32[4] ragged-all-to-all(in, out, io, n, oo, n), replica_groups={{0}}
}`, laLit(t, []int32{2, 3, 4, 0}, 4), laLit(t, []int32{0, 0, 0, 0}, 4))
	laWant(t, got, int32(0), 2, 3, 4)
}
