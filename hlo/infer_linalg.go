package hlo

import (
	"errors"
	"fmt"
	"slices"
)

// Shape rules of contractions and linear algebra: dot, convolution (and the
// window arithmetic reduce-window shares), fft, cholesky, triangular-solve,
// batch normalisation.

var linalgRules = map[Opcode]inferRule{
	OpDot:                inferDot,
	OpScaledDot:          inferDot,
	OpRaggedDot:          cannotInfer,
	OpConvolution:        inferConvolution,
	OpFft:                inferFft,
	OpCholesky:           inferCholesky,
	OpTriangularSolve:    inferTriangularSolve,
	OpBatchNormTraining:  inferBatchNorm,
	OpBatchNormInference: inferBatchNorm,
	OpBatchNormGrad:      inferBatchNorm,
}

// resultType is the element type of a dot or convolution: the written one
// (XLA's preferred_element_type), which must not narrow an integer type,
// or else the higher-precision operand type.
func resultType(in *Instruction, lhs, rhs Shape) (DType, error) {
	from := higherPrecision(lhs.DType, rhs.DType)
	d, ok := declared(in)
	if !ok || !d.IsArray() || d.DType == from {
		return from, nil
	}
	if !from.IsFloat() && d.DType.Bits() < from.Bits() {
		return Invalid, fmt.Errorf("preferred element type %s must not be narrower than the original type %s", d.DType, from)
	}
	return d.DType, nil
}

// inferDot: the result holds the batch dimensions, then lhs's free
// dimensions, then rhs's, each in order.
func inferDot(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) < 2 {
		return Shape{}, fmt.Errorf("needs 2 operands, has %d", len(ops))
	}
	if in.HasAttr("sparsity") {
		return Shape{}, fmt.Errorf("sparse dot: %w", ErrCannotInfer)
	}
	lhs, rhs := ops[0], ops[1]
	if err := expectArray(lhs, "lhs of dot"); err != nil {
		return Shape{}, err
	}
	if err := expectArray(rhs, "rhs of dot"); err != nil {
		return Shape{}, err
	}
	lb, lc := ints(in, "lhs_batch_dims"), ints(in, "lhs_contracting_dims")
	rb, rc := ints(in, "rhs_batch_dims"), ints(in, "rhs_contracting_dims")
	if !inRange(lb, lhs.Rank()) || !inRange(lc, lhs.Rank()) || !inRange(rb, rhs.Rank()) || !inRange(rc, rhs.Rank()) {
		return Shape{}, fmt.Errorf("a dimension number is out of range in dot: %s <dot> %s", lhs.HumanString(), rhs.HumanString())
	}
	if !allUnique(append(slices.Clone(lb), lc...)) || !allUnique(append(slices.Clone(rb), rc...)) {
		return Shape{}, errors.New("a dimension number is not unique in dot")
	}
	if len(lc) != len(rc) {
		return Shape{}, fmt.Errorf("must specify the same number of contracting dimensions for lhs and rhs: %d vs %d", len(lc), len(rc))
	}
	for i := range lc {
		if a, b := lhs.Dims[lc[i]], rhs.Dims[rc[i]]; !dimsMatch([]int64{a}, []int64{b}) {
			return Shape{}, fmt.Errorf("contracting dimension sizes do not match: %d vs %d", a, b)
		}
	}
	if len(lb) != len(rb) {
		return Shape{}, fmt.Errorf("must specify the same number of batch dimensions for lhs and rhs: %d vs %d", len(lb), len(rb))
	}
	for i := range lb {
		if a, b := lhs.Dims[lb[i]], rhs.Dims[rb[i]]; !dimsMatch([]int64{a}, []int64{b}) {
			return Shape{}, fmt.Errorf("batch dimension sizes must match for lhs/rhs: %d vs %d", a, b)
		}
	}
	var dims []int64
	var dyn []bool
	add := func(s Shape, i int64) {
		dims = append(dims, s.Dims[i])
		dyn = append(dyn, s.IsDynamicDim(int(i)))
	}
	for _, d := range lb {
		add(lhs, d)
	}
	for i := range int64(lhs.Rank()) {
		if !slices.Contains(lb, i) && !slices.Contains(lc, i) {
			add(lhs, i)
		}
	}
	for i := range int64(rhs.Rank()) {
		if !slices.Contains(rb, i) && !slices.Contains(rc, i) {
			add(rhs, i)
		}
	}
	t, err := resultType(in, lhs, rhs)
	if err != nil {
		return Shape{}, err
	}
	return makeArray(t, dims, dyn), nil
}

// dilated is the size of n elements with dilation-1 holes between them.
func (a *sizeArith) dilated(n, dilation int64) int64 {
	if n == 0 {
		return 0
	}
	return a.add(a.mul(n-1, dilation), 1)
}

// stridedBound is the number of windows of size w that fit in n at stride s.
func stridedBound(n, w, s int64) int64 {
	if n == 0 || w > n {
		return 0
	}
	return (n-w)/s + 1
}

// windowOutput is XLA's InferWindowOutputShape: the number of window
// positions along each base dimension.
func windowOutput(base Shape, w *Window, t DType) (Shape, error) {
	var wd []WindowDim
	if w != nil {
		wd = w.Dims
	}
	if len(wd) != base.Rank() {
		return Shape{}, fmt.Errorf("window has dimension %d but base shape has dimension %d", len(wd), base.Rank())
	}
	dims := make([]int64, len(wd))
	for i, d := range wd {
		switch {
		case d.Size <= 0:
			return Shape{}, fmt.Errorf("window %s has a non-positive dimension", w)
		case d.Stride <= 0:
			return Shape{}, fmt.Errorf("window %s has a non-positive stride", w)
		case d.LhsDilation < 1:
			return Shape{}, fmt.Errorf("window %s has a non-positive base area dilation factor", w)
		case d.RhsDilation < 1:
			return Shape{}, fmt.Errorf("window %s has a non-positive window dilation factor", w)
		}
		if base.Dims[i] == Unbounded {
			dims[i] = Unbounded
			continue
		}
		var a sizeArith
		padded := a.add(a.add(d.PadLo, a.dilated(base.Dims[i], d.LhsDilation)), d.PadHi)
		size := a.dilated(d.Size, d.RhsDilation)
		if err := a.err("window %s on dimension %d", w, i); err != nil {
			return Shape{}, err
		}
		if padded < 0 {
			return Shape{}, fmt.Errorf("window %s pads dimension %d of size %d to a negative size", w, i, base.Dims[i])
		}
		dims[i] = stridedBound(padded, size, d.Stride)
	}
	return makeArray(t, dims, dynFlags(base)), nil
}

func inferConvolution(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) != 2 {
		return Shape{}, fmt.Errorf("expects 2 operands, but has %d", len(ops))
	}
	lhs, rhs := ops[0], ops[1]
	if err := expectArray(lhs, "lhs of convolution"); err != nil {
		return Shape{}, err
	}
	if err := expectArray(rhs, "rhs of convolution"); err != nil {
		return Shape{}, err
	}
	fgc, bgc := int64(1), int64(1)
	if v, ok := in.Int("feature_group_count"); ok {
		fgc = v
	}
	if v, ok := in.Int("batch_group_count"); ok {
		bgc = v
	}
	switch {
	case fgc <= 0:
		return Shape{}, fmt.Errorf("feature_group_count must be a positive number, got %d", fgc)
	case bgc <= 0:
		return Shape{}, fmt.Errorf("batch_group_count must be a positive number, got %d", bgc)
	case fgc > 1 && bgc > 1:
		return Shape{}, fmt.Errorf("both batch_group_count %d and feature_group_count %d cannot be greater than 1", bgc, fgc)
	}
	dn := in.ConvDims()
	if dn == nil {
		return Shape{}, errors.New("needs dim_labels")
	}
	ns := len(dn.InputSpatial)
	if len(dn.KernelSpatial) != ns || len(dn.OutputSpatial) != ns {
		return Shape{}, fmt.Errorf("input, kernel and output of convolution must have the same number of spatial dimensions: %s", dn)
	}
	w := in.Window()
	if w == nil && ns > 0 {
		return Shape{}, errors.New("needs a window")
	}
	if w != nil && len(w.Dims) != ns {
		return Shape{}, fmt.Errorf("window must have same number of dimensions as dimension numbers; window: %s, dimension numbers: %s", w, dn)
	}
	rank := ns + 2
	if lhs.Rank() != rank {
		return Shape{}, fmt.Errorf("the LHS argument to a convolution should have rank %d; lhs: %s", rank, lhs.HumanString())
	}
	if rhs.Rank() != rank {
		return Shape{}, fmt.Errorf("the RHS argument to a convolution should have rank %d; rhs: %s", rank, rhs.HumanString())
	}
	for _, set := range []struct {
		what string
		dims []int64
	}{
		{"input", append([]int64{dn.InputBatch, dn.InputFeature}, dn.InputSpatial...)},
		{"kernel", append([]int64{dn.KernelInput, dn.KernelOutput}, dn.KernelSpatial...)},
		{"output", append([]int64{dn.OutputBatch, dn.OutputFeature}, dn.OutputSpatial...)},
	} {
		if !isPermutation(set.dims, rank) {
			return Shape{}, fmt.Errorf("%s dimensions of convolution must contain each dimension exactly once: %s", set.what, dn)
		}
	}
	inFeatures, batch := lhs.Dims[dn.InputFeature], lhs.Dims[dn.InputBatch]
	kIn, kOut := rhs.Dims[dn.KernelInput], rhs.Dims[dn.KernelOutput]
	conv := lhs.HumanString() + ", " + rhs.HumanString()
	switch {
	case kOut%bgc != 0:
		return Shape{}, fmt.Errorf("expected output feature dimension size (value %d) to be a multiple of batch group count %d; got <conv>(%s)", kOut, bgc, conv)
	case inFeatures != Unbounded && (inFeatures%fgc != 0 || inFeatures/fgc != kIn):
		return Shape{}, fmt.Errorf("expected LHS feature dimension (value %d) to be a multiple of feature_group_count (value %d), and LHS feature dimension / feature_group_count = RHS feature dimension (value %d); got <conv>(%s)", inFeatures, fgc, kIn, conv)
	case kOut%fgc != 0:
		return Shape{}, fmt.Errorf("expected output feature dimension (value %d) to be divisible by feature_group_count (value %d); got <conv>(%s)", kOut, fgc, conv)
	case batch != Unbounded && batch%bgc != 0:
		return Shape{}, fmt.Errorf("expected input batch dimension (value %d) to be divisible by batch_group_count (value %d); got <conv>(%s)", batch, bgc, conv)
	}
	base := Shape{DType: lhs.DType}
	for i, d := range dn.InputSpatial {
		if w.Dims[i].Size != rhs.Dims[dn.KernelSpatial[i]] {
			return Shape{}, fmt.Errorf("window dimensions do not match RHS shape: RHS shape: %s, window: %s, dimension numbers: %s", rhs.HumanString(), w, dn)
		}
		base.Dims = append(base.Dims, lhs.Dims[d])
		if lhs.IsDynamicDim(int(d)) {
			base.SetDynamic(i, true)
		}
	}
	spatial, err := windowOutput(base, w, lhs.DType)
	if err != nil {
		return Shape{}, err
	}
	dims := make([]int64, rank)
	dyn := make([]bool, rank)
	dims[dn.OutputBatch] = batch
	if batch != Unbounded {
		dims[dn.OutputBatch] = batch / bgc
	}
	dyn[dn.OutputBatch] = lhs.IsDynamicDim(int(dn.InputBatch))
	dims[dn.OutputFeature] = kOut
	for i, d := range dn.OutputSpatial {
		dims[d] = spatial.Dims[i]
		dyn[d] = spatial.IsDynamicDim(i) || rhs.IsDynamicDim(int(dn.KernelSpatial[i]))
	}
	t, err := resultType(in, lhs, rhs)
	if err != nil {
		return Shape{}, err
	}
	return makeArray(t, dims, dyn), nil
}

func inferFft(in *Instruction, ops []Shape) (Shape, error) {
	x := ops[0]
	if err := expectArray(x, "operand of fft"); err != nil {
		return Shape{}, err
	}
	typ, _ := in.EnumAttr("fft_type")
	length := ints(in, "fft_length")
	n := len(length)
	if n < 1 || n > 3 {
		return Shape{}, fmt.Errorf("FFT only supports ranks 1-3; got %d", n)
	}
	if x.Rank() < n {
		return Shape{}, fmt.Errorf("FFT of rank %d requires input of at least same rank; got input of rank %d", n, x.Rank())
	}
	inner := x.Rank() - n // first transformed dimension
	for _, l := range length {
		if l < 0 {
			return Shape{}, fmt.Errorf("fft_length {%s} must not be negative", joinInts(length))
		}
	}
	switch typ {
	case "FFT", "IFFT":
		if !x.DType.IsComplex() {
			return Shape{}, fmt.Errorf("%s requires complex input type, found %s", typ, x.DType)
		}
		// XLA's shape inference leaves this unchecked; its evaluator and
		// Axle's transform the operand's dimensions, so the lengths must
		// be those.
		for i, l := range length {
			if x.Dims[inner+i] != l {
				return Shape{}, fmt.Errorf("%s requires innermost dimensions match fft_length but dimension %d is %d and should be %d", typ, inner+i, x.Dims[inner+i], l)
			}
		}
		return withDefaultLayout(x.Clone()), nil
	case "RFFT":
		if x.DType != F32 && x.DType != F64 {
			return Shape{}, fmt.Errorf("RFFT requires F32 or F64 input type, found %s", x.DType)
		}
		for i, l := range length {
			if x.Dims[inner+i] != l {
				return Shape{}, fmt.Errorf("RFFT requires innermost dimensions match fft_length but dimension %d is %d and should be %d", inner+i, x.Dims[inner+i], l)
			}
		}
		out := x.WithDType(C64)
		if x.DType == F64 {
			out.DType = C128
		}
		// A zero-length transform keeps its zero-sized dimension.
		if length[n-1] != 0 {
			out.Dims[len(out.Dims)-1] = length[n-1]/2 + 1
		}
		return withDefaultLayout(out), nil
	case "IRFFT":
		if !x.DType.IsComplex() {
			return Shape{}, fmt.Errorf("IRFFT requires complex input type, found %s", x.DType)
		}
		for i, l := range length[:n-1] {
			if x.Dims[inner+i] != l {
				return Shape{}, fmt.Errorf("IRFFT requires all but one innermost dimensions match fft_length, but dimension %d is %d and should be %d", inner+i, x.Dims[inner+i], l)
			}
		}
		last := x.Dims[x.Rank()-1]
		if (last != 0 || length[n-1] != 0) && last != length[n-1]/2+1 {
			return Shape{}, fmt.Errorf("IRFFT requires innermost dimension matches fft_length/2+1, but dimension %d is %d and should be %d", x.Rank()-1, last, length[n-1]/2+1)
		}
		out := x.WithDType(x.DType.ComplexComponent())
		out.Dims[len(out.Dims)-1] = length[n-1]
		return withDefaultLayout(out), nil
	}
	return Shape{}, fmt.Errorf("unknown fft_type %q", typ)
}

func checkSquareMinor(what string, a Shape) error {
	if !a.DType.IsFloat() && !a.DType.IsComplex() {
		return fmt.Errorf("expected element type in shape to be floating or complex for %s; got %s", what, a.DType)
	}
	if a.Rank() < 2 {
		return fmt.Errorf("the 'a' argument to %s must have rank >= 2, got shape %s", what, a.HumanString())
	}
	if a.Dims[a.Rank()-2] != a.Dims[a.Rank()-1] {
		return fmt.Errorf("the two minor dimensions of 'a' must have equal size, got %s", a.HumanString())
	}
	return nil
}

func inferCholesky(_ *Instruction, ops []Shape) (Shape, error) {
	if err := expectArray(ops[0], "operand of cholesky"); err != nil {
		return Shape{}, err
	}
	if err := checkSquareMinor("Cholesky", ops[0]); err != nil {
		return Shape{}, err
	}
	return withDefaultLayout(ops[0].Clone()), nil
}

func inferTriangularSolve(in *Instruction, ops []Shape) (Shape, error) {
	a, b := ops[0], ops[1]
	if err := expectArray(a, "a of triangular-solve"); err != nil {
		return Shape{}, err
	}
	if err := expectArray(b, "b of triangular-solve"); err != nil {
		return Shape{}, err
	}
	if a.DType != b.DType {
		return Shape{}, fmt.Errorf("expected element types in shape to be floating or complex and identical for TriangularSolve; got %s and %s", a.DType, b.DType)
	}
	if err := checkSquareMinor("TriangularSolve", a); err != nil {
		return Shape{}, err
	}
	if b.Rank() != a.Rank() {
		return Shape{}, fmt.Errorf("arguments to triangular solve must have equal rank; got %s and %s", b.HumanString(), a.HumanString())
	}
	shared := b.Rank() - 1
	if in.Bool("left_side") {
		shared = b.Rank() - 2
	}
	if a.Dims[a.Rank()-1] != b.Dims[shared] {
		return Shape{}, fmt.Errorf("the shared dimension of 'a' and 'b' does not match, got shapes %s and %s", a.HumanString(), b.HumanString())
	}
	if !slices.Equal(a.Dims[:a.Rank()-2], b.Dims[:b.Rank()-2]) {
		return Shape{}, fmt.Errorf("the leading batch dimensions of the arguments to triangular solve must be equal; got %s and %s", b.HumanString(), a.HumanString())
	}
	if t, ok := in.EnumAttr("transpose_a"); ok && t != "NO_TRANSPOSE" && t != "TRANSPOSE" && t != "ADJOINT" {
		return Shape{}, fmt.Errorf("invalid transpose option value for triangular solve (%s)", t)
	}
	return withDefaultLayout(b.Clone()), nil
}

// inferBatchNorm covers the three batch-norm ops. Operands: training
// (operand, scale, offset); inference (operand, scale, offset, mean,
// variance); grad (operand, scale, mean, variance, grad_output).
func inferBatchNorm(in *Instruction, ops []Shape) (Shape, error) {
	x := ops[0]
	for _, s := range ops {
		if err := expectArray(s, "operand of "+in.Opcode.String()); err != nil {
			return Shape{}, err
		}
	}
	fi, ok := in.Int("feature_index")
	if !ok {
		return Shape{}, errors.New("needs feature_index")
	}
	if fi < 0 || fi >= int64(x.Rank()) {
		return Shape{}, fmt.Errorf("expected feature_index of %s to be a non-negative number smaller than the rank of operand_shape; got feature_index %d, and rank %d", in.Opcode, fi, x.Rank())
	}
	if !x.DType.IsFloat() {
		return Shape{}, fmt.Errorf("the operand to %s must have a floating point element type, but the shape is %s", in.Opcode, x.DType)
	}
	features := x.Dims[fi]
	vectors := ops[1:]
	if in.Opcode == OpBatchNormGrad {
		vectors = ops[1:4]
		g := ops[4]
		if !g.DType.IsFloat() || g.Rank() != x.Rank() || !dimsMatch(g.Dims, x.Dims) {
			return Shape{}, fmt.Errorf("output_grad of batch-norm-grad must be a floating point array with the operand's bounds, got %s for operand %s", g.HumanString(), x.HumanString())
		}
	}
	for i, v := range vectors {
		if v.Rank() != 1 {
			return Shape{}, fmt.Errorf("operand %d of %s must have rank 1, but has rank %d", i+1, in.Opcode, v.Rank())
		}
		if !sameTypeIgnoringFP(v.DType, x.DType) {
			return Shape{}, fmt.Errorf("the inputs should have the same element type for %s, but operand %d is %s and the operand is %s", in.Opcode, i+1, v.DType, x.DType)
		}
		if v.Dims[0] != features {
			return Shape{}, fmt.Errorf("the size of operand %d should be the same as feature count, but it is %d and the feature count is %d", i+1, v.Dims[0], features)
		}
	}
	if in.Opcode == OpBatchNormInference {
		return withDefaultLayout(x.Clone()), nil
	}
	vec := makeArray(x.DType, []int64{features}, nil)
	return TupleShape(withDefaultLayout(x.Clone()), vec, vec), nil
}
