package stablehlo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// opFunc converts one op, returning one instruction per result.
type opFunc func(s *scope, op *mlir.Op) ([]*hlo.Instruction, error)

// opTable maps generic op names to their converters; each op-family file
// fills its rows in init.
var opTable = map[string]opFunc{}

func register(fn opFunc, names ...string) {
	for _, n := range names {
		if opTable[n] != nil {
			panic("stablehlo: " + n + " registered twice")
		}
		opTable[n] = fn
	}
}

// elementwise ops map one to one onto an HLO opcode with the same operands.
var elementwise = map[string]hlo.Opcode{
	"abs": hlo.OpAbs, "add": hlo.OpAdd, "and": hlo.OpAnd, "atan2": hlo.OpAtan2, "cbrt": hlo.OpCbrt,
	"ceil": hlo.OpCeil, "count_leading_zeros": hlo.OpClz, "complex": hlo.OpComplex, "convert": hlo.OpConvert,
	"cosine": hlo.OpCos, "divide": hlo.OpDivide, "exponential": hlo.OpExp, "exponential_minus_one": hlo.OpExpm1,
	"floor": hlo.OpFloor, "imag": hlo.OpImag, "is_finite": hlo.OpIsFinite, "log": hlo.OpLog,
	"log_plus_one": hlo.OpLog1p, "logistic": hlo.OpLogistic, "maximum": hlo.OpMaximum, "minimum": hlo.OpMinimum,
	"multiply": hlo.OpMultiply, "negate": hlo.OpNegate, "not": hlo.OpNot, "or": hlo.OpOr, "popcnt": hlo.OpPopulationCount,
	"power": hlo.OpPower, "real": hlo.OpReal, "remainder": hlo.OpRemainder, "round_nearest_afz": hlo.OpRoundNearestAfz,
	"round_nearest_even": hlo.OpRoundNearestEven, "rsqrt": hlo.OpRsqrt, "shift_left": hlo.OpShiftLeft,
	"shift_right_arithmetic": hlo.OpShiftRightArithmetic, "shift_right_logical": hlo.OpShiftRightLogical,
	"sign": hlo.OpSign, "sine": hlo.OpSin, "sqrt": hlo.OpSqrt, "subtract": hlo.OpSubtract, "tan": hlo.OpTan,
	"tanh": hlo.OpTanh, "xor": hlo.OpXor, "select": hlo.OpSelect, "clamp": hlo.OpClamp,
	"bitcast_convert": hlo.OpBitcastConvert, "optimization_barrier": hlo.OpOptimizationBarrier,
}

func init() {
	for name, code := range elementwise {
		register(sameShape(code), "stablehlo."+name)
	}
	register(convertConstant, "stablehlo.constant", "arith.constant")
	register(convertCompare, "stablehlo.compare")
	register(convertReducePrecision, "stablehlo.reduce_precision")
	register(convertCall, "func.call", "call")
	register(convertTuple, "stablehlo.tuple")
	register(convertGTE, "stablehlo.get_tuple_element")
	register(convertCheck, "check.expect_eq", "check.expect_eq_const", "check.expect_almost_eq",
		"check.expect_almost_eq_const", "check.expect_close", "check.expect_serialized_eq")
	register(convertCustomCall, "stablehlo.custom_call")
	register(convertAfterAll, "stablehlo.after_all", "stablehlo.create_token")
	register(convertComposite, "stablehlo.composite")
	// The value is unchanged on one device; sharding annotations of Shardy.
	register(identity, "interpreter.probe", "sdy.sharding_constraint", "sdy.reshard")
}

// sameShape converts an op to an HLO instruction with the result type of
// the op (a tuple for the variadic optimization_barrier).
func sameShape(code hlo.Opcode) opFunc {
	return func(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
		ins, err := s.operands(op)
		if err != nil {
			return nil, err
		}
		if code == hlo.OpOptimizationBarrier {
			t := s.add(code, s.tuple(ins).Shape, []*hlo.Instruction{s.tuple(ins)})
			return s.untuple(t), nil
		}
		sh, err := resultShape(op, 0)
		if err != nil {
			return nil, err
		}
		// bitcast_convert reinterprets a quantized tensor's storage.
		if isQuant(op) && code != hlo.OpBitcastConvert {
			return nil, fmt.Errorf("ops on quantized tensors: %w", ErrUnsupported)
		}
		if !isStatic(sh) {
			sh = hlo.ArrayShape(sh.DType, widest(ins).Shape.Dims...)
		}
		if len(ins) > 0 && ins[0].Shape.DType.IsComplex() {
			return complexOp(s, code, sh, ins)
		}
		if code == hlo.OpBitcastConvert && sh.DType.IsComplex() {
			return realToComplex(s, ins[0], sh)
		}
		if code == hlo.OpBitcastConvert && (sh.DType == hlo.Pred) != (ins[0].Shape.DType == hlo.Pred) {
			return bitcastBits(s, ins[0], sh)
		}
		return []*hlo.Instruction{s.add(code, sh, ins)}, nil
	}
}

// isQuant reports whether any operand or result of op is quantized.
func isQuant(op *mlir.Op) bool {
	for _, vs := range [][]*mlir.Value{op.Operands, op.Results} {
		for _, v := range vs {
			if _, ok := elemType(v.Type).(mlir.QuantType); ok {
				return true
			}
		}
	}
	return false
}

func convertConstant(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	sh, err := resultShape(op, 0)
	if err != nil {
		return nil, err
	}
	var d mlir.DenseAttr
	switch v := op.Attr("value").(type) {
	case mlir.DenseAttr:
		d = v
	case mlir.IntAttr: // arith.constant 1 : i32
		d = mlir.DenseAttr{Type: op.Results[0].Type, Elems: []string{fmt.Sprint(v.Value)}, Splat: true}
	case mlir.FloatAttr:
		d = mlir.DenseAttr{Type: op.Results[0].Type, Elems: []string{fmt.Sprint(v.Value)}, Splat: true}
	case mlir.BoolAttr:
		d = mlir.DenseAttr{Type: op.Results[0].Type, Elems: []string{fmt.Sprint(v.Value)}, Splat: true}
	default:
		return nil, fmt.Errorf("constant without a dense value: %w", ErrUnsupported)
	}
	lit, err := denseLiteral(d, sh)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{s.constant(lit)}, nil
}

// constant appends a constant instruction.
func (s *scope) constant(lit *hlo.Literal) *hlo.Instruction {
	in := s.add(hlo.OpConstant, lit.Shape(), nil)
	in.Literal = lit
	return in
}

// scalar appends a rank-0 constant of type t.
func (s *scope) scalar(t hlo.DType, v float64) *hlo.Instruction {
	return s.constant(scalarLiteral(t, v))
}

// splat appends a constant v broadcast to shape sh.
func (s *scope) splat(sh hlo.Shape, v float64) *hlo.Instruction {
	c := s.scalar(sh.DType, v)
	if sh.Rank() == 0 {
		return c
	}
	return s.add(hlo.OpBroadcast, sh, []*hlo.Instruction{c}, hlo.Attr{Name: "dimensions", Value: []int64{}})
}

func convertCompare(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := resultShape(op, 0)
	if err != nil {
		return nil, err
	}
	return convertCompareOf(s, op, ins, sh)
}

// convertCompareOf builds the compare of a stablehlo or chlo compare op.
func convertCompareOf(s *scope, op *mlir.Op, ins []*hlo.Instruction, sh hlo.Shape) ([]*hlo.Instruction, error) {
	dir := enumOf(op.Attr("comparison_direction"))
	if dir == "" {
		return nil, fmt.Errorf("compare without comparison_direction")
	}
	attrs := []hlo.Attr{{Name: "direction", Value: hlo.Enum(dir)}}
	if t := enumOf(op.Attr("compare_type")); t != "" && t != "NOTYPE" {
		attrs = append(attrs, hlo.Attr{Name: "type", Value: hlo.Enum(t)})
	}
	return []*hlo.Instruction{s.add(hlo.OpCompare, sh, ins, attrs...)}, nil
}

func convertReducePrecision(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := resultShape(op, 0)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{s.add(hlo.OpReducePrecision, sh, ins,
		hlo.Attr{Name: "exponent_bits", Value: opInt(op, "exponent_bits", 8)},
		hlo.Attr{Name: "mantissa_bits", Value: opInt(op, "mantissa_bits", 23)})}, nil
}

// convertCall inlines the callee, as the corpus's `stablehlo-opt -inline`.
func convertCall(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	callee := stringAttr(op.Attr("callee"))
	f := s.c.funcs[callee]
	if f == nil {
		return nil, fmt.Errorf("call of unknown function @%s", callee)
	}
	args, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	return s.inline(f, args)
}

// inline converts function f's body into the current computation with
// its arguments bound to args.
func (s *scope) inline(f *mlir.Op, args []*hlo.Instruction) ([]*hlo.Instruction, error) {
	key := inlineKey{f, s.proc}
	if s.c.inlining[key] {
		return nil, fmt.Errorf("recursive call of @%s: %w", stringAttr(f.Attr("sym_name")), ErrUnsupported)
	}
	s.c.inlining[key] = true
	defer delete(s.c.inlining, key)
	body, err := funcBody(f)
	if err != nil {
		return nil, err
	}
	if len(body.Args) != len(args) {
		return nil, fmt.Errorf("@%s takes %d arguments, given %d", stringAttr(f.Attr("sym_name")), len(body.Args), len(args))
	}
	inner := newScope(s.c, s.comp, s.outer)
	inner.entry = s.entry
	inner.proc = s.proc
	for i, a := range body.Args {
		inner.vals[a] = args[i]
	}
	return inner.block(body)
}

func convertTuple(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{s.tuple(ins)}, nil
}

func convertGTE(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	i := int(opInt(op, "index", -1))
	if len(ins) != 1 || !ins[0].Shape.IsTuple() || i < 0 || i >= len(ins[0].Shape.Tuple) {
		return nil, fmt.Errorf("get_tuple_element index %d out of range", i)
	}
	return []*hlo.Instruction{s.gte(ins[0], i)}, nil
}

func convertAfterAll(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{s.add(hlo.OpAfterAll, hlo.TokenShape(), ins)}, nil
}

// convertComposite calls the composite's decomposition function.
func convertComposite(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	name := stringAttr(op.Attr("decomposition"))
	f := s.c.funcs[name]
	if f == nil {
		return nil, fmt.Errorf("composite decomposition @%s not found", name)
	}
	args, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	return s.inline(f, args)
}

// convertCustomCall handles the check targets the corpus calls through
// custom_call, and passes other targets through to HLO's custom-call.
func convertCustomCall(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	target := stringAttr(op.Attr("call_target_name"))
	if strings.HasPrefix(target, "check.") {
		return checkOp(s, op, target)
	}
	if target == "shape_assertion" {
		return shapeAssertion(s, op)
	}
	// A program converted to be run (ConvertProgram) needs targets Axle
	// implements; an imported module may name any.
	if s.c.checks && !slices.Contains(eval.CustomCallTargets(), target) {
		return nil, fmt.Errorf("custom_call target %q has no implementation in Axle: %w", target, ErrUnsupported)
	}
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	shapes := make([]hlo.Shape, len(op.Results))
	for i := range op.Results {
		if shapes[i], err = resultShape(op, i); err != nil {
			return nil, err
		}
	}
	extra, err := customCallExtras(op, ins, shapes)
	if err != nil {
		return nil, fmt.Errorf("custom_call %q: %w", target, err)
	}
	sh := hlo.TupleShape(shapes...)
	if len(shapes) == 1 {
		sh = shapes[0]
	}
	attrs := []hlo.Attr{{Name: "custom_call_target", Value: target}}
	if boolOf(op.Attr("has_side_effect")) {
		attrs = append(attrs, hlo.Attr{Name: "custom_call_has_side_effect", Value: true})
	}
	if bc, ok := op.Attr("backend_config").(mlir.StringAttr); ok && bc.Value != "" {
		attrs = append(attrs, hlo.Attr{Name: "backend_config", Value: hlo.Raw(fmt.Sprintf("%q", bc.Value))})
	}
	attrs = append(attrs, extra...)
	in := s.add(hlo.OpCustomCall, sh, ins, attrs...)
	if len(shapes) == 1 {
		return []*hlo.Instruction{in}, nil
	}
	return s.untuple(in), nil
}

// identity passes its operands through (the interpreter's probe, which
// only records the value).
func identity(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	return s.operands(op)
}

// complexOp converts the elementwise ops whose complex forms HLO lacks:
// convert to a real type keeps the real part; maximum and minimum order
// lexicographically (real part, then imaginary), as StableHLO defines.
func complexOp(s *scope, code hlo.Opcode, sh hlo.Shape, ins []*hlo.Instruction) ([]*hlo.Instruction, error) {
	x := ins[0]
	part := x.Shape.WithDType(x.Shape.DType.ComplexComponent())
	re := func(v *hlo.Instruction) *hlo.Instruction { return s.add(hlo.OpReal, part, []*hlo.Instruction{v}) }
	im := func(v *hlo.Instruction) *hlo.Instruction { return s.add(hlo.OpImag, part, []*hlo.Instruction{v}) }
	switch code {
	case hlo.OpConvert:
		if sh.DType.IsComplex() {
			break
		}
		return []*hlo.Instruction{s.add(hlo.OpConvert, sh, []*hlo.Instruction{re(x)})}, nil
	case hlo.OpMaximum, hlo.OpMinimum:
		dir := "GT"
		if code == hlo.OpMinimum {
			dir = "LT"
		}
		b := eb{s, part}
		y := ins[1]
		first := b.bin(hlo.OpOr, b.cmp(dir, re(x), re(y)),
			b.bin(hlo.OpAnd, b.cmp("EQ", re(x), re(y)), b.cmp(dir, im(x), im(y))))
		return []*hlo.Instruction{s.add(hlo.OpSelect, x.Shape, []*hlo.Instruction{first, x, y})}, nil
	case hlo.OpBitcastConvert:
		if sh.DType == x.Shape.DType {
			return []*hlo.Instruction{x}, nil
		}
		if !sh.DType.IsComplex() {
			return complexToReal(s, x, sh)
		}
	case hlo.OpCbrt:
		// HLO's cbrt takes real types only (as XLA's shape inference).
		return []*hlo.Instruction{complexCbrt(s, x)}, nil
	}
	return []*hlo.Instruction{s.add(code, sh, ins)}, nil
}

// widest is the operand of highest rank (select's and clamp's scalars
// broadcast to it).
func widest(ins []*hlo.Instruction) *hlo.Instruction {
	w := ins[0]
	for _, in := range ins[1:] {
		if in.Shape.Rank() > w.Shape.Rank() {
			w = in
		}
	}
	return w
}

// complexCbrt is the principal cube root as the StableHLO reference
// interpreter defines it, (re² + im²)^(1/6)·(cos θ + i·sin θ) with
// θ = atan2(im, re)/3, computed in f64 as the reference does for both
// widths.
func complexCbrt(s *scope, z *hlo.Instruction) *hlo.Instruction {
	part := z.Shape.DType.ComplexComponent()
	b := eb{s, z.Shape.WithDType(hlo.F64)}
	re := b.convert(s.add(hlo.OpReal, z.Shape.WithDType(part), []*hlo.Instruction{z}), hlo.F64)
	im := b.convert(s.add(hlo.OpImag, z.Shape.WithDType(part), []*hlo.Instruction{z}), hlo.F64)
	r := b.bin(hlo.OpPower, b.add(b.mul(re, re), b.mul(im, im)), b.c(1.0/6))
	theta := b.div(b.bin(hlo.OpAtan2, im, re), b.c(3))
	re, im = b.mul(r, b.un(hlo.OpCos, theta)), b.mul(r, b.un(hlo.OpSin, theta))
	if part != hlo.F64 {
		re, im = b.convert(re, part), b.convert(im, part)
	}
	return s.add(hlo.OpComplex, z.Shape, []*hlo.Instruction{re, im})
}
