package hlo_test

import "testing"

func binary(op, lhs, rhs, attrs string) string {
	return module("", `
  p0 = `+lhs+` parameter(0)
  p1 = `+rhs+` parameter(1)
  ROOT r = `+op+`(p0, p1)`+attrs)
}

func unary(op, operand string) string {
	return module("", `
  p0 = `+operand+` parameter(0)
  ROOT r = `+op+`(p0)`)
}

func TestInferElementwise(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "add same shapes", doc: "element-wise binary ops: both operands have the same shape, and so does the result",
			hlo: binary("add", "f32[2,3]", "f32[2,3]", ""), want: "f32[2,3]"},
		{name: "add scalar broadcast", doc: "ShapeInference: scalar broadcasting is a special case of in-dim broadcasting",
			hlo: binary("f32[2,3] multiply", "f32[]", "f32[2,3]", ""), want: "f32[2,3]"},
		{name: "degenerate dims", doc: "broadcasting: a size-1 (degenerate) dimension stretches to the other operand's size",
			hlo: binary("f32[2,3] add", "f32[2,1]", "f32[1,3]", ""), want: "f32[2,3]"},
		{name: "rank mismatch", doc: "ShapeInference rejects implicit rank broadcasting of non-scalars",
			hlo: binary("f32[2,3] add", "f32[3]", "f32[2,3]", ""), err: "add: shapes must be equal rank"},
		{name: "incompatible dims", doc: "broadcasting: dimensions must be equal or one of them 1",
			hlo: binary("f32[2,3] add", "f32[2,3]", "f32[3,2]", ""), err: "incompatible shapes"},
		{name: "element types differ", doc: "binary ops take operands of one element type",
			hlo: binary("f32[2] add", "f32[2]", "s32[2]", ""), err: "different element types"},
		{name: "compare gives pred", doc: "Compare: the result is an array of PRED of the operands' shape",
			hlo: binary("compare", "f32[2,3]", "f32[2,3]", ", direction=LT"), want: "pred[2,3]"},
		{name: "and on floats", doc: "And/Or/Xor take PRED or integral element types",
			hlo: binary("f32[2] and", "f32[2]", "f32[2]", ""), err: "pred or integral"},
		{name: "xor on s8", doc: "And/Or/Xor take PRED or integral element types",
			hlo: binary("xor", "s8[4]", "s8[4]", ""), want: "s8[4]"},
		{name: "shift on pred", doc: "arithmetic binary ops such as shifts reject PRED",
			hlo: binary("pred[2] shift-left", "pred[2]", "pred[2]", ""), err: "arithmetic type"},
		{name: "complex f32", doc: "Complex: two F32 parts make C64",
			hlo: binary("complex", "f32[4]", "f32[4]", ""), want: "c64[4]"},
		{name: "complex f64", doc: "Complex: two F64 parts make C128",
			hlo: binary("complex", "f64[]", "f64[]", ""), want: "c128[]"},
		{name: "real of complex", doc: "Real: the real part of C128 is F64",
			hlo: unary("real", "c128[3]"), want: "f64[3]"},
		{name: "imag of complex", doc: "Imag: the imaginary part of C64 is F32",
			hlo: unary("imag", "c64[3,2]"), want: "f32[3,2]"},
		{name: "abs of complex", doc: "Abs of a complex number is its real magnitude",
			hlo: unary("abs", "c64[2]"), want: "f32[2]"},
		{name: "abs of s32", doc: "Abs keeps signed types",
			hlo: unary("abs", "s32[2]"), want: "s32[2]"},
		{name: "abs of u32", doc: "ShapeInference: Abs needs a signed, floating or complex type",
			hlo: unary("u32[2] abs", "u32[2]"), err: "signed"},
		{name: "is-finite", doc: "IsFinite: the result has PRED elements",
			hlo: unary("is-finite", "f16[5]"), want: "pred[5]"},
		{name: "is-finite of ints", doc: "IsFinite is defined on floating point",
			hlo: unary("pred[5] is-finite", "s32[5]"), err: "floating point"},
		{name: "floor of ints", doc: "Floor is defined on floating point",
			hlo: unary("s32[5] floor", "s32[5]"), err: "floating"},
		{name: "exp of complex", doc: "Exp is defined on floating point and complex",
			hlo: unary("exponential", "c64[5]"), want: "c64[5]"},
		{name: "popcnt", doc: "PopulationCount takes integers",
			hlo: unary("popcnt", "u8[3]"), want: "u8[3]"},
		{name: "clz of floats", doc: "Clz takes integers",
			hlo: unary("f32[3] count-leading-zeros", "f32[3]"), err: "integral"},
		{name: "not of pred", doc: "Not takes PRED or integers",
			hlo: unary("not", "pred[2]"), want: "pred[2]"},
		{name: "negate of pred", doc: "Neg takes integral, floating or complex types",
			hlo: unary("pred[2] negate", "pred[2]"), err: "integral, floating or complex"},
		{name: "clamp scalar bounds", doc: "Clamp: min and max may be scalars of the operand's type",
			hlo: module("", `
  lo = f32[] parameter(0)
  x = f32[2,3] parameter(1)
  hi = f32[] parameter(2)
  ROOT c = clamp(lo, x, hi)`), want: "f32[2,3]"},
		{name: "clamp bad bounds", doc: "Clamp: non-scalar bounds have the operand's shape",
			hlo: module("", `
  lo = f32[2] parameter(0)
  x = f32[3] parameter(1)
  hi = f32[3] parameter(2)
  ROOT c = f32[3] clamp(lo, x, hi)`), err: "clamp with incompatible shapes"},
		{name: "select", doc: "Select: on_true and on_false have one shape, the result's; pred has the same dimensions",
			hlo: module("", `
  p = pred[2] parameter(0)
  a = s32[2] parameter(1)
  b = s32[2] parameter(2)
  ROOT s = select(p, a, b)`), want: "s32[2]"},
		{name: "select scalar pred", doc: "Select: a scalar pred chooses between whole arrays",
			hlo: module("", `
  p = pred[] parameter(0)
  a = f32[2] parameter(1)
  b = f32[2] parameter(2)
  ROOT s = select(p, a, b)`), want: "f32[2]"},
		{name: "select non-pred", doc: "Select: the predicate is a PRED array",
			hlo: module("", `
  p = s32[2] parameter(0)
  a = f32[2] parameter(1)
  b = f32[2] parameter(2)
  ROOT s = f32[2] select(p, a, b)`), err: "pred element type"},
		{name: "select branches differ", doc: "Select: on_true and on_false have the same shape",
			hlo: module("", `
  p = pred[2] parameter(0)
  a = f32[2] parameter(1)
  b = f32[3] parameter(2)
  ROOT s = f32[2] select(p, a, b)`), err: "must be the same shape"},
		{name: "convert", doc: "ConvertElementType: the dimensions stay, the element type is the new one",
			hlo: unary("s8[2,3] convert", "f32[2,3]"), want: "s8[2,3]"},
		{name: "bitcast-convert narrower", doc: "BitcastConvertType: converting to a narrower type adds a minor dimension of the width ratio",
			hlo: unary("u8[2,3,4] bitcast-convert", "f32[2,3]"), want: "u8[2,3,4]"},
		{name: "bitcast-convert wider", doc: "BitcastConvertType: converting to a wider type drops a minor dimension equal to the ratio",
			hlo: unary("f32[2] bitcast-convert", "u8[2,4]"), want: "f32[2]"},
		{name: "bitcast-convert same width", doc: "BitcastConvertType: equal widths keep the shape",
			hlo: unary("s32[3] bitcast-convert", "f32[3]"), want: "s32[3]"},
		{name: "bitcast-convert bad ratio", doc: "BitcastConvertType: the minor dimension must equal the width ratio",
			hlo: unary("f32[2] bitcast-convert", "s16[2,3]"), err: "ratio of bit-widths=2"},
		{name: "bitcast-convert to complex", doc: "BitcastConvertType: no conversion between real and complex",
			hlo: unary("c64[2] bitcast-convert", "f64[2]"), err: "complex and real"},
		{name: "stochastic-convert", doc: "StochasticConvert: float operand, unsigned random bits of the same width",
			hlo: binary("bf16[4] stochastic-convert", "f32[4]", "u32[4]", ""), want: "bf16[4]"},
		{name: "stochastic-convert width", doc: "StochasticConvert: the random bits have the operand's width",
			hlo: binary("bf16[4] stochastic-convert", "f32[4]", "u16[4]", ""), err: "same bits"},
		{name: "reduce-precision", doc: "ReducePrecision keeps the operand's shape",
			hlo: module("", `
  p0 = f32[3] parameter(0)
  ROOT r = reduce-precision(p0), exponent_bits=5, mantissa_bits=10`), want: "f32[3]"},
		{name: "reduce-precision no exponent", doc: "ShapeInference: one exponent bit is needed to tell zero from infinity",
			hlo: module("", `
  p0 = f32[3] parameter(0)
  ROOT r = f32[3] reduce-precision(p0), exponent_bits=0, mantissa_bits=10`), err: "exponent_bits >= 1"},
		{name: "map", doc: "Map: the result has the operands' dimensions and the computation's result type",
			hlo: module(lessF32, `
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT m = map(p0, p1), dimensions={0}, to_apply=less_f32`), want: "pred[4]"},
		{name: "map arity", doc: "Map: the computation takes one scalar per operand",
			hlo: module(addF32, `
  p0 = f32[4] parameter(0)
  ROOT m = f32[4] map(p0), dimensions={0}, to_apply=add_f32`), err: "arity must match"},
	})
}
