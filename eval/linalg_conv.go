package eval

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

func init() {
	register(evalConvolution, hlo.OpConvolution)
}

// convPlan is a convolution's geometry resolved to strides and sizes.
type convPlan struct {
	d                    *hlo.ConvDimNumbers
	w                    []hlo.WindowDim
	lDims, rDims         []int64
	lSt, rSt             []int
	outDims              []int64
	z                    int64 // kernel input features (one feature group's)
	outZPerFG, outZPerBG int64
	batchGroupSize       int64
}

func newConvPlan(in *hlo.Instruction, l, r hlo.Shape) (*convPlan, error) {
	d, w := in.ConvDims(), in.Window()
	if d == nil {
		return nil, fmt.Errorf("convolution: missing dim_labels")
	}
	ns := len(d.InputSpatial)
	var wd []hlo.WindowDim
	if w != nil {
		wd = w.Dims
	}
	if len(wd) == 0 && ns > 0 || len(wd) != ns {
		if len(wd) != 0 {
			return nil, fmt.Errorf("convolution: window has %d dims, want %d", len(wd), ns)
		}
		wd = make([]hlo.WindowDim, ns)
		for i := range wd {
			wd[i] = hlo.WindowDim{Size: r.Dims[d.KernelSpatial[i]], Stride: 1, LhsDilation: 1, RhsDilation: 1}
		}
	}
	fg, _ := in.Int("feature_group_count")
	bg, _ := in.Int("batch_group_count")
	fg, bg = max(fg, 1), max(bg, 1)
	outZ := r.Dims[d.KernelOutput]
	return &convPlan{
		d: d, w: wd, lDims: l.Dims, rDims: r.Dims,
		lSt: hlo.RowMajorStrides(l.Dims), rSt: hlo.RowMajorStrides(r.Dims),
		outDims: in.Shape.Dims, z: r.Dims[d.KernelInput],
		outZPerFG: max(outZ/fg, 1), outZPerBG: max(outZ/bg, 1),
		batchGroupSize: l.Dims[d.InputBatch] / bg,
	}, nil
}

// evalConvolution follows XLA's evaluator: for output feature f the
// feature group is f / (out_features/feature_group_count) and the batch
// group f / (out_features/batch_group_count); window reversal flips the
// kernel index; positions in padding or lhs-dilation holes contribute 0.
// It accumulates as XLA's evaluator does too (see linalg_accum.go):
// products rounded, summed over kernel positions (last spatial dimension
// fastest) and, within a position, over input features.
func evalConvolution(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	p, err := newConvPlan(in, ops[0].Shape(), ops[1].Shape())
	if err != nil {
		return nil, err
	}
	s := in.Shape
	l, r := AccumOperand(ops[0], s.DType), AccumOperand(ops[1], s.DType)
	return accumulationFor(s.DType).conv(p, s, l, r), nil
}

func (m *macOps[T]) conv(p *convPlan, s hlo.Shape, l, r *hlo.Literal) *hlo.Literal {
	return m.store(s, convLoop(p, m.load(l), m.load(r), m.convSum))
}

func convLoop[T any](p *convPlan, l, r []T, run convRun[T]) []T {
	n := 1
	for _, d := range p.outDims {
		n *= int(d)
	}
	out := make([]T, n)
	if n == 0 {
		return out
	}
	d := p.d
	ns := len(d.InputSpatial)
	kDims := make([]int64, ns)
	for i := range kDims {
		kDims[i] = p.rDims[d.KernelSpatial[i]]
	}
	if hasZero(kDims) || p.z == 0 {
		return out
	}
	oIdx := make([]int64, len(p.outDims))
	kIdx := make([]int64, ns)
	lFeat, rIn := p.lSt[d.InputFeature], p.rSt[d.KernelInput]
	for o := 0; ; o++ {
		f := oIdx[d.OutputFeature]
		lb := int((f/p.outZPerBG)*p.batchGroupSize+oIdx[d.OutputBatch]) * p.lSt[d.InputBatch]
		lb += int((f/p.outZPerFG)*p.z) * lFeat
		rb := int(f) * p.rSt[d.KernelOutput]
		var acc T
		clear(kIdx)
		for {
			if lo, ro, ok := p.spatial(oIdx, kIdx); ok {
				acc = run(acc, l, r, lo+lb, lFeat, ro+rb, rIn, int(p.z))
			}
			if !nextIndex(kIdx, kDims) {
				break
			}
		}
		out[o] = acc
		if !nextIndex(oIdx, p.outDims) {
			return out
		}
	}
}

// spatial returns the lhs and rhs spatial offsets of kernel position k for
// output index o, or false when it falls in padding or a dilation hole.
func (p *convPlan) spatial(o, k []int64) (lo, ro int, ok bool) {
	d := p.d
	for i, wd := range p.w {
		pos := o[d.OutputSpatial[i]]*wd.Stride - wd.PadLo + k[i]*wd.RhsDilation
		if pos < 0 || pos%wd.LhsDilation != 0 {
			return 0, 0, false
		}
		x := pos / wd.LhsDilation
		if x >= p.lDims[d.InputSpatial[i]] {
			return 0, 0, false
		}
		lo += int(x) * p.lSt[d.InputSpatial[i]]
		kk := k[i]
		if wd.Reversal {
			kk = wd.Size - 1 - kk
		}
		ro += int(kk) * p.rSt[d.KernelSpatial[i]]
	}
	return lo, ro, true
}
