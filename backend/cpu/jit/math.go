//go:build linux && amd64 && !purego

package jit

import "math"

// The math expansions: instruction for instruction what the kernels'
// generator (kernels/_asm/vecmath/main.go: expBody, tanhBody,
// logisticBody) emits, so the bits match the tile programs'. Comments
// there say why each step is as it is.

// temps returns n new virtual registers.
func (g *gen) temps(n int) []int {
	rs := make([]int, n)
	for i := range rs {
		rs[i] = g.a.reg()
	}
	return rs
}

// math computes op of the register x into r (r != x; x is not changed).
func (g *gen) math(op Op, r, x int) {
	switch {
	case g.fast && op == Exp:
		y := g.a.reg()
		g.a.mov(y, x)
		g.expFast(r, y)
	case g.fast && op == Logistic:
		g.logisticFast(r, x)
	case op == Exp:
		g.exp(r, x)
	case op == Tanh:
		g.tanh(r, x)
	case op == Erf:
		g.erf(r, x)
	default:
		g.logistic(r, x)
	}
}

// exp: e^clamp(x) into r.
func (g *gen) exp(r, x int) {
	a := g.a
	y := a.reg()
	g.setF32(y, mc.ExpLo)
	a.ps(opMax, y, y, ymm(x)) // max(lo, x): x, the second source, if NaN
	g.setF32(r, mc.ExpHi)
	a.ps(opMin, y, r, ymm(y))
	g.expCore(r, y)
}

// expCore computes e^x into r for x clamped (x is overwritten).
func (g *gen) expCore(r, x int) {
	a := g.a
	ts := g.temps(2)
	t, nf := ts[0], ts[1]
	g.expReduce(x, t, nf, true)
	g.expPoly(r, x)
	n1, n2 := nf, x // free now
	a.pd(opPSubD, n2, t, g.constant(math.Float32bits(mc.Round)-254))
	a.shift(shiftRightArith, n1, n2, 1)
	a.pd(opPSubD, n2, n2, ymm(n1))
	a.shift(shiftLeft, n1, n1, 23)
	a.shift(shiftLeft, n2, n2, 23)
	a.ps(opMul, r, r, ymm(n1))
	a.ps(opMul, r, r, ymm(n2))
}

// shortcutWindow is the width of the kernels' exp shortcut window:
// n = round(x·log2e) in [shortcutLo, shortcutLo+shortcutWindow), where
// e^r·2^n is a normal float and 2^n goes into its exponent field with an
// integer add (kernels' _asm/vecmath: fastLo). One test of the bits
// above the window's checks all lanes at once.
const (
	shortcutLo     = -64
	shortcutWindow = 128
)

// expFast is expCore's shortcut, for x unclamped (overwritten). It tests
// its n as soon as it has it and jumps to the full block (see block) if
// any lane is outside the window or NaN: a value kept for one test at the
// block's end would hold a register all the way. t = round + n holds n in
// its low bits and round's are zero from bit 9 up, so t << 23 is n << 23.
func (g *gen) expFast(r, x int) {
	a := g.a
	ts := g.temps(3)
	t, nf, u := ts[0], ts[1], ts[2]
	g.expReduce(x, t, nf, true)
	a.pd(opPSubD, u, t, g.constant(math.Float32bits(mc.Round)-uint32(-shortcutLo)))
	a.testJump(u, g.constant(^uint32(shortcutWindow-1)))
	g.expPoly(r, x)
	a.shift(shiftLeft, t, t, 23)
	a.pd(opPAddD, r, r, ymm(t))
}

// expReduce sets t = x·log2e + round, nf = t - round and x = x - nf·ln2
// (ln2Hi, and ln2Lo when lo).
func (g *gen) expReduce(x, t, nf int, lo bool) {
	a := g.a
	g.setF32(t, mc.Log2e)
	a.fma(fmadd213, t, x, g.f32(mc.Round))
	a.ps(opSub, nf, t, g.f32(mc.Round))
	a.fma(fnmadd231, x, nf, g.f32(mc.Ln2Hi))
	if lo {
		a.fma(fnmadd231, x, nf, g.f32(mc.Ln2Lo))
	}
}

// expPoly evaluates expPoly at r (kept) into p, Estrin's scheme.
func (g *gen) expPoly(p, r int) {
	a := g.a
	ts := g.temps(3)
	r2, r4, c := ts[0], ts[1], ts[2]
	a.ps(opMul, r2, r, ymm(r))
	a.ps(opMul, r4, r2, ymm(r2))
	g.setF32(c, mc.ExpPoly[3])
	a.fma(fmadd213, c, r, g.f32(mc.ExpPoly[2]))
	g.setF32(p, mc.ExpPoly[5])
	a.fma(fmadd213, p, r, g.f32(mc.ExpPoly[4]))
	a.fma(fmadd231, p, r2, g.f32(mc.ExpPoly[6]))
	a.fma(fmadd213, c, r2, ymm(r))
	a.fma(fmadd213, p, r4, ymm(c))
	a.ps(opAdd, p, p, g.f32(1))
}

// expm1Poly evaluates e^r - 1 at r (kept) into c.
func (g *gen) expm1Poly(c, r int) {
	a := g.a
	ts := g.temps(4)
	r2, r4, p, q := ts[0], ts[1], ts[2], ts[3]
	a.ps(opMul, r2, r, ymm(r))
	a.ps(opMul, r4, r2, ymm(r2))
	g.setF32(p, mc.Expm1Poly[1])
	a.fma(fmadd213, p, r, g.f32(mc.Expm1Poly[0]))
	g.setF32(q, mc.Expm1Poly[3])
	a.fma(fmadd213, q, r, g.f32(mc.Expm1Poly[2]))
	g.setF32(c, mc.Expm1Poly[5])
	a.fma(fmadd213, c, r, g.f32(mc.Expm1Poly[4]))
	a.fma(fmadd231, c, r2, g.f32(mc.Expm1Poly[6]))
	a.fma(fmadd213, q, r2, ymm(p))
	a.fma(fmadd213, c, r4, ymm(q))
	a.fma(fmadd213, c, r2, ymm(r))
}

// tanh: N = 1 - e^-2|x| from the exp reduction, then N/(2-N) with x's
// sign.
func (g *gen) tanh(r, x int) {
	a := g.a
	ts := g.temps(3)
	y, t, nf := ts[0], ts[1], ts[2]
	a.ps(opAnd, nf, x, g.constant(0x7fffffff))
	g.setF32(y, mc.TanhBig)
	a.ps(opMin, y, y, ymm(nf))
	a.ps(opMul, y, y, g.f32(-2))
	g.expReduce(y, t, nf, false)
	g.expm1Poly(r, y)
	a.pd(opPSubD, t, t, g.constant(math.Float32bits(mc.Round)-127))
	a.shift(shiftLeft, t, t, 23) // 2^n
	oms := nf
	g.setF32(oms, 1)
	a.ps(opSub, oms, oms, ymm(t))    // 1 - 2^n
	a.fma(fnmadd213, t, r, ymm(oms)) // N = (1 - 2^n) - 2^n·q
	den := y
	g.setF32(den, 2)
	a.ps(opSub, den, den, ymm(t))
	a.ps(opDiv, t, t, ymm(den))
	a.ps(opAnd, den, x, g.constant(0x80000000))
	a.ps(opXor, r, t, ymm(den))
}

// logistic: E = e^-|x|, then 1/(1+E) or E/(1+E) by x's sign.
func (g *gen) logistic(r, x int) {
	a := g.a
	ts := g.temps(3)
	y, e, den := ts[0], ts[1], ts[2]
	a.ps(opOr, y, x, g.constant(0x80000000)) // -|x|
	g.setF32(den, mc.ExpLo)
	a.ps(opMax, y, den, ymm(y))
	g.expCore(e, y)
	g.logisticFinish(r, x, y, e, den)
}

// logisticFast is logistic with expFast's shortcut (no clamp).
func (g *gen) logisticFast(r, x int) {
	a := g.a
	ts := g.temps(3)
	y, e, den := ts[0], ts[1], ts[2]
	a.ps(opOr, y, x, g.constant(0x80000000)) // -|x|
	g.expFast(e, y)
	g.logisticFinish(r, x, y, e, den)
}

// logisticFinish computes logistic(x) into r from e = e^-|x|; y and den
// are free temporaries.
func (g *gen) logisticFinish(r, x, y, e, den int) {
	a := g.a
	a.ps(opAdd, den, e, g.f32(1))
	g.setF32(r, 1)
	a.blendv(r, r, ymm(e), x)
	a.ps(opDiv, r, r, ymm(den))
	fix := y
	a.mov(fix, e)
	a.fma(fnmadd231, fix, e, ymm(r))
	a.blendv(r, r, ymm(fix), x)
}

// erf: kernels' erf32 with both of its branches computed and the small
// one blended in where |x| < erfSplit.
func (g *gen) erf(r, x int) {
	a := g.a
	ts := g.temps(9)
	ab, s, q, c, hi, lo, y, e, m := ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], ts[6], ts[7], ts[8]
	a.ps(opAnd, ab, x, g.constant(0x7fffffff))
	// Small: x + x·q(x²).
	a.ps(opMul, s, x, ymm(x))
	g.setF32(q, mc.ErfSmall[len(mc.ErfSmall)-1])
	for k := len(mc.ErfSmall) - 2; k >= 0; k-- {
		a.fma(fmadd213, q, s, g.f32(mc.ErfSmall[k]))
	}
	a.fma(fmadd213, q, x, ymm(x))
	// Large: 1 - e^-a²·g(a), a capped (MINPS gives a, its second source,
	// if NaN).
	g.setF32(c, mc.ErfBig)
	a.ps(opMin, ab, c, ymm(ab))
	a.ps(opMul, hi, ab, ymm(ab))
	a.ps(opXor, lo, hi, g.constant(0x80000000)) // -hi
	a.mov(y, lo)
	a.fma(fmadd231, lo, ab, ymm(ab)) // a·a - hi
	g.expCore(e, y)
	a.fma(fnmadd231, e, e, ymm(lo)) // e - e·lo
	a.ps(opSub, s, ab, g.f32(mc.ErfMid))
	g.setF32(r, mc.ErfLarge[len(mc.ErfLarge)-1])
	for k := len(mc.ErfLarge) - 2; k >= 0; k-- {
		a.fma(fmadd213, r, s, g.f32(mc.ErfLarge[k]))
	}
	a.fma(fnmadd213, r, e, g.f32(1)) // 1 - e·g
	a.ps(opAnd, c, x, g.constant(0x80000000))
	a.ps(opXor, r, r, ymm(c))
	// A NaN x as x + x (quieted), whatever the branches made of it.
	if g.wide {
		a.cmpBlend(0x01, r, r, q, ab, g.f32(mc.ErfSplit))
		a.ps(opAdd, q, x, ymm(x))
		a.cmpBlend(unordered, r, r, q, x, ymm(x))
		return
	}
	a.cmp(0x01, m, ab, g.f32(mc.ErfSplit))
	a.blendv(r, r, ymm(q), m)
	a.cmp(unordered, m, x, ymm(x))
	a.ps(opAdd, q, x, ymm(x))
	a.blendv(r, r, ymm(q), m)
}
