package stablehlo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

func init() {
	register(convertDotGeneral, "stablehlo.dot_general")
	register(convertDot, "stablehlo.dot")
	register(convertConvolution, "stablehlo.convolution")
	register(convertGather, "stablehlo.gather")
	register(convertFft, "stablehlo.fft")
	register(convertCholesky, "stablehlo.cholesky")
	register(convertTriangularSolve, "stablehlo.triangular_solve")
	register(convertRng, "stablehlo.rng")
	register(convertRngBitGenerator, "stablehlo.rng_bit_generator")
	register(convertBatchNorm(hlo.OpBatchNormTraining), "stablehlo.batch_norm_training")
	register(convertBatchNorm(hlo.OpBatchNormInference), "stablehlo.batch_norm_inference")
	register(convertBatchNorm(hlo.OpBatchNormGrad), "stablehlo.batch_norm_grad")
}

// precision reads precision_config as HLO's operand_precision.
func precision(op *mlir.Op) []hlo.Attr {
	arr, ok := op.Attr("precision_config").(mlir.ArrayAttr)
	if !ok || len(arr.Elems) == 0 {
		return nil
	}
	out := make([]hlo.Enum, len(arr.Elems))
	for i, e := range arr.Elems {
		out[i] = hlo.Enum(strings.ToLower(enumOf(e)))
	}
	return []hlo.Attr{{Name: "operand_precision", Value: out}}
}

// operandsAndShape is the common prologue: operands and result 0's shape.
func operandsAndShape(s *scope, op *mlir.Op) ([]*hlo.Instruction, hlo.Shape, error) {
	if isQuant(op) {
		return nil, hlo.Shape{}, fmt.Errorf("ops on quantized tensors: %w", ErrUnsupported)
	}
	ins, err := s.operands(op)
	if err != nil {
		return nil, hlo.Shape{}, err
	}
	sh, err := resultShape(op, 0)
	return ins, sh, err
}

func convertDotGeneral(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, sh, err := operandsAndShape(s, op)
	if err != nil {
		return nil, err
	}
	dn := op.Attr("dot_dimension_numbers")
	var attrs []hlo.Attr
	for _, f := range [][2]string{
		{"lhs_batching_dimensions", "lhs_batch_dims"},
		{"lhs_contracting_dimensions", "lhs_contracting_dims"},
		{"rhs_batching_dimensions", "rhs_batch_dims"},
		{"rhs_contracting_dimensions", "rhs_contracting_dims"},
	} {
		v, err := intsOf(field(dn, f[0]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f[0], err)
		}
		if v == nil {
			v = []int64{}
		}
		attrs = append(attrs, hlo.Attr{Name: f[1], Value: v})
	}
	attrs = append(attrs, precision(op)...)
	attrs = append(attrs, dotAlgorithm(op)...)
	return []*hlo.Instruction{s.add(hlo.OpDot, sh, ins, attrs...)}, nil
}

// dotAlgorithm maps #stablehlo.dot_algorithm to HLO's algorithm enum
// (dot_bf16_bf16_f32_x3, ...); a combination HLO has no name for is
// dropped.
func dotAlgorithm(op *mlir.Op) []hlo.Attr {
	a := op.Attr("algorithm")
	if a == nil {
		return nil
	}
	name := func(f string) string {
		if tt, ok := field(a, f).(mlir.TypeAttr); ok {
			if ft, ok := tt.Type.(mlir.FloatType); ok {
				return strings.ToLower(ft.Name)
			}
		}
		return ""
	}
	lhs, rhs, acc := name("lhs_precision_type"), name("rhs_precision_type"), name("accumulation_type")
	if lhs == "" || lhs != rhs || acc == "" {
		return nil
	}
	alg := "dot_" + lhs + "_" + rhs + "_" + acc
	if strings.HasPrefix(lhs, "f8") {
		alg = "dot_any_f8_any_f8_" + acc
	}
	if n, _ := intOf(field(a, "num_primitive_operations")); n > 1 {
		alg += fmt.Sprintf("_x%d", n)
	}
	return []hlo.Attr{{Name: "algorithm", Value: hlo.Enum(alg)}}
}

// convertDot is the legacy dot: contract lhs's last dimension with rhs's
// first.
func convertDot(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, sh, err := operandsAndShape(s, op)
	if err != nil {
		return nil, err
	}
	attrs := []hlo.Attr{
		{Name: "lhs_contracting_dims", Value: []int64{int64(ins[0].Shape.Rank() - 1)}},
		{Name: "rhs_contracting_dims", Value: []int64{0}},
	}
	attrs = append(attrs, precision(op)...)
	return []*hlo.Instruction{s.add(hlo.OpDot, sh, ins, attrs...)}, nil
}

func convertConvolution(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, sh, err := operandsAndShape(s, op)
	if err != nil {
		return nil, err
	}
	dn, err := convDims(op.Attr("dimension_numbers"))
	if err != nil {
		return nil, err
	}
	n := len(dn.InputSpatial)
	w := hlo.NewWindow(make([]int64, n)...)
	for i, d := range dn.KernelSpatial {
		w.Dims[i].Size = ins[1].Shape.Dims[d]
	}
	for _, f := range []struct {
		name string
		set  func(d *hlo.WindowDim, v int64)
	}{
		{"window_strides", func(d *hlo.WindowDim, v int64) { d.Stride = v }},
		{"lhs_dilation", func(d *hlo.WindowDim, v int64) { d.LhsDilation = v }},
		{"rhs_dilation", func(d *hlo.WindowDim, v int64) { d.RhsDilation = v }},
		{"window_reversal", func(d *hlo.WindowDim, v int64) { d.Reversal = v != 0 }},
	} {
		v, err := opInts(op, f.name)
		if err != nil {
			return nil, err
		}
		if v != nil && len(v) != n {
			return nil, fmt.Errorf("%s has %d values for %d spatial dimensions", f.name, len(v), n)
		}
		for i := range v {
			f.set(&w.Dims[i], v[i])
		}
	}
	lo, hi, err := pairs(op.Attr("padding"), n)
	if err != nil {
		return nil, err
	}
	for i := range n {
		w.Dims[i].PadLo, w.Dims[i].PadHi = lo[i], hi[i]
	}
	attrs := []hlo.Attr{{Name: "window", Value: w}, {Name: "dim_labels", Value: dn},
		{Name: "feature_group_count", Value: opInt(op, "feature_group_count", 1)},
		{Name: "batch_group_count", Value: opInt(op, "batch_group_count", 1)}}
	attrs = append(attrs, precision(op)...)
	return []*hlo.Instruction{s.add(hlo.OpConvolution, sh, ins, attrs...)}, nil
}

var rawConvField = regexp.MustCompile(`(\w+)\s*=\s*(\[[^\]]*\]|-?\d+)`)

// convDims reads #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>
// or its `raw` form of named fields.
func convDims(a mlir.Attr) (*hlo.ConvDimNumbers, error) {
	d, ok := a.(mlir.DialectAttr)
	if !ok {
		return nil, fmt.Errorf("convolution without dimension_numbers")
	}
	body := strings.TrimSpace(d.Raw)
	if strings.HasPrefix(body, "raw") {
		return rawConvDims(body)
	}
	in, rest, ok1 := strings.Cut(body, "]x[")
	k, out, ok2 := strings.Cut(rest, "]->[")
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("bad convolution dimension numbers %q", body)
	}
	dn := &hlo.ConvDimNumbers{}
	var err error
	if dn.InputBatch, dn.InputFeature, dn.InputSpatial, err = convLabels(strings.TrimPrefix(in, "["), 'b', 'f'); err != nil {
		return nil, err
	}
	if dn.KernelInput, dn.KernelOutput, dn.KernelSpatial, err = convLabels(k, 'i', 'o'); err != nil {
		return nil, err
	}
	if dn.OutputBatch, dn.OutputFeature, dn.OutputSpatial, err = convLabels(strings.TrimSuffix(out, "]"), 'b', 'f'); err != nil {
		return nil, err
	}
	return dn, nil
}

// convLabels reads one comma-separated label list: the positions of the
// two named roles and of each spatial dimension by its number.
func convLabels(s string, a, b byte) (pa, pb int64, spatial []int64, err error) {
	parts := strings.Split(s, ",")
	pa, pb = -1, -1
	spatial = make([]int64, len(parts))
	for i := range spatial {
		spatial[i] = -1
	}
	nsp := 0
	for i, p := range parts {
		p = strings.TrimSpace(p)
		switch {
		case len(p) == 1 && p[0] == a:
			pa = int64(i)
		case len(p) == 1 && p[0] == b:
			pb = int64(i)
		default:
			k, err := strconv.Atoi(p)
			if err != nil || k < 0 || k >= len(parts) {
				return 0, 0, nil, fmt.Errorf("bad convolution dimension label %q", p)
			}
			spatial[k] = int64(i)
			nsp++
		}
	}
	spatial = spatial[:nsp]
	for _, v := range spatial {
		if v < 0 {
			return 0, 0, nil, fmt.Errorf("convolution spatial labels are not 0..%d in %q", nsp-1, s)
		}
	}
	return pa, pb, spatial, nil
}

func rawConvDims(body string) (*hlo.ConvDimNumbers, error) {
	dn := &hlo.ConvDimNumbers{}
	for _, m := range rawConvField.FindAllStringSubmatch(body, -1) {
		var list []int64
		one := int64(0)
		if strings.HasPrefix(m[2], "[") {
			for _, p := range strings.Split(strings.Trim(m[2], "[]"), ",") {
				if p = strings.TrimSpace(p); p != "" {
					v, err := strconv.ParseInt(p, 10, 64)
					if err != nil {
						return nil, err
					}
					list = append(list, v)
				}
			}
			if list == nil {
				list = []int64{}
			}
		} else {
			one, _ = strconv.ParseInt(m[2], 10, 64)
		}
		switch m[1] {
		case "input_batch_dimension":
			dn.InputBatch = one
		case "input_feature_dimension":
			dn.InputFeature = one
		case "input_spatial_dimensions":
			dn.InputSpatial = list
		case "kernel_input_feature_dimension":
			dn.KernelInput = one
		case "kernel_output_feature_dimension":
			dn.KernelOutput = one
		case "kernel_spatial_dimensions":
			dn.KernelSpatial = list
		case "output_batch_dimension":
			dn.OutputBatch = one
		case "output_feature_dimension":
			dn.OutputFeature = one
		case "output_spatial_dimensions":
			dn.OutputSpatial = list
		}
	}
	return dn, nil
}

func convertGather(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, sh, err := operandsAndShape(s, op)
	if err != nil {
		return nil, err
	}
	attrs, err := gatherAttrs(op)
	if err != nil {
		return nil, err
	}
	sizes, err := opInts(op, "slice_sizes")
	if err != nil {
		return nil, err
	}
	attrs = append(attrs, hlo.Attr{Name: "slice_sizes", Value: sizes})
	return []*hlo.Instruction{s.add(hlo.OpGather, sh, ins, attrs...)}, nil
}

// gatherAttrs reads gather's dimension numbers (all but slice_sizes).
func gatherAttrs(op *mlir.Op) ([]hlo.Attr, error) {
	dn := op.Attr("dimension_numbers")
	var attrs []hlo.Attr
	for _, f := range []string{"offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims", "start_indices_batching_dims"} {
		v, err := intsOf(field(dn, f))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if v == nil {
			v = []int64{}
		}
		attrs = append(attrs, hlo.Attr{Name: f, Value: v})
	}
	ivd, _ := intOf(field(dn, "index_vector_dim"))
	attrs = append(attrs, hlo.Attr{Name: "index_vector_dim", Value: ivd})
	if boolOf(op.Attr("indices_are_sorted")) {
		attrs = append(attrs, hlo.Attr{Name: "indices_are_sorted", Value: true})
	}
	return attrs, nil
}

func convertFft(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, sh, err := operandsAndShape(s, op)
	if err != nil {
		return nil, err
	}
	n, err := opInts(op, "fft_length")
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{s.add(hlo.OpFft, sh, ins,
		hlo.Attr{Name: "fft_type", Value: hlo.Enum(enumOf(op.Attr("fft_type")))}, hlo.Attr{Name: "fft_length", Value: n})}, nil
}

func convertCholesky(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, sh, err := operandsAndShape(s, op)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{s.add(hlo.OpCholesky, sh, ins, hlo.Attr{Name: "lower", Value: boolOf(op.Attr("lower"))})}, nil
}

func convertTriangularSolve(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, sh, err := operandsAndShape(s, op)
	if err != nil {
		return nil, err
	}
	tr := enumOf(op.Attr("transpose_a"))
	if tr == "" {
		tr = "NO_TRANSPOSE"
	}
	return []*hlo.Instruction{s.add(hlo.OpTriangularSolve, sh, ins,
		hlo.Attr{Name: "left_side", Value: boolOf(op.Attr("left_side"))},
		hlo.Attr{Name: "lower", Value: boolOf(op.Attr("lower"))},
		hlo.Attr{Name: "unit_diagonal", Value: boolOf(op.Attr("unit_diagonal"))},
		hlo.Attr{Name: "transpose_a", Value: hlo.Enum(tr)})}, nil
}

func convertRng(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, sh, err := operandsAndShape(s, op)
	if err != nil {
		return nil, err
	}
	dist := "rng_" + strings.ToLower(enumOf(op.Attr("rng_distribution")))
	return []*hlo.Instruction{s.add(hlo.OpRng, sh, ins[:2], hlo.Attr{Name: "distribution", Value: hlo.Enum(dist)})}, nil
}

func convertRngBitGenerator(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := resultsShape(op)
	if err != nil {
		return nil, err
	}
	alg := "rng_" + strings.ToLower(enumOf(op.Attr("rng_algorithm")))
	in := s.add(hlo.OpRngBitGenerator, sh, ins, hlo.Attr{Name: "algorithm", Value: hlo.Enum(alg)})
	return s.results(in, len(op.Results)), nil
}

func convertBatchNorm(code hlo.Opcode) opFunc {
	return func(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
		ins, err := s.operands(op)
		if err != nil {
			return nil, err
		}
		sh, err := resultsShape(op)
		if err != nil {
			return nil, err
		}
		eps, _ := floatOf(op.Attr("epsilon"))
		in := s.add(code, sh, ins, hlo.Attr{Name: "epsilon", Value: eps},
			hlo.Attr{Name: "feature_index", Value: opInt(op, "feature_index", 0)})
		return s.results(in, len(op.Results)), nil
	}
}
