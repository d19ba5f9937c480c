//go:build linux && amd64 && !purego

package jit

// f16 with the F16C instructions: VCVTPH2PS widens exactly, and
// VCVTPS2PH (immediate 0) rounds to nearest even as minifloat.F16 does,
// overflow to ±inf and subnormals included, whatever MXCSR says. Only
// NaNs differ: the instructions keep a NaN's payload, where minifloat,
// and so the tile programs' rounding and the evaluator, make every NaN
// the canonical quiet NaN with its sign (f16 0x7e00|sign). A NaN lane is
// therefore made f32's canonical quiet NaN (0x7fc00000|sign, which
// narrows to exactly that) before it is narrowed.

// canonicalNaN returns a register holding x with each NaN lane the
// canonical quiet NaN with its sign.
func (g *gen) canonicalNaN(x int) int {
	a := g.a
	r, n := a.reg(), a.reg()
	// Setting the exponent and quiet bit and clearing the payload leaves
	// the sign: (x | 0x7fc00000) & 0xffc00000.
	a.ps(opOr, n, x, g.constant(0x7fc00000))
	a.ps(opAnd, n, n, g.constant(0xffc00000))
	if g.wide {
		a.cmpBlend(unordered, r, x, n, x, ymm(x))
		return r
	}
	m := a.reg()
	a.cmp(unordered, m, x, ymm(x))
	a.blendv(r, x, ymm(n), m)
	return r
}

// roundF16 sets r to x rounded to f16 precision (still an f32): narrowed
// and widened again.
func (g *gen) roundF16(r, x int) {
	h := g.a.reg()
	g.a.cvtPS2PH(h, g.canonicalNaN(x))
	g.a.cvtPH2PS(r, ymm(h))
}

// loadF16 sets r to the eight f16 values at m, widened.
func (g *gen) loadF16(r int, m mem) { g.a.cvtPH2PS(r, at(m)) }

// storeF16 stores the eight lanes of x as f16 at m, rounded to nearest
// even, a NaN as the canonical quiet NaN with x's sign. A value that is
// a RoundF16's (rounded says) is one already: an f16 op's result, which
// most f16 outputs are, is stored as it is.
func (g *gen) storeF16(m mem, x int, rounded bool) {
	if !rounded {
		x = g.canonicalNaN(x)
	}
	g.a.storeF16(m, x)
}
