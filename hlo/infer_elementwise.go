package hlo

import (
	"errors"
	"fmt"
)

// Shape rules of elementwise operations: unary, binary (with the implicit
// scalar and degenerate-dimension broadcasts XLA's shape inference allows;
// the verifier then rejects them in HLO), clamp, select, conversions, map.

var elementwiseRules = map[Opcode]inferRule{
	OpAbs: inferUnary, OpAcos: inferUnary, OpAcosh: inferUnary, OpAsin: inferUnary, OpAsinh: inferUnary,
	OpAtan: inferUnary, OpAtanh: inferUnary, OpCbrt: inferUnary, OpCeil: inferUnary, OpClz: inferUnary,
	OpCos: inferUnary, OpCosh: inferUnary, OpErf: inferUnary, OpExp: inferUnary, OpExpm1: inferUnary,
	OpFloor: inferUnary, OpImag: inferUnary, OpIsFinite: inferUnary, OpLog: inferUnary, OpLog1p: inferUnary,
	OpLogistic: inferUnary, OpNegate: inferUnary, OpNot: inferUnary, OpPopulationCount: inferUnary,
	OpReal: inferUnary, OpRoundNearestAfz: inferUnary, OpRoundNearestEven: inferUnary, OpRsqrt: inferUnary,
	OpSign: inferUnary, OpSin: inferUnary, OpSinh: inferUnary, OpSqrt: inferUnary, OpTan: inferUnary,
	OpTanh: inferUnary,

	OpAdd: inferBinary, OpSubtract: inferBinary, OpMultiply: inferBinary, OpDivide: inferBinary,
	OpRemainder: inferBinary, OpMaximum: inferBinary, OpMinimum: inferBinary, OpPower: inferBinary,
	OpAtan2: inferBinary, OpAnd: inferBinary, OpOr: inferBinary, OpXor: inferBinary,
	OpShiftLeft: inferBinary, OpShiftRightArithmetic: inferBinary, OpShiftRightLogical: inferBinary,
	OpComplex: inferBinary, OpCompare: inferBinary, OpMulhi: inferBinary,

	OpClamp:             inferClamp,
	OpSelect:            inferSelect,
	OpConvert:           inferConvert,
	OpBitcastConvert:    inferBitcastConvert,
	OpStochasticConvert: inferStochasticConvert,
	OpReducePrecision:   inferReducePrecision,
	OpMap:               inferMap,
}

func inferUnary(in *Instruction, ops []Shape) (Shape, error) {
	s := ops[0]
	if err := expectArray(s, "operand of unary operation"); err != nil {
		return Shape{}, err
	}
	t := s.DType
	bad := func(want string) error {
		return fmt.Errorf("expected element type in shape to be %s for %s operation; got %s", want, in.Opcode, t)
	}
	switch in.Opcode {
	case OpFloor, OpCeil, OpRoundNearestAfz, OpRoundNearestEven, OpErf, OpCbrt:
		if !t.IsFloat() {
			return Shape{}, bad("floating")
		}
	case OpCos, OpSin, OpTan, OpExp, OpExpm1, OpLog, OpLog1p, OpLogistic, OpRsqrt, OpSqrt, OpTanh,
		OpAcos, OpAcosh, OpAsin, OpAsinh, OpAtan, OpAtanh, OpCosh, OpSinh:
		if !t.IsFloat() && !t.IsComplex() {
			return Shape{}, bad("floating or complex")
		}
	case OpReal, OpImag:
		if t.IsComplex() {
			return withDefaultLayout(s.WithDType(t.ComplexComponent())), nil
		}
		if !t.IsFloat() {
			return Shape{}, bad("floating or complex")
		}
	case OpAbs:
		if t.IsComplex() {
			return withDefaultLayout(s.WithDType(t.ComplexComponent())), nil
		}
		if !isSignedType(t) {
			return Shape{}, bad("signed, floating or complex")
		}
	case OpClz, OpPopulationCount:
		if !t.IsInteger() {
			return Shape{}, bad("integral")
		}
	case OpNegate:
		if t.IsPred() {
			return Shape{}, bad("integral, floating or complex")
		}
	case OpSign:
		if !isSignedType(t) && !t.IsComplex() {
			return Shape{}, bad("signed or complex")
		}
	case OpNot:
		if !t.IsPred() && !t.IsInteger() {
			return Shape{}, bad("pred or integral")
		}
	case OpIsFinite:
		if !t.IsFloat() {
			return Shape{}, bad("floating point")
		}
		return withDefaultLayout(s.WithDType(Pred)), nil
	}
	return withDefaultLayout(s.Clone()), nil
}

func inferBinary(in *Instruction, ops []Shape) (Shape, error) {
	lhs, rhs := ops[0], ops[1]
	if err := expectArray(lhs, "lhs of binary operation "+in.Opcode.String()); err != nil {
		return Shape{}, err
	}
	if err := expectArray(rhs, "rhs of binary operation "+in.Opcode.String()); err != nil {
		return Shape{}, err
	}
	switch in.Opcode {
	case OpAtan2:
		if !lhs.DType.IsFloat() && !lhs.DType.IsComplex() {
			return Shape{}, fmt.Errorf("expected input element type to be floating or complex for atan2; got %s", lhs.DType)
		}
	case OpSubtract, OpPower, OpDivide, OpRemainder, OpShiftLeft, OpShiftRightArithmetic, OpShiftRightLogical:
		if lhs.DType.IsPred() || rhs.DType.IsPred() {
			return Shape{}, fmt.Errorf("expected element type in shape to be arithmetic type for operation %s; got pred", in.Opcode)
		}
	case OpAnd, OpOr, OpXor:
		if !lhs.DType.IsPred() && !lhs.DType.IsInteger() {
			return Shape{}, fmt.Errorf("expected pred or integral type in argument to %s operation; got %s", in.Opcode, lhs.DType)
		}
	case OpMulhi:
		if !lhs.DType.IsInteger() {
			return Shape{}, fmt.Errorf("expected integral type in argument to mulhi; got %s", lhs.DType)
		}
	case OpComplex:
		if !lhs.DType.IsFloat() {
			return Shape{}, fmt.Errorf("expected element type in shape to be floating for complex compose operation; got %s", lhs.DType)
		}
	}
	s, err := broadcastBinary(lhs, rhs)
	if err != nil {
		return Shape{}, err
	}
	switch in.Opcode {
	case OpCompare:
		s.DType = Pred
	case OpComplex:
		switch {
		case lhs.DType == F32 && rhs.DType == F32:
			s.DType = C64
		case lhs.DType == F64 && rhs.DType == F64:
			s.DType = C128
		default:
			return Shape{}, fmt.Errorf("complex of %s and %s is not implemented; only f32 and f64 parts are", lhs.DType, rhs.DType)
		}
	}
	return s, nil
}

// broadcastBinary is XLA's InferElementwiseBinaryOpShape with no broadcast
// dimensions: equal shapes, equal ranks with size-1 (degenerate) dimensions,
// or a scalar against an array.
func broadcastBinary(lhs, rhs Shape) (Shape, error) {
	if !sameTypeIgnoringFP(lhs.DType, rhs.DType) {
		return Shape{}, fmt.Errorf("binary op with different element types: %s and %s", lhs.HumanString(), rhs.HumanString())
	}
	t := higherPrecision(lhs.DType, rhs.DType)
	switch {
	case lhs.Rank() == rhs.Rank():
		dims := make([]int64, lhs.Rank())
		dyn := make([]bool, lhs.Rank())
		for i := range dims {
			a, b := lhs.Dims[i], rhs.Dims[i]
			switch {
			case a == b:
				dims[i] = a
			case a == Unbounded:
				dims[i] = b
				if b == 1 {
					dims[i] = Unbounded
				}
			case b == Unbounded:
				dims[i] = a
				if a == 1 {
					dims[i] = Unbounded
				}
			case a == 1:
				dims[i] = b
			case b == 1:
				dims[i] = a
			default:
				return Shape{}, fmt.Errorf("binary op with incompatible shapes: %s and %s", lhs.HumanString(), rhs.HumanString())
			}
			dyn[i] = dims[i] == Unbounded || (lhs.IsDynamicDim(i) && a == dims[i]) || (rhs.IsDynamicDim(i) && b == dims[i])
		}
		return makeArray(t, dims, dyn), nil
	case lhs.Rank() == 0:
		return makeArray(t, rhs.Dims, dynFlags(rhs)), nil
	case rhs.Rank() == 0:
		return makeArray(t, lhs.Dims, dynFlags(lhs)), nil
	}
	return Shape{}, fmt.Errorf("shapes must be equal rank, but are %s and %s", lhs.HumanString(), rhs.HumanString())
}

// inferClamp: min and max are scalars or have the operand's shape.
func inferClamp(_ *Instruction, ops []Shape) (Shape, error) {
	lo, x, hi := ops[0], ops[1], ops[2]
	for i, s := range ops {
		if err := expectArray(s, []string{"clamp min", "clamp operand", "clamp max"}[i]); err != nil {
			return Shape{}, err
		}
	}
	if !sameTypeIgnoringFP(lo.DType, x.DType) || !sameTypeIgnoringFP(hi.DType, x.DType) {
		return Shape{}, fmt.Errorf("clamp with incompatible element types: %s, %s, %s", lo.HumanString(), x.HumanString(), hi.HumanString())
	}
	for _, b := range []Shape{lo, hi} {
		if !b.IsScalar() && !compatibleShapes(b, x, ignoreFPPrecision) {
			return Shape{}, fmt.Errorf("clamp with incompatible shapes: %s, %s, %s", lo.HumanString(), x.HumanString(), hi.HumanString())
		}
	}
	return withDefaultLayout(x.Clone()), nil
}

// inferSelect: on_true and on_false agree; the predicate is pred with their
// dimensions, or a scalar pred.
func inferSelect(_ *Instruction, ops []Shape) (Shape, error) {
	pred, onTrue, onFalse := ops[0], ops[1], ops[2]
	for i, s := range ops {
		if err := expectArray(s, []string{"select pred", "select on-true", "select on-false"}[i]); err != nil {
			return Shape{}, err
		}
	}
	if !compatibleShapes(onTrue, onFalse, ignoreFPPrecision) {
		return Shape{}, fmt.Errorf("operands to select must be the same shape; got %s and %s", onTrue.HumanString(), onFalse.HumanString())
	}
	if pred.DType != Pred {
		return Shape{}, fmt.Errorf("select's pred operand must have pred element type; got %s", pred.HumanString())
	}
	if !pred.IsScalar() && !dimsMatch(pred.Dims, onTrue.Dims) {
		return Shape{}, fmt.Errorf("operands to select and predicate must be the same shape; got %s and %s", onTrue.HumanString(), pred.HumanString())
	}
	dyn := dynFlags(onTrue)
	for i := range dyn {
		dyn[i] = dyn[i] || onFalse.IsDynamicDim(i) || pred.IsDynamicDim(i)
	}
	return makeArray(higherPrecision(onTrue.DType, onFalse.DType), onTrue.Dims, dyn), nil
}

// convertTarget is the new element type of a conversion: in HLO text it is
// only written in the result shape.
func convertTarget(in *Instruction, operand Shape) (DType, error) {
	d, err := needDeclared(in, "the new element type")
	if err != nil {
		return Invalid, err
	}
	if !operand.IsArray() || !d.IsArray() {
		return Invalid, fmt.Errorf("cannot convert from or to a non-array shape: %s => %s", operand.HumanString(), d.HumanString())
	}
	return d.DType, nil
}

func inferConvert(in *Instruction, ops []Shape) (Shape, error) {
	t, err := convertTarget(in, ops[0])
	if err != nil {
		return Shape{}, err
	}
	return withDefaultLayout(ops[0].WithDType(t)), nil
}

// inferBitcastConvert: equal widths keep the shape; a narrower result
// gains a minor dimension of the width ratio, a wider one loses it.
func inferBitcastConvert(in *Instruction, ops []Shape) (Shape, error) {
	s := ops[0]
	t, err := convertTarget(in, s)
	if err != nil {
		return Shape{}, err
	}
	if s.DType.IsComplex() != t.IsComplex() {
		return Shape{}, fmt.Errorf("conversion between complex and real type %s => %s", s.HumanString(), t)
	}
	from, to := s.DType.Bits(), t.Bits()
	if max(from, to)%min(from, to) != 0 {
		return Shape{}, fmt.Errorf("cannot bitcast types with undivisible bit-widths: %s => %s", s.DType, t)
	}
	ratio := int64(max(from, to) / min(from, to))
	out := s.WithDType(t)
	switch {
	case from > to:
		out.Dims = append(out.Dims, ratio)
		if out.Dynamic != nil {
			out.Dynamic = append(out.Dynamic, false)
		}
	case from < to:
		last := s.Rank() - 1
		if last < 0 || s.Dims[last] != ratio {
			return Shape{}, fmt.Errorf("last dimension of input shape %s is not equal to ratio of bit-widths=%d for bitcast-convert to %s", s.HumanString(), ratio, t)
		}
		out.Dims = out.Dims[:last]
		if out.Dynamic != nil {
			out.Dynamic = out.Dynamic[:last]
			out = makeArray(out.DType, out.Dims, out.Dynamic)
		}
	}
	return withDefaultLayout(out), nil
}

func inferStochasticConvert(in *Instruction, ops []Shape) (Shape, error) {
	x, random := ops[0], ops[1]
	if err := expectArray(x, "lhs of stochastic convert operation"); err != nil {
		return Shape{}, err
	}
	if err := expectArray(random, "rhs of stochastic convert operation"); err != nil {
		return Shape{}, err
	}
	if !random.DType.IsUnsigned() {
		return Shape{}, fmt.Errorf("random numbers for stochastic convert must be unsigned integers, but got: %s", random.HumanString())
	}
	if !x.DType.IsFloat() {
		return Shape{}, fmt.Errorf("stochastic convert supports only floating point operand conversion, but got: %s", x.HumanString())
	}
	if x.DType.Bits() != random.DType.Bits() {
		return Shape{}, fmt.Errorf("the random number is required to have same bits as the operand; got random bits: %d, operand bits: %d", random.DType.Bits(), x.DType.Bits())
	}
	if !dimsMatch(x.Dims, random.Dims) {
		return Shape{}, fmt.Errorf("stochastic convert operand shape does not match random tensor shape: %s vs %s", x.HumanString(), random.HumanString())
	}
	t, err := convertTarget(in, x)
	if err != nil {
		return Shape{}, err
	}
	return withDefaultLayout(x.WithDType(t)), nil
}

func inferReducePrecision(in *Instruction, ops []Shape) (Shape, error) {
	s := ops[0]
	if !s.IsArray() || !s.DType.IsFloat() {
		return Shape{}, fmt.Errorf("expected element type in shape to be floating point for reduce-precision operation; got %s", s.HumanString())
	}
	e, okE := in.Int("exponent_bits")
	m, okM := in.Int("mantissa_bits")
	if !okE || !okM {
		return Shape{}, errors.New("needs exponent_bits and mantissa_bits")
	}
	if e < 1 {
		// One exponent bit is needed to tell zero from infinity.
		return Shape{}, fmt.Errorf("expected exponent_bits >= 1; got %d", e)
	}
	if m < 0 {
		return Shape{}, fmt.Errorf("expected non-negative mantissa_bits; got %d", m)
	}
	return withDefaultLayout(s.Clone()), nil
}

// inferMap: the operands have one set of dimensions (scalars excepted); the
// mapped computation takes one scalar per operand and returns a scalar.
func inferMap(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) == 0 {
		return Shape{}, errors.New("map expects at least one argument")
	}
	arg := ops[0]
	for i, s := range ops {
		if err := expectArray(s, "operand of map"); err != nil {
			return Shape{}, err
		}
		if i == 0 || dimsMatch(s.Dims, arg.Dims) {
			continue
		}
		if sameTypeIgnoringFP(s.DType, arg.DType) {
			if s.IsScalar() {
				continue
			}
			if arg.IsScalar() {
				arg = s
				continue
			}
		}
		return Shape{}, fmt.Errorf("map operation requires all operands to have the same shape; got: %s", shapeList(ops))
	}
	c, err := calledComputation(in, "to_apply")
	if err != nil {
		return Shape{}, err
	}
	fn := programShape(c)
	if len(fn.Params) != len(ops) {
		return Shape{}, fmt.Errorf("map applied function arity must match number of arguments; got: arity: %d, arguments: %d", len(fn.Params), len(ops))
	}
	if !fn.Result.IsScalar() {
		return Shape{}, fmt.Errorf("mapped computation's result has to be a scalar; got: %s", fn.Result.HumanString())
	}
	for i, p := range fn.Params {
		if !p.IsScalar() {
			return Shape{}, fmt.Errorf("mapped computation's parameter has to be a scalar; got parameter %d shape: %s", i, p.HumanString())
		}
		if !sameTypeIgnoringFP(p.DType, ops[i].DType) {
			return Shape{}, fmt.Errorf("mapped computation's parameter type has to match argument element type; got parameter %d shape: %s, argument shape: %s", i, p.HumanString(), ops[i].HumanString())
		}
	}
	return makeArray(fn.Result.DType, arg.Dims, dynFlags(arg)), nil
}
