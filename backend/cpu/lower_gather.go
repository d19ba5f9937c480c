package cpu

import (
	"math"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Gather and scatter compile to a window box (the slice, or the update
// window, as strides on both sides) plus per-index-vector offsets. All
// index arithmetic that does not depend on the index values is resolved
// here; at run time each index vector costs one read per component and a
// clamp (gather) or bounds check (scatter), then one box copy.

// offsetTable lists Σ idx[d]·strides[d] over the dimensions sel of dims,
// one entry per position in row-major order of sel.
func offsetTable(sel, dims []int64, strides []int) []int {
	offs := []int{0}
	for _, d := range sel {
		n := int(dims[d])
		next := make([]int, 0, len(offs)*n)
		for _, o := range offs {
			for i := range n {
				next = append(next, o+i*strides[d])
			}
		}
		offs = next
	}
	return offs
}

// otherDims lists 0..rank-1 without the dimensions in any of skip.
func otherDims(rank int, skip ...[]int64) []int64 {
	drop := make([]bool, rank)
	for _, s := range skip {
		for _, d := range s {
			if d >= 0 && int(d) < rank {
				drop[d] = true
			}
		}
	}
	var out []int64
	for d := range rank {
		if !drop[d] {
			out = append(out, int64(d))
		}
	}
	return out
}

// attrInts reads an optional integer-list attribute (absent is empty).
func attrInts(in *hlo.Instruction, name string) []int64 {
	v, _ := in.Ints(name)
	return v
}

// distinctIn: every dimension is in [0, rank) and appears once across all
// the lists (XLA's dimension numbers partition the operand's dimensions).
func distinctIn(rank int, lists ...[]int64) bool {
	seen := make([]bool, rank)
	for _, l := range lists {
		for _, d := range l {
			if d < 0 || int(d) >= rank || seen[d] {
				return false
			}
			seen[d] = true
		}
	}
	return true
}

// indexVectors is the indices operand of a gather or scatter seen as a
// batch of index vectors (every dimension but index_vector_dim is a batch
// dimension; index_vector_dim == rank means vectors of length 1), with
// the operand-side facts each vector component needs.
type indexVectors struct {
	base      []int // per vector (row-major over batch dims): its offset in the indices
	vecStride int   // distance between a vector's components
	// Per component k: the operand stride of the dimension it starts, and
	// the largest valid start (operand size less the window's size).
	stride []int
	limit  []int64
	// batchOff is per vector the operand offset its coordinates along the
	// indices batching dimensions give the paired operand batching dims.
	batchOff []int
}

// newIndexVectors maps indices of shape is to operand dimensions toOperand
// of an operand with the given dims, strides and window sizes; opBatch[i]
// takes the coordinate of indices dimension idxBatch[i]. It reports false
// for dimension numbers it does not understand.
func newIndexVectors(is hlo.Shape, ivd int64, toOperand, opBatch, idxBatch []int64,
	xDims, win []int64, xStrides []int) (*indexVectors, bool) {
	ext := append([]int64(nil), is.Dims...)
	if ivd < 0 || ivd > int64(len(ext)) || len(opBatch) != len(idxBatch) {
		return nil, false
	}
	if ivd == int64(len(ext)) {
		ext = append(ext, 1)
	}
	if int(ext[ivd]) != len(toOperand) || !distinctIn(len(xDims), toOperand, opBatch) {
		return nil, false
	}
	strides := hlo.RowMajorStrides(ext)
	batch := otherDims(len(ext), []int64{ivd})
	v := &indexVectors{base: offsetTable(batch, ext, strides), vecStride: strides[ivd]}
	for _, d := range toOperand {
		v.stride = append(v.stride, xStrides[d])
		v.limit = append(v.limit, xDims[d]-win[d])
	}
	// A batching dimension's coordinate becomes an operand offset: give
	// the paired indices dimension the operand dimension's stride.
	bStrides := make([]int, len(ext))
	for i, id := range idxBatch {
		od := opBatch[i]
		if id < 0 || id >= int64(len(ext)) || id == ivd || ext[id] != xDims[od] || win[od] != 1 {
			return nil, false
		}
		bStrides[id] = xStrides[od]
	}
	v.batchOff = offsetTable(batch, ext, bStrides)
	return v, true
}

// indexReader returns element i of an integer indices literal as int64;
// unsigned values past 2^63 read as MaxInt64 (huge, not negative), as the
// evaluator reads them.
func indexReader(l *hlo.Literal) func(i int) int64 {
	switch d := l.Data().(type) {
	case []int32:
		return func(i int) int64 { return int64(d[i]) }
	case []int64:
		return func(i int) int64 { return d[i] }
	case []uint32:
		return func(i int) int64 { return int64(d[i]) }
	case []uint8:
		return func(i int) int64 { return int64(d[i]) }
	case []int8:
		return func(i int) int64 { return int64(d[i]) }
	case []int16:
		return func(i int) int64 { return int64(d[i]) }
	case []uint16:
		return func(i int) int64 { return int64(d[i]) }
	case []uint64:
		return func(i int) int64 { return int64(min(d[i], math.MaxInt64)) }
	}
	return nil
}

// indexType: the index dtypes indexReader reads.
func indexType(t hlo.DType) bool {
	switch t {
	case hlo.S8, hlo.S16, hlo.S32, hlo.S64, hlo.U8, hlo.U16, hlo.U32, hlo.U64:
		return true
	}
	return false
}

// gatherStart is vector b's operand offset with every start clamped to
// [0, limit] so the slice lies inside the operand.
func (v *indexVectors) gatherStart(read func(int) int64, b int) int {
	off, at := v.batchOff[b], v.base[b]
	for k, s := range v.stride {
		off += int(max(0, min(read(at+k*v.vecStride), v.limit[k]))) * s
	}
	return off
}

// scatterStart is vector b's operand offset, or -1 when its window does
// not lie inside the operand (XLA skips such updates).
func (v *indexVectors) scatterStart(read func(int) int64, b int) int {
	off, at := v.batchOff[b], v.base[b]
	for k, s := range v.stride {
		i := read(at + k*v.vecStride)
		if i < 0 || i > v.limit[k] {
			return -1
		}
		off += int(i) * s
	}
	return off
}

// gatherPlan is a lowered gather: per index vector an output offset, and
// the slice as a box from operand to output.
type gatherPlan struct {
	idx     *indexVectors
	dstBase []int
	win     box
	threads int
}

// lowerGather compiles an XLA gather of any element type with integer
// indices.
func lowerGather(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if in.Opcode != hlo.OpGather || len(in.Operands) != 2 || !movable(in, 0) ||
		!plainArray(in.Operands[1].Shape) || !indexType(in.Operands[1].Shape.DType) {
		return nil, false
	}
	p, ok := planGather(in)
	if !ok {
		return nil, false
	}
	p.threads = threads
	return byWidth(storageWidth(in.Shape.DType), p, runGather[uint8], runGather[uint16], runGather[uint32], runGather[uint64],
		runGather[[2]uint64])
}

// planGather follows XLA's semantics (as eval/gather.go does): output
// dimensions not in offset_dims walk the index vectors, offset_dims walk
// the operand dimensions that are neither collapsed nor batching.
func planGather(in *hlo.Instruction) (*gatherPlan, bool) {
	xs, os := in.Operands[0].Shape, in.Shape
	sizes := attrInts(in, "slice_sizes")
	offsetDims := attrInts(in, "offset_dims")
	collapsed := attrInts(in, "collapsed_slice_dims")
	opBatch := attrInts(in, "operand_batching_dims")
	ivd, _ := in.Int("index_vector_dim") // absent reads as 0, as in the evaluator
	if len(sizes) != xs.Rank() || !distinctIn(xs.Rank(), collapsed, opBatch) ||
		!distinctIn(os.Rank(), offsetDims) {
		return nil, false
	}
	for d, s := range sizes {
		if s < 0 || s > xs.Dims[d] {
			return nil, false
		}
	}
	xStrides, oStrides := hlo.RowMajorStrides(xs.Dims), hlo.RowMajorStrides(os.Dims)
	idx, ok := newIndexVectors(in.Operands[1].Shape, ivd, attrInts(in, "start_index_map"), opBatch,
		attrInts(in, "start_indices_batching_dims"), xs.Dims, sizes, xStrides)
	if !ok {
		return nil, false
	}
	winDims := otherDims(xs.Rank(), collapsed, opBatch)
	if len(winDims) != len(offsetDims) {
		return nil, false
	}
	p := &gatherPlan{idx: idx, dstBase: offsetTable(otherDims(os.Rank(), offsetDims), os.Dims, oStrides)}
	if len(p.dstBase) != len(idx.base) {
		return nil, false
	}
	var dims []int64
	var ds, ss []int
	for k, d := range winDims {
		if os.Dims[offsetDims[k]] != sizes[d] {
			return nil, false
		}
		dims = append(dims, sizes[d])
		ds, ss = append(ds, oStrides[offsetDims[k]]), append(ss, xStrides[d])
	}
	p.win = newBox(0, dims, ds, ss)
	if !p.win.finish() {
		p.dstBase = nil // an empty slice: the output has no elements
	}
	return p, true
}

func runGather[W word](p *gatherPlan) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst, src := wordsOf[W](out), wordsOf[W](ops[0])
		read := indexReader(ops[1])
		n := len(p.dstBase)
		if n == 0 || len(dst) == 0 {
			return nil
		}
		part := func(lo, hi int) {
			b := p.win // per call: the plan is shared by concurrent calls
			for i := lo; i < hi; i++ {
				b.dstOff, b.srcOff = p.dstBase[i], p.idx.gatherStart(read, i)
				copyBox(dst, src, &b)
			}
		}
		splitRange(n, len(dst), p.threads, part)
		return nil
	}
}

// splitRange runs part over [0, n) in fixed contiguous pieces, one per
// thread, when the work (elements touched) is big enough to pay for the
// wake-up; each piece writes its own outputs, so results do not depend
// on the thread count.
func splitRange(n, work, threads int, part func(lo, hi int)) {
	if threads <= 1 || n < threads || work < parallelCopy/4 {
		part(0, n)
		return
	}
	kernels.Parallel(threads, func(t int) {
		part(n*t/threads, n*(t+1)/threads)
	})
}
