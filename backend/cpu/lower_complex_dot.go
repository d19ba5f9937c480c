package cpu

import "github.com/axle-ml/axle/hlo"

// Dots of complex operands: any dimension numbers, planned once into the
// generic dot's offset tables (newDotTables). The evaluator widens both
// operands to complex128, sums lhs·rhs products over the contraction in
// order from zero, and rounds the sum once to the result type; this loop
// does the same per result element, so the bits are the evaluator's. It
// runs i-k-j (one result row of complex128 accumulators at a time) so the
// right operand streams along its free dimension.

// lowerDotComplex compiles a dot whose result and operands are c64 or
// c128 (in any combination); false otherwise (real operands of a complex
// dot, sparsity, dynamic shapes, inconsistent dimension numbers).
func lowerDotComplex(in *hlo.Instruction, threads int) (kernelFunc, bool) {
	if in.Opcode != hlo.OpDot || len(in.Operands) != 2 || in.HasAttr("sparsity") || !plainArray(in.Shape) {
		return nil, false
	}
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	if !plainArray(l) || !plainArray(r) || !in.Shape.DType.IsComplex() || !l.DType.IsComplex() || !r.DType.IsComplex() {
		return nil, false
	}
	p, ok := newDotTables(in)
	if !ok {
		return nil, false
	}
	p.threads = threads
	if l.DType == hlo.C64 {
		return complexDotRHS[complex64](p, r.DType, in.Shape.DType), true
	}
	return complexDotRHS[complex128](p, r.DType, in.Shape.DType), true
}

func complexDotRHS[L cplx](p *dotTables, r, t hlo.DType) kernelFunc {
	if r == hlo.C64 {
		return complexDotOut[L, complex64](p, t)
	}
	return complexDotOut[L, complex128](p, t)
}

func complexDotOut[L, R cplx](p *dotTables, t hlo.DType) kernelFunc {
	if t == hlo.C64 {
		return complexDot[L, R, complex64](p)
	}
	return complexDot[L, R, complex128](p)
}

// complexDot splits result rows (a batch and lhs-free position each)
// across threads in fixed ranges; each range has its own accumulators.
func complexDot[L, R, D cplx](p *dotTables) kernelFunc {
	nf, nr := len(p.lf), len(p.rf)
	rows := len(p.lb) * nf
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		c, ok0 := out.Data().([]D)
		x, ok1 := ops[0].Data().([]L)
		y, ok2 := ops[1].Data().([]R)
		if !ok0 || !ok1 || !ok2 || len(c) != rows*nr {
			return errEwStorage("complex dot")
		}
		if len(c) == 0 {
			return nil
		}
		splitRange(rows, rows*nr*max(len(p.lc), 1), p.threads, func(lo, hi int) {
			acc := make([]complex128, nr)
			for row := lo; row < hi; row++ {
				b, i := row/nf, row%nf
				complexDotRow(p, acc, x, y, p.lb[b]+p.lf[i], p.rb[b])
				dst := c[row*nr : (row+1)*nr]
				for j, v := range acc {
					dst[j] = D(v)
				}
			}
		})
		return nil
	}
}

// complexDotRow sets acc[j] = Σ_k x[lo+lc[k]]·y[ro+rc[k]+rf[j]], over k
// in order from zero, lhs times rhs as the evaluator multiplies. With a
// contiguous right row it takes four steps per pass over acc: each sum
// still adds its products one at a time in k order, so the bits do not
// change, and acc is loaded and stored a quarter as often.
func complexDotRow[L, R cplx](p *dotTables, acc []complex128, x []L, y []R, lo, ro int) {
	clear(acc)
	k, n := 0, len(acc)
	if p.rfStep == 1 {
		for ; k+4 <= len(p.lc); k += 4 {
			a := [4]complex128{complex128(x[lo+p.lc[k]]), complex128(x[lo+p.lc[k+1]]),
				complex128(x[lo+p.lc[k+2]]), complex128(x[lo+p.lc[k+3]])}
			complexAxpy4(acc, &a, y[ro+p.rc[k]:][:n], y[ro+p.rc[k+1]:][:n], y[ro+p.rc[k+2]:][:n], y[ro+p.rc[k+3]:][:n])
		}
	}
	for ; k < len(p.lc); k++ {
		a, r := complex128(x[lo+p.lc[k]]), ro+p.rc[k]
		switch s := p.rfStep; {
		case s == 1:
			row := y[r:][:n]
			for j := range acc {
				acc[j] += a * complex128(row[j])
			}
		case s != 0:
			for j := range acc {
				acc[j] += a * complex128(y[r+j*s])
			}
		default:
			for j, f := range p.rf {
				acc[j] += a * complex128(y[r+f])
			}
		}
	}
}

// complexAxpy4 adds a[0]·y0[j], then a[1]·y1[j], ... to acc[j], each
// product and sum in complex128 as Go's complex arithmetic forms them
// (re = ar·yr − ai·yi, im = ar·yi + ai·yr), kept in registers between.
func complexAxpy4[R cplx](acc []complex128, a *[4]complex128, y0, y1, y2, y3 []R) {
	y0, y1, y2, y3 = y0[:len(acc)], y1[:len(acc)], y2[:len(acc)], y3[:len(acc)]
	r0, i0, r1, i1 := real(a[0]), imag(a[0]), real(a[1]), imag(a[1])
	r2, i2, r3, i3 := real(a[2]), imag(a[2]), real(a[3]), imag(a[3])
	for j, c := range acc {
		re, im := real(c), imag(c)
		v := complex128(y0[j])
		re += r0*real(v) - i0*imag(v)
		im += r0*imag(v) + i0*real(v)
		v = complex128(y1[j])
		re += r1*real(v) - i1*imag(v)
		im += r1*imag(v) + i1*real(v)
		v = complex128(y2[j])
		re += r2*real(v) - i2*imag(v)
		im += r2*imag(v) + i2*real(v)
		v = complex128(y3[j])
		re += r3*real(v) - i3*imag(v)
		im += r3*imag(v) + i3*real(v)
		acc[j] = complex(re, im)
	}
}
