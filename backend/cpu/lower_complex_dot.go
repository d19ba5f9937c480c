package cpu

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/internal/xlamath"
)

// Dots of complex operands: any dimension numbers, planned once into the
// generic dot's offset tables (newDotTables). The evaluator converts both
// operands to the result type, sums lhs·rhs products over the contraction
// in order from zero in that type, each product as XLA's CPU backend forms
// it (xlamath.ComplexMul64, xlamath.ComplexMul128); this loop does the same per
// result element, so the bits are the evaluator's. It runs i-k-j (one
// result row of accumulators at a time) so the right operand streams
// along its free dimension.

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
	if in.Shape.DType == hlo.C64 {
		return complexDot(p, hlo.C64, xlamath.ComplexMul64), true
	}
	return complexDot(p, hlo.C128, xlamath.ComplexMul128), true
}

// complexDot splits result rows (a batch and lhs-free position each)
// across threads in fixed ranges; each range has its own accumulators.
func complexDot[D cplx](p *dotTables, t hlo.DType, mul func(a, b D) D) kernelFunc {
	nf, nr := len(p.lf), len(p.rf)
	rows := len(p.lb) * nf
	return func(out *hlo.Literal, ops []*hlo.Literal) error {
		if len(ops) != 2 || !ops[0].DType().IsComplex() || !ops[1].DType().IsComplex() {
			return errEwStorage("complex dot")
		}
		c, ok0 := out.Data().([]D)
		x, ok1 := xlamath.AccumOperand(ops[0], t).Data().([]D)
		y, ok2 := xlamath.AccumOperand(ops[1], t).Data().([]D)
		if !ok0 || !ok1 || !ok2 || len(c) != rows*nr {
			return errEwStorage("complex dot")
		}
		if len(c) == 0 {
			return nil
		}
		splitRange(rows, rows*nr*max(len(p.lc), 1), p.threads, func(lo, hi int) {
			for row := lo; row < hi; row++ {
				b, i := row/nf, row%nf
				complexDotRow(p, c[row*nr:(row+1)*nr], x, y, p.lb[b]+p.lf[i], p.rb[b], mul)
			}
		})
		return nil
	}
}

// complexDotRow sets acc[j] = Σ_k x[lo+lc[k]]·y[ro+rc[k]+rf[j]], over k
// in order from zero, each product rounded before it is added, as the
// evaluator does.
func complexDotRow[D cplx](p *dotTables, acc, x, y []D, lo, ro int, mul func(a, b D) D) {
	clear(acc)
	for k := range p.lc {
		a, r := x[lo+p.lc[k]], ro+p.rc[k]
		switch s := p.rfStep; {
		case s == 1:
			row := y[r:][:len(acc)]
			for j := range acc {
				acc[j] += mul(a, row[j])
			}
		case s != 0:
			for j := range acc {
				acc[j] += mul(a, y[r+j*s])
			}
		default:
			for j, f := range p.rf {
				acc[j] += mul(a, y[r+f])
			}
		}
	}
}
