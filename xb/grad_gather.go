package xb

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Gather and scatter are each other's transposes: a gather's adjoint adds
// the output adjoint back into zeros at the gathered places (a scatter-add
// with the corresponding dimension numbers), and a scatter's update
// adjoint gathers the output adjoint at the scattered places.
//
// As in JAX, the rules assume in-bounds indices: XLA's gather clamps an
// out-of-bounds start into range while scatter skips such an update, so
// for clamped indices the gather adjoint drops those contributions.

func init() {
	registerGrad(gradGather, hlo.OpGather)
	registerGrad(gradScatter, hlo.OpScatter)
}

func gradGather(z, g *Op) []*Op {
	x, idx := z.inputs[0], z.inputs[1]
	in := z.in
	ints := func(name string) []int64 { v, _ := in.Ints(name); return v }
	ivd, _ := in.Int("index_vector_dim")
	dims := ScatterDims{
		UpdateWindowDims:           ints("offset_dims"),
		InsertedWindowDims:         ints("collapsed_slice_dims"),
		ScatterDimsToOperandDims:   ints("start_index_map"),
		InputBatchingDims:          ints("operand_batching_dims"),
		ScatterIndicesBatchingDims: ints("start_indices_batching_dims"),
		IndexVectorDim:             ivd,
	}
	zeros := z.b.Zeros(x.DType(), x.Dims()...)
	return []*Op{Scatter(zeros, idx, g, dims, addReducer), nil}
}

func gradScatter(z, g *Op) []*Op {
	if len(z.inputs) != 3 {
		z.b.errorf("grad: no gradient rule for a variadic scatter (instruction %s)", z.in.Name)
		return nil
	}
	x, idx, u := z.inputs[0], z.inputs[1], z.inputs[2]
	in := z.in
	ints := func(name string) []int64 { v, _ := in.Ints(name); return v }
	ivd, _ := in.Int("index_vector_dim")
	window := ints("update_window_dims")
	inserted := ints("inserted_window_dims")
	batching := ints("input_batching_dims")
	gd := GatherDims{
		OffsetDims:               window,
		CollapsedSliceDims:       inserted,
		StartIndexMap:            ints("scatter_dims_to_operand_dims"),
		OperandBatchingDims:      batching,
		StartIndicesBatchingDims: ints("scatter_indices_batching_dims"),
		IndexVectorDim:           ivd,
	}
	// The slice sizes are the update window's extents at the operand
	// dimensions it covers, 1 at inserted and batching ones.
	sizes := make([]int64, x.Rank())
	w := 0
	for d := range int64(x.Rank()) {
		if slices.Contains(inserted, d) || slices.Contains(batching, d) {
			sizes[d] = 1
			continue
		}
		sizes[d] = u.Shape().Dims[window[w]]
		w++
	}
	gu := Gather(g, idx, gd, sizes...)
	op, ok := hlo.Combiner(in.Computation("to_apply"))
	switch {
	case ok && op == hlo.OpAdd:
		return []*Op{g, nil, gu}
	case ok && op == hlo.OpParameter:
		// Overwritten places pass nothing back to the operand (indices
		// assumed unique, as for any differentiable overwrite).
		sd := ScatterDims{
			UpdateWindowDims: window, InsertedWindowDims: inserted,
			ScatterDimsToOperandDims: gd.StartIndexMap, InputBatchingDims: batching,
			ScatterIndicesBatchingDims: gd.StartIndicesBatchingDims, IndexVectorDim: ivd,
		}
		gx := Scatter(g, idx, z.b.Zeros(u.DType(), u.Dims()...), sd, nil)
		return []*Op{gx, nil, gu}
	}
	z.b.errorf("grad: no gradient rule for scatter with combiner %s (instruction %s): only add and overwrite",
		in.Computation("to_apply").Name, in.Name)
	return nil
}
