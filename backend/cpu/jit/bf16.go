//go:build linux && amd64 && !purego

package jit

// bf16 rounding, as the tile programs' roundBF16 and minifloat's BF16
// encoding do it: add 0x7fff plus the bit above the cut, then cut.

// roundBF16 sets r to x rounded to bf16 precision (still an f32); a NaN
// is quieted with its other bits kept.
func (g *gen) roundBF16(r, x int) {
	a := g.a
	lsb, q, m := a.reg(), a.reg(), a.reg()
	a.shift(shiftRightLogical, lsb, x, 16)
	a.pd(opPAnd, lsb, lsb, g.constant(1))
	a.pd(opPAddD, r, x, g.constant(0x7fff))
	a.pd(opPAddD, r, r, ymm(lsb))
	a.pd(opPAnd, r, r, g.constant(0xffff0000))
	a.cmp(unordered, m, x, ymm(x))
	a.ps(opOr, q, x, g.constant(0x400000))
	a.blendv(r, r, ymm(q), m)
}

// storeBF16 stores the eight lanes of x as bf16 at m: rounded to
// nearest even, a NaN as the canonical quiet NaN with x's sign.
func (g *gen) storeBF16(m mem, x int) {
	a := g.a
	lsb, r, n, nan, hi := a.reg(), a.reg(), a.reg(), a.reg(), a.reg()
	a.shift(shiftRightLogical, lsb, x, 16)
	a.pd(opPAnd, lsb, lsb, g.constant(1))
	a.pd(opPAddD, r, x, g.constant(0x7fff))
	a.pd(opPAddD, r, r, ymm(lsb))
	a.shift(shiftRightLogical, r, r, 16)
	a.pd(opPAnd, n, x, g.constant(0x80000000))
	a.shift(shiftRightLogical, n, n, 16)
	a.ps(opOr, n, n, g.constant(0x7fc0))
	a.cmp(unordered, nan, x, ymm(x))
	a.blendv(r, r, ymm(n), nan)
	a.extractHigh(hi, r)
	a.pack(packUSDW, r, r, hi)
	a.store128(m, r)
}

// storeBytes stores the eight lanes of x as 8-bit integers at m, as the
// evaluator converts: clamped to the type's range (MAXPS with x first
// gives the bound for a NaN), a NaN then 0, truncated toward zero, packed
// with saturation (no lane is out of range by then).
func (g *gen) storeBytes(m mem, x int, signed bool) {
	a := g.a
	lo, hi, dw, wb := float32(0), float32(255), byte(packUSDW), byte(packUSWB)
	if signed {
		lo, hi, dw, wb = -128, 127, packSSDW, packSSWB
	}
	c, h := a.reg(), a.reg()
	a.ps(opMax, c, x, g.f32(lo))
	a.ps(opMin, c, c, g.f32(hi))
	if signed { // (unsigned, the NaN's bound is 0 already)
		nan := a.reg()
		a.cmp(unordered, nan, x, ymm(x))
		a.ps(opAndN, c, nan, ymm(c))
	}
	a.cvt(cvtTPS2DQ, c, ymm(c))
	a.extractHigh(h, c)
	a.pack(dw, c, c, h)
	a.pack(wb, c, c, c)
	a.store64(m, c)
}
