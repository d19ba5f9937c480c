package opt

import (
	"fmt"
	"math"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// gemmConfig is the part of XLA's GemmBackendConfig a rewrite needs.
type gemmConfig struct {
	AlphaReal *pbFloat `json:"alpha_real"`
	AlphaImag pbFloat  `json:"alpha_imag"`
	Beta      pbFloat  `json:"beta"`
	Dims      struct {
		LhsContracting []pbInt `json:"lhs_contracting_dimensions"`
		RhsContracting []pbInt `json:"rhs_contracting_dimensions"`
		LhsBatch       []pbInt `json:"lhs_batch_dimensions"`
		RhsBatch       []pbInt `json:"rhs_batch_dimensions"`
	} `json:"dot_dimension_numbers"`
	Epilogue    string `json:"epilogue"`
	DamaxOutput bool   `json:"damax_output"`
}

// gemmEpilogues says, for each GemmBackendConfig.Epilogue, whether it adds
// a vector bias, which activation follows, and whether the pre-activation
// value is a second output (the *_AUX epilogues).
var gemmEpilogues = map[string]struct {
	bias bool
	act  string
	aux  bool
}{
	"": {}, "DEFAULT": {},
	"BIAS":          {bias: true},
	"RELU":          {act: "relu"},
	"BIAS_RELU":     {bias: true, act: "relu"},
	"GELU":          {act: "gelu"},
	"GELU_AUX":      {act: "gelu", aux: true},
	"BIAS_GELU":     {bias: true, act: "gelu"},
	"BIAS_GELU_AUX": {bias: true, act: "gelu", aux: true},
}

// rewriteGemm rebuilds a cuBLAS call as
//
//	D = act(alpha·dot(A, B) + beta·C + broadcast(bias))
//
// (cuBLASLt's definition, which XLA's GemmRewriter fuses into). Operands
// are A, B, then C when present (the rewriter inserts it at index 2 and
// sets beta), then for the f8 call the scales of A, B, C and D, then the
// vector bias of a BIAS epilogue. For f8, A and B are multiplied by their
// scales, D by its scale after the epilogue, and the result saturates to
// the f8 type's finite range as the fused clamp did. The bias is a vector
// over the output's column (rhs non-contracting) dimensions, the last ones
// of a dot's result.
func rewriteGemm(c *gpuCall) ([]*hlo.Instruction, error) {
	var cfg gemmConfig
	if err := c.backendConfig("gemm_backend_config", &cfg); err != nil {
		return nil, err
	}
	ep, ok := gemmEpilogues[cfg.Epilogue]
	if !ok {
		return nil, fmt.Errorf("%s: epilogue %s is not supported", c.target, cfg.Epilogue)
	}
	if cfg.AlphaImag != 0 || c.out.DType.IsComplex() {
		return nil, fmt.Errorf("%s: complex GEMMs are not supported", c.target)
	}
	ops := c.in.Operands
	f8 := c.target == "__cublas$lt$matmul$f8"
	fixed := 2 // A, B
	if f8 {
		fixed += 4 // the four scales
	}
	if ep.bias {
		fixed++
	}
	hasC := false
	switch len(ops) {
	case fixed:
	case fixed + 1:
		hasC = true
	default:
		return nil, fmt.Errorf("%s with epilogue %s takes %d or %d operands, has %d", c.target, orDefault(cfg.Epilogue), fixed, fixed+1, len(ops))
	}
	if cfg.Beta != 0 && !hasC {
		return nil, fmt.Errorf("%s: beta is %v but there is no C operand", c.target, float64(cfg.Beta))
	}
	ct := computeType(c.out.DType)
	a, b := c.to(ops[0], ct), c.to(ops[1], ct)
	next := 2
	var cMat *hlo.Instruction
	if hasC {
		cMat = c.to(ops[next], ct)
		next++
	}
	var dScale *hlo.Instruction
	if f8 {
		aScale, bScale, cScale := ops[next], ops[next+1], ops[next+2]
		dScale = ops[next+3]
		next += 4
		for i, s := range []*hlo.Instruction{aScale, bScale, cScale, dScale} {
			if s.Shape.Rank() != 0 {
				return nil, fmt.Errorf("%s: scale operand %d is %s, want a scalar", c.target, next-4+i, s.Shape.HumanString())
			}
		}
		a = c.binary(hlo.OpMultiply, a, c.broadcast(c.to(aScale, ct), a.Shape.Dims, nil))
		b = c.binary(hlo.OpMultiply, b, c.broadcast(c.to(bScale, ct), b.Shape.Dims, nil))
		if cMat != nil {
			cMat = c.binary(hlo.OpMultiply, cMat, c.broadcast(c.to(cScale, ct), cMat.Shape.Dims, nil))
		}
	}
	// XLA prints no batch dimensions rather than empty ones.
	var dims []hlo.Attr
	if len(cfg.Dims.LhsBatch)+len(cfg.Dims.RhsBatch) > 0 {
		dims = append(dims, hlo.Attr{Name: "lhs_batch_dims", Value: int64s(cfg.Dims.LhsBatch)})
	}
	dims = append(dims, hlo.Attr{Name: "lhs_contracting_dims", Value: int64s(cfg.Dims.LhsContracting)})
	if len(cfg.Dims.LhsBatch)+len(cfg.Dims.RhsBatch) > 0 {
		dims = append(dims, hlo.Attr{Name: "rhs_batch_dims", Value: int64s(cfg.Dims.RhsBatch)})
	}
	dims = append(dims, hlo.Attr{Name: "rhs_contracting_dims", Value: int64s(cfg.Dims.RhsContracting)})
	d := c.add(hlo.OpDot, []*hlo.Instruction{a, b}, dims...)
	if c.err != nil {
		return nil, c.err
	}
	if !sameDims(d.Shape.Dims, c.out.Dims) {
		return nil, fmt.Errorf("%s: the dot of its operands is %v, but the call returns %s", c.target, d.Shape.Dims, c.out.HumanString())
	}
	d = c.scale(d, valueOr(cfg.AlphaReal, 1))
	if cMat != nil {
		if !sameDims(cMat.Shape.Dims, d.Shape.Dims) {
			return nil, fmt.Errorf("%s: C is %s, want the result's dimensions %v", c.target, ops[2].Shape.HumanString(), d.Shape.Dims)
		}
		d = c.binary(hlo.OpAdd, d, c.scale(cMat, float64(cfg.Beta)))
	}
	if ep.bias {
		bias := c.to(ops[next], ct)
		r, n := d.Shape.Rank(), bias.Shape.Rank()
		if n > r || !sameDims(bias.Shape.Dims, d.Shape.Dims[r-n:]) {
			return nil, fmt.Errorf("%s: bias is %s, want the result's last dimensions %v", c.target, ops[next].Shape.HumanString(), d.Shape.Dims[r-n:])
		}
		pos := make([]int64, n)
		for i := range pos {
			pos[i] = int64(r - n + i)
		}
		d = c.binary(hlo.OpAdd, d, c.broadcast(bias, d.Shape.Dims, pos))
	}
	pre := d
	switch ep.act {
	case "relu":
		d = c.binary(hlo.OpMaximum, d, c.splat(d, 0))
	case "gelu":
		d = c.geluTanh(d)
	}
	act := d
	if dScale != nil {
		d = c.binary(hlo.OpMultiply, d, c.broadcast(c.to(dScale, ct), d.Shape.Dims, nil))
	}
	vals := []*hlo.Instruction{c.saturate(d, c.out.DType)}
	if ep.aux {
		vals = append(vals, pre)
	}
	if cfg.DamaxOutput {
		// The largest magnitude of the result before D's scale (XLA's
		// rewriter folds such a reduction of abs(gemm) into the call).
		vals = append(vals, c.reduceMax(c.unary(hlo.OpAbs, act)))
	}
	for i := 1; i < len(vals); i++ {
		if !c.in.Shape.IsTuple() || len(c.in.Shape.Tuple) <= i || !c.in.Shape.Tuple[i].IsArray() {
			return nil, fmt.Errorf("%s: the config asks for %d results, but the call returns %s", c.target, len(vals), c.in.Shape.HumanString())
		}
		vals[i] = c.to(vals[i], c.in.Shape.Tuple[i].DType)
	}
	return vals, c.err
}

// reduceMax reduces x over all its dimensions with maximum, from 0 (x is
// non-negative).
func (c *gpuCall) reduceMax(x *hlo.Instruction) *hlo.Instruction {
	t := x.Shape.DType
	m := c.c.Parent
	comp := &hlo.Computation{Name: c.names.Unique("max_" + t.String()), Parent: m}
	for i, n := range []string{"lhs", "rhs"} {
		p := comp.AddInstruction(&hlo.Instruction{Name: c.names.Unique(n), Opcode: hlo.OpParameter, Shape: hlo.ScalarShape(t), ParamNumber: int64(i)})
		comp.Params = append(comp.Params, p)
	}
	comp.Root = comp.AddInstruction(&hlo.Instruction{Name: c.names.Unique("maximum"), Opcode: hlo.OpMaximum,
		Shape: hlo.ScalarShape(t), Operands: []*hlo.Instruction{comp.Params[0], comp.Params[1]}})
	m.Computations = append([]*hlo.Computation{comp}, m.Computations...)
	all := make([]int64, x.Shape.Rank())
	for i := range all {
		all[i] = int64(i)
	}
	return c.withShape(hlo.OpReduce, hlo.ScalarShape(t), []*hlo.Instruction{x, c.scalar(t, 0)},
		hlo.Attr{Name: "dimensions", Value: all}, hlo.Attr{Name: "to_apply", Value: comp})
}

func orDefault(s string) string {
	if s == "" {
		return "DEFAULT"
	}
	return s
}

func sameDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// geluTanh is the tanh approximation of GELU cuBLASLt's GELU epilogue
// computes (the pattern XLA's rewriter fuses into it):
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
func (c *gpuCall) geluTanh(x *hlo.Instruction) *hlo.Instruction {
	x3 := c.binary(hlo.OpMultiply, x, c.binary(hlo.OpMultiply, x, x))
	inner := c.scale(c.binary(hlo.OpAdd, x, c.scale(x3, 0.044715)), math.Sqrt(2/math.Pi))
	t := c.binary(hlo.OpAdd, c.splat(x, 1), c.unary(hlo.OpTanh, inner))
	return c.binary(hlo.OpMultiply, c.scale(x, 0.5), t)
}

// saturate converts x to t; for an f8 type it first clamps to t's finite
// range, as the clamp XLA fuses into an f8 GEMM's output does.
func (c *gpuCall) saturate(x *hlo.Instruction, t hlo.DType) *hlo.Instruction {
	if t.IsF8() {
		if f := minifloat.Find(strings.ToLower(t.String())); f != nil {
			hi := f.ToFloat64(f.MaxBits())
			x = c.add(hlo.OpClamp, []*hlo.Instruction{c.splat(x, -hi), x, c.splat(x, hi)})
		}
	}
	return c.to(x, t)
}
