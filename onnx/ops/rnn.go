package ops

import (
	"slices"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// RNN, GRU and LSTM lower to HLO: the input projection X·Wᵀ (plus biases)
// of every time step is one DotGeneral up front; the recurrence then runs
// h·Rᵀ and the gates per step, unrolled for short sequences and as an HLO
// while loop (dynamic-slice / dynamic-update-slice per step) otherwise.

type rnnKind int

const (
	rnnSimple rnnKind = iota
	rnnGRU
	rnnLSTM
)

// rnnUnrollMax is the longest sequence that is unrolled. Measured on the
// cpu backend (2 shared cores, CPU time per call, the corpus models): the
// 2-layer GRU over 100 steps takes 2.8 ms unrolled, 6.1 ms as a while loop
// of one step per iteration (whose body copies the carried state: XW, Y,
// the weights) and 3.4-4 ms with 8-32 steps per iteration; the 2-layer
// bidirectional LSTM over 32 steps 6.6, 10.8 and 7-9 ms. Unrolling costs
// compile time (about 1.9 s against 0.8 s for the GRU model).
var rnnUnrollMax int64 = 128

// rnnChunk is the number of steps one while iteration runs unrolled
// (sequences longer than rnnUnrollMax).
var rnnChunk int64 = 16

// rnnConstBody makes a while body build the recurrent weights from
// compile-time constants instead of carrying them; measured slower (10 ms
// against 6 ms for the GRU above), so it is off.
const rnnConstBody = false

func init() {
	Register(Op{Name: "RNN", Lower: func(c *Ctx) error { return lowerRNN(c, rnnSimple) }})
	Register(Op{Name: "GRU", Lower: func(c *Ctx) error { return lowerRNN(c, rnnGRU) }})
	Register(Op{Name: "LSTM", Lower: func(c *Ctx) error { return lowerRNN(c, rnnLSTM) }})
}

type rnnAct func(x *xb.Op) *xb.Op

// rnnActivation builds the named activation, consuming alpha/beta values
// from the lists in order.
func rnnActivation(c *Ctx, name string, alphas, betas *[]float32) (rnnAct, error) {
	take := func(l *[]float32, def float64) float64 {
		if len(*l) == 0 {
			return def
		}
		v := (*l)[0]
		*l = (*l)[1:]
		return float64(v)
	}
	switch strings.ToLower(name) {
	case "tanh":
		return xb.Tanh, nil
	case "sigmoid":
		return xb.Logistic, nil
	case "relu":
		return func(x *xb.Op) *xb.Op { return xb.Max(x, FullLike(x, 0)) }, nil
	case "affine":
		a, b := take(alphas, 1), take(betas, 0)
		return func(x *xb.Op) *xb.Op { return xb.Add(xb.Mul(x, FullLike(x, a)), FullLike(x, b)) }, nil
	case "leakyrelu":
		a := take(alphas, 0.01)
		return func(x *xb.Op) *xb.Op {
			return xb.Select(xb.Ge(x, FullLike(x, 0)), x, xb.Mul(x, FullLike(x, a)))
		}, nil
	case "thresholdedrelu":
		a := take(alphas, 1)
		return func(x *xb.Op) *xb.Op { return xb.Select(xb.Gt(x, FullLike(x, a)), x, FullLike(x, 0)) }, nil
	case "scaledtanh":
		a, b := take(alphas, 1), take(betas, 1)
		return func(x *xb.Op) *xb.Op { return xb.Mul(FullLike(x, a), xb.Tanh(xb.Mul(x, FullLike(x, b)))) }, nil
	case "hardsigmoid":
		a, b := take(alphas, 0.2), take(betas, 0.5)
		return func(x *xb.Op) *xb.Op {
			y := xb.Add(xb.Mul(x, FullLike(x, a)), FullLike(x, b))
			return xb.Clamp(FullLike(x, 0), y, FullLike(x, 1))
		}, nil
	case "elu":
		a := take(alphas, 1)
		return func(x *xb.Op) *xb.Op {
			return xb.Select(xb.Ge(x, FullLike(x, 0)), x, xb.Mul(FullLike(x, a), xb.Expm1(x)))
		}, nil
	case "softsign":
		return func(x *xb.Op) *xb.Op { return xb.Div(x, xb.Add(FullLike(x, 1), xb.Abs(x))) }, nil
	case "softplus":
		return func(x *xb.Op) *xb.Op { return xb.Log1p(xb.Exp(x)) }, nil
	}
	return nil, c.Unsupported("activation %q", name)
}

// rnnInv are the loop-invariant values of one direction's recurrence.
type rnnInv struct {
	RT    *xb.Op // [H, G*H] (GRU linear_before_reset=0: z and r gates only)
	RTh   *xb.Op // GRU linear_before_reset=0: [H, H] of the h gate
	P     *xb.Op // LSTM peepholes [3H] (nil if none)
	Rbh   *xb.Op // GRU linear_before_reset=1: [H] recurrent bias of h
	Lens  *xb.Op // [B] s32 sequence lengths (nil if all full)
	Clip  float64
	Acts  []rnnAct
	Kind  rnnKind
	LBR   bool
	IFrgt bool
}

func (v *rnnInv) list() []*xb.Op {
	var out []*xb.Op
	for _, o := range []*xb.Op{v.RT, v.RTh, v.P, v.Rbh, v.Lens} {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

// rebind is a copy of v with its ops replaced by ops, in list order.
func (v *rnnInv) rebind(ops []*xb.Op) *rnnInv {
	w := *v
	k := 0
	for _, p := range []**xb.Op{&w.RT, &w.RTh, &w.P, &w.Rbh, &w.Lens} {
		if *p != nil {
			*p = ops[k]
			k++
		}
	}
	return &w
}

// rnnRowMajorR: the recurrent weights stay [G*H, H] and the step's dot
// contracts their second dimension (no transpose).
var rnnRowMajorR = false

// rnnRLhs (with rnnRowMajorR) computes R·hᵀ and transposes the result.
var rnnRLhs = false

func rnnMatmul(h, rt *xb.Op) *xb.Op {
	if h.Rank() == 3 { // rnnBoth: [D, B, H]·[D, H, G*H]
		return xb.DotGeneral(h, rt, xb.DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{2}, RhsContracting: []int64{1}})
	}
	if rnnRowMajorR && rnnRLhs {
		return xb.Transpose(xb.DotGeneral(rt, h, xb.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}}), 1, 0)
	}
	if rnnRowMajorR {
		return xb.DotGeneral(h, rt, xb.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}})
	}
	return xb.DotGeneral(h, rt, xb.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}})
}

// step computes one time step: xw [B, G*H] (input projection plus biases),
// h and c [B, H]; idx is the step's time index (s32 scalar, for lengths).
// It returns the new h, c and the step's output.
func (v *rnnInv) step(xw, h, cst, idx *xb.Op) (hn, cn, y *xb.Op) {
	dims := h.Dims()
	bsz, hid := dims[0], dims[1]
	ax := int64(h.Rank() - 1) // [D, B, H] states: both directions at once (rnnBoth)
	if ax == 2 {
		hid = dims[2]
	}
	gate := func(x *xb.Op, k int64) *xb.Op { return xb.SliceAxis(x, ax, k*hid, (k+1)*hid) }
	clip := func(x *xb.Op) *xb.Op {
		if v.Clip > 0 {
			return xb.Clamp(FullLike(x, -v.Clip), x, FullLike(x, v.Clip))
		}
		return x
	}
	switch v.Kind {
	case rnnSimple:
		hn = v.Acts[0](clip(xb.Add(xw, rnnMatmul(h, v.RT))))
	case rnnGRU:
		hr := rnnMatmul(h, v.RT)
		z := v.Acts[0](clip(xb.Add(gate(xw, 0), gate(hr, 0))))
		r := v.Acts[0](clip(xb.Add(gate(xw, 1), gate(hr, 1))))
		var pre *xb.Op
		if v.LBR {
			rh := gate(hr, 2)
			if v.Rbh != nil {
				var rbh *xb.Op
				if ax == 2 {
					rbh = xb.BroadcastInDim(v.Rbh, dims, 0, 2)
				} else {
					rbh = xb.BroadcastInDim(v.Rbh, dims, 1)
				}
				rh = xb.Add(rh, rbh)
			}
			pre = xb.Add(gate(xw, 2), xb.Mul(r, rh))
		} else {
			pre = xb.Add(gate(xw, 2), rnnMatmul(xb.Mul(r, h), v.RTh))
		}
		ht := v.Acts[1](clip(pre))
		hn = xb.Add(xb.Mul(xb.Sub(FullLike(z, 1), z), ht), xb.Mul(z, h))
	case rnnLSTM:
		g := xb.Add(xw, rnnMatmul(h, v.RT))
		peep := func(k int64, cc *xb.Op) *xb.Op {
			if v.P == nil {
				return nil
			}
			p := xb.SliceAxis(v.P, 0, k*hid, (k+1)*hid)
			return xb.Mul(xb.BroadcastInDim(p, []int64{bsz, hid}, 1), cc)
		}
		addP := func(x, p *xb.Op) *xb.Op {
			if p == nil {
				return x
			}
			return xb.Add(x, p)
		}
		i := v.Acts[0](clip(addP(gate(g, 0), peep(0, cst))))
		var f *xb.Op
		if v.IFrgt {
			f = xb.Sub(FullLike(i, 1), i)
		} else {
			f = v.Acts[0](clip(addP(gate(g, 2), peep(2, cst))))
		}
		ct := v.Acts[1](clip(gate(g, 3)))
		cn = xb.Add(xb.Mul(f, cst), xb.Mul(i, ct))
		o := v.Acts[0](clip(addP(gate(g, 1), peep(1, cn))))
		hn = xb.Mul(o, v.Acts[2](cn))
	}
	y = hn
	if v.Lens != nil {
		b := h.Builder()
		m := xb.Lt(xb.BroadcastInDim(idx, []int64{bsz}), v.Lens)
		m = xb.BroadcastInDim(m, []int64{bsz, hid}, 0)
		hn = xb.Select(m, hn, h)
		if cn != nil {
			cn = xb.Select(m, cn, cst)
		}
		y = xb.Select(m, y, b.Full(y.DType(), 0, bsz, hid))
	}
	return hn, cn, y
}

func lowerRNN(c *Ctx, kind rnnKind) error {
	gates := map[rnnKind]int64{rnnSimple: 1, rnnGRU: 3, rnnLSTM: 4}[kind]
	x, w, r := c.Input(0), c.Input(1), c.Input(2)
	if x == nil || w == nil || r == nil {
		return c.Errorf("X, W and R are required")
	}
	if x.Rank() != 3 || w.Rank() != 3 || r.Rank() != 3 {
		return c.Errorf("X, W and R must have rank 3")
	}
	dt := x.DType()
	if !dt.IsFloat() {
		return c.Unsupported("element type %s", dt)
	}
	layout := c.Node.Int("layout", 0)
	if layout == 1 {
		x = xb.Transpose(x, 1, 0, 2)
	}
	xd := x.Dims()
	T, bsz := xd[0], xd[1]
	nd := int64(1)
	dir := c.Node.Str("direction", "forward")
	switch dir {
	case "forward", "reverse":
	case "bidirectional":
		nd = 2
	default:
		return c.Errorf("direction %q", dir)
	}
	hid := c.Node.Int("hidden_size", r.Dims()[2])
	if w.Dims()[0] != nd || w.Dims()[1] != gates*hid || r.Dims()[1] != gates*hid || r.Dims()[2] != hid || w.Dims()[2] != xd[2] {
		return c.Errorf("W %v / R %v do not fit X %v, hidden size %d and %d directions", w.Dims(), r.Dims(), xd, hid, nd)
	}
	nActs := map[rnnKind]int{rnnSimple: 1, rnnGRU: 2, rnnLSTM: 3}[kind]
	names := c.Node.Strs("activations")
	if len(names) == 0 {
		names = map[rnnKind][]string{rnnSimple: {"Tanh"}, rnnGRU: {"Sigmoid", "Tanh"}, rnnLSTM: {"Sigmoid", "Tanh", "Tanh"}}[kind]
	}
	if len(names) == nActs && nd == 2 {
		names = append(names, names...)
	}
	if len(names) != nActs*int(nd) {
		return c.Errorf("%d activations for %d directions", len(names), nd)
	}
	alphas := append([]float32(nil), c.Node.Floats("activation_alpha")...)
	betas := append([]float32(nil), c.Node.Floats("activation_beta")...)
	acts := make([]rnnAct, len(names))
	for i, n := range names {
		a, err := rnnActivation(c, n, &alphas, &betas)
		if err != nil {
			return err
		}
		acts[i] = a
	}
	var clip float64
	if c.Node.Has("clip") {
		clip = float64(c.Node.Float("clip", 0))
	}
	bias := c.Input(3)
	// Sequence lengths: dropped when known and all full.
	var lens *xb.Op
	if c.Has(4) {
		full := false
		if t := c.In[4].Const; t != nil {
			if v, err := Int64s(t); err == nil {
				full = true
				for _, l := range v {
					full = full && l == T
				}
			}
		}
		if !full {
			lens = xb.Convert(c.Input(4), hlo.S32)
			if lens.Rank() != 1 || lens.Dims()[0] != bsz {
				return c.Errorf("sequence_lens must be [%d]", bsz)
			}
		}
	}
	initState := func(i int) *xb.Op {
		s := c.Input(i)
		if s == nil {
			return nil
		}
		if layout == 1 {
			s = xb.Transpose(s, 1, 0, 2)
		}
		return s
	}
	h0, c0 := initState(5), (*xb.Op)(nil)
	var peep *xb.Op
	if kind == rnnLSTM {
		c0, peep = initState(6), c.Input(7)
	}
	lbr := kind == rnnGRU && c.Node.Int("linear_before_reset", 0) != 0
	GH := gates * hid
	constWeights := c.In[2].Const != nil && (!c.Has(3) || c.In[3].Const != nil) && (peep == nil || c.In[7].Const != nil)

	var ys, hs, cs []*xb.Op
	// Both directions step together (one batched product and one fusion
	// a step) when unrolled, without lengths or peepholes, for code that
	// runs on one thread (see rnnBothDirections).
	both := nd == 2 && T <= rnnUnrollMax && rnnBothDirections(c.Threads, c.L2, int(nd*GH*hid)*r.DType().Bits()/8) && lens == nil && peep == nil &&
		!c.Node.Has("activation_alpha") && !c.Node.Has("activation_beta") &&
		slices.EqualFunc(names[:nActs], names[nActs:], strings.EqualFold)
	var bothXW, bothH, bothC []*xb.Op
	var bothInv []*rnnInv
	for d := int64(0); d < nd; d++ {
		reverse := dir == "reverse" || d == 1
		wd := xb.Reshape(xb.SliceAxis(w, 0, d, d+1), GH, xd[2])
		// Wᵀ [I, GH] (folded at compile time for constant weights): the
		// GEMM packs a row-major right operand with contiguous copies.
		xw := xb.DotGeneral(x, xb.Transpose(wd, 1, 0), xb.DotDims{LhsContracting: []int64{2}, RhsContracting: []int64{0}}) // [T, B, GH]
		inv := &rnnInv{Clip: clip, Acts: acts[int(d)*nActs : int(d+1)*nActs], Kind: kind, LBR: lbr,
			IFrgt: kind == rnnLSTM && c.Node.Int("input_forget", 0) != 0, Lens: lens}
		if bias != nil {
			bd := xb.Reshape(xb.SliceAxis(bias, 0, d, d+1), 2*GH)
			wb, rb := xb.SliceAxis(bd, 0, 0, GH), xb.SliceAxis(bd, 0, GH, 2*GH)
			if lbr {
				rb = xb.Concatenate(0, xb.SliceAxis(rb, 0, 0, 2*hid), c.B.Full(dt, 0, hid))
			}
			xw = xb.Add(xw, xb.BroadcastInDim(xb.Add(wb, rb), []int64{T, bsz, GH}, 2))
		}
		// The recurrent invariants, buildable in any builder when R, B and
		// P are known at compile time (then a while body makes them as
		// constants instead of carrying them in its state).
		mkInv := func(b *xb.Builder, in func(i int) *xb.Op) *rnnInv {
			v := *inv
			rd := xb.Reshape(xb.SliceAxis(in(2), 0, d, d+1), GH, hid)
			rt, gax := rd, int64(0)
			if !rnnRowMajorR {
				rt, gax = xb.Transpose(rd, 1, 0), 1 // [H, GH]
			}
			if kind == rnnGRU && !lbr {
				v.RT, v.RTh = xb.SliceAxis(rt, gax, 0, 2*hid), xb.SliceAxis(rt, gax, 2*hid, 3*hid)
			} else {
				v.RT = rt
			}
			if lbr && bias != nil {
				bd := xb.Reshape(xb.SliceAxis(in(3), 0, d, d+1), 2*GH)
				v.Rbh = xb.SliceAxis(bd, 0, GH+2*hid, 2*GH)
			}
			if peep != nil {
				v.P = xb.Reshape(xb.SliceAxis(in(7), 0, d, d+1), 3*hid)
			}
			return &v
		}
		inv = mkInv(c.B, c.Input)
		var rebuild func(sb *xb.Builder) *rnnInv
		if constWeights && rnnConstBody {
			rebuild = func(sb *xb.Builder) *rnnInv {
				return mkInv(sb, func(i int) *xb.Op { return c.In[i].In(sb) })
			}
		}
		h := c.B.Full(dt, 0, bsz, hid)
		if h0 != nil {
			h = xb.Reshape(xb.SliceAxis(h0, 0, d, d+1), bsz, hid)
		}
		var cst *xb.Op
		if kind == rnnLSTM {
			cst = c.B.Full(dt, 0, bsz, hid)
			if c0 != nil {
				cst = xb.Reshape(xb.SliceAxis(c0, 0, d, d+1), bsz, hid)
			}
		}
		if both {
			if d == 1 {
				xw = xb.Reverse(xw, 0)
			}
			bothXW, bothH, bothC, bothInv = append(bothXW, xw), append(bothH, h), append(bothC, cst), append(bothInv, inv)
			continue
		}
		var y *xb.Op
		if T <= rnnUnrollMax {
			y, h, cst = rnnUnrolled(c.B, inv, xw, h, cst, reverse)
		} else {
			y, h, cst = rnnWhile(c.B, inv, rebuild, xw, h, cst, reverse, c.Node.Input(0) != "" && len(c.Node.Outputs) > 0 && c.Node.Outputs[0] != "")
		}
		ys, hs, cs = append(ys, y), append(hs, h), append(cs, cst)
	}
	if both {
		y, h, cst := rnnBoth(c.B, bothInv, bothXW, bothH, bothC)
		ys = []*xb.Op{xb.Reshape(xb.SliceAxis(y, 1, 0, 1), T, bsz, hid), xb.Reverse(xb.Reshape(xb.SliceAxis(y, 1, 1, 2), T, bsz, hid), 0)}
		for d := range int64(2) {
			hs = append(hs, xb.Reshape(xb.SliceAxis(h, 0, d, d+1), bsz, hid))
			if cst != nil {
				cs = append(cs, xb.Reshape(xb.SliceAxis(cst, 0, d, d+1), bsz, hid))
			}
		}
	}
	// Y: [T, nd, B, H]; Y_h, Y_c: [nd, B, H] (layout 1: batch first).
	if len(c.Node.Outputs) > 0 && c.Node.Outputs[0] != "" {
		parts := make([]*xb.Op, nd)
		for d := range parts {
			parts[d] = xb.Reshape(ys[d], T, 1, bsz, hid)
		}
		y := parts[0]
		if nd > 1 {
			y = xb.Concatenate(1, parts...)
		}
		if layout == 1 {
			y = xb.Transpose(y, 2, 0, 1, 3)
		}
		c.Set(0, y)
	}
	stack := func(xs []*xb.Op) *xb.Op {
		parts := make([]*xb.Op, len(xs))
		for d := range xs {
			parts[d] = xb.Reshape(xs[d], 1, bsz, hid)
		}
		s := parts[0]
		if len(parts) > 1 {
			s = xb.Concatenate(0, parts...)
		}
		if layout == 1 {
			s = xb.Transpose(s, 1, 0, 2)
		}
		return s
	}
	c.Set(1, stack(hs))
	if kind == rnnLSTM {
		c.Set(2, stack(cs))
	}
	return nil
}

// rnnBothDirections says whether a bidirectional recurrence for code
// running on threads threads (0: unknown) with one core's L2 cache of l2
// bytes (0: unknown) steps both directions at once (rnnBoth): one batched
// product and one fusion a step for both, the better form on one thread
// where the two directions' recurrent weights (stacked bytes) stay in L2
// (the BiLSTM tagger on the Intel host, 2 MiB of L2: 0.84–0.89 ms against
// 0.90–0.95 ms unrolled one direction after the other, three rounds
// alternated). Where they fill more than half of it, each step of the
// batched form reads them all from L3, where one direction's half stays
// in L2 over its whole sequence: the tagger's 512 KiB on Zen 3 (512 KiB
// of L2), eight processes each alternated, medians 1.55 ms batched
// against 1.47 one direction after the other. On more threads, the
// directions unrolled one after the other are two independent chains,
// which the cpu backend runs side by side (its branch sections) with one
// handshake for the sequence rather than one a step: 0.55–0.78 ms against
// 0.78–0.83 ms on two threads.
func rnnBothDirections(threads, l2, stacked int) bool {
	return threads == 1 && (l2 == 0 || stacked <= l2/2)
}

// rnnBoth runs the two directions' unrolled recurrences as one over
// [2, B, H] states: the reverse direction's XW comes reversed in time, and
// its invariants are stacked with the forward one's, so each step is one
// batched product and one fusion for both. It returns Y [T, 2, B, H]
// (the reverse direction's in its own step order) and the final states
// [2, B, H].
func rnnBoth(b *xb.Builder, invs []*rnnInv, xws, hs, cs []*xb.Op) (y, h, cst *xb.Op) {
	stack := func(xs []*xb.Op) *xb.Op {
		if xs[0] == nil {
			return nil
		}
		parts := make([]*xb.Op, len(xs))
		for i, x := range xs {
			parts[i] = xb.Reshape(x, append([]int64{1}, x.Dims()...)...)
		}
		return xb.Concatenate(0, parts...)
	}
	inv := *invs[0]
	inv.RT = stack([]*xb.Op{invs[0].RT, invs[1].RT})
	if inv.RTh != nil {
		inv.RTh = stack([]*xb.Op{invs[0].RTh, invs[1].RTh})
	}
	if inv.Rbh != nil {
		inv.Rbh = stack([]*xb.Op{invs[0].Rbh, invs[1].Rbh})
	}
	// lowerRNN takes this path only when both directions use the same
	// activations.
	xw := xb.Concatenate(1, xb.Reshape(xws[0], append([]int64{xws[0].Dims()[0], 1}, xws[0].Dims()[1:]...)...),
		xb.Reshape(xws[1], append([]int64{xws[1].Dims()[0], 1}, xws[1].Dims()[1:]...)...)) // [T, 2, B, GH]
	y, h, cst = rnnUnrolled(b, &inv, xw, stack(hs), stack(cs), false)
	return y, h, cst
}

// rnnUnrolled runs the recurrence as straight-line code. It returns Y
// [T, B, H] in time order and the final h and c.
func rnnUnrolled(b *xb.Builder, inv *rnnInv, xw, h, cst *xb.Op, reverse bool) (y, hn, cn *xb.Op) {
	T := xw.Dims()[0]
	ys := make([]*xb.Op, T)
	for k := int64(0); k < T; k++ {
		t := k
		if reverse {
			t = T - 1 - k
		}
		xt := xb.Reshape(xb.SliceAxis(xw, 0, t, t+1), xw.Dims()[1:]...)
		var yt *xb.Op
		h, cst, yt = inv.step(xt, h, cst, b.ScalarOf(hlo.S32, float64(t)))
		ys[t] = xb.Reshape(yt, append([]int64{1}, h.Dims()...)...)
	}
	return xb.Concatenate(0, ys...), h, cst
}

// rnnWhile runs the recurrence as an HLO while loop whose state is (step,
// h, c, XW, Y, invariants...).
func rnnWhile(b *xb.Builder, inv *rnnInv, rebuild func(sb *xb.Builder) *rnnInv, xw, h, cst *xb.Op, reverse, wantY bool) (y, hn, cn *xb.Op) {
	d := xw.Dims()
	T, bsz, gh := d[0], d[1], d[2]
	hid := h.Dims()[1]
	dt := h.DType()
	// Each iteration runs K steps unrolled: the carried state is copied
	// once per K steps; the T mod K steps left run unrolled after the loop.
	K := max(min(rnnChunk, T), 1)
	iters := T / K
	state := []*xb.Op{b.ScalarOf(hlo.S32, 0), h, xw}
	hasC := cst != nil
	if hasC {
		state = append(state, cst)
	}
	if wantY {
		state = append(state, b.Full(dt, 0, T, bsz, hid))
	}
	nFixed := len(state)
	carried := inv
	if rebuild != nil {
		// Only the lengths are carried; the weights are constants of the body.
		carried = &rnnInv{Lens: inv.Lens}
	}
	state = append(state, carried.list()...)
	res := xb.While(b.Tuple(state...),
		func(sb *xb.Builder, s *xb.Op) *xb.Op {
			return xb.Lt(xb.GetTupleElement(s, 0), sb.ScalarOf(hlo.S32, float64(iters*K)))
		},
		func(sb *xb.Builder, s *xb.Op) *xb.Op {
			el := xb.Split(s)
			i, h, xw := el[0], el[1], el[2]
			k := 3
			var cst, yacc *xb.Op
			if hasC {
				cst = el[k]
				k++
			}
			if wantY {
				yacc = el[k]
			}
			var v *rnnInv
			if rebuild == nil {
				v = inv.rebind(el[nFixed:])
			} else {
				v = rebuild(sb)
				v.Lens = carried.rebind(el[nFixed:]).Lens
			}
			zero := sb.ScalarOf(hlo.S32, 0)
			// The chunk's time indices are start..start+K-1 (reversed
			// within the chunk for the reverse direction).
			start := i
			if reverse {
				start = xb.Sub(sb.ScalarOf(hlo.S32, float64(T-K)), i)
			}
			chunk := xb.DynamicSlice(xw, []*xb.Op{start, zero, zero}, K, bsz, gh)
			hn, cn := h, cst
			yts := make([]*xb.Op, K)
			for k := int64(0); k < K; k++ {
				t := k
				if reverse {
					t = K - 1 - k
				}
				idx := xb.Add(start, sb.ScalarOf(hlo.S32, float64(t)))
				xt := xb.Reshape(xb.SliceAxis(chunk, 0, t, t+1), bsz, gh)
				var yt *xb.Op
				hn, cn, yt = v.step(xt, hn, cn, idx)
				yts[t] = xb.Reshape(yt, 1, bsz, hid)
			}
			if wantY {
				yacc = xb.DynamicUpdateSlice(yacc, xb.Concatenate(0, yts...), start, zero, zero)
			}
			out := []*xb.Op{xb.Add(i, sb.ScalarOf(hlo.S32, float64(K))), hn, xw}
			if hasC {
				out = append(out, cn)
			}
			if wantY {
				out = append(out, yacc)
			}
			out = append(out, el[nFixed:]...)
			return sb.Tuple(out...)
		})
	hn = xb.GetTupleElement(res, 1)
	k := 3
	if hasC {
		cn = xb.GetTupleElement(res, k)
		k++
	}
	if wantY {
		y = xb.GetTupleElement(res, k)
	} else {
		y = b.Full(dt, 0, T, bsz, hid)
	}
	zero := b.ScalarOf(hlo.S32, 0)
	for i := iters * K; i < T; i++ {
		idx := i
		if reverse {
			idx = T - 1 - i
		}
		xt := xb.Reshape(xb.SliceAxis(xw, 0, idx, idx+1), bsz, gh)
		var yt *xb.Op
		hn, cn, yt = inv.step(xt, hn, cn, b.ScalarOf(hlo.S32, float64(idx)))
		if wantY {
			y = xb.DynamicUpdateSlice(y, xb.Reshape(yt, 1, bsz, hid), b.ScalarOf(hlo.S32, float64(idx)), zero, zero)
		}
	}
	return y, hn, cn
}
