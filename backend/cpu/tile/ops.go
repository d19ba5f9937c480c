package tile

import (
	"fmt"
	"math"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// The op table: everything tile programs know of an opcode, in one row.
// Programs compute f32, bf16 and f16 in f32 and round to the value's type
// after every op, which for +, -, *, / and sqrt equals the evaluator's
// single rounding. An op either has a vector kernel (the same bits as a
// plain Go loop, or at most 2 ulp for exp, tanh, logistic and erf against
// the evaluator's 0.5) or is computed in float64 and rounded once, as the
// evaluator does, so the two agree exactly on it.

// opRow is one opcode's row.
type opRow struct {
	// vec computes the op over a tile: dst = op(a, b, c), b and c unused
	// by unary ops. Nil for the ops computed in float64.
	vec func(dst, a, b, c []float32)
	// f64 and f64b are the float64 definitions of the ops without a
	// vector kernel (unary and binary).
	f64  func(float64) float64
	f64b func(a, b float64) float64
	// jit is the op's generated code, when jitOK.
	jit   jit.Op
	jitOK bool
	// cheap: a fusion may recompute the op rather than store it (on the
	// vector kernels it costs less than the memory pass a stored
	// intermediate costs; logs, powers, trigonometry are library calls).
	cheap bool
	// mask: a logical op on predicates, bitwise on the masks.
	mask bool
	// cmp: a comparison, computed by compareTile in its direction.
	cmp bool
}

// ops is indexed by opcode; a zero row is an op tile programs lack.
var ops = buildOps()

func buildOps() []opRow {
	t := make([]opRow, hlo.NumOpcodes())
	vec := func(op hlo.Opcode, f func(dst, a, b, c []float32), j jit.Op, jitOK, cheap bool) {
		t[op] = opRow{vec: f, jit: j, jitOK: jitOK, cheap: cheap}
	}
	bin := func(f func(dst, a, b []float32)) func(dst, a, b, c []float32) {
		return func(dst, a, b, _ []float32) { f(dst, a, b) }
	}
	un := func(f func(dst, a []float32)) func(dst, a, b, c []float32) {
		return func(dst, a, _, _ []float32) { f(dst, a[:len(dst)]) }
	}
	vec(hlo.OpAdd, bin(kernels.AddF32), jit.Add, true, true)
	vec(hlo.OpSubtract, bin(kernels.SubF32), jit.Sub, true, true)
	vec(hlo.OpMultiply, bin(kernels.MulF32), jit.Mul, true, true)
	vec(hlo.OpDivide, bin(kernels.DivF32), jit.Div, true, false) // see Cheap
	vec(hlo.OpMaximum, bin(kernels.MaximumF32), jit.Max, true, true)
	vec(hlo.OpMinimum, bin(kernels.MinimumF32), jit.Min, true, true)
	vec(hlo.OpNegate, un(kernels.NegF32), jit.Neg, true, true)
	vec(hlo.OpAbs, un(kernels.AbsF32), jit.Abs, true, true)
	vec(hlo.OpSqrt, un(kernels.SqrtF32), jit.Sqrt, true, false)
	vec(hlo.OpRsqrt, un(kernels.RsqrtF32), 0, false, false)
	vec(hlo.OpExp, un(kernels.ExpF32), jit.Exp, true, true)
	vec(hlo.OpTanh, un(kernels.TanhF32), jit.Tanh, true, false)
	vec(hlo.OpLogistic, un(kernels.LogisticF32), jit.Logistic, true, false)
	vec(hlo.OpErf, un(kernels.ErfF32), jit.Erf, true, false)
	// Quantization rounds (x/scale rounded, then clamped and converted).
	vec(hlo.OpRoundNearestEven, un(roundEvenF32), jit.RoundEven, true, true)
	vec(hlo.OpPower, func(dst, a, b, _ []float32) { kernels.PowF32(dst, a[:len(dst)], b[:len(dst)]) }, 0, false, false)
	// select(pred=a, on_true=b, on_false=c) and clamp(lo=a, x=b, hi=c).
	vec(hlo.OpSelect, kernels.SelectF32, jit.Select, true, true)
	vec(hlo.OpClamp, kernels.ClampF32, jit.Clamp, true, true)
	// Between float types the slot's rounding is the conversion.
	vec(hlo.OpConvert, func(dst, a, _, _ []float32) { copy(dst, a[:len(dst)]) }, 0, false, true)
	// Compare has a row so programs take it; its direction picks the
	// kernel (compareTile) and the generated op (jitCompares).
	t[hlo.OpCompare] = opRow{cmp: true, cheap: true}
	// IsFinite is |x| < +inf, a comparison (isFiniteSlot).
	t[hlo.OpIsFinite] = opRow{cmp: true, cheap: true}
	for op, j := range map[hlo.Opcode]jit.Op{hlo.OpAnd: jit.And, hlo.OpOr: jit.Or, hlo.OpXor: jit.Xor} {
		f := map[hlo.Opcode]func(dst, a, b []float32){hlo.OpAnd: kernels.AndF32, hlo.OpOr: kernels.OrF32, hlo.OpXor: kernels.XorF32}[op]
		t[op] = opRow{vec: bin(f), jit: j, jitOK: true, cheap: true, mask: true}
	}
	t[hlo.OpNot] = opRow{vec: un(notMask), cheap: true, mask: true}
	for _, op := range tileFloat {
		t[op] = opRow{f64: floatFuncs[op]}
	}
	t[hlo.OpAtan2] = opRow{f64b: math.Atan2}
	t[hlo.OpRemainder] = opRow{f64b: math.Mod} // XLA's float remainder is C's fmod (the dividend's sign)
	return t
}

// floatFuncs is the one float64 definition of each unary math op the CPU
// backend computes by calling Go's math package: tile programs for the
// ops in tileFloat (their other ops have vector kernels), and the
// backend's elementwise loops (FloatFunc), so a fused and an unfused op
// give the same bits.
var floatFuncs = map[hlo.Opcode]func(float64) float64{
	hlo.OpLog: math.Log, hlo.OpFloor: math.Floor, hlo.OpCeil: math.Ceil, hlo.OpSin: math.Sin,
	hlo.OpCos: math.Cos, hlo.OpExpm1: math.Expm1, hlo.OpLog1p: math.Log1p,
	hlo.OpCbrt: math.Cbrt, hlo.OpTan: math.Tan, hlo.OpSqrt: math.Sqrt,
	hlo.OpRoundNearestAfz: math.Round, hlo.OpRoundNearestEven: math.RoundToEven,
	hlo.OpExp: math.Exp, hlo.OpTanh: math.Tanh, hlo.OpErf: math.Erf,
	hlo.OpAtan: math.Atan, hlo.OpAtanh: math.Atanh, hlo.OpCosh: math.Cosh, hlo.OpSinh: math.Sinh,
	hlo.OpAcos: math.Acos, hlo.OpAcosh: math.Acosh, hlo.OpAsin: math.Asin, hlo.OpAsinh: math.Asinh,
	hlo.OpSign: func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x // ±0 and NaN are their own sign
	},
}

// tileFloat are the ops tile programs compute through floatFuncs.
var tileFloat = []hlo.Opcode{
	hlo.OpLog, hlo.OpFloor, hlo.OpCeil, hlo.OpSin, hlo.OpCos, hlo.OpExpm1, hlo.OpLog1p,
	hlo.OpCbrt, hlo.OpTan, hlo.OpRoundNearestAfz, hlo.OpSign,
}

// roundEvenF32 rounds to integers, ties to even: below 2^23 adding and
// taking away 2^23 leaves the integer f32 rounding picks (to even on a
// tie), the sign put back (-0.4 rounds to -0); from 2^23 on every f32 is
// an integer, and NaN and infinities stay. Exact, as the evaluator's
// math.RoundToEven, and as the generated code's VROUNDPS.
func roundEvenF32(dst, a []float32) {
	const big = 1 << 23
	for i, x := range a[:len(dst)] {
		ax := float32(math.Abs(float64(x)))
		if !(ax < big) {
			dst[i] = x
			continue
		}
		dst[i] = float32(math.Copysign(float64(ax+big-big), float64(x)))
	}
}

// FloatFunc is the float64 definition of a unary math op (nil, false for
// the others).
func FloatFunc(op hlo.Opcode) (func(float64) float64, bool) {
	f, ok := floatFuncs[op]
	return f, ok
}

// checkOps is the table's init-time check: every row computes its op one
// way, generated code exists only beside a vector kernel (it must give
// the kernel's bits), and the cheap and mask rows are rows.
func checkOps(t []opRow) error {
	for op, r := range t {
		n := 0
		for _, has := range []bool{r.vec != nil, r.f64 != nil, r.f64b != nil, r.cmp} {
			if has {
				n++
			}
		}
		switch {
		case n > 1:
			return fmt.Errorf("tile: op %s has %d definitions", hlo.Opcode(op), n)
		case n == 0 && (r.jitOK || r.cheap || r.mask):
			return fmt.Errorf("tile: op %s is marked but has no definition", hlo.Opcode(op))
		case r.jitOK && r.vec == nil:
			return fmt.Errorf("tile: op %s has generated code but no vector kernel to match", hlo.Opcode(op))
		}
	}
	return nil
}

func init() {
	if err := checkOps(ops); err != nil {
		panic(err)
	}
}

// row is op's row (the zero row for opcodes out of range).
func row(op hlo.Opcode) opRow {
	if int(op) < len(ops) {
		return ops[op]
	}
	return opRow{}
}

// Computes reports whether tile programs compute op.
func Computes(op hlo.Opcode) bool {
	r := row(op)
	return r.vec != nil || r.f64 != nil || r.f64b != nil || r.cmp
}

// Cheap reports whether a fusion may recompute op rather than read it
// stored (a division is cheap only by a splat: the caller decides).
func Cheap(op hlo.Opcode) bool { return row(op).cheap }

// Mask reports whether op is a logical op on predicates.
func Mask(op hlo.Opcode) bool { return row(op).mask }

// Type reports whether tile programs hold values of type t (as f32).
func Type(t hlo.DType) bool { return t == hlo.F32 || t == hlo.BF16 || t == hlo.F16 }

// applyOp computes one instruction over a tile; b and c are nil or
// ignored for the ops that do not read them.
func applyOp(op hlo.Opcode, dst, a, b, c []float32) {
	r := &ops[op]
	switch {
	case r.vec != nil:
		r.vec(dst, a, b, c)
	case r.f64b != nil:
		a, b = a[:len(dst)], b[:len(dst)]
		for i := range dst {
			dst[i] = float32(r.f64b(float64(a[i]), float64(b[i])))
		}
	default:
		a = a[:len(dst)]
		for i := range dst {
			dst[i] = float32(r.f64(float64(a[i])))
		}
	}
}
