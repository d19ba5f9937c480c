package eval

import (
	"fmt"
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

func init() {
	register(evalGather, hlo.OpGather)
}

// gsInts reads an optional integer-list attribute (absent means empty).
func gsInts(in *hlo.Instruction, name string) []int64 {
	v, _ := in.Ints(name)
	return v
}

// startIndices is the start_indices (gather) or scatter_indices (scatter)
// operand seen as a batch of index vectors: every dimension except
// index_vector_dim is a batch dimension, in order, and the vector runs
// along index_vector_dim. When index_vector_dim equals the rank, the
// operand reads as if it had a trailing dimension of size 1 (XLA:
// "implicitly consider that start_indices has a trailing 1 dimension").
type startIndices struct {
	vals      []int64
	vecLen    int
	vecStride int
	ivd       int64
	base      []int   // per batch position (row-major), offset of its vector
	sizes     []int64 // sizes of the batch dimensions, in order
	after     []int   // per batch dimension, product of the later sizes
}

func newStartIndices(l *hlo.Literal, ivd int64) (*startIndices, error) {
	ext := slices.Clone(l.Shape().Dims)
	if ivd < 0 || ivd > int64(len(ext)) {
		return nil, fmt.Errorf("index_vector_dim %d out of range for indices of rank %d", ivd, len(ext))
	}
	if ivd == int64(len(ext)) {
		ext = append(ext, 1)
	}
	strides := hlo.RowMajorStrides(ext)
	batch := complementDims(len(ext), []int64{ivd})
	vals := loadInt64(l)
	if l.DType() == hlo.U64 {
		// Unsigned indices past 2^63 are huge, not negative: they clamp
		// (gather) or fall out of bounds (scatter) at the top.
		for i, v := range vals {
			if v < 0 {
				vals[i] = math.MaxInt64
			}
		}
	}
	s := &startIndices{vals: vals, vecLen: int(ext[ivd]), vecStride: strides[ivd], ivd: ivd,
		base: offsetTable(batch, ext, strides)}
	for _, d := range batch {
		s.sizes = append(s.sizes, ext[d])
	}
	s.after = hlo.RowMajorStrides(s.sizes)
	return s, nil
}

// component is element k of batch position b's index vector.
func (s *startIndices) component(b, k int) int64 { return s.vals[s.base[b]+k*s.vecStride] }

// coord is batch position b's coordinate along the batch dimension that
// is indices dimension idxDim (an operand batching dimension takes it).
func (s *startIndices) coord(b int, idxDim int64) int64 {
	j := idxDim
	if idxDim > s.ivd {
		j-- // index_vector_dim is not a batch dimension
	}
	return int64(b/s.after[j]) % s.sizes[j]
}

// operandOffsets returns, for each batch position b, the operand offset
// at gives for b's full start index: the index vector scattered to the
// operand dimensions it maps to (start_index_map or
// scatter_dims_to_operand_dims), and each operand batching dimension
// taking the batch coordinate of its paired indices batching dimension;
// other dimensions start at 0.
func (s *startIndices) operandOffsets(rank int, toOperand, opBatch, idxBatch []int64, at func(start []int64) int) []int {
	out := make([]int, len(s.base))
	for b := range out {
		start := make([]int64, rank)
		for k, d := range toOperand {
			start[d] = s.component(b, k)
		}
		for i, d := range opBatch {
			start[d] = s.coord(b, idxBatch[i])
		}
		out[b] = at(start)
	}
	return out
}

// windowPlan is a gather or scatter reduced to offsets: for each index
// vector (batch position) a destination and a source base, and one window
// of offsets added to both. A negative destination base marks a skipped
// window (scatter's out-of-bounds updates).
type windowPlan struct {
	dstBase, srcBase []int
	dstWin, srcWin   []int
}

// batchAndWindowOffsets splits the offsets of s's elements into those of
// its batch positions (the dimensions other than win) and those within
// one window (the dimensions win), as gather's output and scatter's
// updates are laid out.
func batchAndWindowOffsets(s hlo.Shape, win []int64) (batch, window []int) {
	st := hlo.RowMajorStrides(s.Dims)
	return offsetTable(complementDims(s.Rank(), win), s.Dims, st), offsetTable(win, s.Dims, st)
}

// windowCopy moves every planned element in index order; the type switch
// in copyWindows picks the instantiation once per op.
func windowCopy[T any](dst, src []T, p *windowPlan) {
	for b, db := range p.dstBase {
		if db < 0 {
			continue
		}
		sb := p.srcBase[b]
		for w, dw := range p.dstWin {
			dst[db+dw] = src[sb+p.srcWin[w]]
		}
	}
}

func copyWindows(dst, src *hlo.Literal, p *windowPlan) error {
	switch d := dst.Data().(type) {
	case []bool:
		windowCopy(d, src.Data().([]bool), p)
	case []int8:
		windowCopy(d, src.Data().([]int8), p)
	case []int16:
		windowCopy(d, src.Data().([]int16), p)
	case []int32:
		windowCopy(d, src.Data().([]int32), p)
	case []int64:
		windowCopy(d, src.Data().([]int64), p)
	case []uint8:
		windowCopy(d, src.Data().([]uint8), p)
	case []uint16:
		windowCopy(d, src.Data().([]uint16), p)
	case []uint32:
		windowCopy(d, src.Data().([]uint32), p)
	case []uint64:
		windowCopy(d, src.Data().([]uint64), p)
	case []float32:
		windowCopy(d, src.Data().([]float32), p)
	case []float64:
		windowCopy(d, src.Data().([]float64), p)
	case []complex64:
		windowCopy(d, src.Data().([]complex64), p)
	case []complex128:
		windowCopy(d, src.Data().([]complex128), p)
	default:
		return fmt.Errorf("element type %s: %w", dst.DType(), ErrUnimplemented)
	}
	return nil
}

// evalGather follows XLA's operation semantics: output batch dimensions
// (those not in offset_dims) walk the index vectors, offset dimensions walk
// the slice's non-collapsed, non-batching operand dimensions in order, and
// each start is clamped so the whole slice lies inside the operand.
func evalGather(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	ivd, _ := in.Int("index_vector_dim")
	idx, err := newStartIndices(ops[1], ivd)
	if err != nil {
		return nil, err
	}
	sizes := gsInts(in, "slice_sizes")
	if len(sizes) != x.Shape().Rank() {
		return nil, fmt.Errorf("gather: %d slice sizes for an operand of rank %d", len(sizes), x.Shape().Rank())
	}
	out := hlo.NewLiteral(in.Shape)
	p, err := gatherPlan(in, x.Shape(), in.Shape, idx, sizes)
	if err != nil {
		return nil, err
	}
	if err := copyWindows(out, x, p); err != nil {
		return nil, err
	}
	return out, nil
}

func gatherPlan(in *hlo.Instruction, xs, os hlo.Shape, idx *startIndices, sizes []int64) (*windowPlan, error) {
	offsetDims := gsInts(in, "offset_dims")
	opBatch := gsInts(in, "operand_batching_dims")
	idxBatch := gsInts(in, "start_indices_batching_dims")
	startMap := gsInts(in, "start_index_map")
	xStrides := hlo.RowMajorStrides(xs.Dims)
	winDims := complementDims(xs.Rank(), gsInts(in, "collapsed_slice_dims"), opBatch)
	p := &windowPlan{srcWin: offsetTable(winDims, sizes, xStrides)}
	p.dstBase, p.dstWin = batchAndWindowOffsets(os, offsetDims)
	if len(p.dstBase) != len(idx.base) {
		return nil, fmt.Errorf("gather: %d output batch positions for %d index vectors", len(p.dstBase), len(idx.base))
	}
	p.srcBase = idx.operandOffsets(xs.Rank(), startMap, opBatch, idxBatch, func(start []int64) int {
		return gatherBase(start, xs.Dims, sizes, xStrides)
	})
	return p, nil
}

// gatherBase is the operand offset of a slice of the given sizes starting
// at start, "the starting indices clamped so the slice lies within the
// operand": to [0, dim - slice_size].
func gatherBase(start, dims, sizes []int64, strides []int) int {
	off := 0
	for d, s := range start {
		s = max(0, min(s, dims[d]-sizes[d]))
		off += int(s) * strides[d]
	}
	return off
}
