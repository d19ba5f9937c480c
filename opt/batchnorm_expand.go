package opt

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// BatchNormExpander rewrites batch-norm-training, batch-norm-inference and
// batch-norm-grad into reductions, broadcasts and elementwise arithmetic
// (XLA's BatchNormExpander), which every backend already compiles and
// fuses. The formulas are the evaluator's (eval/batchnorm.go): per-feature
// mean, then the biased variance as the mean of squared deviations (two
// passes, not E[x²]-E[x]², which cancels badly in low precision), and
// epsilon added to the variance under the square root.
//
// The evaluator works in float64 and rounds once; the expansion works in
// float64 when any operand is f64 and in f32 otherwise, so narrow types
// (f16, bf16, f8) are widened first and rounded once at the end as well.
// Results differ from the evaluator only by f32 rounding and summation
// order. Tuple results become a tuple of the same elements, so
// get-tuple-element users keep working until the tuple simplifier removes
// the pair.
var BatchNormExpander = pass.Func("batch-norm-expander", runBatchNormExpander)

func runBatchNormExpander(m *hlo.Module) (bool, error) {
	names := hlo.NewNameSet(m)
	adders := map[hlo.DType]*hlo.Computation{}
	changed := false
	for _, c := range slices.Clone(m.Computations) {
		b := &builder{c: c, names: names}
		for _, in := range slices.Clone(c.Instructions) {
			if !isBatchNorm(in) {
				continue
			}
			e := newBNExpansion(b, m, adders, in)
			var repl *hlo.Instruction
			switch in.Opcode {
			case hlo.OpBatchNormTraining:
				repl = e.training()
			case hlo.OpBatchNormInference:
				repl = e.inference()
			case hlo.OpBatchNormGrad:
				repl = e.grad()
			}
			if b.err != nil {
				return changed, b.err
			}
			c.ReplaceAllUses(in, repl)
			c.RemoveInstructions(map[*hlo.Instruction]bool{in: true})
			changed = true
		}
		if b.added {
			if err := c.SortTopologically(); err != nil {
				return changed, err
			}
		}
	}
	if changed {
		removeDead(m)
	}
	return changed, nil
}

func isBatchNorm(in *hlo.Instruction) bool {
	switch in.Opcode {
	case hlo.OpBatchNormTraining, hlo.OpBatchNormInference, hlo.OpBatchNormGrad:
		_, ok := in.Int("feature_index")
		return ok && len(in.ControlPredecessors) == 0
	}
	return false
}

// bnExpansion builds one batch-norm's replacement in compute type ct.
type bnExpansion struct {
	b      *builder
	in     *hlo.Instruction
	ct     hlo.DType
	dims   []int64 // the operand's dimensions
	fi     int64   // feature_index
	n      float64 // elements per feature
	reduce []int64 // every dimension but fi
	// adders holds the module's scalar add computations by type, made
	// when a sum first needs one.
	m      *hlo.Module
	adders map[hlo.DType]*hlo.Computation
}

func newBNExpansion(b *builder, m *hlo.Module, adders map[hlo.DType]*hlo.Computation, in *hlo.Instruction) *bnExpansion {
	ct := hlo.F32
	for _, o := range in.Operands {
		if o.Shape.DType == hlo.F64 {
			ct = hlo.F64
		}
	}
	fi, _ := in.Int("feature_index")
	x := in.Operands[0].Shape
	e := &bnExpansion{b: b, in: in, ct: ct, dims: x.Dims, fi: fi, m: m, adders: adders}
	if f := x.Dims[fi]; f > 0 {
		e.n = float64(x.NumElements() / f)
	}
	for d := range x.Dims {
		if int64(d) != fi {
			e.reduce = append(e.reduce, int64(d))
		}
	}
	return e
}

// addComputation adds the scalar (a, b) -> a+b of type t ahead of its
// callers.
func addComputation(m *hlo.Module, t hlo.DType, names *hlo.NameSet) *hlo.Computation {
	c := &hlo.Computation{Name: names.Unique("add_" + t.String()), Parent: m}
	for i, n := range []string{"lhs", "rhs"} {
		p := c.AddInstruction(&hlo.Instruction{Name: names.Unique(n), Opcode: hlo.OpParameter,
			Shape: hlo.ScalarShape(t), ParamNumber: int64(i)})
		c.Params = append(c.Params, p)
	}
	c.Root = c.AddInstruction(&hlo.Instruction{Name: names.Unique("add"), Opcode: hlo.OpAdd,
		Shape: hlo.ScalarShape(t), Operands: slices.Clone(c.Params)})
	m.Computations = slices.Insert(m.Computations, 0, c)
	return c
}

// operand i in the compute type.
func (e *bnExpansion) operand(i int) *hlo.Instruction { return e.convert(e.in.Operands[i], e.ct) }

func (e *bnExpansion) convert(x *hlo.Instruction, t hlo.DType) *hlo.Instruction {
	if x == nil || x.Shape.DType == t {
		return x
	}
	return e.b.withShape(hlo.OpConvert, x.Shape.WithDType(t), []*hlo.Instruction{x})
}

func (e *bnExpansion) op(op hlo.Opcode, operands ...*hlo.Instruction) *hlo.Instruction {
	for _, o := range operands {
		if o == nil {
			return nil // an earlier build failed; b.err says why
		}
	}
	return e.b.add(op, operands)
}

// perFeature broadcasts a per-feature vector along the operand's shape.
func (e *bnExpansion) perFeature(v *hlo.Instruction) *hlo.Instruction {
	if v == nil {
		return nil
	}
	return e.b.broadcast(v, e.dims, []int64{e.fi})
}

// constant is v broadcast to a per-feature vector.
func (e *bnExpansion) constant(v float64) *hlo.Instruction {
	return e.b.broadcast(e.b.scalar(e.ct, v), []int64{e.dims[e.fi]}, nil)
}

// sum reduces x over every dimension but the feature one.
func (e *bnExpansion) sum(x *hlo.Instruction) *hlo.Instruction {
	if x == nil {
		return nil
	}
	if e.adders[e.ct] == nil {
		e.adders[e.ct] = addComputation(e.m, e.ct, e.b.names)
	}
	zero := e.b.scalar(e.ct, 0)
	return e.b.withShape(hlo.OpReduce, hlo.ArrayShape(e.ct, e.dims[e.fi]), []*hlo.Instruction{x, zero},
		hlo.Attr{Name: "dimensions", Value: nonNil(slices.Clone(e.reduce))}, hlo.Attr{Name: "to_apply", Value: e.adders[e.ct]})
}

// rsqrtVariance is 1/sqrt(variance + epsilon) per feature.
func (e *bnExpansion) rsqrtVariance(variance *hlo.Instruction) *hlo.Instruction {
	return e.op(hlo.OpRsqrt, e.op(hlo.OpAdd, variance, e.constant(epsilon(e.in))))
}

// result converts the computed elements to the instruction's element
// types; a tuple-shaped instruction gets a tuple of them.
func (e *bnExpansion) result(elems ...*hlo.Instruction) *hlo.Instruction {
	if !e.in.Shape.IsTuple() {
		return e.convert(elems[0], e.in.Shape.DType)
	}
	for i, x := range elems {
		elems[i] = e.convert(x, e.in.Shape.Tuple[i].DType)
	}
	return e.op(hlo.OpTuple, elems...)
}

// normalize is centred * (scale / sqrt(variance + epsilon)) + offset,
// centred being x - mean.
func (e *bnExpansion) normalize(centred, scale, offset, variance *hlo.Instruction) *hlo.Instruction {
	factor := e.op(hlo.OpMultiply, scale, e.rsqrtVariance(variance))
	return e.op(hlo.OpAdd, e.op(hlo.OpMultiply, centred, e.perFeature(factor)), e.perFeature(offset))
}

// training: the mean, then the biased variance as the mean squared
// deviation from it, as the evaluator computes them.
func (e *bnExpansion) training() *hlo.Instruction {
	x, scale, offset := e.operand(0), e.operand(1), e.operand(2)
	n := e.constant(e.n)
	mean := e.op(hlo.OpDivide, e.sum(x), n)
	centred := e.op(hlo.OpSubtract, x, e.perFeature(mean))
	variance := e.op(hlo.OpDivide, e.sum(e.op(hlo.OpMultiply, centred, centred)), n)
	return e.result(e.normalize(centred, scale, offset, variance), mean, variance)
}

func (e *bnExpansion) inference() *hlo.Instruction {
	centred := e.op(hlo.OpSubtract, e.operand(0), e.perFeature(e.operand(3)))
	return e.result(e.normalize(centred, e.operand(1), e.operand(2), e.operand(4)))
}

// grad computes, per feature, with c = x - mean and v = variance + eps:
//
//	grad_offset  = sum(g)
//	grad_scale   = sum(g*c) / sqrt(v)
//	grad_operand = scale/sqrt(v) * (g - sum(g)/N - c * sum(g*c)/(N*v))
func (e *bnExpansion) grad() *hlo.Instruction {
	x, scale, mean, variance, g := e.operand(0), e.operand(1), e.operand(2), e.operand(3), e.operand(4)
	n := e.constant(e.n)
	v := e.op(hlo.OpAdd, variance, e.constant(epsilon(e.in)))
	inv := e.op(hlo.OpRsqrt, v)
	centred := e.op(hlo.OpSubtract, x, e.perFeature(mean))
	sumG := e.sum(g)
	sumGC := e.sum(e.op(hlo.OpMultiply, g, centred))
	gradScale := e.op(hlo.OpMultiply, sumGC, inv)
	meanG := e.op(hlo.OpDivide, sumG, n)
	coef := e.op(hlo.OpDivide, sumGC, e.op(hlo.OpMultiply, n, v))
	inner := e.op(hlo.OpSubtract, e.op(hlo.OpSubtract, g, e.perFeature(meanG)), e.op(hlo.OpMultiply, centred, e.perFeature(coef)))
	gradX := e.op(hlo.OpMultiply, e.perFeature(e.op(hlo.OpMultiply, scale, inv)), inner)
	return e.result(gradX, gradScale, sumG)
}

// epsilon is the epsilon attribute (0 if absent).
func epsilon(in *hlo.Instruction) float64 {
	v, _ := in.Attr("epsilon")
	switch f := v.(type) {
	case float64:
		return f
	case float32:
		return float64(f)
	}
	return 0
}
