package xlamath

import (
	"math/cmplx"

	"github.com/axle-ml/axle/hlo"
)

// ComplexPow is x^y as the evaluator computes it: cmplx.Pow, except for a
// zero base with an exponent whose real part is NaN and imaginary part
// infinite, where cmplx.Pow panics ("not reached") and the answer is the
// NaN its other NaN exponents give.
func ComplexPow(x, y complex128) complex128 {
	if x == 0 && real(y) != real(y) {
		return cmplx.NaN()
	}
	return cmplx.Pow(x, y)
}

// ComplexUnary returns the formula for the unary op on complex values.
func ComplexUnary(op hlo.Opcode) (func(complex128) complex128, bool) {
	f := complexFunc(op)
	return f, f != nil
}

// ComplexUnaryOps lists the ops ComplexUnary knows, in opcode order.
func ComplexUnaryOps() []hlo.Opcode {
	var out []hlo.Opcode
	for op := hlo.Opcode(1); int(op) < hlo.NumOpcodes(); op++ {
		if complexFunc(op) != nil {
			out = append(out, op)
		}
	}
	return out
}

// complexFunc is a switch rather than a map: a map would be built at
// init in every binary importing the package, whether it calls it or not.
func complexFunc(op hlo.Opcode) func(complex128) complex128 {
	switch op {
	case hlo.OpNegate:
		return func(x complex128) complex128 { return -x }
	case hlo.OpExp:
		return cmplx.Exp
	case hlo.OpExpm1:
		return func(x complex128) complex128 { return cmplx.Exp(x) - 1 }
	case hlo.OpLog:
		return cmplx.Log
	case hlo.OpLog1p:
		return func(x complex128) complex128 { return cmplx.Log(1 + x) }
	case hlo.OpSqrt:
		return cmplx.Sqrt
	case hlo.OpRsqrt:
		return func(x complex128) complex128 { return 1 / cmplx.Sqrt(x) }
	case hlo.OpSin:
		return cmplx.Sin
	case hlo.OpCos:
		return cmplx.Cos
	case hlo.OpTan:
		return cmplx.Tan
	case hlo.OpTanh:
		return cmplx.Tanh
	case hlo.OpSinh:
		return cmplx.Sinh
	case hlo.OpCosh:
		return cmplx.Cosh
	}
	return complexInverse(op)
}

// complexInverse is complexFunc's inverse functions, logistic and sign.
func complexInverse(op hlo.Opcode) func(complex128) complex128 {
	switch op {
	case hlo.OpAtan:
		return cmplx.Atan
	case hlo.OpAtanh:
		return cmplx.Atanh
	case hlo.OpAcos:
		return cmplx.Acos
	case hlo.OpAcosh:
		return cmplx.Acosh
	case hlo.OpAsin:
		return cmplx.Asin
	case hlo.OpAsinh:
		return cmplx.Asinh
	case hlo.OpLogistic:
		return func(x complex128) complex128 { return 1 / (1 + cmplx.Exp(-x)) }
	case hlo.OpSign:
		// sign(z) = z/|z|, and 0 for 0 (operation_semantics: "sign(x) =
		// x / |x|" for complex).
		return func(x complex128) complex128 {
			if x == 0 {
				return 0
			}
			return x / complex(cmplx.Abs(x), 0)
		}
	}
	return nil
}

// AccumOperand is a dot or convolution operand converted to the result's
// element type t, as XLA converts an operand whose type differs from the
// result's (preferred_element_type) before accumulating: through float64
// (or complex128), exact for every narrower type, rounded once to t.
// Integer and pred operands are returned as they are: their 64-bit
// wrapping sums, truncated to the result, give the same bits as
// converting first.
func AccumOperand(l *hlo.Literal, t hlo.DType) *hlo.Literal {
	if l.DType() == t || !t.IsFloat() && !t.IsComplex() {
		return l
	}
	out := hlo.NewLiteral(hlo.Shape{DType: t, Dims: l.Shape().Dims})
	n := l.Len()
	if t.IsComplex() {
		for i := range n {
			out.SetComplex128(i, l.GetComplex128(i))
		}
		return out
	}
	for i := range n {
		out.SetFloat64(i, l.GetFloat64(i))
	}
	return out
}
