package eval_test

import (
	"testing"
)

// XLA operation semantics, Gather: "If the index is out of bounds ... the
// starting indices are clamped so the slice fits": each start is clamped to
// [0, operand_dim - slice_size], so -3 reads from 0 and 4 reads from 2.
func TestGatherClampsStartIndices(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  x = s32[5] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = s32[3,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={3}
}`, laLit(t, []int32{0, 1, 2, 3, 4}, 5), laLit(t, []int32{-3, 2, 4}, 3, 1))
	laWant(t, got, int32(0), 1, 2, 2, 3, 4, 2, 3, 4)
}

// XLA operation semantics, Gather with batching dimensions: operand batching
// dimension 0 takes the batch coordinate of start_indices dimension 0, so
// out[b][j] = x[b][i[b][j]]; index_vector_dim equal to the indices' rank
// means a trailing vector of length 1; 5 clamps to 2.
func TestGatherBatchingDims(t *testing.T) {
	got := laRunHLO(t, `HloModule m
ENTRY e {
  x = s32[2,3] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = s32[2,2] gather(x, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}
}`, laLit(t, []int32{0, 1, 2, 10, 11, 12}, 2, 3), laLit(t, []int32{2, 0, 1, 5}, 2, 2))
	laWant(t, got, int32(2), 0, 11, 12)
}

// XLA's evaluator (and CPU backend) skip an update whose whole window does
// not fit in the operand: start -1 and start 4 (window of 2 in 5) change
// nothing, not even the part of the window that would be in bounds.
func TestScatterSkipsOutOfBoundsWindows(t *testing.T) {
	got := laRunHLO(t, `HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[5] parameter(0)
  i = s32[4,1] parameter(1)
  u = s32[4,2] parameter(2)
  ROOT s = s32[5] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}`, laLit(t, []int32{0, 0, 0, 0, 0}, 5), laLit(t, []int32{-1, 4, 1, 3}, 4, 1),
		laLit(t, []int32{7, 7, 9, 9, 1, 1, 3, 3}, 4, 2))
	laWant(t, got, int32(0), 1, 1, 3, 3)
}

// XLA operation semantics, Scatter with batching dimensions: operand
// dimension 0 (input_batching_dims) takes the batch coordinate of indices
// dimension 0 (scatter_indices_batching_dims).
func TestScatterBatchingDims(t *testing.T) {
	got := laRunHLO(t, `HloModule m
upd {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}
ENTRY e {
  x = s32[2,3] parameter(0)
  i = s32[2,1] parameter(1)
  u = s32[2] parameter(2)
  ROOT s = s32[2,3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=1, to_apply=upd
}`, laLit(t, make([]int32, 6), 2, 3), laLit(t, []int32{2, 0}, 2, 1), laLit(t, []int32{5, 6}, 2))
	laWant(t, got, int32(0), 0, 5, 6, 0, 0)
}

// Updates apply in index order (as XLA's evaluator does), so with an
// overwriting combiner and duplicate indices the last update wins.
func TestScatterAppliesInIndexOrder(t *testing.T) {
	got := laRunHLO(t, `HloModule m
upd {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}
ENTRY e {
  x = s32[3] parameter(0)
  i = s32[3] parameter(1)
  u = s32[3] parameter(2)
  ROOT s = s32[3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=upd
}`, laLit(t, []int32{0, 0, 0}, 3), laLit(t, []int32{1, 1, 1}, 3), laLit(t, []int32{4, 5, 6}, 3))
	laWant(t, got, int32(0), 6, 0)
}

// The general path: a combiner the fast path does not recognise (here:
// keep the current value) runs the computation once per element.
func TestScatterCallsUnrecognisedCombiner(t *testing.T) {
	got := laRunHLO(t, `HloModule m
keep {
  ROOT a = s32[] parameter(0)
  b = s32[] parameter(1)
}
ENTRY e {
  x = s32[3] parameter(0)
  i = s32[2] parameter(1)
  u = s32[2] parameter(2)
  ROOT s = s32[3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=keep
}`, laLit(t, []int32{1, 2, 3}, 3), laLit(t, []int32{0, 2}, 2), laLit(t, []int32{9, 9}, 2))
	laWant(t, got, int32(1), 2, 3)
}
