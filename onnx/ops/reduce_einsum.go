package ops

import (
	"slices"
	"sort"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// Einsum: the equation is parsed into labels per operand (ellipsis
// dimensions get labels of their own, right-aligned); each operand's
// repeated labels become diagonals, labels used nowhere else are summed
// out, operands are contracted pairwise with DotGeneral, and the result
// is transposed to the output's order.

func init() {
	Register(Op{Name: "Einsum", Lower: lowerEinsum})
}

// esTerm splits a term into labels; "..." becomes the single marker '.'.
func esTerm(s string) ([]rune, bool) {
	var out []rune
	for i := 0; i < len(s); {
		switch ch := rune(s[i]); {
		case strings.HasPrefix(s[i:], "..."):
			if slices.Contains(out, '.') {
				return nil, false
			}
			out = append(out, '.')
			i += 3
		case ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			out = append(out, ch)
			i++
		default:
			return nil, false
		}
	}
	return out, true
}

// esEllipsis is the label of ellipsis dimension j (of e in all).
func esEllipsis(j int) rune { return rune(0x10000 + j) }

// esExpand replaces the ellipsis marker by the labels of its last e of
// ne ellipsis dimensions.
func esExpand(term []rune, e, ne int) []rune {
	var out []rune
	for _, l := range term {
		if l != '.' {
			out = append(out, l)
			continue
		}
		for j := ne - e; j < ne; j++ {
			out = append(out, esEllipsis(j))
		}
	}
	return out
}

type esOperand struct {
	x      *xb.Op
	labels []rune
}

func lowerEinsum(c *Ctx) error {
	eq := strings.ReplaceAll(c.Node.Str("equation", ""), " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(c.In) {
		return c.Errorf("equation %q has %d operands, the node %d", eq, len(terms), len(c.In))
	}
	ops := make([]esOperand, len(terms))
	ne := 0
	raw := make([][]rune, len(terms))
	ell := make([]int, len(terms))
	for i, s := range terms {
		tm, ok := esTerm(s)
		if !ok {
			return c.Errorf("bad equation %q", eq)
		}
		x := c.Input(i)
		if x == nil {
			return c.Errorf("input %d is missing", i)
		}
		n := len(tm)
		if slices.Contains(tm, '.') {
			n--
			ell[i] = x.Rank() - n
			if ell[i] < 0 {
				return c.Errorf("term %q does not fit rank %d", s, x.Rank())
			}
		} else if n != x.Rank() {
			return c.Errorf("term %q does not fit rank %d", s, x.Rank())
		}
		ne = max(ne, ell[i])
		raw[i] = tm
		ops[i].x = x
	}
	size := map[rune]int64{}
	count := map[rune]int{}
	for i := range ops {
		ops[i].labels = esExpand(raw[i], ell[i], ne)
		for k, l := range ops[i].labels {
			d := ops[i].x.Dims()[k]
			if s, ok := size[l]; !ok || s == 1 {
				size[l] = d
			} else if d != s && d != 1 {
				return c.Errorf("label %q has sizes %d and %d", l, s, d)
			}
			count[l]++
		}
	}
	var out []rune
	if explicit {
		tm, ok := esTerm(rhs)
		if !ok {
			return c.Errorf("bad equation %q", eq)
		}
		out = esExpand(tm, ne, ne)
		for _, l := range out {
			if _, ok := size[l]; !ok {
				return c.Errorf("output label %q is not in the inputs", l)
			}
		}
	} else {
		for j := range ne {
			out = append(out, esEllipsis(j))
		}
		var single []rune
		for l, n := range count {
			if n == 1 && l < 0x10000 {
				single = append(single, l)
			}
		}
		sort.Slice(single, func(a, b int) bool { return single[a] < single[b] })
		out = append(out, single...)
	}
	t := ops[0].x.DType()
	for i := range ops {
		if ops[i].x.DType() != t {
			return c.Errorf("operand types differ")
		}
		ops[i] = esDiagonals(c, ops[i])
		ops[i] = esStretch(ops[i], size)
	}
	// needed reports whether label l is used by the output or an operand
	// after index i.
	needed := func(l rune, i int) bool {
		if slices.Contains(out, l) {
			return true
		}
		for j := i + 1; j < len(ops); j++ {
			if slices.Contains(ops[j].labels, l) {
				return true
			}
		}
		return false
	}
	cur := esSumOut(ops[0], func(l rune) bool { return needed(l, 0) })
	for i := 1; i < len(ops); i++ {
		o := ops[i]
		// Labels of o alone and not needed later are summed out.
		o = esSumOut(o, func(l rune) bool { return needed(l, i) || slices.Contains(cur.labels, l) })
		cur = esSumOut(cur, func(l rune) bool { return needed(l, i) || slices.Contains(o.labels, l) })
		var dd xb.DotDims
		var batch []rune
		for k, l := range cur.labels {
			j := slices.Index(o.labels, l)
			if j < 0 {
				continue
			}
			if needed(l, i) {
				dd.LhsBatch = append(dd.LhsBatch, int64(k))
				dd.RhsBatch = append(dd.RhsBatch, int64(j))
				batch = append(batch, l)
			} else {
				dd.LhsContracting = append(dd.LhsContracting, int64(k))
				dd.RhsContracting = append(dd.RhsContracting, int64(j))
			}
		}
		labels := slices.Clone(batch)
		for _, l := range cur.labels {
			if !slices.Contains(o.labels, l) {
				labels = append(labels, l)
			}
		}
		for _, l := range o.labels {
			if !slices.Contains(cur.labels, l) {
				labels = append(labels, l)
			}
		}
		cur = esOperand{x: xb.DotGeneral(cur.x, o.x, dd), labels: labels}
	}
	cur = esSumOut(cur, func(l rune) bool { return slices.Contains(out, l) })
	perm := make([]int64, len(out))
	for k, l := range out {
		j := slices.Index(cur.labels, l)
		if j < 0 {
			return c.Errorf("output label %q lost", l)
		}
		perm[k] = int64(j)
	}
	y := cur.x
	if !slices.Equal(perm, nmTrailingAxes(0, len(perm))) {
		y = xb.Transpose(y, perm...)
	}
	c.Set(0, y)
	return nil
}

// esDiagonals takes the diagonal of every repeated label of o.
func esDiagonals(c *Ctx, o esOperand) esOperand {
	for {
		i, j := -1, -1
		for a := range o.labels {
			for b := a + 1; b < len(o.labels); b++ {
				if o.labels[a] == o.labels[b] && i < 0 {
					i, j = a, b
				}
			}
		}
		if i < 0 {
			return o
		}
		dims := o.x.Dims()
		mask := xb.Eq(c.B.Iota(hlo.S64, int64(i), dims...), c.B.Iota(hlo.S64, int64(j), dims...))
		var x *xb.Op
		if o.x.DType().IsPred() {
			x = xb.ReduceMax(xb.And(mask, o.x), int64(j))
		} else {
			x = xb.ReduceSum(xb.Select(mask, o.x, FullLike(o.x, 0)), int64(j))
		}
		o = esOperand{x: x, labels: slices.Delete(slices.Clone(o.labels), j, j+1)}
	}
}

// esStretch broadcasts o's size-1 dimensions to their label's size.
func esStretch(o esOperand, size map[rune]int64) esOperand {
	dims := o.x.Dims()
	want := make([]int64, len(dims))
	for k, l := range o.labels {
		want[k] = size[l]
	}
	if !slices.Equal(dims, want) {
		o.x = xb.BroadcastTo(o.x, want...)
	}
	return o
}

// esSumOut sums o over the labels for which keep is false.
func esSumOut(o esOperand, keep func(rune) bool) esOperand {
	var axes []int64
	var labels []rune
	for k, l := range o.labels {
		if keep(l) {
			labels = append(labels, l)
		} else {
			axes = append(axes, int64(k))
		}
	}
	if len(axes) == 0 {
		return o
	}
	return esOperand{x: xb.ReduceSum(o.x, axes...), labels: labels}
}
