package ops

import (
	"slices"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

// mlTestNode is a node with the given attributes (int64, float32,
// string, []int64, []float32, []string values).
func mlTestNode(op string, kv map[string]any) *onnx.Node {
	m := map[string]*onnxpb.AttributeProto{}
	for k, v := range kv {
		a := &onnxpb.AttributeProto{Name: &k}
		switch v := v.(type) {
		case int64:
			a.I = &v
		case float32:
			a.F = &v
		case string:
			a.S = []byte(v)
		case []int64:
			a.Ints = v
		case []float32:
			a.Floats = v
		case []string:
			for _, s := range v {
				a.Strings = append(a.Strings, []byte(s))
			}
		}
		m[k] = a
	}
	return &onnx.Node{Op: op, Attrs: m}
}

func mlTestRun(t *testing.T, f func(*HostCtx) error, n *onnx.Node, in ...*onnx.Tensor) []*onnx.Value {
	t.Helper()
	h := &HostCtx{Node: n}
	for _, x := range in {
		h.In = append(h.In, onnx.TensorValue(x))
	}
	if err := f(h); err != nil {
		t.Fatal(err)
	}
	return h.Out
}

func mlTestFloats(t *testing.T, v *onnx.Value) []float64 {
	t.Helper()
	out, err := Float64s(v.Tensor)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTreeEnsembleLegacy(t *testing.T) {
	// tree 0: x0 <= 0.5; tree 1: x1 < 2
	trees := map[string]any{
		"nodes_treeids":      []int64{0, 0, 0, 1, 1, 1},
		"nodes_nodeids":      []int64{0, 1, 2, 0, 1, 2},
		"nodes_featureids":   []int64{0, 0, 0, 1, 0, 0},
		"nodes_modes":        []string{"BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"},
		"nodes_values":       []float32{0.5, 0, 0, 2, 0, 0},
		"nodes_truenodeids":  []int64{1, 0, 0, 1, 0, 0},
		"nodes_falsenodeids": []int64{2, 0, 0, 2, 0, 0},
	}
	with := func(extra map[string]any) map[string]any {
		kv := map[string]any{}
		for k, v := range trees {
			kv[k] = v
		}
		for k, v := range extra {
			kv[k] = v
		}
		return kv
	}
	x, _ := hlo.LiteralFromSlice([]float32{0, 1, 1, 3}, 2, 2)
	reg := mlTestNode("TreeEnsembleRegressor", with(map[string]any{
		"n_targets": int64(1), "target_treeids": []int64{0, 0, 1, 1}, "target_nodeids": []int64{1, 2, 1, 2},
		"target_ids": []int64{0, 0, 0, 0}, "target_weights": []float32{1, 10, 100, 1000}, "base_values": []float32{0.5},
	}))
	out := mlTestRun(t, hostTreeEnsembleRegressor, reg, onnx.TensorOf(x))
	if got := mlTestFloats(t, out[0]); !slices.Equal(got, []float64{101.5, 1010.5}) {
		t.Errorf("regressor: got %v", got)
	}
	cls := mlTestNode("TreeEnsembleClassifier", with(map[string]any{
		"class_treeids": []int64{0, 0, 1, 1}, "class_nodeids": []int64{1, 2, 1, 2},
		"class_ids": []int64{0, 1, 2, 1}, "class_weights": []float32{0.5, 0.25, 0.75, 0.1},
		"classlabels_strings": []string{"a", "b", "c"},
	}))
	out = mlTestRun(t, hostTreeEnsembleClassifier, cls, onnx.TensorOf(x))
	if got := out[0].Tensor.Strs; !slices.Equal(got, []string{"c", "b"}) {
		t.Errorf("classifier labels: got %v", got)
	}
	if got := mlTestFloats(t, out[1]); !slices.Equal(got, []float64{0.5, 0, 0.75, 0, float64(float32(0.35)), 0}) {
		t.Errorf("classifier scores: got %v", got)
	}
}

func TestLabelEncoderDefaults(t *testing.T) {
	x, _ := onnx.NewStringTensor([]string{"a", "z", "b"}, 3)
	n := mlTestNode("LabelEncoder", map[string]any{
		"keys_strings": []string{"a", "b"}, "values_int64s": []int64{7, 8},
	})
	out := mlTestRun(t, hostLabelEncoder, n, x)
	if got := mlTestFloats(t, out[0]); !slices.Equal(got, []float64{7, -1, 8}) {
		t.Errorf("got %v", got)
	}
}
