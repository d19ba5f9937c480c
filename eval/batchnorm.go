package eval

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
)

// Batch normalization per operation_semantics (BatchNormTraining,
// BatchNormInference, BatchNormGrad): statistics are taken per feature
// over every other dimension, the variance is the biased one (divided by
// N, the number of elements per feature), and the arithmetic is done in
// float64 and rounded once to the element type.

func init() {
	register(evalBatchNormTraining, hlo.OpBatchNormTraining)
	register(evalBatchNormInference, hlo.OpBatchNormInference)
	register(evalBatchNormGrad, hlo.OpBatchNormGrad)
}

// featureLayout splits row-major positions of a shape into feature index:
// element i belongs to feature (i / inner) % features.
type featureLayout struct{ features, inner, n int }

func newFeatureLayout(in *hlo.Instruction, s hlo.Shape) (featureLayout, error) {
	f, _ := in.Int("feature_index")
	if f < 0 || int(f) >= s.Rank() {
		return featureLayout{}, fmt.Errorf("feature_index %d is out of range for %s", f, s.HumanString())
	}
	inner := 1
	for _, d := range s.Dims[f+1:] {
		inner *= int(d)
	}
	features := int(s.Dims[f])
	n := 0
	if features > 0 {
		n = int(s.NumElements()) / features
	}
	return featureLayout{features: features, inner: inner, n: n}, nil
}

func (fl featureLayout) of(i int) int { return i / fl.inner % fl.features }

// moments returns each feature's mean and biased variance.
func (fl featureLayout) moments(x []float64) (mean, variance []float64) {
	mean, variance = make([]float64, fl.features), make([]float64, fl.features)
	for i, v := range x {
		mean[fl.of(i)] += v
	}
	for f := range mean {
		mean[f] /= float64(fl.n)
	}
	for i, v := range x {
		d := v - mean[fl.of(i)]
		variance[fl.of(i)] += d * d
	}
	for f := range variance {
		variance[f] /= float64(fl.n)
	}
	return mean, variance
}

func epsilon(in *hlo.Instruction) float64 {
	v, _ := in.Attr("epsilon")
	f, _ := v.(float64)
	return f
}

// normalize is scale * (x - mean) / sqrt(var + eps) + offset.
func (fl featureLayout) normalize(x, scale, offset, mean, variance []float64, eps float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		f := fl.of(i)
		out[i] = (v-mean[f])/math.Sqrt(variance[f]+eps)*scale[f] + offset[f]
	}
	return out
}

func evalBatchNormTraining(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	fl, err := newFeatureLayout(in, ops[0].Shape())
	if err != nil {
		return nil, err
	}
	x := loadFloat64(ops[0])
	mean, variance := fl.moments(x)
	y := fl.normalize(x, loadFloat64(ops[1]), loadFloat64(ops[2]), mean, variance, epsilon(in))
	t := in.Shape.Tuple
	return hlo.MakeTupleLiteral(storeFloat64(t[0], y), storeFloat64(t[1], mean), storeFloat64(t[2], variance)), nil
}

func evalBatchNormInference(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	fl, err := newFeatureLayout(in, ops[0].Shape())
	if err != nil {
		return nil, err
	}
	y := fl.normalize(loadFloat64(ops[0]), loadFloat64(ops[1]), loadFloat64(ops[2]),
		loadFloat64(ops[3]), loadFloat64(ops[4]), epsilon(in))
	return storeFloat64(in.Shape, y), nil
}

// evalBatchNormGrad takes (operand, scale, mean, variance, grad_output) and
// returns (grad_operand, grad_scale, grad_offset):
//
//	grad_offset  = sum(g)
//	grad_scale   = sum(g * (x - mean)) / sqrt(var + eps)
//	grad_operand = scale / sqrt(var + eps) *
//	               (g - grad_offset/N - (x - mean) * sum(g * (x - mean)) / (N * (var + eps)))
func evalBatchNormGrad(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	fl, err := newFeatureLayout(in, ops[0].Shape())
	if err != nil {
		return nil, err
	}
	x, scale, mean, variance, g := loadFloat64(ops[0]), loadFloat64(ops[1]), loadFloat64(ops[2]),
		loadFloat64(ops[3]), loadFloat64(ops[4])
	eps := epsilon(in)
	sumG, sumGX := make([]float64, fl.features), make([]float64, fl.features)
	for i, v := range g {
		f := fl.of(i)
		sumG[f] += v
		sumGX[f] += v * (x[i] - mean[f])
	}
	n := float64(fl.n)
	gradX := make([]float64, len(x))
	for i, v := range g {
		f := fl.of(i)
		ve := variance[f] + eps
		gradX[i] = scale[f] / math.Sqrt(ve) * (v - sumG[f]/n - (x[i]-mean[f])*sumGX[f]/(n*ve))
	}
	gradScale := make([]float64, fl.features)
	for f := range gradScale {
		gradScale[f] = sumGX[f] / math.Sqrt(variance[f]+eps)
	}
	t := in.Shape.Tuple
	return hlo.MakeTupleLiteral(storeFloat64(t[0], gradX), storeFloat64(t[1], gradScale), storeFloat64(t[2], sumG)), nil
}
