package cpu

import (
	"github.com/axle-ml/axle/hlo"
)

// Comparators of compares, logic and selects — what exporters write for a
// sort that is more than one compare: ONNX TopK's and Sort's (descending,
// NaN first, ties by index), JAX's lexicographic multi-key sorts, argsort
// with an index tie-break — compile to Go closures over the operands'
// keys, widened once per call as the one-compare path widens them. A
// comparison is then a few closure calls on two indexes, where the
// one-lane program (lower_sort_lanes.go) made a kernel call per
// instruction on one-element literals: ONNX TopK over 240 scores took
// 14 ms that way. Values compare exactly as the evaluator compares them
// (every type widens exactly; TOTALORDER on the evaluator's total-order
// keys), and the same stable sort over the same outcomes puts every row
// where the evaluator does. Other ops (arithmetic, converts, bitcasts)
// leave the comparator to the lane program.

// sortEnv holds one call's widened operands, by operand: floats in f,
// signed integers and preds in i, unsigned integers in u, and floats'
// total-order keys in t where a TOTALORDER compare reads them.
type sortEnv struct {
	f [][]float64
	i [][]int64
	u [][]uint64
	t [][]int64
}

// The closures a comparator compiles to, by result kind.
type (
	boolFn  func(e *sortEnv, a, b int) bool
	floatFn func(e *sortEnv, a, b int) float64
	intFn   func(e *sortEnv, a, b int) int64
	uintFn  func(e *sortEnv, a, b int) uint64
)

// exprKind is the Go type a comparator value is computed in.
type exprKind uint8

const (
	kindBool exprKind = iota
	kindFloat
	kindInt
	kindUint
)

// sortValue is one compiled instruction: the closure of its kind.
type sortValue struct {
	kind exprKind
	b    boolFn
	f    floatFn
	i    intFn
	u    uintFn
}

// sortExpr is a compiled comparator and what its calls need widened.
type sortExpr struct {
	less boolFn
	// order, where the comparator is lexicographic (lower_sort_lex.go),
	// is its three-way function, used in place of less.
	order func(e *sortEnv, a, b int) int
	// keyed, where every level of that order has a key (lexKeyed):
	// rows sort on the keys instead (sortRowsKeyed).
	keyed []lexLevel
	types []hlo.DType // the operands'
	need  []exprKind  // per operand: the column the closures read (kindBool: none)
	total []bool      // per operand: its total-order keys are read
}

// compileSortExpr compiles the comparator of a sort over operands of the
// given types, or returns false when it holds an op this does not take.
func compileSortExpr(c *hlo.Computation, types []hlo.DType) (*sortExpr, bool) {
	if c == nil || c.Root == nil || c.Root.Shape.DType != hlo.Pred || !c.Root.Shape.IsArray() || c.Root.Shape.Rank() != 0 {
		return nil, false
	}
	x := &sortExpr{types: types, need: make([]exprKind, len(types)), total: make([]bool, len(types))}
	memo := map[*hlo.Instruction]sortValue{}
	v, ok := x.compile(c.Root, memo)
	if !ok || v.kind != kindBool {
		return nil, false
	}
	x.less = v.b
	if levels, ok := x.lexComparator(c.Root); ok {
		for _, l := range levels {
			x.need[l.k] = l.kind
		}
		x.order = lexOrder(levels)
		if lexKeyed(levels) {
			x.keyed = levels
		}
	}
	return x, true
}

// kindOf is the kind values of type t compute in, or false.
func kindOf(t hlo.DType) (exprKind, bool) {
	switch {
	case t == hlo.Pred:
		return kindBool, true
	case t.IsFloat():
		return kindFloat, sortKeys(t, false) != nil
	case t.IsUnsigned():
		return kindUint, true
	case t.IsInteger():
		return kindInt, true
	}
	return 0, false
}

func (x *sortExpr) compile(in *hlo.Instruction, memo map[*hlo.Instruction]sortValue) (sortValue, bool) {
	if v, ok := memo[in]; ok {
		return v, true
	}
	if !in.Shape.IsArray() || in.Shape.Rank() != 0 {
		return sortValue{}, false
	}
	var v sortValue
	ok := false
	switch in.Opcode {
	case hlo.OpParameter:
		v, ok = x.param(in)
	case hlo.OpConstant:
		v, ok = constantValue(in)
	case hlo.OpCompare:
		v, ok = x.compare(in, memo)
	case hlo.OpAnd, hlo.OpOr, hlo.OpXor, hlo.OpNot:
		v, ok = x.logic(in, memo)
	case hlo.OpSelect:
		v, ok = x.choose(in, memo)
	case hlo.OpNegate, hlo.OpAbs:
		v, ok = x.sign(in, memo)
	}
	if ok {
		memo[in] = v
	}
	return v, ok
}

// param reads operand k's element a (parameter 2k) or b (2k+1).
func (x *sortExpr) param(in *hlo.Instruction) (sortValue, bool) {
	k, second := int(in.ParamNumber)/2, in.ParamNumber%2 == 1
	if k >= len(x.types) || in.Shape.DType != x.types[k] {
		return sortValue{}, false
	}
	kind, ok := kindOf(in.Shape.DType)
	if !ok {
		return sortValue{}, false
	}
	pick := func(a, b int) int {
		if second {
			return b
		}
		return a
	}
	switch kind {
	case kindBool: // a pred operand widens to 0 and 1
		x.need[k] = kindInt
		return sortValue{kind: kindBool, b: func(e *sortEnv, a, b int) bool { return e.i[k][pick(a, b)] != 0 }}, true
	case kindFloat:
		x.need[k] = kindFloat
		return sortValue{kind: kindFloat, f: func(e *sortEnv, a, b int) float64 { return e.f[k][pick(a, b)] }}, true
	case kindInt:
		x.need[k] = kindInt
		return sortValue{kind: kindInt, i: func(e *sortEnv, a, b int) int64 { return e.i[k][pick(a, b)] }}, true
	}
	x.need[k] = kindUint
	return sortValue{kind: kindUint, u: func(e *sortEnv, a, b int) uint64 { return e.u[k][pick(a, b)] }}, true
}

// constantValue is a scalar constant's value as a closure.
func constantValue(in *hlo.Instruction) (sortValue, bool) {
	l := in.Literal
	if l == nil || l.IsElided() || l.Len() != 1 {
		return sortValue{}, false
	}
	kind, ok := kindOf(in.Shape.DType)
	if !ok {
		return sortValue{}, false
	}
	switch kind {
	case kindBool:
		c := l.GetBool(0)
		return sortValue{kind: kindBool, b: func(*sortEnv, int, int) bool { return c }}, true
	case kindFloat:
		c := l.GetFloat64(0)
		return sortValue{kind: kindFloat, f: func(*sortEnv, int, int) float64 { return c }}, true
	case kindInt:
		c := l.GetInt64(0)
		return sortValue{kind: kindInt, i: func(*sortEnv, int, int) int64 { return c }}, true
	}
	c := l.GetUint64(0)
	return sortValue{kind: kindUint, u: func(*sortEnv, int, int) uint64 { return c }}, true
}

// compare compiles compare(p, q): IEEE on floats (every direction but NE
// false with a NaN), TOTALORDER on the total-order keys of two parameters
// (the only operands whose bits the closures keep), integers by value.
func (x *sortExpr) compare(in *hlo.Instruction, memo map[*hlo.Instruction]sortValue) (sortValue, bool) {
	dir, _ := in.EnumAttr("direction")
	typ, _ := in.EnumAttr("type")
	p, q := in.Operands[0], in.Operands[1]
	if typ == "TOTALORDER" && p.Shape.DType.IsFloat() {
		return x.totalCompare(p, q, string(dir))
	}
	l, ok1 := x.compile(p, memo)
	r, ok2 := x.compile(q, memo)
	if !ok1 || !ok2 || l.kind != r.kind {
		return sortValue{}, false
	}
	var b boolFn
	switch l.kind {
	case kindFloat:
		b = compareFn(l.f, r.f, string(dir))
	case kindInt:
		b = compareFn(l.i, r.i, string(dir))
	case kindUint:
		b = compareFn(l.u, r.u, string(dir))
	case kindBool: // false < true
		li, ri := boolAsInt(l.b), boolAsInt(r.b)
		b = compareFn(li, ri, string(dir))
	}
	return sortValue{kind: kindBool, b: b}, b != nil
}

func boolAsInt(f boolFn) intFn {
	return func(e *sortEnv, a, b int) int64 {
		if f(e, a, b) {
			return 1
		}
		return 0
	}
}

// totalCompare compares two float parameters in the total order.
func (x *sortExpr) totalCompare(p, q *hlo.Instruction, dir string) (sortValue, bool) {
	side := func(in *hlo.Instruction) (intFn, bool) {
		k := int(in.ParamNumber) / 2
		if in.Opcode != hlo.OpParameter || k >= len(x.types) || in.Shape.DType != x.types[k] {
			return nil, false
		}
		x.total[k] = true
		if in.ParamNumber%2 == 1 {
			return func(e *sortEnv, _, b int) int64 { return e.t[k][b] }, true
		}
		return func(e *sortEnv, a, _ int) int64 { return e.t[k][a] }, true
	}
	l, ok1 := side(p)
	r, ok2 := side(q)
	if !ok1 || !ok2 {
		return sortValue{}, false
	}
	b := compareFn(l, r, dir)
	return sortValue{kind: kindBool, b: b}, b != nil
}

// compareFn is the closure of one direction over values of one kind.
func compareFn[T int64 | uint64 | float64](l, r func(e *sortEnv, a, b int) T, dir string) boolFn {
	switch dir {
	case "EQ":
		return func(e *sortEnv, a, b int) bool { return l(e, a, b) == r(e, a, b) }
	case "NE":
		return func(e *sortEnv, a, b int) bool { return l(e, a, b) != r(e, a, b) }
	case "LT":
		return func(e *sortEnv, a, b int) bool { return l(e, a, b) < r(e, a, b) }
	case "LE":
		return func(e *sortEnv, a, b int) bool { return l(e, a, b) <= r(e, a, b) }
	case "GT":
		return func(e *sortEnv, a, b int) bool { return l(e, a, b) > r(e, a, b) }
	case "GE":
		return func(e *sortEnv, a, b int) bool { return l(e, a, b) >= r(e, a, b) }
	}
	return nil
}

// logic compiles and, or, xor and not of preds (integers' bitwise forms
// would need their widths: left to the lane program).
func (x *sortExpr) logic(in *hlo.Instruction, memo map[*hlo.Instruction]sortValue) (sortValue, bool) {
	var args []boolFn
	for _, o := range in.Operands {
		v, ok := x.compile(o, memo)
		if !ok || v.kind != kindBool {
			return sortValue{}, false
		}
		args = append(args, v.b)
	}
	var b boolFn
	switch {
	case in.Opcode == hlo.OpNot && len(args) == 1:
		p := args[0]
		b = func(e *sortEnv, a, c int) bool { return !p(e, a, c) }
	case len(args) != 2:
		return sortValue{}, false
	case in.Opcode == hlo.OpAnd:
		p, q := args[0], args[1]
		b = func(e *sortEnv, a, c int) bool { return p(e, a, c) && q(e, a, c) }
	case in.Opcode == hlo.OpOr:
		p, q := args[0], args[1]
		b = func(e *sortEnv, a, c int) bool { return p(e, a, c) || q(e, a, c) }
	case in.Opcode == hlo.OpXor:
		p, q := args[0], args[1]
		b = func(e *sortEnv, a, c int) bool { return p(e, a, c) != q(e, a, c) }
	}
	return sortValue{kind: kindBool, b: b}, b != nil
}

// choose compiles select(pred, on, off).
func (x *sortExpr) choose(in *hlo.Instruction, memo map[*hlo.Instruction]sortValue) (sortValue, bool) {
	p, ok0 := x.compile(in.Operands[0], memo)
	on, ok1 := x.compile(in.Operands[1], memo)
	off, ok2 := x.compile(in.Operands[2], memo)
	if !ok0 || !ok1 || !ok2 || p.kind != kindBool || on.kind != off.kind {
		return sortValue{}, false
	}
	c := p.b
	v := sortValue{kind: on.kind}
	switch on.kind {
	case kindBool:
		v.b = selectFn(c, on.b, off.b)
	case kindFloat:
		v.f = selectFn(c, on.f, off.f)
	case kindInt:
		v.i = selectFn(c, on.i, off.i)
	case kindUint:
		v.u = selectFn(c, on.u, off.u)
	}
	return v, true
}

func selectFn[T any](c boolFn, on, off func(e *sortEnv, a, b int) T) func(e *sortEnv, a, b int) T {
	return func(e *sortEnv, a, b int) T {
		if c(e, a, b) {
			return on(e, a, b)
		}
		return off(e, a, b)
	}
}

// sign compiles negate and abs of a float (exact in float64, so the
// narrower type's result is the same value) — sorting by magnitude, or
// descending by negating the key.
func (x *sortExpr) sign(in *hlo.Instruction, memo map[*hlo.Instruction]sortValue) (sortValue, bool) {
	v, ok := x.compile(in.Operands[0], memo)
	if !ok || v.kind != kindFloat {
		return sortValue{}, false
	}
	f := v.f
	if in.Opcode == hlo.OpNegate {
		return sortValue{kind: kindFloat, f: func(e *sortEnv, a, b int) float64 { return -f(e, a, b) }}, true
	}
	return sortValue{kind: kindFloat, f: func(e *sortEnv, a, b int) float64 {
		if y := f(e, a, b); y < 0 { // (zeros' and NaNs' signs no compare sees)
			return -y
		}
		return f(e, a, b)
	}}, true
}

// env widens one call's operands into the columns x reads.
func (x *sortExpr) env(ops []*hlo.Literal) *sortEnv {
	n := len(x.types)
	e := &sortEnv{f: make([][]float64, n), i: make([][]int64, n), u: make([][]uint64, n), t: make([][]int64, n)}
	for k, t := range x.types {
		if x.total[k] {
			e.t[k] = totalKeys(ops[k], t.Bits())
		}
		if x.need[k] == kindBool { // not read, or through its total-order keys only
			continue
		}
		switch col := sortKeys(t, false)(ops[k]).(type) {
		case []float64:
			e.f[k] = col
		case []int64:
			e.i[k] = col
		case []uint64:
			e.u[k] = col
		}
	}
	return e
}

// sortRowsExpr sorts every row by the compiled comparator.
func sortRowsExpr(pl *sortPlan, outs, ops []*hlo.Literal, rows int) {
	e := pl.expr.env(ops)
	if pl.expr.keyed != nil {
		sortRowsKeyed(pl, outs, ops, e, pl.expr.keyed, rows)
		return
	}
	less := pl.expr.less
	splitRange(rows, rows*pl.n*len(ops), pl.threads, func(lo, hi int) {
		perm := make([]int, pl.n)
		cmp := threeWay(func(a, b int) bool { return less(e, a, b) })
		if order := pl.expr.order; order != nil {
			cmp = func(a, b int) int { return order(e, a, b) }
		}
		for r := lo; r < hi; r++ {
			pl.sortRow(outs, ops, perm, r, cmp)
		}
	})
}
