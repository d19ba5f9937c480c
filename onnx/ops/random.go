package ops

import (
	"math"
	"math/rand/v2"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// Random ops run on the host with Go's PCG generator: a seed attribute
// makes the draws deterministic (the same on every run of the node); the
// values differ from other runtimes' generators, as ONNX allows.

func init() {
	Register(Op{Name: "RandomUniform", Random: true, Host: hostRandomUniform})
	Register(Op{Name: "RandomNormal", Random: true, Host: hostRandomNormal})
	Register(Op{Name: "RandomUniformLike", Random: true, Host: hostRandomUniformLike})
	Register(Op{Name: "RandomNormalLike", Random: true, Host: hostRandomNormalLike})
	Register(Op{Name: "Bernoulli", Since: 15, Random: true, Host: hostBernoulli})
	Register(Op{Name: "Multinomial", Since: 7, Random: true, Host: hostMultinomial})
}

// randomGen is the node's generator: seeded from its seed attribute, or
// from the process's random source.
func randomGen(h *HostCtx) *rand.Rand {
	if h.Node.Has("seed") {
		s := uint64(math.Float32bits(h.Node.Float("seed", 0)))
		return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
	}
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}

// randomDType is the output type: the dtype attribute, else def.
func randomDType(h *HostCtx, def hlo.DType) (hlo.DType, error) {
	t := def
	if h.Node.Has("dtype") {
		t = onnx.ElemType(h.Node.Int("dtype", 1)).HLO()
	}
	if t == hlo.Invalid || !(t.IsFloat() || t.IsInteger() || t.IsPred()) {
		return hlo.Invalid, h.Errorf("unsupported dtype %v", h.Node.Int("dtype", 0))
	}
	return t, nil
}

// randomLikeArgs is the output type and dims of a *Like op.
func randomLikeArgs(h *HostCtx) (hlo.DType, []int64, error) {
	x := h.Tensor(0)
	if x == nil || x.IsString() {
		if x != nil && h.Node.Has("dtype") {
			t, err := randomDType(h, hlo.F32)
			return t, x.Dims(), err
		}
		return hlo.Invalid, nil, h.Errorf("input 0 must be a numeric tensor (or dtype given)")
	}
	t, err := randomDType(h, x.Lit.DType())
	return t, x.Dims(), err
}

func randomFloatOut(t hlo.DType) bool { return t.IsFloat() }

func randomFill(h *HostCtx, t hlo.DType, dims []int64, draw func(r *rand.Rand) float64) error {
	if !randomFloatOut(t) {
		return h.Errorf("dtype %v: want a floating-point type", t)
	}
	for _, d := range dims {
		if d < 0 {
			return h.Errorf("negative dimension in %v", dims)
		}
	}
	r := randomGen(h)
	out := hlo.NewLiteral(hlo.ArrayShape(t, dims...))
	for i := 0; i < out.Len(); i++ {
		out.SetFloat64(i, draw(r))
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}

func randomUniformDraw(h *HostCtx) func(r *rand.Rand) float64 {
	lo, hi := float64(h.Node.Float("low", 0)), float64(h.Node.Float("high", 1))
	return func(r *rand.Rand) float64 { return lo + (hi-lo)*r.Float64() }
}

func randomNormalDraw(h *HostCtx) func(r *rand.Rand) float64 {
	mean, scale := float64(h.Node.Float("mean", 0)), float64(h.Node.Float("scale", 1))
	return func(r *rand.Rand) float64 { return mean + scale*r.NormFloat64() }
}

func hostRandomUniform(h *HostCtx) error {
	t, err := randomDType(h, hlo.F32)
	if err != nil {
		return err
	}
	return randomFill(h, t, h.Node.Ints("shape"), randomUniformDraw(h))
}

func hostRandomNormal(h *HostCtx) error {
	t, err := randomDType(h, hlo.F32)
	if err != nil {
		return err
	}
	return randomFill(h, t, h.Node.Ints("shape"), randomNormalDraw(h))
}

func hostRandomUniformLike(h *HostCtx) error {
	t, dims, err := randomLikeArgs(h)
	if err != nil {
		return err
	}
	return randomFill(h, t, dims, randomUniformDraw(h))
}

func hostRandomNormalLike(h *HostCtx) error {
	t, dims, err := randomLikeArgs(h)
	if err != nil {
		return err
	}
	return randomFill(h, t, dims, randomNormalDraw(h))
}

// hostBernoulli: 1 where p > u for u uniform in [0, 1).
func hostBernoulli(h *HostCtx) error {
	x := h.Tensor(0)
	if x == nil || x.IsString() {
		return h.Errorf("input 0 must be a numeric tensor")
	}
	t, err := randomDType(h, x.Lit.DType())
	if err != nil {
		return err
	}
	r := randomGen(h)
	out := hlo.NewLiteral(hlo.ArrayShape(t, x.Dims()...))
	for i := 0; i < out.Len(); i++ {
		if x.Lit.GetFloat64(i) > r.Float64() {
			out.SetFloat64(i, 1)
		}
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}

// hostMultinomial draws sample_size class indices per batch row from the
// distribution of softmax(input row).
func hostMultinomial(h *HostCtx) error {
	x := h.Tensor(0)
	if x == nil || x.IsString() || len(x.Dims()) != 2 {
		return h.Errorf("input 0 must be a [batch, classes] numeric tensor")
	}
	t := hlo.S32
	if h.Node.Has("dtype") {
		t = onnx.ElemType(h.Node.Int("dtype", 6)).HLO()
	}
	if t != hlo.S32 && t != hlo.S64 {
		return h.Errorf("dtype must be int32 or int64")
	}
	ns := h.Node.Int("sample_size", 1)
	if ns < 0 {
		return h.Errorf("negative sample_size")
	}
	b, c := int(x.Dims()[0]), int(x.Dims()[1])
	r := randomGen(h)
	out := hlo.NewLiteral(hlo.ArrayShape(t, int64(b), ns))
	cdf := make([]float64, c)
	for i := 0; i < b; i++ {
		m := math.Inf(-1)
		for j := 0; j < c; j++ {
			m = max(m, x.Lit.GetFloat64(i*c+j))
		}
		sum := 0.0
		for j := 0; j < c; j++ {
			sum += math.Exp(x.Lit.GetFloat64(i*c+j) - m)
			cdf[j] = sum
		}
		for k := 0; k < int(ns); k++ {
			u := r.Float64() * sum
			j := 0
			for j < c-1 && cdf[j] <= u {
				j++
			}
			out.SetInt64(i*int(ns)+k, int64(j))
		}
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}
