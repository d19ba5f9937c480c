package cpu

import (
	"github.com/axle-ml/axle/hlo"
)

// select-and-scatter with a compare select and an add scatter (the
// gradient of max or min pooling) runs in two phases. First, in
// parallel over source positions, each window's selected operand
// position: the first valid one, replaced by each later candidate the
// select rejects (select(best, candidate) false), in row-major window
// order as the evaluator walks it. Then, sequentially in source order,
// the source values are added at their positions into a result filled
// with init — the evaluator's order, so float sums are bit-identical.

// selectRule is select(best, candidate) = a ≥ b (or a > b with strict),
// where (a, b) is (best, candidate), or (candidate, best) with swap:
// GE and GT as written, LE and LT with the operands exchanged.
type selectRule struct{ strict, swap bool }

// selectComparator recognises a select root compare of the two
// parameters, directions GE, GT, LE, LT, on scalars of type t.
func selectComparator(c *hlo.Computation, t hlo.DType) (selectRule, bool) {
	var r selectRule
	if c == nil || c.Root == nil || c.Root.Opcode != hlo.OpCompare || len(c.Root.Operands) != 2 || len(c.Params) != 2 {
		return r, false
	}
	a, b := c.Root.Operands[0], c.Root.Operands[1]
	if a.Opcode != hlo.OpParameter || b.Opcode != hlo.OpParameter || a.ParamNumber == b.ParamNumber ||
		a.Shape.DType != t || b.Shape.DType != t {
		return r, false
	}
	if typ, _ := c.Root.EnumAttr("type"); typ == "TOTALORDER" {
		return r, false
	}
	dir, _ := c.Root.EnumAttr("direction")
	switch dir {
	case "GE":
	case "GT":
		r.strict = true
	case "LE":
		r.swap = true
	case "LT":
		r.strict, r.swap = true, true
	default:
		return r, false
	}
	if a.ParamNumber == 1 { // compare(candidate, best)
		r.swap = !r.swap
	}
	return r, true
}

// selectScatterAdd recognises a scatter root add of the two parameters on
// scalars of type t; swap says add(source, current).
func selectScatterAdd(c *hlo.Computation, t hlo.DType) (swap, ok bool) {
	if c == nil || c.Root == nil || c.Root.Opcode != hlo.OpAdd || len(c.Root.Operands) != 2 || len(c.Params) != 2 {
		return false, false
	}
	a, b := c.Root.Operands[0], c.Root.Operands[1]
	if a.Opcode != hlo.OpParameter || b.Opcode != hlo.OpParameter || a.ParamNumber == b.ParamNumber ||
		a.Shape.DType != t || b.Shape.DType != t || c.Root.Shape.DType != t {
		return false, false
	}
	return a.ParamNumber == 1, true
}

// selectPlan is the window walk: per dimension, source index × window
// index → operand offset (or -1).
type selectPlan struct {
	srcDims, winDims []int
	tabs             [][]int
	rule             selectRule
	swapAdd          bool
	empty            bool // no window position exists: the result is init
	threads          int
}

// lowerSelectAndScatter returns a kernel for a select-and-scatter of
// f32, f64 or integers with a compare select and an add scatter, or false.
func lowerSelectAndScatter(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if in.Opcode != hlo.OpSelectAndScatter || len(in.Operands) != 3 || !plainArray(in.Shape) {
		return nil, false
	}
	x, src, init := in.Operands[0].Shape, in.Operands[1].Shape, in.Operands[2].Shape
	t := x.DType
	if !plainArray(x) || !plainArray(src) || !plainArray(init) || init.Rank() != 0 ||
		src.DType != t || init.DType != t || in.Shape.DType != t || len(in.Shape.Dims) != len(x.Dims) {
		return nil, false
	}
	rule, ok := selectComparator(in.Computation("select"), t)
	if !ok {
		return nil, false
	}
	swapAdd, ok := selectScatterAdd(in.Computation("scatter"), t)
	if !ok {
		return nil, false
	}
	w := in.Window()
	pl := &selectPlan{rule: rule, swapAdd: swapAdd, threads: threads}
	if w == nil || src.NumElements() == 0 || x.NumElements() == 0 {
		pl.empty = true
	} else {
		if len(w.Dims) != x.Rank() || len(src.Dims) != x.Rank() {
			return nil, false
		}
		stride := 1
		pl.tabs = make([][]int, x.Rank())
		for d := x.Rank() - 1; d >= 0; d-- {
			wd := w.Dims[d]
			if wd.Reversal {
				return nil, false
			}
			if wd.Size == 0 {
				pl.empty = true
			}
			pl.tabs[d] = windowTable(wd, x.Dims[d], src.Dims[d], stride)
			stride *= int(x.Dims[d])
		}
		pl.srcDims = make([]int, x.Rank())
		pl.winDims = make([]int, x.Rank())
		for d := range pl.srcDims {
			pl.srcDims[d], pl.winDims[d] = int(src.Dims[d]), int(w.Dims[d].Size)
		}
	}
	switch t {
	case hlo.F32:
		return selectScatterKernel[float32](pl), true
	case hlo.F64:
		return selectScatterKernel[float64](pl), true
	case hlo.S8:
		return selectScatterKernel[int8](pl), true
	case hlo.S16:
		return selectScatterKernel[int16](pl), true
	case hlo.S32:
		return selectScatterKernel[int32](pl), true
	case hlo.S64:
		return selectScatterKernel[int64](pl), true
	case hlo.U8:
		return selectScatterKernel[uint8](pl), true
	case hlo.U16:
		return selectScatterKernel[uint16](pl), true
	case hlo.U32:
		return selectScatterKernel[uint32](pl), true
	case hlo.U64:
		return selectScatterKernel[uint64](pl), true
	}
	return nil, false
}

type addable interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

func selectScatterKernel[T addable](pl *selectPlan) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		dst := out.Data().([]T)
		init := ops[2].Data().([]T)[0]
		for i := range dst {
			dst[i] = init
		}
		if pl.empty {
			return nil
		}
		x, src := ops[0].Data().([]T), ops[1].Data().([]T)
		best := make([]int, len(src))
		splitRange(len(src), len(src)*len(x)/max(len(dst), 1), pl.threads, func(lo, hi int) {
			selectWindows(pl, x, best, lo, hi)
		})
		if pl.swapAdd {
			for o, b := range best {
				if b >= 0 {
					dst[b] = src[o] + dst[b]
				}
			}
			return nil
		}
		for o, b := range best {
			if b >= 0 {
				dst[b] += src[o]
			}
		}
		return nil
	}
}

// selectWindows sets best[o] for source positions o in [lo, hi).
func selectWindows[T addable](pl *selectPlan, x []T, best []int, lo, hi int) {
	rank := len(pl.srcDims)
	sIdx := make([]int, rank)
	wIdx := make([]int, rank)
	// sIdx starts as lo's multi-index.
	for d, r := rank-1, lo; d >= 0; d-- {
		sIdx[d] = r % pl.srcDims[d]
		r /= pl.srcDims[d]
	}
	rule := pl.rule
	for o := lo; o < hi; o++ {
		b := -1
		var bv T
		clear(wIdx)
		for {
			at := 0
			for d := range rank {
				p := pl.tabs[d][sIdx[d]*pl.winDims[d]+wIdx[d]]
				if p < 0 {
					at = -1
					break
				}
				at += p
			}
			if at >= 0 {
				v := x[at]
				if b < 0 {
					b, bv = at, v
				} else {
					l, r := bv, v
					if rule.swap {
						l, r = v, bv
					}
					if !(l > r || !rule.strict && l == r) {
						b, bv = at, v
					}
				}
			}
			if !nextWindow(wIdx, pl.winDims) {
				break
			}
		}
		best[o] = b
		nextWindow(sIdx, pl.srcDims)
	}
}

// nextWindow advances a row-major multi-index; false once it wraps.
func nextWindow(idx, dims []int) bool {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < dims[d] {
			return true
		}
		idx[d] = 0
	}
	return false
}
