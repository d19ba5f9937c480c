package xb

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// DotDims are the dimension numbers of DotGeneral.
type DotDims struct {
	LhsContracting, RhsContracting []int64
	LhsBatch, RhsBatch             []int64
}

// DotGeneral contracts x and y: the result holds the batch dimensions,
// then x's free dimensions, then y's.
func DotGeneral(x, y *Op, dims DotDims) *Op {
	b := builderOf(x, y)
	if b == nil || !b.check("dot", x, y) {
		return poison(b)
	}
	if x.DType() != y.DType() {
		b.errorf("dot: element types %s and %s differ; Convert one", x.DType(), y.DType())
		return b.poisoned()
	}
	var attrs []hlo.Attr
	// XLA prints only the dimension lists that are non-empty.
	for _, a := range []hlo.Attr{
		{Name: "lhs_batch_dims", Value: dims.LhsBatch}, {Name: "lhs_contracting_dims", Value: dims.LhsContracting},
		{Name: "rhs_batch_dims", Value: dims.RhsBatch}, {Name: "rhs_contracting_dims", Value: dims.RhsContracting},
	} {
		if v := a.Value.([]int64); len(v) > 0 {
			attrs = append(attrs, hlo.Attr{Name: a.Name, Value: slices.Clone(v)})
		}
	}
	return b.add(instr{op: hlo.OpDot, operands: []*Op{x, y}, attrs: attrs})
}

// Dot is XLA's Dot: vector·vector, matrix·vector or matrix·matrix,
// contracting x's last dimension with y's first.
func Dot(x, y *Op) *Op {
	b := builderOf(x, y)
	if b == nil || !b.check("dot", x, y) {
		return poison(b)
	}
	if x.Rank() < 1 || x.Rank() > 2 || y.Rank() < 1 || y.Rank() > 2 {
		b.errorf("dot: operands must be vectors or matrices, got %s and %s (use DotGeneral or MatMul)",
			x.Shape().HumanString(), y.Shape().HumanString())
		return b.poisoned()
	}
	return DotGeneral(x, y, DotDims{LhsContracting: []int64{int64(x.Rank() - 1)}, RhsContracting: []int64{0}})
}

// MatMul multiplies matrices numpy-style: [..., m, k] × [..., k, n] →
// [..., m, n], with equal leading (batch) dimensions.
func MatMul(x, y *Op) *Op {
	b := builderOf(x, y)
	if b == nil || !b.check("matmul", x, y) {
		return poison(b)
	}
	r := x.Rank()
	if r < 2 || y.Rank() != r {
		b.errorf("matmul: operands must be matrices of one rank, got %s and %s", x.Shape().HumanString(), y.Shape().HumanString())
		return b.poisoned()
	}
	batch := make([]int64, r-2)
	for i := range batch {
		batch[i] = int64(i)
	}
	return DotGeneral(x, y, DotDims{
		LhsContracting: []int64{int64(r - 1)}, RhsContracting: []int64{int64(r - 2)},
		LhsBatch: batch, RhsBatch: batch,
	})
}

// ConvDims are the dimension numbers of a convolution: which dimension of
// input, kernel and output is batch / feature / each spatial one.
type ConvDims = hlo.ConvDimNumbers

// ConvConfig is everything about a convolution besides its operands.
type ConvConfig struct {
	Dims *ConvDims
	// Strides, Padding (lo, hi), LhsDilation and RhsDilation are per
	// spatial dimension; nil means 1 (or no padding).
	Strides                  []int64
	Padding                  [][2]int64
	LhsDilation, RhsDilation []int64
	FeatureGroupCount        int64 // 0 means 1
	BatchGroupCount          int64 // 0 means 1
}

// Conv is HLO's general convolution of input x with kernel k.
func Conv(x, k *Op, cfg ConvConfig) *Op {
	b := builderOf(x, k)
	if b == nil || !b.check("convolution", x, k) {
		return poison(b)
	}
	dn := cfg.Dims
	if dn == nil {
		b.errorf("convolution: no dimension numbers")
		return b.poisoned()
	}
	n := len(dn.KernelSpatial)
	if k.Rank() != n+2 || len(dn.InputSpatial) != n || len(dn.OutputSpatial) != n {
		b.errorf("convolution: dimension numbers %s do not fit kernel %s", dn, k.Shape().HumanString())
		return b.poisoned()
	}
	for _, l := range [][]int64{cfg.Strides, cfg.LhsDilation, cfg.RhsDilation} {
		if l != nil && len(l) != n {
			b.errorf("convolution: %d spatial dimensions, but a per-dimension list has %d entries", n, len(l))
			return b.poisoned()
		}
	}
	if cfg.Padding != nil && len(cfg.Padding) != n {
		b.errorf("convolution: %d spatial dimensions, but %d paddings", n, len(cfg.Padding))
		return b.poisoned()
	}
	w := &hlo.Window{Dims: make([]hlo.WindowDim, n)}
	for i := range w.Dims {
		d := hlo.WindowDim{Size: k.Shape().Dims[dn.KernelSpatial[i]], Stride: 1, LhsDilation: 1, RhsDilation: 1}
		if cfg.Strides != nil {
			d.Stride = cfg.Strides[i]
		}
		if cfg.Padding != nil {
			d.PadLo, d.PadHi = cfg.Padding[i][0], cfg.Padding[i][1]
		}
		if cfg.LhsDilation != nil {
			d.LhsDilation = cfg.LhsDilation[i]
		}
		if cfg.RhsDilation != nil {
			d.RhsDilation = cfg.RhsDilation[i]
		}
		w.Dims[i] = d
	}
	dnCopy := *dn
	attrs := []hlo.Attr{{Name: "window", Value: w}, {Name: "dim_labels", Value: &dnCopy}}
	if cfg.FeatureGroupCount > 1 {
		attrs = append(attrs, hlo.Attr{Name: "feature_group_count", Value: cfg.FeatureGroupCount})
	}
	if cfg.BatchGroupCount > 1 {
		attrs = append(attrs, hlo.Attr{Name: "batch_group_count", Value: cfg.BatchGroupCount})
	}
	return b.add(instr{op: hlo.OpConvolution, operands: []*Op{x, k}, attrs: attrs})
}

// GatherDims are the dimension numbers of Gather (XLA's
// GatherDimensionNumbers).
type GatherDims struct {
	OffsetDims, CollapsedSliceDims, StartIndexMap []int64
	OperandBatchingDims, StartIndicesBatchingDims []int64
	IndexVectorDim                                int64
}

// Gather is HLO's gather: slices of sizes sliceSizes of x at the starts
// held in indices.
func Gather(x, indices *Op, dims GatherDims, sliceSizes ...int64) *Op {
	b := builderOf(x, indices)
	if b == nil {
		return orphan()
	}
	attrs := []hlo.Attr{
		{Name: "offset_dims", Value: nonNil(slices.Clone(dims.OffsetDims))},
		{Name: "collapsed_slice_dims", Value: nonNil(slices.Clone(dims.CollapsedSliceDims))},
		{Name: "start_index_map", Value: nonNil(slices.Clone(dims.StartIndexMap))},
		{Name: "index_vector_dim", Value: dims.IndexVectorDim},
		{Name: "slice_sizes", Value: nonNil(slices.Clone(sliceSizes))},
	}
	if len(dims.OperandBatchingDims) > 0 || len(dims.StartIndicesBatchingDims) > 0 {
		attrs = append(attrs, hlo.Attr{Name: "operand_batching_dims", Value: nonNil(slices.Clone(dims.OperandBatchingDims))},
			hlo.Attr{Name: "start_indices_batching_dims", Value: nonNil(slices.Clone(dims.StartIndicesBatchingDims))})
	}
	return b.add(instr{op: hlo.OpGather, operands: []*Op{x, indices}, attrs: attrs})
}

// Take selects whole slices of x along axis by integer indices of any
// shape: the result replaces dimension axis with indices' dimensions
// (numpy's take; an embedding lookup is Take(table, ids, 0)).
func Take(x, indices *Op, axis int64) *Op {
	b := builderOf(x, indices)
	if b == nil || !b.check("take", x, indices) {
		return poison(b)
	}
	r := int64(x.Rank())
	if axis < 0 || axis >= r {
		b.errorf("take: axis %d is out of range for %s", axis, x.Shape().HumanString())
		return b.poisoned()
	}
	ir := int64(indices.Rank())
	sizes := x.Dims()
	sizes[axis] = 1
	var offset []int64
	for d := range r {
		switch {
		case d < axis:
			offset = append(offset, d)
		case d > axis:
			offset = append(offset, d-1+ir)
		}
	}
	// The index vector dimension is past the last: each index is a
	// single coordinate. Gather puts the batch (index) dimensions where
	// offset_dims leaves room, which is at axis.
	return Gather(x, indices, GatherDims{OffsetDims: offset, CollapsedSliceDims: []int64{axis}, StartIndexMap: []int64{axis}, IndexVectorDim: ir}, sizes...)
}

// ScatterDims are the dimension numbers of Scatter (XLA's
// ScatterDimensionNumbers).
type ScatterDims struct {
	UpdateWindowDims, InsertedWindowDims, ScatterDimsToOperandDims []int64
	InputBatchingDims, ScatterIndicesBatchingDims                  []int64
	IndexVectorDim                                                 int64
}

// Scatter is HLO's scatter of one operand: updates are combined into x at
// the places indices name, with fn (nil: the update replaces the value).
func Scatter(x, indices, updates *Op, dims ScatterDims, fn Reducer) *Op {
	b := builderOf(x, indices, updates)
	if b == nil || !b.check("scatter", x, indices, updates) {
		return poison(b)
	}
	if fn == nil {
		fn = func(_ *Builder, _, u *Op) *Op { return u }
	}
	c := b.scalarBinary("scatter_fn", x.DType(), fn)
	if c == nil {
		return b.poisoned()
	}
	attrs := []hlo.Attr{
		{Name: "update_window_dims", Value: nonNil(slices.Clone(dims.UpdateWindowDims))},
		{Name: "inserted_window_dims", Value: nonNil(slices.Clone(dims.InsertedWindowDims))},
		{Name: "scatter_dims_to_operand_dims", Value: nonNil(slices.Clone(dims.ScatterDimsToOperandDims))},
		{Name: "index_vector_dim", Value: dims.IndexVectorDim},
		{Name: "to_apply", Value: c},
	}
	if len(dims.InputBatchingDims) > 0 || len(dims.ScatterIndicesBatchingDims) > 0 {
		attrs = append(attrs, hlo.Attr{Name: "input_batching_dims", Value: nonNil(slices.Clone(dims.InputBatchingDims))},
			hlo.Attr{Name: "scatter_indices_batching_dims", Value: nonNil(slices.Clone(dims.ScatterIndicesBatchingDims))})
	}
	return b.add(instr{op: hlo.OpScatter, operands: []*Op{x, indices, updates}, attrs: attrs})
}
