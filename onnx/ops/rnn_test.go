package ops

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
	"github.com/axle-ml/axle/xb"
)

// rnnRefAct is a reference activation on float64.
func rnnRefAct(name string, alpha, beta float64) func(float64) float64 {
	switch name {
	case "Sigmoid":
		return func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	case "Tanh":
		return math.Tanh
	case "Relu":
		return func(x float64) float64 { return math.Max(x, 0) }
	case "LeakyRelu":
		return func(x float64) float64 {
			if x >= 0 {
				return x
			}
			return alpha * x
		}
	case "HardSigmoid":
		return func(x float64) float64 { return math.Min(1, math.Max(0, alpha*x+beta)) }
	case "ScaledTanh":
		return func(x float64) float64 { return alpha * math.Tanh(beta*x) }
	}
	panic(name)
}

type rnnRefCfg struct {
	kind            rnnKind
	T, B, I, H      int
	dirs            string
	lens            []int
	clip            float64
	lbr, inputForgt bool
	peep            bool
	noLens          bool // no sequence_lens input (lens must then all be T)
	acts            []string
	alpha, beta     []float32
}

// rnnRef computes Y [T][nd][B][H], Y_h and Y_c [nd][B][H] directly from
// the operator's equations, one batch entry and direction at a time.
func rnnRef(cfg rnnRefCfg, X, W, R, Bias, H0, C0, P []float64) (Y, Yh, Yc []float64) {
	G := map[rnnKind]int{rnnSimple: 1, rnnGRU: 3, rnnLSTM: 4}[cfg.kind]
	nd := 1
	if cfg.dirs == "bidirectional" {
		nd = 2
	}
	T, B, I, H := cfg.T, cfg.B, cfg.I, cfg.H
	Y = make([]float64, T*nd*B*H)
	Yh = make([]float64, nd*B*H)
	Yc = make([]float64, nd*B*H)
	nA := map[rnnKind]int{rnnSimple: 1, rnnGRU: 2, rnnLSTM: 3}[cfg.kind]
	clip := func(x float64) float64 {
		if cfg.clip > 0 {
			return math.Max(-cfg.clip, math.Min(cfg.clip, x))
		}
		return x
	}
	// alpha and beta values are consumed in order by the activations that
	// take them (as ONNX Runtime does).
	alphas, betas := cfg.alpha, cfg.beta
	var allActs []func(float64) float64
	for _, name := range cfg.acts {
		a, b := 0.0, 0.0
		if name == "LeakyRelu" || name == "HardSigmoid" || name == "ScaledTanh" {
			a, alphas = float64(alphas[0]), alphas[1:]
		}
		if name == "HardSigmoid" || name == "ScaledTanh" {
			b, betas = float64(betas[0]), betas[1:]
		}
		allActs = append(allActs, rnnRefAct(name, a, b))
	}
	for d := range nd {
		acts := allActs[d*nA : (d+1)*nA]
		f := acts[0]
		w := func(gate, row, col int) float64 { return W[((d*G+gate)*H+row)*I+col] }
		r := func(gate, row, col int) float64 { return R[((d*G+gate)*H+row)*H+col] }
		wb := func(gate, row int) float64 { return Bias[d*2*G*H+gate*H+row] }
		rb := func(gate, row int) float64 { return Bias[d*2*G*H+G*H+gate*H+row] }
		for b := range B {
			h := append([]float64(nil), H0[(d*B+b)*H:(d*B+b+1)*H]...)
			c := append([]float64(nil), C0[(d*B+b)*H:(d*B+b+1)*H]...)
			n := cfg.lens[b]
			for s := range n {
				t := s
				if cfg.dirs == "reverse" || d == 1 {
					t = n - 1 - s
				}
				x := X[(t*B+b)*I : (t*B+b+1)*I]
				pre := func(gate int, hv []float64) []float64 { // W x + R hv + biases
					out := make([]float64, H)
					for j := range H {
						v := wb(gate, j) + rb(gate, j)
						for k := range I {
							v += w(gate, j, k) * x[k]
						}
						for k := range H {
							v += r(gate, j, k) * hv[k]
						}
						out[j] = v
					}
					return out
				}
				nh := make([]float64, H)
				switch cfg.kind {
				case rnnSimple:
					g := pre(0, h)
					for j := range H {
						nh[j] = f(clip(g[j]))
					}
				case rnnGRU:
					gz, gr := pre(0, h), pre(1, h)
					z, rr := make([]float64, H), make([]float64, H)
					for j := range H {
						z[j], rr[j] = f(clip(gz[j])), f(clip(gr[j]))
					}
					var gh []float64
					if cfg.lbr {
						gh = make([]float64, H)
						for j := range H {
							xv, hv := wb(2, j), rb(2, j)
							for k := range I {
								xv += w(2, j, k) * x[k]
							}
							for k := range H {
								hv += r(2, j, k) * h[k]
							}
							gh[j] = xv + rr[j]*hv
						}
					} else {
						rh := make([]float64, H)
						for j := range H {
							rh[j] = rr[j] * h[j]
						}
						gh = pre(2, rh)
					}
					for j := range H {
						ht := acts[1](clip(gh[j]))
						nh[j] = (1-z[j])*ht + z[j]*h[j]
					}
				case rnnLSTM:
					gi, gO, gf, gc := pre(0, h), pre(1, h), pre(2, h), pre(3, h)
					pv := func(k, j int) float64 {
						if !cfg.peep {
							return 0
						}
						return P[d*3*H+k*H+j]
					}
					nc := make([]float64, H)
					for j := range H {
						i := f(clip(gi[j] + pv(0, j)*c[j]))
						ff := f(clip(gf[j] + pv(2, j)*c[j]))
						if cfg.inputForgt {
							ff = 1 - i
						}
						ct := acts[1](clip(gc[j]))
						nc[j] = ff*c[j] + i*ct
						o := f(clip(gO[j] + pv(1, j)*nc[j]))
						nh[j] = o * acts[2](nc[j])
					}
					c = nc
				}
				h = nh
				copy(Y[((t*nd+d)*B+b)*H:], h)
			}
			copy(Yh[(d*B+b)*H:], h)
			copy(Yc[(d*B+b)*H:], c)
		}
	}
	return Y, Yh, Yc
}

func TestRNNAgainstReference(t *testing.T) {
	cfgs := []rnnRefCfg{
		{kind: rnnLSTM, T: 5, B: 3, I: 4, H: 3, dirs: "bidirectional", lens: []int{5, 2, 4}, peep: true},
		{kind: rnnLSTM, T: 4, B: 2, I: 3, H: 2, dirs: "reverse", lens: []int{3, 4}, clip: 0.5, inputForgt: true,
			acts: []string{"HardSigmoid", "LeakyRelu", "ScaledTanh"}, alpha: []float32{0.3, 0.1, 0.7}, beta: []float32{0.4, 1.3}},
		{kind: rnnGRU, T: 6, B: 2, I: 3, H: 4, dirs: "bidirectional", lens: []int{6, 3}, lbr: true},
		{kind: rnnGRU, T: 3, B: 2, I: 3, H: 2, dirs: "reverse", lens: []int{3, 3}},
		{kind: rnnSimple, T: 5, B: 2, I: 2, H: 3, dirs: "bidirectional", lens: []int{1, 5}, acts: []string{"Relu", "Tanh"}},
		// Without lengths, unrolled for one thread: both directions step
		// together (rnnBoth).
		{kind: rnnLSTM, T: 5, B: 2, I: 4, H: 3, dirs: "bidirectional", lens: []int{5, 5}, noLens: true, clip: 0.8},
		{kind: rnnGRU, T: 4, B: 1, I: 3, H: 4, dirs: "bidirectional", lens: []int{4}, lbr: true, noLens: true},
		{kind: rnnGRU, T: 3, B: 2, I: 3, H: 2, dirs: "bidirectional", lens: []int{3, 3}, noLens: true},
		{kind: rnnSimple, T: 4, B: 3, I: 2, H: 3, dirs: "bidirectional", lens: []int{4, 4, 4}, noLens: true},
		{kind: rnnSimple, T: 4, B: 2, I: 2, H: 3, dirs: "bidirectional", lens: []int{4, 4}, noLens: true, acts: []string{"Relu", "Tanh"}},
	}
	saved := [2]int64{rnnUnrollMax, rnnChunk}
	defer func() { rnnUnrollMax, rnnChunk = saved[0], saved[1] }()
	rng := rand.New(rand.NewSource(1))
	for ci, cfg := range cfgs {
		G := map[rnnKind]int{rnnSimple: 1, rnnGRU: 3, rnnLSTM: 4}[cfg.kind]
		nd := 1
		if cfg.dirs == "bidirectional" {
			nd = 2
		}
		nA := map[rnnKind]int{rnnSimple: 1, rnnGRU: 2, rnnLSTM: 3}[cfg.kind]
		if cfg.acts == nil {
			cfg.acts = map[rnnKind][]string{rnnSimple: {"Tanh"}, rnnGRU: {"Sigmoid", "Tanh"}, rnnLSTM: {"Sigmoid", "Tanh", "Tanh"}}[cfg.kind]
		}
		for len(cfg.acts) < nA*nd {
			cfg.acts = append(cfg.acts, cfg.acts...)
			cfg.alpha = append(cfg.alpha, cfg.alpha...)
			cfg.beta = append(cfg.beta, cfg.beta...)
		}
		rnd := func(n int) []float64 {
			out := make([]float64, n)
			for i := range out {
				out[i] = rng.Float64()*2 - 1
			}
			return out
		}
		T, B, I, H := cfg.T, cfg.B, cfg.I, cfg.H
		X, W, R := rnd(T*B*I), rnd(nd*G*H*I), rnd(nd*G*H*H)
		Bias, H0, C0, P := rnd(nd*2*G*H), rnd(nd*B*H), rnd(nd*B*H), rnd(nd*3*H)
		wantY, wantH, wantC := rnnRef(cfg, X, W, R, Bias, H0, C0, P)
		lit := func(v []float64, dims ...int64) *hlo.Literal { return literal(hlo.F32, v, dims...) }
		attrs := map[string]*onnxpb.AttributeProto{
			"hidden_size": {I: ptr(int64(H))},
			"direction":   {S: []byte(cfg.dirs)},
			"activations": {Strings: nil},
		}
		for _, a := range cfg.acts {
			attrs["activations"].Strings = append(attrs["activations"].Strings, []byte(a))
		}
		if cfg.alpha != nil {
			attrs["activation_alpha"] = &onnxpb.AttributeProto{Floats: cfg.alpha}
			attrs["activation_beta"] = &onnxpb.AttributeProto{Floats: cfg.beta}
		}
		if cfg.clip > 0 {
			attrs["clip"] = &onnxpb.AttributeProto{F: ptr(float32(cfg.clip))}
		}
		if cfg.lbr {
			attrs["linear_before_reset"] = &onnxpb.AttributeProto{I: ptr(int64(1))}
		}
		if cfg.inputForgt {
			attrs["input_forget"] = &onnxpb.AttributeProto{I: ptr(int64(1))}
		}
		op := map[rnnKind]string{rnnSimple: "RNN", rnnGRU: "GRU", rnnLSTM: "LSTM"}[cfg.kind]
		n := &onnx.Node{Op: op, Inputs: []string{"X", "W", "R", "B", "L", "H0"}, Outputs: []string{"Y", "Yh"}, Attrs: attrs}
		if cfg.noLens {
			n.Inputs[4] = ""
		}
		if cfg.kind == rnnLSTM {
			n.Inputs = append(n.Inputs, "C0")
			n.Outputs = append(n.Outputs, "Yc")
			if cfg.peep {
				n.Inputs = append(n.Inputs, "P")
			}
		}
		// Unrolled for one thread and for two, and as while loops; on one
		// thread also with an L2 cache the recurrent weights fill (each
		// direction in turn) and one they fit in (both at once).
		for _, mode := range [][4]int64{{100, 16, 1, 0}, {100, 16, 2, 0}, {0, 1, 0, 0}, {0, 2, 0, 0}, {100, 16, 1, 64}, {100, 16, 1, 1 << 20}} {
			rnnUnrollMax, rnnChunk = mode[0], mode[1]
			b := xb.New("t")
			l := &Lowerer{Opsets: map[string]int{"": 22}, Env: NewEnv(nil), Threads: int(mode[2]), L2: int(mode[3])}
			l.Env.Set("X", FromOp(b.Param("X", hlo.F32, int64(T), int64(B), int64(I))))
			l.Env.Set("L", FromOp(b.Param("L", hlo.S32, int64(B))))
			for name, v := range map[string]*hlo.Literal{
				"W": lit(W, int64(nd), int64(G*H), int64(I)), "R": lit(R, int64(nd), int64(G*H), int64(H)),
				"B": lit(Bias, int64(nd), int64(2*G*H)), "H0": lit(H0, int64(nd), int64(B), int64(H)),
				"C0": lit(C0, int64(nd), int64(B), int64(H)), "P": lit(P, int64(nd), int64(3*H)),
			} {
				l.Env.Set(name, FromConst(onnx.TensorOf(v)))
			}
			if err := l.LowerNode(b, n); err != nil {
				t.Fatal(err)
			}
			var roots []*xb.Op
			for _, name := range n.Outputs {
				v, _ := l.Env.Get(name)
				roots = append(roots, v.In(b))
			}
			m, err := b.Build(b.Tuple(roots...))
			if err != nil {
				t.Fatal(err)
			}
			// The stacked recurrent weights here are 2·G·H·H f32s: 72–288
			// bytes, more than half of 64.
			both := cfg.noLens && !cfg.peep && nd == 2 && mode[0] > 0 && !slices.Contains(cfg.acts, "Relu") && mode[2] == 1 && mode[3] != 64
			if batchedDot(m) != both {
				t.Errorf("config %d mode %v: a product batched over the directions: %v, want %v", ci, mode, batchedDot(m), both)
			}
			lens := make([]int32, B)
			for i, v := range cfg.lens {
				lens[i] = int32(v)
			}
			ll, _ := hlo.LiteralFromSlice(lens, int64(B))
			res, err := eval.Run(m, lit(X, int64(T), int64(B), int64(I)), ll)
			if err != nil {
				t.Fatal(err)
			}
			wants := [][]float64{wantY, wantH, wantC}
			for k, e := range res.Elements() {
				got := e.Data().([]float32)
				for i := range got {
					if math.Abs(float64(got[i])-wants[k][i]) > 1e-4 {
						t.Errorf("config %d (%s %s) mode %v: output %d element %d: got %v, want %v", ci, op, cfg.dirs, mode, k, i, got[i], wants[k][i])
						break
					}
				}
			}
		}
	}
	_ = fmt.Sprint
}

// batchedDot reports whether m's entry has a dot with batch dimensions
// (rnnBoth's step over both directions).
func batchedDot(m *hlo.Module) bool {
	for _, in := range m.Entry.Instructions {
		if d, ok := in.Ints("lhs_batch_dims"); ok && in.Opcode == hlo.OpDot && len(d) > 0 {
			return true
		}
	}
	return false
}
