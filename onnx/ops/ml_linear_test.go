package ops

import (
	"math"
	"slices"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

func mlTestMatrix(rows, cols int64, v ...float64) *onnx.Tensor {
	l := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, rows, cols))
	for i, x := range v {
		l.SetFloat64(i, x)
	}
	return onnx.TensorOf(l)
}

func mlTestStrings(t *testing.T, strs []string, dims ...int64) *onnx.Tensor {
	t.Helper()
	x, err := onnx.NewStringTensor(strs, dims...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// Hand-worked: the string paths ONNX Runtime's node binding cannot feed or
// read back, and the semantics where Axle follows scikit-learn and ONNX's
// reference implementation rather than ONNX Runtime (Normalizer MAX).
func TestMLLinearHandWorked(t *testing.T) {
	// Binary classifier, weights (1, -1), intercept 0, string labels: row
	// (2, 1) scores 1 → "yes" with scores (1-1, 1) = (0, 1); row (0, 3)
	// scores -3 → "no" with (4, -3).
	n := mlTestNode("LinearClassifier", map[string]any{"coefficients": []float32{1, -1}, "intercepts": []float32{0},
		"classlabels_strings": []string{"no", "yes"}})
	out := mlTestRun(t, hostLinearClassifier, n, mlTestMatrix(2, 2, 2, 1, 0, 3))
	if got := out[0].Tensor.Strs; !slices.Equal(got, []string{"yes", "no"}) {
		t.Errorf("LinearClassifier labels %v, want [yes no]", got)
	}
	if got := mlTestFloats(t, out[1]); !slices.Equal(got, []float64{0, 1, 4, -3}) {
		t.Errorf("LinearClassifier scores %v, want [0 1 4 -3]", got)
	}
	// Three classes, no labels: the label is the index of the largest.
	n = mlTestNode("LinearClassifier", map[string]any{"coefficients": []float32{1, 0, 0, 1, -1, -1}})
	out = mlTestRun(t, hostLinearClassifier, n, mlTestMatrix(2, 2, 2, 1, -1, -3))
	if got, _ := Int64s(out[0].Tensor); !slices.Equal(got, []int64{0, 2}) {
		t.Errorf("LinearClassifier without labels: %v, want [0 2]", got)
	}

	// Normalizer MAX divides by the largest magnitude: (-4, 2) → (-1, 0.5).
	out = mlTestRun(t, hostNormalizer, mlTestNode("Normalizer", map[string]any{"norm": "MAX"}), mlTestMatrix(1, 2, -4, 2))
	if got := mlTestFloats(t, out[0]); !slices.Equal(got, []float64{-1, 0.5}) {
		t.Errorf("Normalizer MAX %v, want [-1 0.5]", got)
	}

	// CategoryMapper both ways, unknowns to the defaults.
	n = mlTestNode("CategoryMapper", map[string]any{"cats_int64s": []int64{7, 3}, "cats_strings": []string{"seven", "three"},
		"default_string": "?", "default_int64": int64(-9)})
	ints := hlo.NewLiteral(hlo.ArrayShape(hlo.S64, 3))
	for i, v := range []int64{3, 5, 7} {
		ints.SetInt64(i, v)
	}
	out = mlTestRun(t, hostCategoryMapper, n, onnx.TensorOf(ints))
	if got := out[0].Tensor.Strs; !slices.Equal(got, []string{"three", "?", "seven"}) {
		t.Errorf("CategoryMapper to strings %v", got)
	}
	out = mlTestRun(t, hostCategoryMapper, n, mlTestStrings(t, []string{"seven", "x"}, 2))
	if got, _ := Int64s(out[0].Tensor); !slices.Equal(got, []int64{7, -9}) {
		t.Errorf("CategoryMapper to int64s %v, want [7 -9]", got)
	}

	// OneHotEncoder over strings, an unknown one all zeros.
	n = mlTestNode("OneHotEncoder", map[string]any{"cats_strings": []string{"a", "b", "c"}})
	out = mlTestRun(t, hostOneHotEncoder, n, mlTestStrings(t, []string{"c", "z", "a"}, 3))
	if got := mlTestFloats(t, out[0]); !slices.Equal(got, []float64{0, 0, 1, 0, 0, 0, 1, 0, 0}) {
		t.Errorf("OneHotEncoder strings %v", got)
	}
	// zeros=0: an unknown category is an error.
	h := &HostCtx{Node: mlTestNode("OneHotEncoder", map[string]any{"cats_strings": []string{"a"}, "zeros": int64(0)}),
		In: []*onnx.Value{onnx.TensorValue(mlTestStrings(t, []string{"b"}, 1))}}
	if err := hostOneHotEncoder(h); err == nil {
		t.Error("OneHotEncoder zeros=0 took an unknown category")
	}

	// FeatureVectorizer: (1, 2) cut to 1, (3, 4, 5) padded to 4.
	n = mlTestNode("FeatureVectorizer", map[string]any{"inputdimensions": []int64{1, 4}})
	out = mlTestRun(t, hostFeatureVectorizer, n, mlTestMatrix(1, 2, 1, 2), mlTestMatrix(1, 3, 3, 4, 5))
	if got := mlTestFloats(t, out[0]); !slices.Equal(got, []float64{1, 3, 4, 5, 0}) {
		t.Errorf("FeatureVectorizer %v, want [1 3 4 5 0]", got)
	}

	// Scaler and Imputer on one row: ((x - 1)·2) and NaN → 9.
	out = mlTestRun(t, hostScaler, mlTestNode("Scaler", map[string]any{"offset": []float32{1}, "scale": []float32{2}}),
		mlTestMatrix(1, 2, 3, -1))
	if got := mlTestFloats(t, out[0]); !slices.Equal(got, []float64{4, -4}) {
		t.Errorf("Scaler %v, want [4 -4]", got)
	}
	out = mlTestRun(t, hostImputer, mlTestNode("Imputer", map[string]any{"imputed_value_floats": []float32{9},
		"replaced_value_float": float32(math.NaN())}), mlTestMatrix(1, 2, math.NaN(), 2))
	if got := mlTestFloats(t, out[0]); !slices.Equal(got, []float64{9, 2}) {
		t.Errorf("Imputer %v, want [9 2]", got)
	}
}

// Pairwise coupling of two classes gives their pairwise probability back
// (to the iteration's tolerance, 0.005/k), and of three consistent
// pairwise probabilities the distribution they come from: p = (0.5,
// 0.3, 0.2) has r_ij = p_i/(p_i+p_j).
func TestPairwiseCoupling(t *testing.T) {
	p := pairwiseCoupling([][]float64{{0, 0.8}, {0.2, 0}})
	if math.Abs(p[0]-0.8) > 0.01 || math.Abs(p[1]-0.2) > 0.01 {
		t.Errorf("two classes at 0.8: %v", p)
	}
	want := []float64{0.5, 0.3, 0.2}
	r := make([][]float64, 3)
	for i := range r {
		r[i] = make([]float64, 3)
		for j := range r[i] {
			if i != j {
				r[i][j] = want[i] / (want[i] + want[j])
			}
		}
	}
	p = pairwiseCoupling(r)
	for i := range want {
		if math.Abs(p[i]-want[i]) > 0.01 {
			t.Fatalf("three classes: %v, want %v", p, want)
		}
	}
}

// A two-class linear-kernel SVC by hand: support vectors (1, 0) of class
// "a" and (0, 1) of "b", coefficients (1, -1), rho 0: the decision is
// x0 - x1, a positive one votes "a", and the scores are (-s, s).
func TestSVMClassifierHandWorked(t *testing.T) {
	n := mlTestNode("SVMClassifier", map[string]any{"kernel_type": "LINEAR", "support_vectors": []float32{1, 0, 0, 1},
		"vectors_per_class": []int64{1, 1}, "coefficients": []float32{1, -1}, "rho": []float32{0},
		"classlabels_strings": []string{"a", "b"}})
	out := mlTestRun(t, hostSVMClassifier, n, mlTestMatrix(2, 2, 2, 1, 0, 3))
	if got := out[0].Tensor.Strs; !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("labels %v, want [a b]", got)
	}
	if got := mlTestFloats(t, out[1]); !slices.Equal(got, []float64{-1, 1, 3, -3}) {
		t.Errorf("scores %v, want [-1 1 3 -3]", got)
	}
}
