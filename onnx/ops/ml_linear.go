package ops

import (
	"math"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// The ai.onnx.ml operators scikit-learn's converter (skl2onnx) writes for
// linear models and preprocessing: LinearRegressor, LinearClassifier,
// Scaler, Normalizer, Imputer, OneHotEncoder, CategoryMapper and
// FeatureVectorizer. Their arithmetic is float64 on the host, their
// results float32 (int64 or string labels), as ONNX's definitions give
// them; ONNX Runtime's outputs are the tests' references.

func init() {
	Register(Op{Name: "LinearRegressor", Domain: mlDomain, Host: hostLinearRegressor})
	Register(Op{Name: "LinearClassifier", Domain: mlDomain, Host: hostLinearClassifier})
	Register(Op{Name: "Scaler", Domain: mlDomain, Host: hostScaler})
	Register(Op{Name: "Normalizer", Domain: mlDomain, Host: hostNormalizer})
	Register(Op{Name: "Imputer", Domain: mlDomain, Host: hostImputer})
	Register(Op{Name: "OneHotEncoder", Domain: mlDomain, Host: hostOneHotEncoder})
	Register(Op{Name: "CategoryMapper", Domain: mlDomain, Host: hostCategoryMapper})
	Register(Op{Name: "FeatureVectorizer", Domain: mlDomain, Host: hostFeatureVectorizer})
	Register(Op{Name: "ZipMap", Domain: mlDomain, Host: hostZipMap})
}

// mlLinear computes rows·Wᵀ + b for W the attribute coefficients read as
// targets rows of len(row) and b the intercepts (none, or one a target).
func mlLinear(h *HostCtx, rows [][]float64, targets int) ([][]float64, error) {
	coef, _ := mlFloatsAttr(h, "coefficients")
	icpt, _ := mlFloatsAttr(h, "intercepts")
	cols := 0
	if len(rows) > 0 {
		cols = len(rows[0])
	}
	if targets < 1 || len(coef) != targets*cols {
		return nil, h.Errorf("%d coefficients for %d targets of %d features", len(coef), targets, cols)
	}
	if len(icpt) != 0 && len(icpt) != targets {
		return nil, h.Errorf("%d intercepts for %d targets", len(icpt), targets)
	}
	out := make([][]float64, len(rows))
	for r, x := range rows {
		out[r] = make([]float64, targets)
		for t := range targets {
			s := 0.0
			for c, v := range x {
				s += v * coef[t*cols+c]
			}
			if len(icpt) > 0 {
				s += icpt[t]
			}
			out[r][t] = s
		}
	}
	return out, nil
}

// mlSetRows sets output i to rows as f32[len(rows), width].
func mlSetRows(h *HostCtx, i int, rows [][]float64, width int) {
	out := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, int64(len(rows)), int64(width)))
	for r, row := range rows {
		for c, v := range row {
			out.SetFloat64(r*width+c, v)
		}
	}
	h.Set(i, onnx.LiteralValue(out))
}

func mlPost(h *HostCtx) (int64, error) {
	name := h.Node.Str("post_transform", "NONE")
	post, ok := mlPostNames[name]
	if !ok {
		return 0, h.Errorf("unknown post_transform %q", name)
	}
	return post, nil
}

func hostLinearRegressor(h *HostCtx) error {
	rows, err := mlRows(h)
	if err != nil {
		return err
	}
	targets := int(h.Node.Int("targets", 1))
	post, err := mlPost(h)
	if err != nil {
		return err
	}
	out, err := mlLinear(h, rows, targets)
	if err != nil {
		return err
	}
	for _, row := range out {
		if err := mlPostTransform(row, post); err != nil {
			return h.Errorf("%v", err)
		}
	}
	mlSetRows(h, 0, out, targets)
	return nil
}

// hostLinearClassifier: scores X·Wᵀ + b, one a coefficient row; with one
// row and two class labels the scores are (-s, s). The post_transform
// applies to the scores, and the label is the class of the largest (of a
// single score: the first label where it reaches 0, or 0.5 after a
// transform, else 0).
func hostLinearClassifier(h *HostCtx) error {
	rows, err := mlRows(h)
	if err != nil {
		return err
	}
	post, err := mlPost(h)
	if err != nil {
		return err
	}
	coef, _ := mlFloatsAttr(h, "coefficients")
	cols := 1
	if len(rows) > 0 {
		cols = max(len(rows[0]), 1)
	}
	if len(coef) == 0 || len(coef)%cols != 0 {
		return h.Errorf("%d coefficients for %d features", len(coef), cols)
	}
	labelsInt, labelsStr := h.Node.Ints("classlabels_ints"), h.Node.Strs("classlabels_strings")
	nc := max(len(labelsInt), len(labelsStr))
	scores, err := mlLinear(h, rows, len(coef)/cols)
	if err != nil {
		return err
	}
	// A label is a class index; for a single score, 0 where it reaches
	// the threshold and -1 (no class: label 0 or "") where not. A binary
	// classifier's one score s decides by its sign and is written as two
	// scores, (1-s, s) untransformed or under PROBIT, (-s, s) before the
	// others (ONNX Runtime's scores; the reference implementation writes
	// (-s, s) for all).
	labels := make([]int, len(scores))
	binary := make([]bool, len(scores))
	for r, s := range scores {
		if len(s) == 1 && nc == 2 {
			binary[r] = true
			labels[r] = boolIndex(s[0] > 0)
			if post == 0 || post == 4 {
				scores[r] = []float64{1 - s[0], s[0]}
			} else {
				scores[r] = []float64{-s[0], s[0]}
			}
		}
		if err := mlPostTransform(scores[r], post); err != nil {
			return h.Errorf("%v", err)
		}
	}
	width := 0
	if len(scores) > 0 {
		width = len(scores[0])
	}
	for r, s := range scores {
		if binary[r] {
			continue
		}
		if len(s) > 1 {
			best := 0
			for i, v := range s {
				if v > s[best] {
					best = i
				}
			}
			labels[r] = best
			continue
		}
		threshold := 0.5
		if post == 0 {
			threshold = 0
		}
		labels[r] = -1
		if s[0] >= threshold {
			labels[r] = 0
		}
	}
	n := int64(len(scores))
	if len(labelsStr) > 0 && len(labelsInt) == 0 {
		out := make([]string, len(labels))
		for i, l := range labels {
			if l >= 0 && l < len(labelsStr) {
				out[i] = labelsStr[l]
			}
		}
		if err := strSetStrings(h, 0, out, n); err != nil {
			return err
		}
	} else {
		out := hlo.NewLiteral(hlo.ArrayShape(hlo.S64, n))
		for i, l := range labels {
			switch {
			case l < 0:
			case len(labelsInt) > 0:
				if l >= len(labelsInt) {
					return h.Errorf("%d scores for %d class labels", width, len(labelsInt))
				}
				out.SetInt64(i, labelsInt[l])
			case width == 1: // no labels: 1 where the single score reaches the threshold
				out.SetInt64(i, 1)
			default:
				out.SetInt64(i, int64(l))
			}
		}
		h.Set(0, onnx.LiteralValue(out))
	}
	mlSetRows(h, 1, scores, width)
	return nil
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mlPerFeature is the value of a per-feature attribute (one value, or one
// a feature) for feature c.
func mlPerFeature(v []float64, c int) float64 {
	return v[min(c, len(v)-1)]
}

// hostScaler: (x - offset)·scale feature by feature.
func hostScaler(h *HostCtx) error {
	rows, err := mlRows(h)
	if err != nil {
		return err
	}
	offset, _ := mlFloatsAttr(h, "offset")
	scale, _ := mlFloatsAttr(h, "scale")
	cols := mlCols(rows)
	for _, v := range [][]float64{offset, scale} {
		if len(v) != 0 && len(v) != 1 && len(v) != cols {
			return h.Errorf("%d offsets or scales for %d features", len(v), cols)
		}
	}
	for _, row := range rows {
		for c, v := range row {
			if len(offset) > 0 {
				v -= mlPerFeature(offset, c)
			}
			if len(scale) > 0 {
				v *= mlPerFeature(scale, c)
			}
			row[c] = v
		}
	}
	mlSetShaped(h, rows)
	return nil
}

// mlCols is the features of rows.
func mlCols(rows [][]float64) int {
	if len(rows) == 0 {
		return 0
	}
	return len(rows[0])
}

// mlSetShaped sets output 0 to rows in the input's shape, as f32.
func mlSetShaped(h *HostCtx, rows [][]float64) {
	dims := h.Tensor(0).Dims()
	out := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, dims...))
	cols := mlCols(rows)
	for r, row := range rows {
		for c, v := range row {
			out.SetFloat64(r*cols+c, v)
		}
	}
	h.Set(0, onnx.LiteralValue(out))
}

// hostNormalizer: each row divided by its largest magnitude (MAX), then
// for L1 and L2 by the norm of that; a zero norm leaves the row. (MAX is
// scikit-learn's max norm and ONNX's reference implementation's; ONNX
// Runtime divides by the row's largest value, sign and all.)
func hostNormalizer(h *HostCtx) error {
	rows, err := mlRows(h)
	if err != nil {
		return err
	}
	norm := h.Node.Str("norm", "MAX")
	if norm != "MAX" && norm != "L1" && norm != "L2" {
		return h.Errorf("unknown norm %q", norm)
	}
	for _, row := range rows {
		m := 0.0
		for _, v := range row {
			m = max(m, math.Abs(v))
		}
		if m != 0 {
			for c := range row {
				row[c] /= m
			}
		}
		if norm == "MAX" {
			continue
		}
		s := 0.0
		for _, v := range row {
			if norm == "L1" {
				s += math.Abs(v)
			} else {
				s += v * v
			}
		}
		if norm == "L2" {
			s = math.Sqrt(s)
		}
		if s != 0 {
			for c := range row {
				row[c] /= s
			}
		}
	}
	mlSetShaped(h, rows)
	return nil
}

// hostImputer replaces the values equal to replaced_value_float (NaN:
// the NaNs) or replaced_value_int64 with the feature's imputed value.
func hostImputer(h *HostCtx) error {
	x, err := mlInput(h, 0)
	if err != nil {
		return err
	}
	if x.IsString() {
		return h.Errorf("string input")
	}
	fv, _ := mlFloatsAttr(h, "imputed_value_floats")
	iv := h.Node.Ints("imputed_value_int64s")
	dims := x.Dims()
	cols := int64(1)
	if len(dims) > 0 {
		cols = dims[len(dims)-1]
	}
	out := hlo.NewLiteral(x.Lit.Shape())
	switch {
	case len(fv) > 0:
		if int64(len(fv)) != 1 && int64(len(fv)) != cols {
			return h.Errorf("%d imputed values for %d features", len(fv), cols)
		}
		rep := float64(h.Node.Float("replaced_value_float", 0))
		for i := range x.Lit.Len() {
			v := x.Lit.GetFloat64(i)
			if v == rep || math.IsNaN(rep) && math.IsNaN(v) {
				v = mlPerFeature(fv, int(int64(i)%cols))
			}
			out.SetFloat64(i, v)
		}
	case len(iv) > 0:
		if int64(len(iv)) != 1 && int64(len(iv)) != cols {
			return h.Errorf("%d imputed values for %d features", len(iv), cols)
		}
		rep := h.Node.Int("replaced_value_int64", 0)
		for i := range x.Lit.Len() {
			v := x.Lit.GetInt64(i)
			if v == rep {
				v = iv[min(int(int64(i)%cols), len(iv)-1)]
			}
			out.SetInt64(i, v)
		}
	default:
		return h.Errorf("no imputed values")
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}

// hostOneHotEncoder: each input value becomes a row of len(cats) with a
// 1 at its category; an unknown value is a row of zeros, or an error
// with zeros=0.
func hostOneHotEncoder(h *HostCtx) error {
	x, err := mlInput(h, 0)
	if err != nil {
		return err
	}
	index := map[string]int{}
	var n int
	if cats := h.Node.Ints("cats_int64s"); len(cats) > 0 {
		for i, c := range cats {
			index[mlNumKey(float64(c))] = i
		}
		n = len(cats)
	} else if cats := h.Node.Strs("cats_strings"); len(cats) > 0 {
		for i, c := range cats {
			index[c] = i
		}
		n = len(cats)
	} else {
		return h.Errorf("no categories")
	}
	zeros := h.Node.Int("zeros", 1) != 0
	dims := append(x.Dims(), int64(n))
	out := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, dims...))
	count := int(numElems(x.Dims()))
	for i := range count {
		var key string
		if x.IsString() {
			key = x.Strs[i]
		} else {
			key = mlNumKey(x.Lit.GetFloat64(i))
		}
		j, ok := index[key]
		if !ok {
			if !zeros {
				return h.Errorf("element %d (%s) is in no category", i, strings.TrimPrefix(key, "\x00"))
			}
			continue
		}
		out.SetFloat64(i*n+j, 1)
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}

// hostCategoryMapper maps int64 categories to their strings or strings
// to their int64s (cats_int64s[i] ↔ cats_strings[i]); an unknown one
// becomes default_string or default_int64.
func hostCategoryMapper(h *HostCtx) error {
	x, err := mlInput(h, 0)
	if err != nil {
		return err
	}
	ints, strs := h.Node.Ints("cats_int64s"), h.Node.Strs("cats_strings")
	if len(ints) != len(strs) {
		return h.Errorf("%d int64 categories against %d strings", len(ints), len(strs))
	}
	dims := x.Dims()
	count := int(numElems(dims))
	if x.IsString() {
		m := make(map[string]int64, len(strs))
		for i, s := range strs {
			m[s] = ints[i]
		}
		def := h.Node.Int("default_int64", -1)
		out := hlo.NewLiteral(hlo.ArrayShape(hlo.S64, dims...))
		for i := range count {
			v, ok := m[x.Strs[i]]
			if !ok {
				v = def
			}
			out.SetInt64(i, v)
		}
		h.Set(0, onnx.LiteralValue(out))
		return nil
	}
	m := make(map[int64]string, len(ints))
	for i, v := range ints {
		m[v] = strs[i]
	}
	def := h.Node.Str("default_string", "_Unused")
	out := make([]string, count)
	for i := range count {
		s, ok := m[x.Lit.GetInt64(i)]
		if !ok {
			s = def
		}
		out[i] = s
	}
	return strSetStrings(h, 0, out, dims...)
}

// hostFeatureVectorizer concatenates its inputs' features, each cut or
// padded with zeros to its inputdimensions entry.
func hostFeatureVectorizer(h *HostCtx) error {
	widths := h.Node.Ints("inputdimensions")
	if len(widths) != len(h.In) {
		return h.Errorf("%d input dimensions for %d inputs", len(widths), len(h.In))
	}
	total, rows := int64(0), int64(-1)
	for i, w := range widths {
		x := h.Tensor(i)
		if x == nil || x.IsString() || w < 0 {
			return h.Errorf("input %d: a numeric tensor and a width ≥ 0 are needed", i)
		}
		r := int64(1)
		if d := x.Dims(); len(d) > 1 {
			r = numElems(d[:len(d)-1])
		}
		if rows >= 0 && r != rows {
			return h.Errorf("input %d has %d rows, input 0 %d", i, r, rows)
		}
		rows, total = r, total+w
	}
	out := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, max(rows, 0), total))
	off := int64(0)
	for i, w := range widths {
		x := h.Tensor(i)
		d := x.Dims()
		cols := int64(1)
		if len(d) > 0 {
			cols = d[len(d)-1]
		}
		for r := range rows {
			for c := range min(w, cols) {
				out.SetFloat64(int(r*total+off+c), x.Lit.GetFloat64(int(r*cols+c)))
			}
		}
		off += w
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}

// hostZipMap makes each row of an [N, C] score tensor (or one row of C)
// a map from the C class labels (classlabels_int64s or
// classlabels_strings) to the row's scores, and returns the N maps as a
// sequence. The maps share one key tensor.
func hostZipMap(h *HostCtx) error {
	x, err := mlInput(h, 0)
	if err != nil {
		return err
	}
	if x.IsString() || x.ElemType() != onnx.Float {
		return h.Errorf("input %v: a float tensor is needed", x)
	}
	var keys *onnx.Tensor
	var nc int
	if ints := h.Node.Ints("classlabels_int64s"); len(ints) > 0 {
		l := hlo.NewLiteral(hlo.ArrayShape(hlo.S64, int64(len(ints))))
		for i, v := range ints {
			l.SetInt64(i, v)
		}
		keys, nc = onnx.TensorOf(l), len(ints)
	} else if strs := h.Node.Strs("classlabels_strings"); len(strs) > 0 {
		if keys, err = onnx.NewStringTensor(strs, int64(len(strs))); err != nil {
			return h.Errorf("%v", err)
		}
		nc = len(strs)
	} else {
		return h.Errorf("no class labels")
	}
	d := x.Dims()
	if len(d) == 0 || len(d) > 2 || d[len(d)-1] != int64(nc) {
		return h.Errorf("scores %v for %d class labels: [N, %d] or [%d] is needed", x, nc, nc, nc)
	}
	rows := 1
	if len(d) == 2 {
		rows = int(d[0])
	}
	seq := &onnx.Value{Kind: onnx.KindSequence}
	for r := range rows {
		vals := make([]*onnx.Value, nc)
		for c := range nc {
			l := hlo.NewLiteral(hlo.ScalarShape(hlo.F32))
			l.SetFloat64(0, x.Lit.GetFloat64(r*nc+c))
			vals[c] = onnx.LiteralValue(l)
		}
		seq.Elems = append(seq.Elems, onnx.MapValue(keys, vals))
	}
	h.Set(0, seq)
	return nil
}
