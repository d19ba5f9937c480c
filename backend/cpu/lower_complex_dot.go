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
// in order from zero, lhs times rhs as the evaluator multiplies.
func complexDotRow[L, R cplx](p *dotTables, acc []complex128, x []L, y []R, lo, ro int) {
	clear(acc)
	for k, lc := range p.lc {
		a, r := complex128(x[lo+lc]), ro+p.rc[k]
		switch s := p.rfStep; {
		case s == 1:
			row := y[r:][:len(acc)]
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
