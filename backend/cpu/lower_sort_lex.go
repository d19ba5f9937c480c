package cpu

import (
	"cmp"
	"math"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// Lexicographic comparators — "a before b when its first key orders
// before, or the keys are equal and the rest orders a before b" — are
// what ONNX TopK and Sort write (the value descending or ascending with
// NaN greatest, then the index ascending) and what multi-key sorts
// write. Recognised from their instructions, they run as one three-way
// function over the widened keys: ONNX TopK over 240 scores spent 97 µs
// in the closure tree of its fourteen instructions, most of a YOLO
// head's post-processing. The function is negative exactly where the
// comparator says "before" (the only outcome the stable sort reads), so
// rows land where the evaluator puts them.

// lexLevel is one key of a lexicographic comparator: operand k ordered
// descending or ascending. With nanAware a NaN orders above every number
// and equals another NaN (the comparator guards its compares with
// x != x tests); without, compares are IEEE's, under which a NaN is
// neither before nor equal to anything, so a pair with one is tied
// outright, whatever the later keys say.
type lexLevel struct {
	k              int
	kind           exprKind
	desc, nanAware bool
}

// lexComparator recognises root as a lexicographic comparator over the
// sort's operands, or returns false.
func (x *sortExpr) lexComparator(root *hlo.Instruction) ([]lexLevel, bool) {
	if l, ok := x.strictLevel(root); ok {
		return []lexLevel{l}, true
	}
	if root.Opcode != hlo.OpOr || len(root.Operands) != 2 {
		return nil, false
	}
	for _, strict := range []int{0, 1} {
		l, ok := x.strictLevel(root.Operands[strict])
		rest := root.Operands[1-strict]
		if !ok || rest.Opcode != hlo.OpAnd || len(rest.Operands) != 2 {
			continue
		}
		for _, eq := range []int{0, 1} {
			if !x.equalLevel(rest.Operands[eq], l) {
				continue
			}
			if tail, ok := x.lexComparator(rest.Operands[1-eq]); ok {
				return append([]lexLevel{l}, tail...), true
			}
		}
	}
	return nil, false
}

// sides returns the operand k that compare in reads the two elements of
// and whether it reads b first (compare(b, a)), or false.
func (x *sortExpr) sides(in *hlo.Instruction) (k int, swapped, ok bool) {
	if in.Opcode != hlo.OpCompare || len(in.Operands) != 2 {
		return 0, false, false
	}
	if typ, _ := in.EnumAttr("type"); typ == "TOTALORDER" {
		return 0, false, false
	}
	p, q := in.Operands[0], in.Operands[1]
	if p.Opcode != hlo.OpParameter || q.Opcode != hlo.OpParameter || p.ParamNumber/2 != q.ParamNumber/2 ||
		p.ParamNumber == q.ParamNumber {
		return 0, false, false
	}
	k = int(p.ParamNumber / 2)
	if k >= len(x.types) || p.Shape.DType != x.types[k] || q.Shape.DType != x.types[k] {
		return 0, false, false
	}
	return k, p.ParamNumber%2 == 1, true
}

// plainStrict matches compare(a, b) LT or GT (either way round) on one
// operand of a number type.
func (x *sortExpr) plainStrict(in *hlo.Instruction) (lexLevel, bool) {
	k, swapped, ok := x.sides(in)
	if !ok {
		return lexLevel{}, false
	}
	kind, ok := kindOf(x.types[k])
	if !ok || kind == kindBool {
		return lexLevel{}, false
	}
	dir, _ := in.EnumAttr("direction")
	var desc bool
	switch dir {
	case "LT":
	case "GT":
		desc = true
	default:
		return lexLevel{}, false
	}
	return lexLevel{k: k, kind: kind, desc: desc != swapped}, true
}

// strictLevel matches a key's "a before b": plainStrict, or on floats
// or(and(isNaN(first), not(isNaN(second))), plainStrict), first being a
// for a descending key (a NaN a orders first) and b for an ascending one
// (a NaN b orders last).
func (x *sortExpr) strictLevel(in *hlo.Instruction) (lexLevel, bool) {
	if l, ok := x.plainStrict(in); ok {
		return l, true
	}
	if in.Opcode != hlo.OpOr || len(in.Operands) != 2 {
		return lexLevel{}, false
	}
	for _, c := range []int{0, 1} {
		l, ok := x.plainStrict(in.Operands[c])
		if !ok || l.kind != kindFloat {
			continue
		}
		guard := in.Operands[1-c]
		if guard.Opcode != hlo.OpAnd || len(guard.Operands) != 2 {
			continue
		}
		for _, g := range []int{0, 1} {
			nan, notNaN := guard.Operands[g], guard.Operands[1-g]
			if notNaN.Opcode != hlo.OpNot || len(notNaN.Operands) != 1 {
				continue
			}
			k1, second1, ok1 := x.isNaN(nan)
			k2, second2, ok2 := x.isNaN(notNaN.Operands[0])
			// Descending: a NaN a before any b; ascending: any a before a NaN b.
			if ok1 && ok2 && k1 == l.k && k2 == l.k && second1 != second2 && second1 != l.desc {
				l.nanAware = true
				return l, true
			}
		}
	}
	return lexLevel{}, false
}

// isNaN matches compare(v, v) NE on one element of a float operand:
// its operand and whether the element is b.
func (x *sortExpr) isNaN(in *hlo.Instruction) (k int, second, ok bool) {
	if in.Opcode != hlo.OpCompare || len(in.Operands) != 2 || in.Operands[0] != in.Operands[1] {
		return 0, false, false
	}
	p := in.Operands[0]
	if dir, _ := in.EnumAttr("direction"); dir != "NE" || p.Opcode != hlo.OpParameter {
		return 0, false, false
	}
	if typ, _ := in.EnumAttr("type"); typ == "TOTALORDER" {
		return 0, false, false
	}
	k = int(p.ParamNumber / 2)
	if k >= len(x.types) || p.Shape.DType != x.types[k] || !p.Shape.DType.IsFloat() {
		return 0, false, false
	}
	return k, p.ParamNumber%2 == 1, true
}

// equalLevel matches l's key equality: compare(a, b) EQ, and for a
// nanAware key or(that, and(isNaN(a), isNaN(b))).
func (x *sortExpr) equalLevel(in *hlo.Instruction, l lexLevel) bool {
	plainEq := func(in *hlo.Instruction) bool {
		k, _, ok := x.sides(in)
		dir, _ := in.EnumAttr("direction")
		return ok && k == l.k && dir == "EQ"
	}
	if !l.nanAware {
		return plainEq(in)
	}
	if in.Opcode != hlo.OpOr || len(in.Operands) != 2 {
		return false
	}
	for _, e := range []int{0, 1} {
		both := in.Operands[1-e]
		if !plainEq(in.Operands[e]) || both.Opcode != hlo.OpAnd || len(both.Operands) != 2 {
			continue
		}
		k1, s1, ok1 := x.isNaN(both.Operands[0])
		k2, s2, ok2 := x.isNaN(both.Operands[1])
		if ok1 && ok2 && k1 == l.k && k2 == l.k && s1 != s2 {
			return true
		}
	}
	return false
}

// lexOrder is the three-way function of levels: negative where the
// comparator puts a before b.
func lexOrder(levels []lexLevel) func(e *sortEnv, a, b int) int {
	return func(e *sortEnv, a, b int) int {
		for _, l := range levels {
			c := 0
			switch l.kind {
			case kindFloat:
				fa, fb := e.f[l.k][a], e.f[l.k][b]
				switch an, bn := fa != fa, fb != fb; {
				case (an || bn) && !l.nanAware:
					return 0
				case an && bn:
				case an:
					c = 1
				case bn:
					c = -1
				case fa < fb:
					c = -1
				case fa > fb:
					c = 1
				}
			case kindInt:
				c = cmp3(e.i[l.k][a], e.i[l.k][b])
			case kindUint:
				c = cmp3(e.u[l.k][a], e.u[l.k][b])
			}
			if l.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
}

func cmp3[T int64 | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Where every level has an order-preserving key (integers, and floats
// ordered with NaN greatest: not IEEE compares, whose NaN ties a pair
// outright), the comparator is a strict weak order, and the evaluator's
// stable sort puts a row in the order of its keys and then its
// positions: that total order, sorted by any algorithm, is the same
// permutation. sortRowsKeyed sorts so, on the keys widened to uint64
// once an element, with pdqsort, where the stable sort calling the
// three-way function made O(n log² n) moves: ONNX TopK over 240 scores
// 32 → 17 µs, over 25,200 9.1 → 3.0 ms.

// lexKeyed reports whether every level has a key (lexKey), of at most
// two levels (keyedPair's; longer orders keep the three-way function).
func lexKeyed(levels []lexLevel) bool {
	if len(levels) > 2 {
		return false
	}
	for _, l := range levels {
		if l.kind == kindFloat && !l.nanAware {
			return false
		}
	}
	return true
}

// lexKey is element i's key for level l: unsigned, ordered as the level
// orders its values (descending ones inverted); equal values (±0, any
// two NaNs) equal keys.
func lexKey(l lexLevel, e *sortEnv, i int) uint64 {
	switch l.kind {
	case kindFloat:
		return l.floatKey(e.f[l.k][i])
	case kindInt:
		return l.intKey(e.i[l.k][i])
	}
	return l.uintKey(e.u[l.k][i])
}

// floatKey, intKey and uintKey are lexKey of one value.
func (l lexLevel) floatKey(f float64) uint64 {
	var u uint64
	switch {
	case f != f:
		u = math.MaxUint64
	case f == 0:
		u = 1 << 63
	default:
		if b := math.Float64bits(f); b>>63 == 1 {
			u = ^b
		} else {
			u = b | 1<<63
		}
	}
	return l.flip(u)
}

func (l lexLevel) intKey(v int64) uint64   { return l.flip(uint64(v) ^ 1<<63) }
func (l lexLevel) uintKey(v uint64) uint64 { return l.flip(v) }

func (l lexLevel) flip(u uint64) uint64 {
	if l.desc {
		return ^u
	}
	return u
}

// keyedPair is an element of a row of at most two levels: its keys and
// position, sorted in place (a closure indexing keys by position missed
// the cache on every compare: 25,200 scores 4.1 ms against 3.0).
type keyedPair struct {
	k0, k1 uint64
	pos    int
}

// sortRowsKeyed sorts every row by levels' keys (one or two), then by
// position, and moves the operands' rows into place.
func sortRowsKeyed(pl *sortPlan, outs, ops []*hlo.Literal, e *sortEnv, levels []lexLevel, rows int) {
	splitRange(rows, rows*pl.n*len(ops), pl.threads, func(lo, hi int) {
		perm, items := make([]int, pl.n), make([]keyedPair, pl.n)
		for r := lo; r < hi; r++ {
			base := r/pl.inner*pl.n*pl.inner + r%pl.inner
			for i := range items {
				at := base + i*pl.inner
				items[i] = keyedPair{k0: lexKey(levels[0], e, at), pos: i}
				if len(levels) == 2 {
					items[i].k1 = lexKey(levels[1], e, at)
				}
			}
			slices.SortFunc(items, func(x, y keyedPair) int {
				switch {
				case x.k0 != y.k0:
					return cmp.Compare(x.k0, y.k0)
				case x.k1 != y.k1:
					return cmp.Compare(x.k1, y.k1)
				}
				return cmp.Compare(x.pos, y.pos)
			})
			for i, it := range items {
				perm[i] = base + it.pos*pl.inner
			}
			for k, m := range pl.moves {
				m(outs[k], ops[k], perm, base)
			}
		}
	})
}
