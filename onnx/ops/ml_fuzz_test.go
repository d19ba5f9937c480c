package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// FuzzMLHost: the ai.onnx.ml host kernels on attributes and inputs drawn
// from the fuzzer's bytes — lists of any length, shapes of rank 0 to 3,
// NaNs — return a result or an error, never panic.
func FuzzMLHost(f *testing.F) {
	for i := range 24 {
		f.Add(uint64(i), uint8(i))
	}
	ops := []struct {
		name string
		run  func(*HostCtx) error
	}{
		{"LinearRegressor", hostLinearRegressor}, {"LinearClassifier", hostLinearClassifier}, {"Scaler", hostScaler},
		{"Normalizer", hostNormalizer}, {"Imputer", hostImputer}, {"OneHotEncoder", hostOneHotEncoder},
		{"CategoryMapper", hostCategoryMapper}, {"FeatureVectorizer", hostFeatureVectorizer}, {"ZipMap", hostZipMap},
		{"SVMRegressor", hostSVMRegressor}, {"SVMClassifier", hostSVMClassifier},
		{"Binarizer", hostBinarizer}, {"ArrayFeatureExtractor", hostArrayFeatureExtractor},
		{"TreeEnsembleRegressor", hostTreeEnsembleRegressor}, {"TreeEnsembleClassifier", hostTreeEnsembleClassifier},
	}
	f.Fuzz(func(t *testing.T, seed uint64, which uint8) {
		r := rand.New(rand.NewPCG(seed, uint64(which)))
		op := ops[int(which)%len(ops)]
		floats := func() []float32 {
			v := make([]float32, r.IntN(12))
			for i := range v {
				v[i] = float32(r.NormFloat64())
				if r.IntN(10) == 0 {
					v[i] = float32(math.NaN())
				}
			}
			return v
		}
		ints := func() []int64 {
			v := make([]int64, r.IntN(6))
			for i := range v {
				v[i] = int64(r.IntN(9) - 2)
			}
			return v
		}
		attrs := map[string]any{
			"coefficients": floats(), "intercepts": floats(), "offset": floats(), "scale": floats(), "rho": floats(),
			"support_vectors": floats(), "prob_a": floats(), "prob_b": floats(), "imputed_value_floats": floats(),
			"kernel_params": floats(), "vectors_per_class": ints(), "classlabels_ints": ints(), "cats_int64s": ints(),
			"inputdimensions": ints(), "imputed_value_int64s": ints(), "classlabels_int64s": ints(),
			"nodes_treeids": ints(), "nodes_nodeids": ints(), "nodes_featureids": ints(), "nodes_values": floats(),
			"nodes_truenodeids": ints(), "nodes_falsenodeids": ints(), "nodes_missing_value_tracks_true": ints(),
			"nodes_modes":    []string{"BRANCH_LEQ", "LEAF", "BRANCH_GT", "BRANCH_EQ"}[:r.IntN(5)],
			"target_treeids": ints(), "target_nodeids": ints(), "target_ids": ints(), "target_weights": floats(),
			"class_treeids": ints(), "class_nodeids": ints(), "class_ids": ints(), "class_weights": floats(),
			"base_values": floats(), "n_targets": int64(r.IntN(4) - 1), "threshold": float32(r.NormFloat64()),
			"targets": int64(r.IntN(4) - 1), "n_supports": int64(r.IntN(5) - 1), "one_class": int64(r.IntN(2)),
			"kernel_type":    []string{"LINEAR", "POLY", "RBF", "SIGMOID", "X"}[r.IntN(5)],
			"post_transform": []string{"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"}[r.IntN(5)],
			"norm":           []string{"MAX", "L1", "L2"}[r.IntN(3)], "zeros": int64(r.IntN(2)),
			"cats_strings": []string{"a", "b"}[:r.IntN(3)], "classlabels_strings": []string{"p", "q", "r"}[:r.IntN(4)],
		}
		if r.IntN(3) == 0 {
			delete(attrs, "classlabels_ints")
		}
		rank := r.IntN(4)
		dims := make([]int64, rank)
		for i := range dims {
			dims[i] = int64(r.IntN(4))
		}
		dt := []hlo.DType{hlo.F32, hlo.S64, hlo.F64}[r.IntN(3)]
		l := hlo.NewLiteral(hlo.ArrayShape(dt, dims...))
		for i := range l.Len() {
			l.SetFloat64(i, float64(r.IntN(7)-3)+r.Float64())
		}
		h := &HostCtx{Node: mlTestNode(op.name, attrs)}
		for range 1 + r.IntN(2) {
			h.In = append(h.In, onnx.LiteralValue(l))
		}
		_ = op.run(h)
	})
}
