package eval

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// windowIndexer maps (output index, window index) to an operand linear
// index under a window's stride, padding and dilations; positions in the
// padding or in the holes of base (lhs) dilation map to -1.
type windowIndexer struct {
	dims    []int64
	strides []int
	w       []hlo.WindowDim
}

func (x *windowIndexer) at(out, win []int64) int {
	lin := 0
	for d, wd := range x.w {
		pos := out[d]*wd.Stride + win[d]*wd.RhsDilation - wd.PadLo
		if pos < 0 || pos%wd.LhsDilation != 0 {
			return -1
		}
		p := pos / wd.LhsDilation
		if p >= x.dims[d] {
			return -1
		}
		lin += int(p) * x.strides[d]
	}
	return lin
}

// nextIndex advances a row-major multi-index; false once it wraps.
func nextIndex(idx, dims []int64) bool {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < dims[d] {
			return true
		}
		idx[d] = 0
	}
	return false
}

func windowSizes(w *hlo.Window) []int64 {
	s := make([]int64, len(w.Dims))
	for i, d := range w.Dims {
		s[i] = d.Size
	}
	return s
}

func hasZero(dims []int64) bool {
	for _, d := range dims {
		if d == 0 {
			return true
		}
	}
	return false
}

// evalReduceWindow folds each window in row-major window order starting
// from the init values; padded positions and base-dilation holes are
// skipped, which equals padding with the init value when init is the
// reducer's identity (the spec pads with init_value).
func evalReduceWindow(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	n := len(ops) / 2
	inputs, inits := ops[:n], ops[n:]
	leaves, err := resultLeaves(in.Shape, n)
	if err != nil {
		return nil, err
	}
	w := in.Window()
	s := inputs[0].Shape()
	if w == nil || len(w.Dims) != s.Rank() {
		return nil, fmt.Errorf("reduce-window: window rank does not match operand rank %d", s.Rank())
	}
	x := &windowIndexer{dims: s.Dims, strides: hlo.RowMajorStrides(s.Dims), w: w.Dims}
	outs := make([]*hlo.Literal, n)
	for i := range outs {
		outs[i] = hlo.NewLiteral(leaves[i])
	}
	oDims := leaves[0].Dims
	if hasZero(oDims) {
		return packResult(in.Shape, outs), nil
	}
	wDims := windowSizes(w)
	acc := newAccumulator(e, in.Computation("to_apply"), inputs, inits)
	oIdx := make([]int64, len(oDims))
	for o := 0; ; o++ {
		acc.reset(inits)
		if !hasZero(wDims) {
			wIdx := make([]int64, len(wDims))
			for {
				if at := x.at(oIdx, wIdx); at >= 0 {
					if err := acc.add(inputs, at); err != nil {
						return nil, err
					}
				}
				if !nextIndex(wIdx, wDims) {
					break
				}
			}
		}
		acc.store(outs, o)
		if !nextIndex(oIdx, oDims) {
			break
		}
	}
	return packResult(in.Shape, outs), nil
}
