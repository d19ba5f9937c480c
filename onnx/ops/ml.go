package ops

import (
	"math"
	"strconv"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// The ai.onnx.ml domain: classic machine-learning operators, run on the
// host.

const mlDomain = "ai.onnx.ml"

func init() {
	Register(Op{Name: "LabelEncoder", Domain: mlDomain, Host: hostLabelEncoder})
	Register(Op{Name: "Binarizer", Domain: mlDomain, Host: hostBinarizer})
	Register(Op{Name: "ArrayFeatureExtractor", Domain: mlDomain, Host: hostArrayFeatureExtractor})
	Register(Op{Name: "TreeEnsemble", Domain: mlDomain, Since: 5, Host: hostTreeEnsemble})
}

func mlInput(h *HostCtx, i int) (*onnx.Tensor, error) {
	t := h.Tensor(i)
	if t == nil {
		return nil, h.Errorf("input %d is required", i)
	}
	return t, nil
}

func hostBinarizer(h *HostCtx) error {
	x, err := mlInput(h, 0)
	if err != nil {
		return err
	}
	if x.IsString() {
		return h.Errorf("string input")
	}
	th := float64(h.Node.Float("threshold", 0))
	out := hlo.NewLiteral(x.Lit.Shape())
	for i := 0; i < x.Lit.Len(); i++ {
		v := x.Lit.GetFloat64(i)
		if v > th {
			out.SetFloat64(i, 1)
		} else if math.IsNaN(v) {
			out.SetFloat64(i, v)
		}
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}

func hostArrayFeatureExtractor(h *HostCtx) error {
	x, err := mlInput(h, 0)
	if err != nil {
		return err
	}
	yt, err := mlInput(h, 1)
	if err != nil {
		return err
	}
	idx, err := Int64s(yt)
	if err != nil {
		return h.Errorf("indices: %v", err)
	}
	dims := x.Dims()
	if len(dims) == 0 {
		return h.Errorf("scalar input")
	}
	c := dims[len(dims)-1]
	rows := numElems(dims[:len(dims)-1])
	var outDims []int64
	if len(dims) == 1 {
		outDims = []int64{1, int64(len(idx))}
	} else {
		outDims = append(append([]int64(nil), dims[:len(dims)-1]...), int64(len(idx)))
	}
	for _, k := range idx {
		if k < 0 || k >= c {
			return h.Errorf("index %d out of range [0, %d)", k, c)
		}
	}
	n := int64(len(idx))
	if x.IsString() {
		out := make([]string, rows*n)
		for r := int64(0); r < rows; r++ {
			for j, k := range idx {
				out[r*n+int64(j)] = x.Strs[r*c+k]
			}
		}
		return strSetStrings(h, 0, out, outDims...)
	}
	out := hlo.NewLiteral(hlo.ArrayShape(x.Lit.DType(), outDims...))
	for r := int64(0); r < rows; r++ {
		for j, k := range idx {
			out.SetBits(int(r*n+int64(j)), x.Lit.Bits(int(r*c+k)))
		}
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}

// mlKey is a map key for a label: strings as is, numbers in a canonical
// decimal form (so that int and float keys of the same value agree).
func mlNumKey(v float64) string {
	if math.IsNaN(v) {
		return "\x00nan"
	}
	return "\x00" + strconv.FormatFloat(v, 'g', -1, 64)
}

// mlLabels reads one side (keys or values) of a LabelEncoder: strings, or
// numbers with their element type.
type mlLabels struct {
	strs  []string
	nums  []float64
	ints  []int64
	dtype hlo.DType // Invalid for strings
	isStr bool
	set   bool
}

func (l *mlLabels) len() int {
	if l.isStr {
		return len(l.strs)
	}
	return max(len(l.nums), len(l.ints))
}

func mlReadLabels(h *HostCtx, prefix string) (*mlLabels, error) {
	n := h.Node
	switch {
	case n.Has(prefix + "_strings"):
		return &mlLabels{strs: n.Strs(prefix + "_strings"), isStr: true, set: true}, nil
	case n.Has(prefix + "_int64s"):
		return &mlLabels{ints: n.Ints(prefix + "_int64s"), dtype: hlo.S64, set: true}, nil
	case n.Has(prefix + "_floats"):
		fs := n.Floats(prefix + "_floats")
		out := &mlLabels{nums: make([]float64, len(fs)), dtype: hlo.F32, set: true}
		for i, f := range fs {
			out.nums[i] = float64(f)
		}
		return out, nil
	case n.Has(prefix + "_tensor"):
		t, err := n.TensorAttr(prefix + "_tensor")
		if err != nil {
			return nil, err
		}
		return mlLabelsOf(t), nil
	}
	return &mlLabels{}, nil
}

func mlLabelsOf(t *onnx.Tensor) *mlLabels {
	if t.IsString() {
		return &mlLabels{strs: t.Strs, isStr: true, set: true}
	}
	out := &mlLabels{dtype: t.Lit.DType(), set: true}
	if t.Lit.DType().IsInteger() || t.Lit.DType().IsPred() {
		out.ints = make([]int64, t.Lit.Len())
		for i := range out.ints {
			out.ints[i] = t.Lit.GetInt64(i)
		}
	} else {
		out.nums = make([]float64, t.Lit.Len())
		for i := range out.nums {
			out.nums[i] = t.Lit.GetFloat64(i)
		}
	}
	return out
}

func (l *mlLabels) key(i int) string {
	switch {
	case l.isStr:
		return l.strs[i]
	case l.ints != nil:
		return mlNumKey(float64(l.ints[i]))
	}
	return mlNumKey(l.nums[i])
}

func hostLabelEncoder(h *HostCtx) error {
	x, err := mlInput(h, 0)
	if err != nil {
		return err
	}
	if h.Node.Has("classes_strings") {
		return mlLabelEncoderV1(h, x)
	}
	keys, err := mlReadLabels(h, "keys")
	if err != nil {
		return err
	}
	vals, err := mlReadLabels(h, "values")
	if err != nil {
		return err
	}
	if !keys.set || !vals.set {
		return h.Errorf("keys and values are required")
	}
	if keys.len() != vals.len() {
		return h.Errorf("%d keys for %d values", keys.len(), vals.len())
	}
	table := make(map[string]int, keys.len())
	for i := 0; i < keys.len(); i++ {
		if _, dup := table[keys.key(i)]; !dup {
			table[keys.key(i)] = i
		}
	}
	// the default value
	var def *mlLabels
	if h.Node.Has("default_tensor") {
		t, err := h.Node.TensorAttr("default_tensor")
		if err != nil {
			return err
		}
		def = mlLabelsOf(t)
		if def.len() < 1 {
			return h.Errorf("empty default_tensor")
		}
	} else {
		switch {
		case vals.isStr:
			def = &mlLabels{strs: []string{h.Node.Str("default_string", "_Unused")}, isStr: true}
		case vals.ints != nil:
			def = &mlLabels{ints: []int64{h.Node.Int("default_int64", -1)}}
		default:
			def = &mlLabels{nums: []float64{float64(h.Node.Float("default_float", float32(math.Copysign(0, -1))))}}
		}
	}
	dims := x.Dims()
	n := int(numElems(dims))
	inKey := func(i int) string {
		if x.IsString() {
			return x.Strs[i]
		}
		if x.Lit.DType().IsInteger() {
			return mlNumKey(float64(x.Lit.GetInt64(i)))
		}
		return mlNumKey(x.Lit.GetFloat64(i))
	}
	if vals.isStr {
		if !def.isStr {
			return h.Errorf("default is not a string")
		}
		out := make([]string, n)
		for i := range out {
			if k, ok := table[inKey(i)]; ok {
				out[i] = vals.strs[k]
			} else {
				out[i] = def.strs[0]
			}
		}
		return strSetStrings(h, 0, out, dims...)
	}
	if def.isStr {
		return h.Errorf("default is a string for numeric values")
	}
	out := hlo.NewLiteral(hlo.ArrayShape(vals.dtype, dims...))
	for i := 0; i < n; i++ {
		src, k := def, 0
		if j, ok := table[inKey(i)]; ok {
			src, k = vals, j
		}
		if src.ints != nil {
			out.SetInt64(i, src.ints[k])
		} else {
			out.SetFloat64(i, src.nums[k])
		}
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}

// mlLabelEncoderV1 is LabelEncoder 1: strings to their index in
// classes_strings, or int64 indices to those strings.
func mlLabelEncoderV1(h *HostCtx, x *onnx.Tensor) error {
	classes := h.Node.Strs("classes_strings")
	dims := x.Dims()
	if x.IsString() {
		index := make(map[string]int64, len(classes))
		for i, c := range classes {
			if _, dup := index[c]; !dup {
				index[c] = int64(i)
			}
		}
		def := h.Node.Int("default_int64", -1)
		out := hlo.NewLiteral(hlo.ArrayShape(hlo.S64, dims...))
		for i, s := range x.Strs {
			v, ok := index[s]
			if !ok {
				v = def
			}
			out.SetInt64(i, v)
		}
		h.Set(0, onnx.LiteralValue(out))
		return nil
	}
	def := h.Node.Str("default_string", "_Unused")
	out := make([]string, x.Lit.Len())
	for i := range out {
		k := x.Lit.GetInt64(i)
		if k >= 0 && k < int64(len(classes)) {
			out[i] = classes[k]
		} else {
			out[i] = def
		}
	}
	return strSetStrings(h, 0, out, dims...)
}

// TreeEnsemble (ai.onnx.ml 5).

const (
	mlModeLEQ = iota
	mlModeLT
	mlModeGTE
	mlModeGT
	mlModeEQ
	mlModeNEQ
	mlModeMember
)

func mlTensorFloats(h *HostCtx, name string) ([]float64, error) {
	t, err := h.Node.TensorAttr(name)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, nil
	}
	if t.IsString() {
		return nil, h.Errorf("attribute %s is a string tensor", name)
	}
	return Float64s(t)
}

func hostTreeEnsemble(h *HostCtx) error {
	x, err := mlInput(h, 0)
	if err != nil {
		return err
	}
	if x.IsString() {
		return h.Errorf("string input")
	}
	n := h.Node
	splits, err := mlTensorFloats(h, "nodes_splits")
	if err != nil {
		return err
	}
	modesF, err := mlTensorFloats(h, "nodes_modes")
	if err != nil {
		return err
	}
	weights, err := mlTensorFloats(h, "leaf_weights")
	if err != nil {
		return err
	}
	members, err := mlTensorFloats(h, "membership_values")
	if err != nil {
		return err
	}
	feat := n.Ints("nodes_featureids")
	tnode, fnode := n.Ints("nodes_truenodeids"), n.Ints("nodes_falsenodeids")
	tleaf, fleaf := n.Ints("nodes_trueleafs"), n.Ints("nodes_falseleafs")
	missTrue := n.Ints("nodes_missing_value_tracks_true")
	targets := n.Ints("leaf_targetids")
	roots := n.Ints("tree_roots")
	nTargets := n.Int("n_targets", 1)
	agg := n.Int("aggregate_function", 1)
	post := n.Int("post_transform", 0)
	nn := len(splits)
	if len(modesF) != nn || len(feat) != nn || len(tnode) != nn || len(fnode) != nn || len(tleaf) != nn || len(fleaf) != nn {
		return h.Errorf("node attributes differ in length")
	}
	if len(targets) != len(weights) {
		return h.Errorf("%d leaf targets for %d leaf weights", len(targets), len(weights))
	}
	if nTargets < 1 || nTargets > 1<<24 {
		return h.Errorf("n_targets %d", nTargets)
	}
	// set members of MEMBER nodes, in node order, NaN-delimited
	sets := make([]map[float64]bool, nn)
	mi := 0
	for i := 0; i < nn; i++ {
		if int(modesF[i]) != mlModeMember {
			continue
		}
		s := map[float64]bool{}
		for mi < len(members) && !math.IsNaN(members[mi]) {
			s[members[mi]] = true
			mi++
		}
		mi++
		sets[i] = s
	}
	dims := x.Dims()
	if len(dims) != 2 {
		return h.Errorf("input of rank %d: want 2", len(dims))
	}
	rows, cols := int(dims[0]), int(dims[1])
	res := make([]float64, rows*int(nTargets))
	init := 0.0
	switch agg {
	case 0, 1:
	case 2:
		init = math.Inf(1)
	case 3:
		init = math.Inf(-1)
	default:
		return h.Errorf("aggregate_function %d", agg)
	}
	for i := range res {
		res[i] = init
	}
	for r := 0; r < rows; r++ {
		row := res[r*int(nTargets) : (r+1)*int(nTargets)]
		for _, root := range roots {
			idx, leaf := int(root), false
			if root < 0 || int(root) >= nn {
				return h.Errorf("tree root %d out of range", root)
			}
			if tleaf[idx] != 0 && fleaf[idx] != 0 && tnode[idx] == fnode[idx] {
				leaf = true
				idx = int(tnode[idx])
			}
			for steps := 0; !leaf; steps++ {
				if idx < 0 || idx >= nn || steps > nn {
					return h.Errorf("bad tree structure at node %d", idx)
				}
				f := int(feat[idx])
				if f < 0 || f >= cols {
					return h.Errorf("feature %d out of range", f)
				}
				v := x.Lit.GetFloat64(r*cols + f)
				s := splits[idx]
				var ok bool
				switch int(modesF[idx]) {
				case mlModeLEQ:
					ok = v <= s
				case mlModeLT:
					ok = v < s
				case mlModeGTE:
					ok = v >= s
				case mlModeGT:
					ok = v > s
				case mlModeEQ:
					ok = v == s
				case mlModeNEQ:
					ok = v != s
				case mlModeMember:
					ok = sets[idx][v]
				default:
					return h.Errorf("node mode %v", modesF[idx])
				}
				if !ok && math.IsNaN(v) && idx < len(missTrue) && missTrue[idx] != 0 {
					ok = true
				}
				if ok {
					leaf = tleaf[idx] != 0
					idx = int(tnode[idx])
				} else {
					leaf = fleaf[idx] != 0
					idx = int(fnode[idx])
				}
			}
			if idx < 0 || idx >= len(weights) {
				return h.Errorf("leaf %d out of range", idx)
			}
			t, w := targets[idx], weights[idx]
			if t < 0 || t >= nTargets {
				return h.Errorf("leaf target %d out of range", t)
			}
			switch agg {
			case 0:
				row[t] += w / float64(len(roots))
			case 1:
				row[t] += w
			case 2:
				row[t] = min(row[t], w)
			case 3:
				row[t] = max(row[t], w)
			}
		}
		if err := mlPostTransform(row, post); err != nil {
			return h.Errorf("%v", err)
		}
	}
	out := hlo.NewLiteral(hlo.ArrayShape(x.Lit.DType(), int64(rows), nTargets))
	for i, v := range res {
		if math.IsInf(v, 0) && agg >= 2 {
			v = mlFloatMax(x.Lit.DType(), v)
		}
		out.SetFloat64(i, v)
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}

// mlFloatMax is ±the largest finite value of t (the initial value of MIN
// and MAX aggregation where no tree reaches a target).
func mlFloatMax(t hlo.DType, sign float64) float64 {
	m := math.MaxFloat64
	if t == hlo.F32 {
		m = math.MaxFloat32
	}
	return math.Copysign(m, sign)
}

type mlError string

func (e mlError) Error() string { return string(e) }

// mlPostTransform applies post_transform to one row of scores.
func mlPostTransform(row []float64, post int64) error {
	switch post {
	case 0:
	case 1: // SOFTMAX
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, v)
		}
		sum := 0.0
		for i, v := range row {
			row[i] = math.Exp(v - m)
			sum += row[i]
		}
		for i := range row {
			row[i] /= sum
		}
	case 3: // SOFTMAX_ZERO: (near) zero scores stay (near) zero
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, v)
		}
		sum := 0.0
		for i, v := range row {
			if v > 1e-7 || v < -1e-7 {
				row[i] = math.Exp(v - m)
			} else {
				row[i] = v * math.Exp(-m)
			}
			sum += row[i]
		}
		for i := range row {
			if sum == 0 {
				row[i] = 0.5
			} else {
				row[i] /= sum
			}
		}
	case 2: // LOGISTIC
		for i, v := range row {
			row[i] = 1 / (1 + math.Exp(-v))
		}
	case 4: // PROBIT
		for i, v := range row {
			row[i] = math.Sqrt2 * math.Erfinv(2*v-1)
		}
	default:
		return mlError("unknown post_transform " + strconv.FormatInt(post, 10))
	}
	return nil
}
