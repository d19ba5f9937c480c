package hlo_test

import "testing"

// argmax reduces (value, index) pairs: the variadic reducer of the cases.
const argmax = `
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  v = f32[] select(gt, v0, v1)
  i = s32[] select(gt, i0, i1)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
`

func TestInferReductions(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "reduce", doc: "Reduce: the reduced dimensions are removed",
			hlo: module(addF32, `
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = reduce(x, z), dimensions={1}, to_apply=add_f32`), want: "f32[2]"},
		{name: "reduce all", doc: "Reduce: reducing every dimension gives a scalar",
			hlo: module(addF32, `
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = reduce(x, z), dimensions={0,1}, to_apply=add_f32`), want: "f32[]"},
		{name: "variadic reduce", doc: "Reduce: N inputs give a tuple of N results",
			hlo: module(argmax, `
  v = f32[4,5] parameter(0)
  i = s32[4,5] parameter(1)
  zv = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT r = reduce(v, i, zv, zi), dimensions={0}, to_apply=argmax`), want: "(f32[5], s32[5])"},
		{name: "reduce reducer arity", doc: "Reduce: the computation takes 2N scalars",
			hlo: module(argmax, `
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=argmax`), err: "must take 2 parameters, but takes 4"},
		{name: "reduce out of range", doc: "Reduce: the dimensions are the operand's",
			hlo: module(addF32, `
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={2}, to_apply=add_f32`), err: "out-of-bounds dimension 2"},
		{name: "reduce init type", doc: "Reduce: the init value has the accumulator's type",
			hlo: module(addF32, `
  x = f32[2,3] parameter(0)
  z = s32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add_f32`), err: "init_value"},
		{name: "reduce-window", doc: "ReduceWindow: one output per window position, (n - w) / stride + 1",
			hlo: module(addF32, `
  x = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = reduce-window(x, z), window={size=2x3 stride=2x3}, to_apply=add_f32`), want: "f32[2,2]"},
		{name: "reduce-window padded", doc: "ReduceWindow: padding adds positions",
			hlo: module(addF32, `
  x = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = reduce-window(x, z), window={size=2x2 pad=0_1x0_0}, to_apply=add_f32`), want: "f32[4,5]"},
		{name: "variadic reduce-window", doc: "ReduceWindow: N inputs give a tuple of N results",
			hlo: module(argmax, `
  v = f32[4] parameter(0)
  i = s32[4] parameter(1)
  zv = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT r = reduce-window(v, i, zv, zi), window={size=2 stride=2}, to_apply=argmax`), want: "(f32[2], s32[2])"},
		{name: "select-and-scatter", doc: "SelectAndScatter: the result has the operand's shape; source has the windowed shape",
			hlo: module(addF32+lessF32, `
  x = f32[4,6] parameter(0)
  s = f32[2,3] parameter(1)
  z = f32[] constant(0)
  ROOT r = select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=less_f32, scatter=add_f32`), want: "f32[4,6]"},
		{name: "select-and-scatter source", doc: "SelectAndScatter: source has one element per window position",
			hlo: module(addF32+lessF32, `
  x = f32[4,6] parameter(0)
  s = f32[2,2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,6] select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=less_f32, scatter=add_f32`), err: "source shape does not match"},
		{name: "sort", doc: "Sort: one operand keeps its shape",
			hlo: module(lessF32, `
  x = f32[3,4] parameter(0)
  ROOT s = sort(x), dimensions={1}, to_apply=less_f32`), want: "f32[3,4]"},
		{name: "sort variadic", doc: "Sort: several operands give a tuple",
			hlo: module(`
less_kv {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
`, `
  k = f32[3] parameter(0)
  v = s32[3] parameter(1)
  ROOT s = sort(k, v), dimensions={0}, to_apply=less_kv`), want: "(f32[3], s32[3])"},
		{name: "sort comparator arity", doc: "Sort: the comparator takes two scalars per operand",
			hlo: module(lessF32, `
  k = f32[3] parameter(0)
  v = s32[3] parameter(1)
  ROOT s = (f32[3], s32[3]) sort(k, v), dimensions={0}, to_apply=less_f32`), err: "to have 4 parameters"},
		{name: "topk", doc: "TopK: (values, s32 indices) with the last dimension k",
			hlo: unaryAttrs("topk", "f32[5,10]", ", k=3, largest=true"), want: "(f32[5,3], s32[5,3])"},
		{name: "gather rows", doc: "Gather: batch dimensions from the indices, offset dimensions from slice_sizes",
			hlo: binary("gather", "f32[5,4]", "s32[3]", ", offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}"), want: "f32[3,4]"},
		{name: "gather windows", doc: "Gather: offset_dims place the non-collapsed slice dimensions",
			hlo: binary("gather", "f32[3,4,5]", "s32[2,2]", ", offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,2}, index_vector_dim=1, slice_sizes={1,2,3}"), want: "f32[2,2,3]"},
		{name: "gather batching", doc: "Gather: operand batching dimensions are neither offset nor collapsed",
			hlo: binary("gather", "f32[4,5,6]", "s32[4,3,1]", ", offset_dims={2}, collapsed_slice_dims={2}, start_index_map={2}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,5,1}"), want: "f32[4,3,5]"},
		{name: "gather slice too big", doc: "Gather: slice sizes fit in the operand",
			hlo: binary("f32[3,5] gather", "f32[5,4]", "s32[3]", ", offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}"), err: "out of range"},
		{name: "scatter", doc: "Scatter: the result has the operand's shape",
			hlo: module(addF32, `
  x = f32[5,4] parameter(0)
  i = s32[3] parameter(1)
  u = f32[3,4] parameter(2)
  ROOT s = scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32`), want: "f32[5,4]"},
		{name: "scatter updates rank", doc: "Scatter: updates have the scatter dimensions plus the window dimensions",
			hlo: module(addF32, `
  x = f32[5,4] parameter(0)
  i = s32[3] parameter(1)
  u = f32[3,4,1] parameter(2)
  ROOT s = f32[5,4] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32`), err: "updates tensor must be of rank 2"},
		{name: "variadic scatter", doc: "Scatter: N operands give a tuple",
			hlo: module(argmax, `
  x = f32[5] parameter(0)
  y = s32[5] parameter(1)
  i = s32[2,1] parameter(2)
  u = f32[2] parameter(3)
  v = s32[2] parameter(4)
  ROOT s = scatter(x, y, i, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=argmax`), want: "(f32[5], s32[5])"},
	})
}
