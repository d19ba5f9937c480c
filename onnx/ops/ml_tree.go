package ops

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// The legacy tree ensembles of ai.onnx.ml (opsets 1 and 3): nodes named
// by (tree id, node id), leaves carrying weights through the target_* or
// class_* attributes.

func init() {
	Register(Op{Name: "TreeEnsembleRegressor", Domain: mlDomain, Host: hostTreeEnsembleRegressor})
	Register(Op{Name: "TreeEnsembleClassifier", Domain: mlDomain, Host: hostTreeEnsembleClassifier})
}

var mlPostNames = map[string]int64{"NONE": 0, "SOFTMAX": 1, "LOGISTIC": 2, "SOFTMAX_ZERO": 3, "PROBIT": 4}

type mlTreeKey struct{ tree, node int64 }

type mlLegacyTrees struct {
	treeIDs  []int64       // sorted distinct tree ids
	roots    map[int64]int // tree id -> index of its first node
	index    map[mlTreeKey]int
	modes    []string
	feats    []int64
	values   []float64
	tnode    []int64
	fnode    []int64
	missTrue []int64
	treeOf   []int64
	nodeOf   []int64
}

// mlFloatsAttr reads name_as_tensor (double) if present, else name.
func mlFloatsAttr(h *HostCtx, name string) ([]float64, error) {
	if h.Node.Has(name + "_as_tensor") {
		return mlTensorFloats(h, name+"_as_tensor")
	}
	fs := h.Node.Floats(name)
	if fs == nil {
		return nil, nil
	}
	out := make([]float64, len(fs))
	for i, f := range fs {
		out[i] = float64(f)
	}
	return out, nil
}

func mlReadLegacyTrees(h *HostCtx) (*mlLegacyTrees, error) {
	n := h.Node
	t := &mlLegacyTrees{
		modes: n.Strs("nodes_modes"), feats: n.Ints("nodes_featureids"),
		tnode: n.Ints("nodes_truenodeids"), fnode: n.Ints("nodes_falsenodeids"),
		missTrue: n.Ints("nodes_missing_value_tracks_true"),
		treeOf:   n.Ints("nodes_treeids"), nodeOf: n.Ints("nodes_nodeids"),
		roots: map[int64]int{}, index: map[mlTreeKey]int{},
	}
	var err error
	if t.values, err = mlFloatsAttr(h, "nodes_values"); err != nil {
		return nil, err
	}
	nn := len(t.treeOf)
	if len(t.nodeOf) != nn || len(t.modes) != nn || len(t.feats) != nn || len(t.tnode) != nn || len(t.fnode) != nn {
		return nil, h.Errorf("node attributes differ in length")
	}
	if len(t.values) < nn {
		t.values = append(t.values, make([]float64, nn-len(t.values))...)
	}
	for i := 0; i < nn; i++ {
		tid := t.treeOf[i]
		if _, ok := t.roots[tid]; !ok {
			t.roots[tid] = i
			t.treeIDs = append(t.treeIDs, tid)
		}
		t.index[mlTreeKey{tid, t.nodeOf[i]}] = i
	}
	sortInt64s(t.treeIDs)
	return t, nil
}

func sortInt64s(v []int64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

// leaf is the index of the leaf that row x reaches in tree tid.
func (t *mlLegacyTrees) leaf(h *HostCtx, x []float64, tid int64) (int, error) {
	idx := t.roots[tid]
	for steps := 0; t.modes[idx] != "LEAF"; steps++ {
		if steps > len(t.modes) {
			return 0, h.Errorf("tree %d has a cycle", tid)
		}
		f := t.feats[idx]
		if f < 0 || int(f) >= len(x) {
			return 0, h.Errorf("feature %d out of range", f)
		}
		v, th := x[f], t.values[idx]
		var r bool
		if math.IsNaN(v) {
			r = idx < len(t.missTrue) && t.missTrue[idx] >= 1
		} else {
			switch t.modes[idx] {
			case "BRANCH_LEQ":
				r = v <= th
			case "BRANCH_LT":
				r = v < th
			case "BRANCH_GTE":
				r = v >= th
			case "BRANCH_GT":
				r = v > th
			case "BRANCH_EQ":
				r = v == th
			case "BRANCH_NEQ":
				r = v != th
			default:
				return 0, h.Errorf("unknown node mode %q", t.modes[idx])
			}
		}
		next := t.fnode[idx]
		if r {
			next = t.tnode[idx]
		}
		var ok bool
		if idx, ok = t.index[mlTreeKey{tid, next}]; !ok {
			return 0, h.Errorf("tree %d has no node %d", tid, next)
		}
	}
	return idx, nil
}

// mlRows reads X as rows of float64 features ([N, F], or [F] as one row).
func mlRows(h *HostCtx) ([][]float64, error) {
	x, err := mlInput(h, 0)
	if err != nil {
		return nil, err
	}
	if x.IsString() {
		return nil, h.Errorf("string input")
	}
	dims := x.Dims()
	var rows, cols int
	switch len(dims) {
	case 1:
		rows, cols = 1, int(dims[0])
	case 2:
		rows, cols = int(dims[0]), int(dims[1])
	default:
		return nil, h.Errorf("input of rank %d: want 1 or 2", len(dims))
	}
	out := make([][]float64, rows)
	for r := range out {
		out[r] = make([]float64, cols)
		for c := range out[r] {
			out[r][c] = x.Lit.GetFloat64(r*cols + c)
		}
	}
	return out, nil
}

// mlLeafWeights indexes the (tree, node, id, weight) leaf entries by
// leaf.
func mlLeafWeights(h *HostCtx, prefix string) (map[mlTreeKey][]int, []int64, []float64, error) {
	trees, nodes, ids := h.Node.Ints(prefix+"_treeids"), h.Node.Ints(prefix+"_nodeids"), h.Node.Ints(prefix+"_ids")
	w, err := mlFloatsAttr(h, prefix+"_weights")
	if err != nil {
		return nil, nil, nil, err
	}
	if len(nodes) != len(trees) || len(ids) != len(trees) || len(w) != len(trees) {
		return nil, nil, nil, h.Errorf("%s_* attributes differ in length", prefix)
	}
	m := map[mlTreeKey][]int{}
	for i := range trees {
		k := mlTreeKey{trees[i], nodes[i]}
		m[k] = append(m[k], i)
	}
	return m, ids, w, nil
}

// mlEnsemble is what both tree ensembles read first: the input rows, the
// trees, each leaf's weights (for targets or classes) and the base values.
type mlEnsemble struct {
	rows   [][]float64
	t      *mlLegacyTrees
	byLeaf map[mlTreeKey][]int
	ids    []int64
	w      []float64
	base   []float64
}

func mlReadEnsemble(h *HostCtx, leafKind string) (e mlEnsemble, err error) {
	if e.rows, err = mlRows(h); err != nil {
		return e, err
	}
	if e.t, err = mlReadLegacyTrees(h); err != nil {
		return e, err
	}
	if e.byLeaf, e.ids, e.w, err = mlLeafWeights(h, leafKind); err != nil {
		return e, err
	}
	e.base, err = mlFloatsAttr(h, "base_values")
	return e, err
}

func hostTreeEnsembleRegressor(h *HostCtx) error {
	e, err := mlReadEnsemble(h, "target")
	if err != nil {
		return err
	}
	rows, t, byLeaf, ids, w, base := e.rows, e.t, e.byLeaf, e.ids, e.w, e.base
	nt := h.Node.Int("n_targets", 1)
	if nt < 1 || nt > 1<<24 {
		return h.Errorf("n_targets %d", nt)
	}
	for _, id := range ids {
		if id < 0 || id >= nt {
			return h.Errorf("target id %d out of range", id)
		}
	}
	agg := h.Node.Str("aggregate_function", "SUM")
	post, err := mlPost(h)
	if err != nil {
		return err
	}
	out := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, int64(len(rows)), nt))
	res := make([]float64, nt)
	for r, x := range rows {
		init := 0.0
		switch agg {
		case "SUM", "AVERAGE":
		case "MIN":
			init = math.MaxFloat32
		case "MAX":
			init = -math.MaxFloat32
		default:
			return h.Errorf("unknown aggregate_function %q", agg)
		}
		for i := range res {
			res[i] = init
		}
		for _, tid := range t.treeIDs {
			leaf, err := t.leaf(h, x, tid)
			if err != nil {
				return err
			}
			for _, k := range byLeaf[mlTreeKey{tid, t.nodeOf[leaf]}] {
				switch agg {
				case "SUM", "AVERAGE":
					res[ids[k]] += w[k]
				case "MIN":
					res[ids[k]] = min(res[ids[k]], w[k])
				case "MAX":
					res[ids[k]] = max(res[ids[k]], w[k])
				}
			}
		}
		for i := range res {
			if agg == "AVERAGE" && len(t.treeIDs) > 0 {
				res[i] /= float64(len(t.treeIDs))
			}
			if i < len(base) {
				res[i] += base[i]
			}
		}
		if err := mlPostTransform(res, post); err != nil {
			return h.Errorf("%v", err)
		}
		for i, v := range res {
			out.SetFloat64(r*int(nt)+i, v)
		}
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}

func hostTreeEnsembleClassifier(h *HostCtx) error {
	e, err := mlReadEnsemble(h, "class")
	if err != nil {
		return err
	}
	rows, t, byLeaf, ids, w, base := e.rows, e.t, e.byLeaf, e.ids, e.w, e.base
	labelsInt, labelsStr := h.Node.Ints("classlabels_int64s"), h.Node.Strs("classlabels_strings")
	nc := max(len(labelsInt), len(labelsStr))
	if nc == 0 {
		return h.Errorf("no class labels")
	}
	post, err := mlPost(h)
	if err != nil {
		return err
	}
	distinct := map[int64]bool{}
	for _, id := range ids {
		if id < 0 || int(id) >= max(nc, 2) {
			return h.Errorf("class id %d out of range", id)
		}
		distinct[id] = true
	}
	binary := len(distinct) == 1
	var binaryID int64
	for id := range distinct {
		binaryID = id
	}
	width := nc
	if binary && nc == 1 {
		width = 2
	}
	scores := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, int64(len(rows)), int64(width)))
	labels := make([]int, len(rows))
	for r, x := range rows {
		res := make([]float64, max(nc, 2))
		for i := 0; i < nc; i++ {
			if i < len(base) {
				res[i] = base[i]
			}
		}
		for _, tid := range t.treeIDs {
			leaf, err := t.leaf(h, x, tid)
			if err != nil {
				return err
			}
			for _, k := range byLeaf[mlTreeKey{tid, t.nodeOf[leaf]}] {
				res[ids[k]] += w[k]
			}
		}
		res = res[:width]
		if binary && width >= 2 {
			// one score, for the positive class
			res[1] = res[binaryID]
			if post == 0 || post == 4 {
				res[0] = 1 - res[1]
			} else {
				res[0] = -res[1]
			}
		}
		if err := mlPostTransform(res, post); err != nil {
			return h.Errorf("%v", err)
		}
		best := 0
		for i, v := range res {
			if v > res[best] {
				best = i
			}
			scores.SetFloat64(r*width+i, v)
		}
		labels[r] = best
	}
	n := int64(len(rows))
	if labelsStr != nil && labelsInt == nil {
		out := make([]string, len(rows))
		for i, l := range labels {
			out[i] = labelsStr[min(l, len(labelsStr)-1)]
		}
		if err := strSetStrings(h, 0, out, n); err != nil {
			return err
		}
	} else {
		out := hlo.NewLiteral(hlo.ArrayShape(hlo.S64, n))
		for i, l := range labels {
			switch {
			case len(labelsInt) == 1: // binary with the single label 1
				if l == 1 {
					out.SetInt64(i, labelsInt[0])
				}
			default:
				out.SetInt64(i, labelsInt[l])
			}
		}
		h.Set(0, onnx.LiteralValue(out))
	}
	h.Set(1, onnx.LiteralValue(scores))
	return nil
}
