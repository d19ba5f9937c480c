// Package randhlo generates random, well-typed HLO modules for
// differential testing: the pass pipeline against the evaluator now, the
// CPU backend against the evaluator later. Modules are written as HLO text
// and parsed, so every generated module also goes through the parser and
// verifier.
package randhlo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// Options bound the generated modules.
type Options struct {
	// Instructions is the number of generated instructions (parameters
	// and constants included); 0 means 12.
	Instructions int
	// MaxDim bounds each dimension size; 0 means 5.
	MaxDim int
}

type value struct {
	name string
	t    hlo.DType
	dims []int64
}

func (v value) shape() string {
	d := make([]string, len(v.dims))
	for i, n := range v.dims {
		d[i] = fmt.Sprint(n)
	}
	return fmt.Sprintf("%s[%s]", v.t, strings.Join(d, ","))
}

type gen struct {
	rng    *rand.Rand
	opts   Options
	vals   []value
	body   strings.Builder
	comps  strings.Builder // while bodies and conditions
	params int
	n      int
}

// Module returns the random module of the given seed; the same seed gives
// the same module.
func Module(seed uint64, opts Options) (*hlo.Module, error) {
	text := Text(seed, opts)
	m, err := hlotext.Parse(text, hlotext.Options{File: fmt.Sprintf("randhlo-%d.hlo", seed)})
	if err != nil {
		return nil, fmt.Errorf("generated module does not parse (a generator bug): %w\n%s", err, text)
	}
	if err := hlo.Verify(m); err != nil {
		return nil, fmt.Errorf("generated module does not verify (a generator bug): %w\n%s", err, text)
	}
	return m, nil
}

// Text is the HLO text of the random module of the given seed.
func Text(seed uint64, opts Options) string {
	if opts.Instructions <= 0 {
		opts.Instructions = 12
	}
	if opts.MaxDim <= 0 {
		opts.MaxDim = 5
	}
	g := &gen{rng: rand.New(rand.NewPCG(seed, 0xa11e)), opts: opts}
	g.param(g.randType(), g.randDims(1+g.rng.IntN(3)))
	for g.n < opts.Instructions {
		g.step()
	}
	root, extra := g.pick(), g.pick()
	fmt.Fprintf(&g.body, "  ROOT result = (%s, %s) tuple(%s, %s)\n", root.shape(), extra.shape(), root.name, extra.name)
	return "HloModule randhlo\n\n" + reducers + fmt.Sprintf(perType, "f32") + fmt.Sprintf(perType, "s32") + g.comps.String() + "ENTRY main {\n" + g.body.String() + "}\n"
}

const reducers = `add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}

add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

max_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] maximum(a, b)
}

`

// perType holds the computations written once per element type (%[1]s):
// JAX's argmax reducer and a comparator on a key and an s32 payload.
const perType = `argmax_%[1]s {
  a = %[1]s[] parameter(0)
  i = s32[] parameter(1)
  b = %[1]s[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  nan = pred[] compare(a, a), direction=NE
  keep = pred[] or(gt, nan)
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lt)
  k = pred[] or(keep, tie)
  v = %[1]s[] select(k, a, b)
  x = s32[] select(k, i, j)
  ROOT r = (%[1]s[], s32[]) tuple(v, x)
}

by_two_keys_%[1]s {
  a = %[1]s[] parameter(0)
  b = %[1]s[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  lt = pred[] compare(a, b), direction=LT
  eq = pred[] compare(a, b), direction=EQ
  gt2 = pred[] compare(c, d), direction=GT
  tie = pred[] and(eq, gt2)
  ROOT r = pred[] or(lt, tie)
}

`

func (g *gen) randType() hlo.DType {
	if g.rng.IntN(4) == 0 {
		return hlo.S32
	}
	return hlo.F32
}

func (g *gen) randDims(rank int) []int64 {
	d := make([]int64, rank)
	for i := range d {
		d[i] = int64(1 + g.rng.IntN(g.opts.MaxDim))
	}
	return d
}

// emit adds an instruction and its value.
func (g *gen) emit(t hlo.DType, dims []int64, format string, args ...any) value {
	v := value{name: fmt.Sprintf("v%d", g.n), t: t, dims: dims}
	fmt.Fprintf(&g.body, "  %s = %s %s\n", v.name, v.shape(), fmt.Sprintf(format, args...))
	g.vals = append(g.vals, v)
	g.n++
	return v
}

func (g *gen) param(t hlo.DType, dims []int64) value {
	v := g.emit(t, dims, "parameter(%d)", g.params)
	g.params++
	return v
}

// pick returns a recent value (recent ones more often, so chains form).
func (g *gen) pick() value {
	for {
		n := len(g.vals)
		v := g.vals[n-1-min(g.rng.IntN(3)*g.rng.IntN(n), n-1)]
		if v.t != hlo.Pred {
			return v
		}
	}
}

// like returns a value of the same type and dimensions as v: an existing
// one, a broadcast scalar constant, or a new parameter.
func (g *gen) like(v value) value {
	for _, w := range slices.Backward(g.vals) {
		if w.name != v.name && w.t == v.t && slices.Equal(w.dims, v.dims) && g.rng.IntN(2) == 0 {
			return w
		}
	}
	if g.rng.IntN(2) == 0 {
		c := g.emit(v.t, nil, "constant(%s)", g.scalarText(v.t))
		return g.emit(v.t, v.dims, "broadcast(%s), dimensions={}", c.name)
	}
	return g.param(v.t, v.dims)
}

func (g *gen) scalarText(t hlo.DType) string {
	if t == hlo.S32 {
		return fmt.Sprint(g.rng.IntN(7) - 3)
	}
	return fmt.Sprintf("%.2f", g.rng.Float64()*4-2)
}

func (g *gen) step() {
	v := g.pick()
	if g.rng.IntN(4) == 0 {
		g.movement(v)
		return
	}
	switch g.rng.IntN(10) {
	case 0, 1:
		g.binary(v)
	case 2:
		g.unary(v)
	case 3:
		g.broadcast(v)
	case 4:
		g.reshape(v)
	case 5:
		g.transpose(v)
	case 6:
		g.slice(v)
	case 7:
		switch g.rng.IntN(6) {
		case 0, 1, 2:
			g.rowNorm(v)
		case 3:
			g.sortPair(v)
		default:
			g.reduce(v)
		}
	case 8:
		g.dot(v)
	default:
		g.selectOp(v)
	}
}

func (g *gen) binary(v value) {
	w := g.like(v)
	ops := []string{"add", "subtract", "multiply", "maximum", "minimum"}
	op := ops[g.rng.IntN(len(ops))]
	a, b := v, w
	if g.rng.IntN(2) == 0 {
		a, b = w, v
	}
	g.emit(v.t, v.dims, "%s(%s, %s)", op, a.name, b.name)
}

func (g *gen) unary(v value) {
	// Only functions that do not amplify rounding differences: the
	// optimizer and the backends may legitimately round sums differently
	// (reassociation, f32 accumulation), and sine of a large sum or floor
	// near an integer would turn that into a different answer.
	ops := []string{"negate", "abs"}
	if v.t == hlo.F32 {
		ops = append(ops, "tanh", "logistic", "exponential")
	}
	g.emit(v.t, v.dims, "%s(%s)", ops[g.rng.IntN(len(ops))], v.name)
}

func (g *gen) broadcast(v value) {
	if len(v.dims) >= 4 {
		g.unary(v)
		return
	}
	// Insert one new dimension at a random position.
	at := g.rng.IntN(len(v.dims) + 1)
	dims := slices.Insert(slices.Clone(v.dims), at, int64(1+g.rng.IntN(g.opts.MaxDim)))
	var pos []string
	for i := range v.dims {
		p := i
		if i >= at {
			p++
		}
		pos = append(pos, fmt.Sprint(p))
	}
	g.emit(v.t, dims, "broadcast(%s), dimensions={%s}", v.name, strings.Join(pos, ","))
}

func (g *gen) reshape(v value) {
	n := int64(1)
	for _, d := range v.dims {
		n *= d
	}
	// Split n into up to three random factors.
	var dims []int64
	for len(dims) < 2 && n > 1 {
		var divs []int64
		for d := int64(2); d <= n; d++ {
			if n%d == 0 {
				divs = append(divs, d)
			}
		}
		d := divs[g.rng.IntN(len(divs))]
		dims = append(dims, d)
		n /= d
	}
	dims = append(dims, n)
	g.emit(v.t, dims, "reshape(%s)", v.name)
}

func (g *gen) transpose(v value) {
	perm := g.rng.Perm(len(v.dims))
	dims := make([]int64, len(perm))
	ps := make([]string, len(perm))
	for i, p := range perm {
		dims[i] = v.dims[p]
		ps[i] = fmt.Sprint(p)
	}
	g.emit(v.t, dims, "transpose(%s), dimensions={%s}", v.name, strings.Join(ps, ","))
}

func (g *gen) slice(v value) {
	if len(v.dims) == 0 {
		g.unary(v)
		return
	}
	dims := make([]int64, len(v.dims))
	parts := make([]string, len(v.dims))
	for i, n := range v.dims {
		start := int64(g.rng.IntN(int(n)))
		limit := start + 1 + int64(g.rng.IntN(int(n-start)))
		stride := int64(1 + g.rng.IntN(2))
		dims[i] = (limit - start + stride - 1) / stride
		parts[i] = fmt.Sprintf("[%d:%d:%d]", start, limit, stride)
	}
	g.emit(v.t, dims, "slice(%s), slice={%s}", v.name, strings.Join(parts, ", "))
}

func (g *gen) reduce(v value) {
	if len(v.dims) == 0 {
		g.unary(v)
		return
	}
	var red, keep []int64
	var redNames []string
	for i, d := range v.dims {
		if g.rng.IntN(2) == 0 || (i == len(v.dims)-1 && len(red) == 0) {
			red = append(red, int64(i))
			redNames = append(redNames, fmt.Sprint(i))
		} else {
			keep = append(keep, d)
		}
	}
	if g.rng.IntN(4) == 0 {
		g.argmax(v, red, redNames, keep)
		return
	}
	comp, init := "add", "0"
	if g.rng.IntN(2) == 0 {
		comp, init = "max", map[hlo.DType]string{hlo.F32: "-inf", hlo.S32: "-2147483648"}[v.t]
	}
	c := g.emit(v.t, nil, "constant(%s)", init)
	g.emit(v.t, keep, "reduce(%s, %s), dimensions={%s}, to_apply=%s_%s", v.name, c.name, strings.Join(redNames, ","), comp, v.t)
}

// argmax folds a new parameter shaped like v and an iota along one of
// the reduced dimensions with JAX's argmax reducer (a variadic reduce
// whose reducer is a dozen ops). The values are a parameter so that both
// backends see the same bits: a tie broken by rounding would move the
// index anywhere.
func (g *gen) argmax(v value, red []int64, redNames []string, keep []int64) {
	x := g.param(v.t, v.dims)
	io := g.emit(hlo.S32, v.dims, "iota(), iota_dimension=%d", red[g.rng.IntN(len(red))])
	lowest := map[hlo.DType]string{hlo.F32: "-inf", hlo.S32: "-2147483648"}[v.t]
	init := g.emit(v.t, nil, "constant(%s)", lowest)
	zero := g.emit(hlo.S32, nil, "constant(0)")
	name := fmt.Sprintf("v%d", g.n)
	g.n++
	vals, idx := value{t: v.t, dims: keep}, value{t: hlo.S32, dims: keep}
	fmt.Fprintf(&g.body, "  %s = (%s, %s) reduce(%s, %s, %s, %s), dimensions={%s}, to_apply=argmax_%s\n",
		name, vals.shape(), idx.shape(), x.name, io.name, init.name, zero.name, strings.Join(redNames, ","), v.t)
	g.emit(v.t, keep, "get-tuple-element(%s), index=0", name)
	g.emit(hlo.S32, keep, "get-tuple-element(%s), index=1", name)
}

// sortPair sorts a new parameter shaped like v, with an s32 payload,
// along one dimension by a comparator on both (the keys first, then the
// payload descending): a sort no one-compare kernel takes. New
// parameters, as in argmax, so equal keys are equal on both backends.
func (g *gen) sortPair(v value) {
	if len(v.dims) == 0 {
		g.unary(v)
		return
	}
	x, y := g.param(v.t, v.dims), g.param(hlo.S32, v.dims)
	name := fmt.Sprintf("v%d", g.n)
	g.n++
	pay := value{t: hlo.S32, dims: v.dims}
	fmt.Fprintf(&g.body, "  %s = (%s, %s) sort(%s, %s), dimensions={%d}, to_apply=by_two_keys_%s\n",
		name, v.shape(), pay.shape(), x.name, y.name, g.rng.IntN(len(v.dims)), v.t)
	g.emit(v.t, v.dims, "get-tuple-element(%s), index=0", name)
	g.emit(hlo.S32, v.dims, "get-tuple-element(%s), index=1", name)
}

// rowNorm reduces v's trailing dimensions and reads the result back
// along them (v minus its row maximum or sum, perhaps scaled by a
// parameter broadcast over the rows): the shape of softmax and layer
// norm, which backends fuse into one row program.
func (g *gen) rowNorm(v value) {
	if len(v.dims) == 0 {
		g.unary(v)
		return
	}
	k := 1 + g.rng.IntN(len(v.dims)) // trailing dimensions folded
	lead := len(v.dims) - k
	var red, keep []string
	for i := range v.dims {
		if i >= lead {
			red = append(red, fmt.Sprint(i))
		} else {
			keep = append(keep, fmt.Sprint(i))
		}
	}
	comp, init := "add", "0"
	if g.rng.IntN(2) == 0 {
		comp, init = "max", map[hlo.DType]string{hlo.F32: "-inf", hlo.S32: "-2147483648"}[v.t]
	}
	c := g.emit(v.t, nil, "constant(%s)", init)
	r := g.emit(v.t, v.dims[:lead], "reduce(%s, %s), dimensions={%s}, to_apply=%s_%s", v.name, c.name, strings.Join(red, ","), comp, v.t)
	b := g.emit(v.t, v.dims, "broadcast(%s), dimensions={%s}", r.name, strings.Join(keep, ","))
	d := g.emit(v.t, v.dims, "subtract(%s, %s)", v.name, b.name)
	if g.rng.IntN(2) == 0 {
		p := g.param(v.t, v.dims[lead:])
		pb := g.emit(v.t, v.dims, "broadcast(%s), dimensions={%s}", p.name, strings.Join(red, ","))
		g.emit(v.t, v.dims, "multiply(%s, %s)", d.name, pb.name)
	}
}

// dot contracts v's last dimension with a new or existing operand.
func (g *gen) dot(v value) {
	if len(v.dims) == 0 || len(v.dims) > 2 {
		g.reduce(v)
		return
	}
	k := v.dims[len(v.dims)-1]
	n := int64(1 + g.rng.IntN(g.opts.MaxDim))
	w := g.like(value{t: v.t, dims: []int64{k, n}})
	dims := append(slices.Clone(v.dims[:len(v.dims)-1]), n)
	g.emit(v.t, dims, "dot(%s, %s), lhs_contracting_dims={%d}, rhs_contracting_dims={0}", v.name, w.name, len(v.dims)-1)
}

func (g *gen) selectOp(v value) {
	w := g.like(v)
	dirs := []string{"LT", "GT", "LE", "GE", "EQ", "NE"}
	p := g.emit(hlo.Pred, v.dims, "compare(%s, %s), direction=%s", v.name, w.name, dirs[g.rng.IntN(len(dirs))])
	g.emit(v.t, v.dims, "select(%s, %s, %s)", p.name, w.name, v.name)
}

// movement emits one of the rarer data-movement and control ops.
func (g *gen) movement(v value) {
	if len(v.dims) == 0 {
		g.unary(v)
		return
	}
	switch g.rng.IntN(6) {
	case 0:
		g.concatenate(v)
	case 1:
		g.pad(v)
	case 2:
		d := g.rng.IntN(len(v.dims))
		g.emit(v.t, v.dims, "reverse(%s), dimensions={%d}", v.name, d)
	case 3:
		g.updateSlice(v)
	case 4:
		g.gather(v)
	default:
		g.while(v)
	}
}

func (g *gen) concatenate(v value) {
	w := g.like(v)
	d := g.rng.IntN(len(v.dims))
	dims := slices.Clone(v.dims)
	dims[d] *= 2
	g.emit(v.t, dims, "concatenate(%s, %s), dimensions={%d}", v.name, w.name, d)
}

// pad with small edges, negative ones included, and interior padding.
func (g *gen) pad(v value) {
	c := g.emit(v.t, nil, "constant(%s)", g.scalarText(v.t))
	dims := make([]int64, len(v.dims))
	parts := make([]string, len(v.dims))
	for i, n := range v.dims {
		lo, hi, in := int64(g.rng.IntN(3)-1), int64(g.rng.IntN(3)-1), int64(g.rng.IntN(2))
		size := lo + hi + n + max(n-1, 0)*in
		if size < 1 {
			lo, hi = 0, 0
			size = n + max(n-1, 0)*in
		}
		dims[i] = size
		parts[i] = fmt.Sprintf("%d_%d_%d", lo, hi, in)
	}
	g.emit(v.t, dims, "pad(%s, %s), padding=%s", v.name, c.name, strings.Join(parts, "x"))
}

// updateSlice writes a slice of v (or a broadcast constant) back into v
// at constant starts, out-of-range ones included (they clamp).
func (g *gen) updateSlice(v value) {
	sub := make([]int64, len(v.dims))
	var starts []string
	for i, n := range v.dims {
		sub[i] = int64(1 + g.rng.IntN(int(n)))
		s := g.emit(hlo.S32, nil, "constant(%d)", g.rng.IntN(int(n)+2)-1)
		starts = append(starts, s.name)
	}
	u := g.like(value{t: v.t, dims: sub})
	g.emit(v.t, v.dims, "dynamic-update-slice(%s, %s, %s)", v.name, u.name, strings.Join(starts, ", "))
}

// gather looks up rows of v (an embedding lookup) by constant indices,
// out-of-range ones included.
func (g *gen) gather(v value) {
	k := 1 + g.rng.IntN(4)
	idx := make([]string, k)
	for i := range idx {
		idx[i] = fmt.Sprint(g.rng.IntN(int(v.dims[0])+2) - 1)
	}
	ix := g.emit(hlo.S32, []int64{int64(k)}, "constant({%s})", strings.Join(idx, ", "))
	offsets, sizes := []string{}, []string{"1"}
	for i, d := range v.dims[1:] {
		offsets = append(offsets, fmt.Sprint(i+1))
		sizes = append(sizes, fmt.Sprint(d))
	}
	dims := append([]int64{int64(k)}, v.dims[1:]...)
	g.emit(v.t, dims, "gather(%s, %s), offset_dims={%s}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={%s}",
		v.name, ix.name, strings.Join(offsets, ","), strings.Join(sizes, ","))
}

// while runs 1 to 3 iterations of x = x·c + w over a counter.
func (g *gen) while(v value) {
	w := g.like(v)
	n := 1 + g.rng.IntN(3)
	id := g.n
	st := fmt.Sprintf("(s32[], %s, %s)", v.shape(), v.shape())
	fmt.Fprintf(&g.comps, `cond_%d {
  s = %s parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(%d)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body_%d {
  s = %s parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = %s get-tuple-element(s), index=1
  w = %s get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  c = %s constant(%s)
  cb = %s broadcast(c), dimensions={}
  xc = %s multiply(x, cb)
  y = %s add(xc, w)
  ROOT r = %s tuple(j, y, w)
}

`, id, st, n, id, st, v.shape(), v.shape(), value{t: v.t}.shape(), g.scalarText(v.t), v.shape(), v.shape(), v.shape(), st)
	zero := g.emit(hlo.S32, nil, "constant(0)")
	init := fmt.Sprintf("  v%d = %s tuple(%s, %s, %s)\n", g.n, st, zero.name, v.name, w.name)
	g.body.WriteString(init)
	t := g.n
	g.n++
	loop := g.n
	fmt.Fprintf(&g.body, "  v%d = %s while(v%d), condition=cond_%d, body=body_%d\n", loop, st, t, id, id)
	g.n++
	g.emit(v.t, v.dims, "get-tuple-element(v%d), index=1", loop)
}
