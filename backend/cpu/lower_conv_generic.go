package cpu

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/xlamath"
)

// The generic convolution covers what the f32 kernels do not (f64, the
// narrow floats, integers, complex, batch groups, any dimension order) by
// the evaluator's direct loop, sped up only by tables resolved at
// lowering: float and complex operands are converted to the result type
// (xlamath.AccumOperand) and accumulate in it, f16, bf16 and the other
// narrow floats in float32 rounded once at the end, each product rounded
// before it is added (complex ones as xlamath.ComplexMul64 and
// xlamath.ComplexMul128 form them); integers accumulate in int64 wrapping to
// the result's width. Each output sums over kernel positions in row-major
// order, then input features, as the evaluator does, so results are
// bit-identical.

// convGeneric is a convolution's geometry.
type convGeneric struct {
	outDims    []int
	outFeature int // dimension index of the output feature
	outBatch   int
	outSpatial []int
	kDims      []int
	// lTabs[i][o·K_i + k] is the lhs offset along spatial dimension i of
	// output index o and kernel index k, or -1 in padding or a hole.
	lTabs [][]int
	// rOffs[kp] is the rhs spatial offset of flat kernel position kp.
	rOffs                []int
	lFeat, rIn, z        int
	lBatch, rOut         int
	outZPerFG, outZPerBG int
	batchGroupSize       int
	empty                bool
	threads              int
	work                 int
}

// lowerConvGeneric returns a kernel for any convolution of float,
// integer or complex types, or false.
func lowerConvGeneric(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if in.Opcode != hlo.OpConvolution || len(in.Operands) != 2 || !plainArray(in.Shape) {
		return nil, false
	}
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	t := in.Shape.DType
	if !plainArray(l) || !plainArray(r) || storageWidth(t) == 0 {
		return nil, false
	}
	cg, ok := planConvGeneric(in, l, r, threads)
	if !ok {
		return nil, false
	}
	switch {
	case t.IsComplex():
		if !l.DType.IsComplex() || !r.DType.IsComplex() {
			return nil, false
		}
		if t == hlo.C64 {
			return convKernel(cg, accumLoad(t, loadC64), xlamath.ComplexMul64, storeC64), true
		}
		return convKernel(cg, accumLoad(t, loadComplex), xlamath.ComplexMul128, storeComplex), true
	case t.IsFloat():
		if l.DType.IsComplex() || r.DType.IsComplex() {
			return nil, false
		}
		if t == hlo.F64 {
			return convKernel(cg, accumLoad(t, loadF64), nil, storeF64), true
		}
		return convKernel(cg, accumLoad(t, loadF32), nil, storeF32), true
	case t.IsInteger() || t.IsPred(): // pred: the count of true products, then != 0, as the evaluator
		if l.DType.IsComplex() || r.DType.IsComplex() || l.DType.IsFloat() || r.DType.IsFloat() {
			return nil, false
		}
		return convKernel(cg, loadI64, nil, storeI64), true
	}
	return nil, false
}

// accumLoad converts an operand to the result type t before load reads it.
func accumLoad[T any](t hlo.DType, load func(*hlo.Literal) []T) func(*hlo.Literal) []T {
	return func(l *hlo.Literal) []T { return load(xlamath.AccumOperand(l, t)) }
}

func planConvGeneric(in *hlo.Instruction, l, r hlo.Shape, threads int) (*convGeneric, bool) {
	d := in.ConvDims()
	if d == nil {
		return nil, false
	}
	ns := len(d.InputSpatial)
	if len(d.KernelSpatial) != ns || len(d.OutputSpatial) != ns {
		return nil, false
	}
	wd, ok := convWindowDims(in.Window(), d, r)
	if !ok {
		return nil, false
	}
	fg, _ := in.Int("feature_group_count")
	bg, _ := in.Int("batch_group_count")
	fg, bg = max(fg, 1), max(bg, 1)
	outZ := r.Dims[d.KernelOutput]
	lSt, rSt := hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(r.Dims)
	cg := &convGeneric{
		outFeature: int(d.OutputFeature), outBatch: int(d.OutputBatch),
		lFeat: lSt[d.InputFeature], rIn: rSt[d.KernelInput], z: int(r.Dims[d.KernelInput]),
		lBatch: lSt[d.InputBatch], rOut: rSt[d.KernelOutput],
		outZPerFG: int(max(outZ/fg, 1)), outZPerBG: int(max(outZ/bg, 1)),
		batchGroupSize: int(l.Dims[d.InputBatch] / bg),
		threads:        threads,
	}
	n := 1
	for _, x := range in.Shape.Dims {
		cg.outDims = append(cg.outDims, int(x))
		n *= int(x)
	}
	kn := 1
	for i := range ns {
		cg.outSpatial = append(cg.outSpatial, int(d.OutputSpatial[i]))
		k := int(r.Dims[d.KernelSpatial[i]])
		cg.kDims = append(cg.kDims, k)
		kn *= k
	}
	if n == 0 || kn == 0 || cg.z == 0 {
		cg.empty = true
		return cg, true
	}
	if !cg.inputTables(wd, d, l, lSt, in.Shape) {
		return nil, false
	}
	cg.kernelOffsets(wd, d, rSt, kn)
	cg.work = n * kn * cg.z
	return cg, true
}

// convWindowDims is window w's dimensions, or for no window a unit one
// over kernel r, or false where they do not match the spatial
// dimensions of d.
func convWindowDims(w *hlo.Window, d *hlo.ConvDimNumbers, r hlo.Shape) ([]hlo.WindowDim, bool) {
	ns := len(d.InputSpatial)
	var wd []hlo.WindowDim
	if w != nil {
		wd = w.Dims
	}
	if len(wd) == ns {
		return wd, true
	}
	if len(wd) != 0 {
		return nil, false
	}
	wd = make([]hlo.WindowDim, ns)
	for i := range wd {
		wd[i] = hlo.WindowDim{Size: r.Dims[d.KernelSpatial[i]], Stride: 1, LhsDilation: 1, RhsDilation: 1}
	}
	return wd, true
}

// inputTables fills in lTabs, the input offsets of window wd over image
// l (row-major strides lSt) for out, or reports false for an input
// dilation below 1.
func (cg *convGeneric) inputTables(wd []hlo.WindowDim, d *hlo.ConvDimNumbers, l hlo.Shape, lSt []int, out hlo.Shape) bool {
	for i, x := range wd {
		if x.LhsDilation < 1 {
			return false
		}
		o, k := out.Dims[d.OutputSpatial[i]], int64(cg.kDims[i])
		tab := make([]int, o*k)
		for oi := range o {
			for ki := range k {
				pos := oi*x.Stride - x.PadLo + ki*x.RhsDilation
				at := -1
				if pos >= 0 && pos%x.LhsDilation == 0 && pos/x.LhsDilation < l.Dims[d.InputSpatial[i]] {
					at = int(pos/x.LhsDilation) * lSt[d.InputSpatial[i]]
				}
				tab[oi*k+ki] = at
			}
		}
		cg.lTabs = append(cg.lTabs, tab)
	}
	return true
}

// kernelOffsets fills in rOffs, the kernel's offset (row-major strides
// rSt) at each of its kn window positions, reversed where wd says.
func (cg *convGeneric) kernelOffsets(wd []hlo.WindowDim, d *hlo.ConvDimNumbers, rSt []int, kn int) {
	kIdx := make([]int, len(wd))
	for range kn {
		ro := 0
		for i, x := range wd {
			kk := int64(kIdx[i])
			if x.Reversal {
				kk = x.Size - 1 - kk
			}
			ro += int(kk) * rSt[d.KernelSpatial[i]]
		}
		cg.rOffs = append(cg.rOffs, ro)
		nextWindow(kIdx, cg.kDims)
	}
}

// convKernel runs the loop in T, loading operands with load, multiplying
// with mul (nil: T's own product, rounded) and storing the result with
// store.
func convKernel[T convElem](cg *convGeneric, load func(*hlo.Literal) []T, mul func(a, b T) T, store func(*hlo.Literal, []T)) kernelFunc {
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		acc := make([]T, out.Len())
		if !cg.empty {
			lv, rv := load(ops[0]), load(ops[1])
			splitRange(len(acc), cg.work, cg.threads, func(lo, hi int) { convRange(cg, lv, rv, acc, lo, hi, mul) })
		}
		store(out, acc)
		return nil
	}
}

// convElem are the accumulation types of the loop.
type convElem interface {
	float32 | float64 | int64 | complex64 | complex128
}

// convRange computes outputs [lo, hi).
func convRange[T convElem](cg *convGeneric, l, r, out []T, lo, hi int, mul func(a, b T) T) {
	rank, ns := len(cg.outDims), len(cg.kDims)
	oIdx := make([]int, rank)
	for d, x := rank-1, lo; d >= 0; d-- {
		oIdx[d] = x % cg.outDims[d]
		x /= cg.outDims[d]
	}
	kIdx := make([]int, ns)
	rows := make([][]int, ns) // per spatial dim, this output's table row
	for o := lo; o < hi; o++ {
		f := oIdx[cg.outFeature]
		lb := ((f/cg.outZPerBG)*cg.batchGroupSize+oIdx[cg.outBatch])*cg.lBatch + (f/cg.outZPerFG)*cg.z*cg.lFeat
		rb := f * cg.rOut
		for i := range ns {
			k := cg.kDims[i]
			s := oIdx[cg.outSpatial[i]] * k
			rows[i] = cg.lTabs[i][s : s+k]
		}
		var acc T
		clear(kIdx)
		for _, ro := range cg.rOffs {
			at := lb
			for i, row := range rows {
				p := row[kIdx[i]]
				if p < 0 {
					at = -1
					break
				}
				at += p
			}
			if at >= 0 {
				ro += rb
				if mul != nil {
					for iz := 0; iz < cg.z; iz++ {
						acc += mul(l[at+iz*cg.lFeat], r[ro+iz*cg.rIn])
					}
				} else {
					for iz := 0; iz < cg.z; iz++ {
						acc += T(l[at+iz*cg.lFeat] * r[ro+iz*cg.rIn]) // rounded, never fused
					}
				}
			}
			nextWindow(kIdx, cg.kDims)
		}
		out[o] = acc
		nextWindow(oIdx, cg.outDims)
	}
}

// The loads and stores are the evaluator's loadFloat64, loadInt64,
// loadComplex128 and their stores, with the common types unrolled.

func loadF64(l *hlo.Literal) []float64 {
	switch d := l.Data().(type) {
	case []float64:
		return d
	case []float32:
		return widen(d, func(v float32) float64 { return float64(v) })
	}
	out := make([]float64, l.Len())
	for i := range out {
		out[i] = l.GetFloat64(i)
	}
	return out
}

func storeF64(out *hlo.Literal, v []float64) {
	switch d := out.Data().(type) {
	case []float64:
		copy(d, v)
	case []float32:
		for i, x := range v {
			d[i] = float32(x)
		}
	default:
		for i, x := range v {
			out.SetFloat64(i, x)
		}
	}
}

// loadF32 reads a float literal at most f32 wide, exactly.
func loadF32(l *hlo.Literal) []float32 {
	if d, ok := l.Data().([]float32); ok {
		return d
	}
	out := make([]float32, l.Len())
	for i := range out {
		out[i] = float32(l.GetFloat64(i))
	}
	return out
}

// storeF32 rounds float32 sums once into the result's type.
func storeF32(out *hlo.Literal, v []float32) {
	if d, ok := out.Data().([]float32); ok {
		copy(d, v)
		return
	}
	for i, x := range v {
		out.SetFloat64(i, float64(x))
	}
}

func loadC64(l *hlo.Literal) []complex64 {
	if d, ok := l.Data().([]complex64); ok {
		return d
	}
	out := make([]complex64, l.Len())
	for i := range out {
		out[i] = complex64(l.GetComplex128(i))
	}
	return out
}

func storeC64(out *hlo.Literal, v []complex64) {
	if d, ok := out.Data().([]complex64); ok {
		copy(d, v)
		return
	}
	for i, x := range v {
		out.SetComplex128(i, complex128(x))
	}
}

func loadI64(l *hlo.Literal) []int64 {
	switch d := l.Data().(type) {
	case []int64:
		return d
	case []int32:
		return widen(d, func(v int32) int64 { return int64(v) })
	}
	out := make([]int64, l.Len())
	unsigned := l.DType().IsUnsigned() || l.DType().IsPred()
	for i := range out {
		if unsigned {
			out[i] = int64(l.Bits(i))
		} else {
			out[i] = l.GetInt64(i)
		}
	}
	return out
}

func storeI64(out *hlo.Literal, v []int64) {
	switch d := out.Data().(type) {
	case []bool:
		for i, x := range v {
			d[i] = x != 0
		}
	case []int64:
		copy(d, v)
	case []int32:
		for i, x := range v {
			d[i] = int32(x)
		}
	default:
		for i, x := range v {
			out.SetBits(i, uint64(x))
		}
	}
}

func loadComplex(l *hlo.Literal) []complex128 {
	if d, ok := l.Data().([]complex128); ok {
		return d
	}
	out := make([]complex128, l.Len())
	for i := range out {
		out[i] = l.GetComplex128(i)
	}
	return out
}

func storeComplex(out *hlo.Literal, v []complex128) {
	if d, ok := out.Data().([]complex128); ok {
		copy(d, v)
		return
	}
	for i, x := range v {
		out.SetComplex128(i, x)
	}
}
