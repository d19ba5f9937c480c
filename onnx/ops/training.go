package ops

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// The ai.onnx.preview.training optimizers, on the host: inputs R
// (learning rate), T (update count), then groups of n tensors each.

const trainingDomain = "ai.onnx.preview.training"

func init() {
	Register(Op{Name: "Adagrad", Domain: trainingDomain, Host: hostAdagrad})
	Register(Op{Name: "Adam", Domain: trainingDomain, Host: hostAdam})
	Register(Op{Name: "Momentum", Domain: trainingDomain, Host: hostMomentum})
}

// trainingArgs reads R, T and the groups of tensors (groups of n inputs
// after the first two); all tensors of one index share a shape.
func trainingArgs(h *HostCtx, groups int) (r float64, t int64, ts [][]*onnx.Tensor, err error) {
	rt, tt := h.Tensor(0), h.Tensor(1)
	if rt == nil || tt == nil || rt.IsString() || tt.IsString() || rt.Lit.Len() != 1 || tt.Lit.Len() != 1 {
		return 0, 0, nil, h.Errorf("R and T must be numeric scalars")
	}
	r, t = rt.Lit.GetFloat64(0), tt.Lit.GetInt64(0)
	rest := len(h.In) - 2
	if rest <= 0 || rest%groups != 0 {
		return 0, 0, nil, h.Errorf("%d inputs after R and T: want a multiple of %d", rest, groups)
	}
	n := rest / groups
	ts = make([][]*onnx.Tensor, n)
	for i := 0; i < n; i++ {
		for g := 0; g < groups; g++ {
			x := h.Tensor(2 + g*n + i)
			if x == nil || x.IsString() {
				return 0, 0, nil, h.Errorf("input %d must be a numeric tensor", 2+g*n+i)
			}
			if g > 0 && x.Lit.Len() != ts[i][0].Lit.Len() {
				return 0, 0, nil, h.Errorf("input %d has %d elements, want %d", 2+g*n+i, x.Lit.Len(), ts[i][0].Lit.Len())
			}
			ts[i] = append(ts[i], x)
		}
	}
	return r, t, ts, nil
}

// trainingOuts makes outputs like the given tensors.
func trainingOuts(like ...*onnx.Tensor) []*hlo.Literal {
	out := make([]*hlo.Literal, len(like))
	for i, t := range like {
		out[i] = hlo.NewLiteral(t.Lit.Shape())
	}
	return out
}

func trainingSet(h *HostCtx, n int, outs [][]*hlo.Literal) {
	for i, o := range outs {
		for g, l := range o {
			h.Set(g*n+i, onnx.LiteralValue(l))
		}
	}
}

func hostAdagrad(h *HostCtx) error {
	r, t, ts, err := trainingArgs(h, 3)
	if err != nil {
		return err
	}
	decay := float64(h.Node.Float("decay_factor", 0))
	eps := float64(h.Node.Float("epsilon", 1e-6))
	norm := float64(h.Node.Float("norm_coefficient", 0))
	rr := r / (1 + float64(t)*decay)
	outs := make([][]*hlo.Literal, len(ts))
	for i, g := range ts {
		x, gr, hh := g[0].Lit, g[1].Lit, g[2].Lit
		o := trainingOuts(g[0], g[2])
		for k := 0; k < x.Len(); k++ {
			xv := x.GetFloat64(k)
			greg := norm*xv + gr.GetFloat64(k)
			hn := hh.GetFloat64(k) + greg*greg
			o[0].SetFloat64(k, xv-rr*greg/(math.Sqrt(hn)+eps))
			o[1].SetFloat64(k, hn)
		}
		outs[i] = o
	}
	trainingSet(h, len(ts), outs)
	return nil
}

func hostAdam(h *HostCtx) error {
	r, t, ts, err := trainingArgs(h, 4)
	if err != nil {
		return err
	}
	alpha := float64(h.Node.Float("alpha", 0.9))
	beta := float64(h.Node.Float("beta", 0.999))
	eps := float64(h.Node.Float("epsilon", 1e-6))
	norm := float64(h.Node.Float("norm_coefficient", 0))
	post := float64(h.Node.Float("norm_coefficient_post", 0))
	ra := r
	if t > 0 {
		ra = r * math.Sqrt(1-math.Pow(beta, float64(t))) / (1 - math.Pow(alpha, float64(t)))
	}
	outs := make([][]*hlo.Literal, len(ts))
	for i, g := range ts {
		x, gr, v, hh := g[0].Lit, g[1].Lit, g[2].Lit, g[3].Lit
		o := trainingOuts(g[0], g[2], g[3])
		for k := 0; k < x.Len(); k++ {
			xv := x.GetFloat64(k)
			greg := norm*xv + gr.GetFloat64(k)
			vn := alpha*v.GetFloat64(k) + (1-alpha)*greg
			hn := beta*hh.GetFloat64(k) + (1-beta)*greg*greg
			xn := xv - ra*vn/(math.Sqrt(hn)+eps)
			o[0].SetFloat64(k, (1-post)*xn)
			o[1].SetFloat64(k, vn)
			o[2].SetFloat64(k, hn)
		}
		outs[i] = o
	}
	trainingSet(h, len(ts), outs)
	return nil
}

func hostMomentum(h *HostCtx) error {
	r, t, ts, err := trainingArgs(h, 3)
	if err != nil {
		return err
	}
	alpha := float64(h.Node.Float("alpha", 0))
	beta := float64(h.Node.Float("beta", 0))
	norm := float64(h.Node.Float("norm_coefficient", 0))
	mode := h.Node.Str("mode", "standard")
	if mode != "standard" && mode != "nesterov" {
		return h.Errorf("unknown mode %q", mode)
	}
	if t == 0 {
		beta = 1
	}
	outs := make([][]*hlo.Literal, len(ts))
	for i, g := range ts {
		x, gr, v := g[0].Lit, g[1].Lit, g[2].Lit
		o := trainingOuts(g[0], g[2])
		for k := 0; k < x.Len(); k++ {
			xv := x.GetFloat64(k)
			greg := norm*xv + gr.GetFloat64(k)
			vn := alpha*v.GetFloat64(k) + beta*greg
			step := vn
			if mode == "nesterov" {
				step = greg + alpha*vn
			}
			o[0].SetFloat64(k, xv-r*step)
			o[1].SetFloat64(k, vn)
		}
		outs[i] = o
	}
	trainingSet(h, len(ts), outs)
	return nil
}
