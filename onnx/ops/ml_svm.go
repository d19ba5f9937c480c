package ops

import "math"

// ai.onnx.ml's support vector machines (skl2onnx's SVR, NuSVR and
// OneClassSVM).

func init() {
	Register(Op{Name: "SVMRegressor", Domain: mlDomain, Host: hostSVMRegressor})
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
	if n > 0 && (len(sv) != n*cols || len(coef) != n) || n == 0 && len(coef) != cols {
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
