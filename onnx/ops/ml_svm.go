package ops

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// ai.onnx.ml's support vector machines (skl2onnx's SVR, NuSVR and
// OneClassSVM; SVC and NuSVC), in libsvm's form: one-against-one
// classification by votes, probabilities by pairwise coupling.

func init() {
	Register(Op{Name: "SVMRegressor", Domain: mlDomain, Host: hostSVMRegressor})
	Register(Op{Name: "SVMClassifier", Domain: mlDomain, Host: hostSVMClassifier})
}

// mlKernel is an SVM's kernel of two feature vectors: LINEAR x·y, POLY
// (γ x·y + c)^d, SIGMOID tanh(γ x·y + c), RBF e^(-γ |x-y|²), with
// kernel_params (γ, c, d).
type mlKernel struct {
	kind         string
	gamma, coef0 float64
	degree       int
}

func newMLKernel(h *HostCtx) (mlKernel, error) {
	k := mlKernel{kind: h.Node.Str("kernel_type", "LINEAR")}
	if p := h.Node.Floats("kernel_params"); len(p) > 0 {
		if len(p) != 3 {
			return k, h.Errorf("%d kernel_params: (gamma, coef0, degree) are needed", len(p))
		}
		k.gamma, k.coef0, k.degree = float64(p[0]), float64(p[1]), int(p[2])
	}
	switch k.kind {
	case "LINEAR", "POLY", "RBF", "SIGMOID":
		return k, nil
	}
	return k, h.Errorf("unknown kernel_type %q", k.kind)
}

func (k mlKernel) eval(x, y []float64) float64 {
	if k.kind == "RBF" {
		s := 0.0
		for i := range x {
			d := x[i] - y[i]
			s += d * d
		}
		return math.Exp(-k.gamma * s)
	}
	dot := 0.0
	for i := range x {
		dot += x[i] * y[i]
	}
	switch k.kind {
	case "POLY":
		return math.Pow(k.gamma*dot+k.coef0, float64(k.degree))
	case "SIGMOID":
		return math.Tanh(k.gamma*dot + k.coef0)
	}
	return dot
}

// hostSVMRegressor: Σ_j coefficients[j]·K(x, support_vectors[j]) + rho
// over the n_supports support vectors (none: a linear model x·coefficients
// + rho); with one_class, the sign of that as ±1.
func hostSVMRegressor(h *HostCtx) error {
	rows, err := mlRows(h)
	if err != nil {
		return err
	}
	k, err := newMLKernel(h)
	if err != nil {
		return err
	}
	coef, _ := mlFloatsAttr(h, "coefficients")
	sv, _ := mlFloatsAttr(h, "support_vectors")
	rho, _ := mlFloatsAttr(h, "rho")
	n := int(h.Node.Int("n_supports", 0))
	cols := mlCols(rows)
	if len(rho) != 1 {
		return h.Errorf("%d rho values: one is needed", len(rho))
	}
	if n < 0 || n > 0 && (len(sv) != n*cols || len(coef) != n) || n == 0 && len(coef) != cols {
		return h.Errorf("%d support vectors of %d values and %d coefficients for %d features", n, len(sv), len(coef), cols)
	}
	oneClass := h.Node.Int("one_class", 0) != 0
	post, err := mlPost(h)
	if err != nil {
		return err
	}
	out := make([][]float64, len(rows))
	for r, x := range rows {
		s := 0.0
		if n > 0 {
			for j := range n {
				s += coef[j] * k.eval(x, sv[j*cols:(j+1)*cols])
			}
		} else {
			s = mlKernel{kind: "LINEAR"}.eval(x, coef)
		}
		s += rho[0]
		if oneClass {
			s = float64(boolIndex(s > 0)*2 - 1)
		}
		out[r] = []float64{s}
		if err := mlPostTransform(out[r], post); err != nil {
			return h.Errorf("%v", err)
		}
	}
	mlSetRows(h, 0, out, 1)
	return nil
}

// svmClassifier is an SVMClassifier node's model.
type svmClassifier struct {
	k               mlKernel
	classes         int
	sv, coef, rho   []float64
	probA, probB    []float64
	start, perClass []int // each class's first support vector and count
	vectors         int
	post            int64
}

func newSVMClassifier(h *HostCtx, cols int) (*svmClassifier, error) {
	k, err := newMLKernel(h)
	if err != nil {
		return nil, err
	}
	m := &svmClassifier{k: k}
	m.classes = max(len(h.Node.Ints("classlabels_ints")), len(h.Node.Strs("classlabels_strings")), 1)
	m.coef, _ = mlFloatsAttr(h, "coefficients")
	m.sv, _ = mlFloatsAttr(h, "support_vectors")
	m.rho, _ = mlFloatsAttr(h, "rho")
	m.probA, _ = mlFloatsAttr(h, "prob_a")
	m.probB, _ = mlFloatsAttr(h, "prob_b")
	if m.post, err = mlPost(h); err != nil {
		return nil, err
	}
	for _, n := range h.Node.Ints("vectors_per_class") {
		if n < 0 {
			return nil, h.Errorf("vectors_per_class %d", n)
		}
		m.start = append(m.start, m.vectors)
		m.perClass = append(m.perClass, int(n))
		m.vectors += int(n)
	}
	pairs := m.classes * (m.classes - 1) / 2
	switch {
	case len(m.coef) == 0 || len(m.rho) == 0:
		return nil, h.Errorf("no coefficients or rho")
	case m.vectors > 0 && (len(m.perClass) != m.classes || len(m.sv) != m.vectors*cols ||
		len(m.coef) != (m.classes-1)*m.vectors || len(m.rho) < pairs):
		return nil, h.Errorf("%d support vectors of %d values, %d coefficients and %d rho for %d classes of %d features",
			m.vectors, len(m.sv), len(m.coef), len(m.rho), m.classes, cols)
	case m.vectors == 0 && len(m.coef) != m.classes*cols:
		return nil, h.Errorf("%d coefficients for %d classes of %d features", len(m.coef), m.classes, cols)
	case len(m.probA) > 0 && (len(m.probA) < pairs || len(m.probB) < pairs):
		return nil, h.Errorf("%d prob_a and %d prob_b for %d class pairs", len(m.probA), len(m.probB), pairs)
	}
	return m, nil
}

// classify returns row x's class index and scores: the pairwise
// decisions (or, with prob_a, the classes' probabilities), or in
// liblinear form (no support vectors) each class's x·w + rho.
func (m *svmClassifier) classify(x []float64) (int, []float64) {
	cols := len(x)
	var votes []float64
	var scores []float64
	if m.vectors == 0 {
		for c := range m.classes {
			scores = append(scores, m.rho[0]+mlKernel{kind: "LINEAR"}.eval(x, m.coef[c*cols:(c+1)*cols]))
		}
	} else {
		kern := make([]float64, m.vectors)
		for v := range kern {
			kern[v] = m.k.eval(x, m.sv[v*cols:(v+1)*cols])
		}
		votes = make([]float64, m.classes)
		e := 0
		for i := range m.classes {
			for j := i + 1; j < m.classes; j++ {
				s := m.rho[e]
				for v := m.start[i]; v < m.start[i]+m.perClass[i]; v++ {
					s += m.coef[(j-1)*m.vectors+v] * kern[v]
				}
				for v := m.start[j]; v < m.start[j]+m.perClass[j]; v++ {
					s += m.coef[i*m.vectors+v] * kern[v]
				}
				scores = append(scores, s)
				if s > 0 {
					votes[i]++
				} else {
					votes[j]++
				}
				e++
			}
		}
	}
	hasProba := len(m.probA) > 0 && m.vectors > 0
	if hasProba {
		scores = m.probabilities(scores)
	}
	weights := scores
	if votes != nil {
		weights = votes
	}
	best := 0
	for i, w := range weights {
		if w > weights[best] {
			best = i
		}
	}
	label, second := best, -1
	if len(m.rho) == 1 { // one decision: binary
		label, second = m.binaryLabel(weights[best], best)
	}
	return label, m.finalScores(scores, second)
}

// binaryLabel is the class a classifier with one decision gives: with
// two classes the one the vote went to (ONNX Runtime's labels; ONNX's
// reference implementation has a classifier whose coefficients are all
// positive always say the second, which ONNX Runtime does not), and its
// score is then written as two; otherwise 1 for a positive decision.
func (m *svmClassifier) binaryLabel(maxWeight float64, maxClass int) (int, int) {
	if m.classes != 2 {
		return boolIndex(maxWeight > 0), -1
	}
	return maxClass, 2
}

// finalScores applies post_transform; a single score becomes two, as
// LinearClassifier's do.
func (m *svmClassifier) finalScores(scores []float64, second int) []float64 {
	if len(scores) >= 2 {
		_ = mlPostTransform(scores, m.post)
		return scores
	}
	s := scores[0]
	switch {
	case m.post == 4:
		out := []float64{s}
		_ = mlPostTransform(out, 4)
		return out
	case second == 0 || second == 1:
		return []float64{1 - s, s}
	case second == 2 || second == 3:
		out := []float64{-s, s}
		_ = mlPostTransform(out, m.post)
		return out
	}
	return []float64{s}
}

// probabilities couples the pairwise decisions into class probabilities
// (Wu, Lin and Weng's second method, as libsvm does): decision s of
// classes (i, j) gives r_ij = 1/(1+e^(s·a+b)), clamped to [1e-7, 1-1e-7].
func (m *svmClassifier) probabilities(decisions []float64) []float64 {
	k := m.classes
	r := make([][]float64, k)
	for i := range r {
		r[i] = make([]float64, k)
	}
	e := 0
	for i := range k {
		for j := i + 1; j < k; j++ {
			v := 1 / (1 + math.Exp(decisions[e]*m.probA[e]+m.probB[e]))
			v = min(max(v, 1e-7), 1-1e-7)
			r[i][j], r[j][i] = v, 1-v
			e++
		}
	}
	return pairwiseCoupling(r)
}

// pairwiseCoupling solves for the probabilities p minimizing
// Σ_i Σ_{j≠i} (r_ji p_i - r_ij p_j)² with Σp = 1, by libsvm's fixed-point
// iteration (at most max(100, k) sweeps, to a gradient spread of 0.005/k).
func pairwiseCoupling(r [][]float64) []float64 {
	k := len(r)
	q := make([][]float64, k)
	p, qp := make([]float64, k), make([]float64, k)
	for t := range k {
		q[t] = make([]float64, k)
		p[t] = 1 / float64(k)
	}
	for t := range k {
		for j := range k {
			if j == t {
				continue
			}
			q[t][t] += r[j][t] * r[j][t]
			q[t][j] = -r[j][t] * r[t][j]
		}
	}
	eps := 0.005 / float64(k)
	for range max(100, k) {
		pqp := 0.0
		for t := range k {
			qp[t] = 0
			for j := range k {
				qp[t] += q[t][j] * p[j]
			}
			pqp += p[t] * qp[t]
		}
		worst := 0.0
		for t := range k {
			worst = max(worst, math.Abs(qp[t]-pqp))
		}
		if worst < eps {
			break
		}
		for t := range k {
			diff := (-qp[t] + pqp) / q[t][t]
			p[t] += diff
			pqp = (pqp + diff*(diff*q[t][t]+2*qp[t])) / ((1 + diff) * (1 + diff))
			for j := range k {
				qp[j] = (qp[j] + diff*q[t][j]) / (1 + diff)
				p[j] /= 1 + diff
			}
		}
	}
	return p
}

func hostSVMClassifier(h *HostCtx) error {
	rows, err := mlRows(h)
	if err != nil {
		return err
	}
	m, err := newSVMClassifier(h, mlCols(rows))
	if err != nil {
		return err
	}
	labels := make([]int, len(rows))
	scores := make([][]float64, len(rows))
	for r, x := range rows {
		labels[r], scores[r] = m.classify(x)
	}
	n := int64(len(rows))
	if strs := h.Node.Strs("classlabels_strings"); len(strs) > 0 {
		out := make([]string, len(labels))
		for i, l := range labels {
			out[i] = strs[min(l, len(strs)-1)]
		}
		if err := strSetStrings(h, 0, out, n); err != nil {
			return err
		}
	} else {
		ints := h.Node.Ints("classlabels_ints")
		out := hlo.NewLiteral(hlo.ArrayShape(hlo.S64, n))
		for i, l := range labels {
			if l < len(ints) {
				out.SetInt64(i, ints[l])
			} else {
				out.SetInt64(i, int64(l))
			}
		}
		h.Set(0, onnx.LiteralValue(out))
	}
	width := 0
	if len(scores) > 0 {
		width = len(scores[0])
	}
	mlSetRows(h, 1, scores, width)
	return nil
}
