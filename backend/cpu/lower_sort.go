package cpu

import (
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/minifloat"
)

// Sort compiles when its comparator is one compare of the first
// operand's two parameters. The keys are widened once to int64, uint64
// or float64 (exact for every type), and each row's permutation is found
// by slices.SortStableFunc with the evaluator's three-way function built
// from the same "less" outcomes: the stable merge sort is deterministic
// in those outcomes, so ties and NaNs (unordered with everything under
// IEEE compare) land exactly where the evaluator puts them. The other
// operands follow the permutation as raw words.

// sortOrder is the comparator: keys a sort before b when
// lt && a<b || eq && a==b || gt && a>b (IEEE for floats, so never with NaN).
type sortOrder struct{ lt, eq, gt bool }

// sortComparator recognises root compare(p0, p1) or compare(p1, p0) on
// the first operand's parameters; total says type=TOTALORDER.
func sortComparator(c *hlo.Computation, t hlo.DType) (ord sortOrder, total, ok bool) {
	if c == nil || c.Root == nil || c.Root.Opcode != hlo.OpCompare || len(c.Root.Operands) != 2 {
		return ord, false, false
	}
	a, b := c.Root.Operands[0], c.Root.Operands[1]
	if a.Opcode != hlo.OpParameter || b.Opcode != hlo.OpParameter || a.Shape.DType != t || b.Shape.DType != t {
		return ord, false, false
	}
	swap := false
	switch {
	case a.ParamNumber == 0 && b.ParamNumber == 1:
	case a.ParamNumber == 1 && b.ParamNumber == 0:
		swap = true
	default:
		return ord, false, false
	}
	dir, _ := c.Root.EnumAttr("direction")
	switch dir {
	case "LT":
		ord = sortOrder{lt: true}
	case "LE":
		ord = sortOrder{lt: true, eq: true}
	case "GT":
		ord = sortOrder{gt: true}
	case "GE":
		ord = sortOrder{gt: true, eq: true}
	default:
		return ord, false, false
	}
	if swap {
		ord.lt, ord.gt = ord.gt, ord.lt
	}
	typ, _ := c.Root.EnumAttr("type")
	if typ == "TOTALORDER" && !t.IsFloat() {
		typ = ""
	}
	return ord, typ == "TOTALORDER", true
}

// sortPlan is a sort's layout: rows of n elements stride apart, starting
// at the bases of outer blocks (each inner elements wide).
type sortPlan struct {
	outer, n, inner int
	keys            func(l *hlo.Literal) any
	ord             sortOrder
	expr            *sortExpr // the comparator, when it is not one compare
	lanes           *laneProg // the comparator, when it has other ops
	moves           []func(dst, src *hlo.Literal, perm []int, base int)
	threads         int
}

// lowerSortKernel returns a kernel computing a sort's whole result (a
// tuple for several operands), or false when the comparator or the types
// are not handled.
func lowerSortKernel(in *hlo.Instruction, threads int) (func(ops []*hlo.Literal) (*hlo.Literal, error), bool) {
	pl, leaves, ok := planSort(in, threads)
	if !ok {
		return nil, false
	}
	return func(ops []*hlo.Literal) (*hlo.Literal, error) {
		outs := make([]*hlo.Literal, len(leaves))
		for i, s := range leaves {
			outs[i] = hlo.NewLiteral(s)
		}
		if err := pl.run(outs, ops); err != nil {
			return nil, err
		}
		if in.Shape.IsTuple() {
			return hlo.MakeTupleLiteral(outs...), nil
		}
		return outs[0], nil
	}, true
}

// lowerSort returns a kernel for a sort with an array result (one
// operand), or false.
func lowerSort(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if in.Shape.IsTuple() {
		return nil, false
	}
	pl, _, ok := planSort(in, threads)
	if !ok {
		return nil, false
	}
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		return pl.run([]*hlo.Literal{out}, ops)
	}, true
}

func planSort(in *hlo.Instruction, threads int) (*sortPlan, []hlo.Shape, bool) {
	if len(in.Operands) == 0 {
		return nil, nil, false
	}
	leaves := []hlo.Shape{in.Shape}
	if in.Shape.IsTuple() {
		leaves = in.Shape.Tuple
	}
	if len(leaves) != len(in.Operands) {
		return nil, nil, false
	}
	s := in.Operands[0].Shape
	for i, o := range in.Operands {
		if !plainArray(o.Shape) || !plainArray(leaves[i]) || !slices.Equal(o.Shape.Dims, s.Dims) ||
			!slices.Equal(leaves[i].Dims, s.Dims) || leaves[i].DType != o.Shape.DType {
			return nil, nil, false
		}
	}
	dim := 0
	if d := in.Dimensions(); len(d) > 0 {
		dim = int(d[0])
	}
	if dim < 0 || dim >= max(s.Rank(), 1) {
		return nil, nil, false
	}
	t := s.DType
	pl := &sortPlan{outer: 1, n: 1, inner: 1, threads: threads}
	if ord, total, ok := sortComparator(in.Computation("to_apply"), t); ok {
		pl.ord, pl.keys = ord, sortKeys(t, total)
	}
	if pl.keys == nil {
		types := make([]hlo.DType, len(in.Operands))
		for k, o := range in.Operands {
			types[k] = o.Shape.DType
		}
		pl.expr, _ = compileSortExpr(in.Computation("to_apply"), types)
	}
	if pl.keys == nil && pl.expr == nil {
		p, ok := sortLanes(in)
		if !ok {
			return nil, nil, false
		}
		pl.lanes = p
	}
	for i, d := range s.Dims {
		switch {
		case i < dim:
			pl.outer *= int(d)
		case i == dim:
			pl.n = int(d)
		default:
			pl.inner *= int(d)
		}
	}
	for _, o := range in.Operands {
		m := sortMove(o.Shape.DType, pl.inner)
		if m == nil {
			return nil, nil, false
		}
		pl.moves = append(pl.moves, m)
	}
	return pl, leaves, true
}

// sortKeys returns the function widening a literal's elements to sort
// keys ([]int64, []uint64 or []float64), or nil for other types.
func sortKeys(t hlo.DType, total bool) func(l *hlo.Literal) any {
	if total {
		w := t.Bits()
		return func(l *hlo.Literal) any { return totalKeys(l, w) }
	}
	if t.IsFloat() && t != hlo.F32 && t != hlo.F64 {
		f, ok := minifloat.ByName(t.String())
		if !ok {
			return nil
		}
		tab := f.Values()
		return func(l *hlo.Literal) any {
			switch d := l.Data().(type) {
			case []uint16:
				return widen(d, func(b uint16) float64 { return tab[b] })
			case []uint8:
				return widen(d, func(b uint8) float64 { return tab[b] })
			}
			return nil
		}
	}
	switch t {
	case hlo.F32:
		return func(l *hlo.Literal) any {
			return widen(l.Data().([]float32), func(v float32) float64 { return float64(v) })
		}
	case hlo.F64:
		return func(l *hlo.Literal) any { return l.Data().([]float64) }
	case hlo.Pred:
		return func(l *hlo.Literal) any {
			return widen(l.Data().([]bool), func(v bool) int64 {
				if v {
					return 1
				}
				return 0
			})
		}
	case hlo.S2, hlo.S4, hlo.S8:
		return func(l *hlo.Literal) any { return widen(l.Data().([]int8), func(v int8) int64 { return int64(v) }) }
	case hlo.S16:
		return func(l *hlo.Literal) any { return widen(l.Data().([]int16), func(v int16) int64 { return int64(v) }) }
	case hlo.S32:
		return func(l *hlo.Literal) any { return widen(l.Data().([]int32), func(v int32) int64 { return int64(v) }) }
	case hlo.S64:
		return func(l *hlo.Literal) any { return l.Data().([]int64) }
	case hlo.U2, hlo.U4, hlo.U8:
		return func(l *hlo.Literal) any { return widen(l.Data().([]uint8), func(v uint8) uint64 { return uint64(v) }) }
	case hlo.U16:
		return func(l *hlo.Literal) any {
			return widen(l.Data().([]uint16), func(v uint16) uint64 { return uint64(v) })
		}
	case hlo.U32:
		return func(l *hlo.Literal) any {
			return widen(l.Data().([]uint32), func(v uint32) uint64 { return uint64(v) })
		}
	case hlo.U64:
		return func(l *hlo.Literal) any { return l.Data().([]uint64) }
	}
	return nil
}

// widen converts every element (the conversion inlines into the loop).
func widen[S, K any](src []S, f func(S) K) []K {
	out := make([]K, len(src))
	for i, v := range src {
		out[i] = f(v)
	}
	return out
}

// totalKeys are the evaluator's total-order keys: the bit pattern
// sign-extended from width w, negative values with their magnitude bits
// flipped (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN).
func totalKeys(l *hlo.Literal, w int) []int64 {
	keys := make([]int64, l.Len())
	for i := range keys {
		v := int64(l.Bits(i)<<(64-w)) >> (64 - w)
		if v < 0 {
			v ^= math.MaxInt64 >> (64 - w)
		}
		keys[i] = v
	}
	return keys
}

// sortMove returns the function writing one sorted row of an operand of
// type t: element i of the row (at base + i*inner) comes from perm[i].
func sortMove(t hlo.DType, inner int) func(dst, src *hlo.Literal, perm []int, base int) {
	move, _ := byWidth(storageWidth(t), inner, moveRow[uint8], moveRow[uint16], moveRow[uint32], moveRow[uint64],
		moveRow[[2]uint64])
	return move
}

func moveRow[W word](inner int) func(dst, src *hlo.Literal, perm []int, base int) {
	return func(dst, src *hlo.Literal, perm []int, base int) {
		d, s := wordsOf[W](dst), wordsOf[W](src)
		for i, p := range perm {
			d[base+i*inner] = s[p]
		}
	}
}

// run sorts every row of ops into outs.
func (pl *sortPlan) run(outs, ops []*hlo.Literal) error {
	rows := pl.outer * pl.inner
	if rows == 0 || pl.n == 0 {
		return nil
	}
	if pl.expr != nil {
		sortRowsExpr(pl, outs, ops, rows)
		return nil
	}
	if pl.lanes != nil {
		return sortRowsLanes(pl, outs, ops, rows)
	}
	switch k := pl.keys(ops[0]).(type) {
	case []int64:
		sortRows(pl, outs, ops, k, rows)
	case []uint64:
		sortRows(pl, outs, ops, k, rows)
	case []float64:
		sortRows(pl, outs, ops, k, rows)
	}
	return nil
}

func sortRows[K int64 | uint64 | float64](pl *sortPlan, outs, ops []*hlo.Literal, keys []K, rows int) {
	splitRange(rows, rows*pl.n*len(ops), pl.threads, func(lo, hi int) {
		perm := make([]int, pl.n)
		cmp := orderFunc(keys, pl.ord)
		for r := lo; r < hi; r++ {
			pl.sortRow(outs, ops, perm, r, cmp)
		}
	})
}

// sortRow stable-sorts row r of the operands by cmp, its positions in
// perm, and moves each operand's row into its output in that order.
func (pl *sortPlan) sortRow(outs, ops []*hlo.Literal, perm []int, r int, cmp func(a, b int) int) {
	base := r/pl.inner*pl.n*pl.inner + r%pl.inner
	for i := range perm {
		perm[i] = base + i*pl.inner
	}
	slices.SortStableFunc(perm, cmp)
	for k, m := range pl.moves {
		m(outs[k], ops[k], perm, base)
	}
}

// orderFunc is the evaluator's three-way function: -1 if less(a, b), 1
// if less(b, a), else 0, for the comparator's less.
func orderFunc[K int64 | uint64 | float64](keys []K, ord sortOrder) func(a, b int) int {
	switch ord {
	case sortOrder{lt: true}:
		return func(a, b int) int {
			x, y := keys[a], keys[b]
			if x < y {
				return -1
			}
			if y < x {
				return 1
			}
			return 0
		}
	case sortOrder{gt: true}:
		return func(a, b int) int {
			x, y := keys[a], keys[b]
			if x > y {
				return -1
			}
			if y > x {
				return 1
			}
			return 0
		}
	case sortOrder{lt: true, eq: true}:
		return func(a, b int) int {
			x, y := keys[a], keys[b]
			if x <= y {
				return -1
			}
			if y <= x {
				return 1
			}
			return 0
		}
	}
	return func(a, b int) int { // GE
		x, y := keys[a], keys[b]
		if x >= y {
			return -1
		}
		if y >= x {
			return 1
		}
		return 0
	}
}
