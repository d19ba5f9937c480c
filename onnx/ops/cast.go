package ops

import (
	"math"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
	"github.com/axle-ml/axle/xb"
)

func init() {
	elemRegister(Op{Name: "Cast", Lower: lowerCast, Host: castHost})
	elemRegister(Op{Name: "CastLike", Lower: lowerCast, Host: castHost})
	elemRegister(Op{Name: "BitCast", Lower: lowerBitCast})
}

// castTarget is the node's destination type: Cast's "to", CastLike's
// second input's type.
func castTarget(n *onnx.Node, second func() (onnx.ElemType, bool)) (onnx.ElemType, bool) {
	if n.Op == "CastLike" {
		return second()
	}
	if n.AttrType("to") == onnxpb.AttributeProto_STRING {
		// Cast-1 names the type: "FLOAT", "INT64", ...
		v, ok := onnxpb.TensorProto_DataType_value[strings.ToUpper(n.Str("to", ""))]
		return onnx.ElemType(v), ok
	}
	return onnx.ElemType(n.Int("to", 0)), true
}

func lowerCast(c *Ctx) error {
	to, ok := castTarget(c.Node, func() (onnx.ElemType, bool) {
		if !c.Has(1) {
			return 0, false
		}
		return onnx.ElemTypeOf(c.In[1].Shape().DType), true
	})
	if !ok {
		return c.Errorf("no target type")
	}
	x := c.Input(0)
	if x == nil {
		return c.Unsupported("Cast of a non-numeric tensor")
	}
	t := to.HLO()
	if t == hlo.Invalid || t.IsComplex() {
		return c.Unsupported("Cast to %v", to)
	}
	saturate := c.Opset < 19 || c.Node.Int("saturate", 1) != 0
	y, err := castOp(x, t, saturate, c.Node.Str("round_mode", "up"))
	if err != nil {
		return c.Unsupported("%v", err)
	}
	c.Set(0, y)
	return nil
}

type castError string

func (e castError) Error() string { return string(e) }

// castFloat8Max is the largest finite value of each float8/float4 type.
var castFloat8Max = map[hlo.DType]float64{
	hlo.F8E4M3FN: 448, hlo.F8E4M3FNUZ: 240, hlo.F8E5M2: 57344, hlo.F8E5M2FNUZ: 57344,
	hlo.F4E2M1FN: 6,
}

// castOp converts x to t with ONNX's Cast semantics.
func castOp(x *xb.Op, t hlo.DType, saturate bool, roundMode string) (*xb.Op, error) {
	s := x.DType()
	if s == t {
		return x, nil
	}
	if s.IsComplex() {
		return nil, castError("Cast from " + s.String())
	}
	// Narrow sources go through a wide type the rest handles.
	switch {
	case s.IsFloat() && (s.IsF8() || s == hlo.F4E2M1FN):
		x, s = xb.Convert(x, hlo.F32), hlo.F32
	case s.IsInteger() && s.Bits() < 8:
		x, s = xb.Convert(x, hlo.S32), hlo.S32
	}
	if s == t {
		return x, nil
	}
	switch {
	case t.IsPred():
		return xb.Ne(x, FullLike(x, 0)), nil
	case t == hlo.F8E8M0FNU:
		return castE8M0(x, saturate, roundMode)
	case t.IsF8() || t == hlo.F4E2M1FN:
		m, ok := castFloat8Max[t]
		if !ok {
			return nil, castError("Cast to " + t.String())
		}
		if !s.IsFloat() {
			x, s = xb.Convert(x, hlo.F32), hlo.F32
		}
		if t == hlo.F4E2M1FN {
			// No NaN or infinity: saturate, NaN becomes -0 (ONNX's choice).
			x = xb.Select(xb.Ne(x, x), FullLike(x, math.Copysign(0, -1)), x)
			saturate = true
		}
		if saturate {
			x = xb.Min(xb.Max(x, FullLike(x, -m)), FullLike(x, m))
		}
		return xb.Convert(x, t), nil
	case t.IsInteger() && t.Bits() < 8:
		// Wrap modulo 2^bits, like a C cast to a narrow integer.
		w := x
		if s.IsFloat() {
			w = xb.Convert(x, hlo.S64)
		} else if s != hlo.S64 {
			w = xb.Convert(x, hlo.S64)
		}
		bits := t.Bits()
		mask := FullLike(w, float64(int64(1)<<bits-1))
		if t.IsSigned() {
			half := FullLike(w, float64(int64(1)<<(bits-1)))
			w = xb.Sub(xb.And(xb.Add(w, half), mask), half)
		} else {
			w = xb.And(w, mask)
		}
		return xb.Convert(w, t), nil
	default:
		if s.IsPred() {
			x = xb.Convert(x, hlo.S32)
		}
		return xb.Convert(x, t), nil
	}
}

// castE8M0 encodes x as float8e8m0 (a bare biased exponent): NaN is 0xff,
// the sign is ignored, the mantissa rounds by mode; overflow saturates to
// 0xfe or becomes NaN.
func castE8M0(x *xb.Op, saturate bool, mode string) (*xb.Op, error) {
	if x.DType() != hlo.F32 {
		x = xb.Convert(x, hlo.F32)
	}
	bits := xb.BitcastConvert(x, hlo.U32)
	u := func(v float64) *xb.Op { return FullLike(bits, v) }
	exp := xb.And(xb.ShiftRightLogical(bits, u(23)), u(0xff))
	mant := xb.And(bits, u(0x7fffff))
	// A normal value is 2^(exp-127) * (1 + mant/2^23): it rounds between
	// exp and exp+1. A subnormal is mant/2^23 * 2^-126: between code 0
	// (2^-127, mant 0x400000) and code 1 (mant 0x800000).
	sub := xb.Eq(exp, u(0))
	var inc *xb.Op
	switch mode {
	case "up":
		inc = xb.Select(sub, xb.Gt(mant, u(0x400000)), xb.Ne(mant, u(0)))
	case "down":
		inc = xb.Ne(mant, mant) // never
	case "nearest":
		inc = xb.Select(sub, xb.Ge(mant, u(0x600000)), xb.Ge(mant, u(0x400000)))
	default:
		return nil, castError("round_mode " + strconv.Quote(mode))
	}
	isSpecial := xb.Eq(exp, u(0xff)) // inf or NaN
	isNaN := xb.And(isSpecial, xb.Ne(mant, u(0)))
	r := xb.Select(inc, xb.Add(exp, u(1)), exp)
	over := u(0xff)
	if saturate {
		over = u(0xfe)
	}
	r = xb.Select(xb.Ge(r, u(0xff)), over, r)
	r = xb.Select(isSpecial, over, r)
	r = xb.Select(isNaN, u(0xff), r)
	return xb.BitcastConvert(xb.Convert(r, hlo.U8), hlo.F8E8M0FNU), nil
}

func lowerBitCast(c *Ctx) error {
	x := c.Input(0)
	to := onnx.ElemType(c.Node.Int("to", 0))
	t := to.HLO()
	if t == hlo.Invalid || x == nil {
		return c.Unsupported("BitCast to %v", to)
	}
	s := x.DType()
	switch {
	case s == t:
		c.Set(0, x)
	case s.IsPred() || t.IsPred():
		// bool is one byte holding 0 or 1.
		if s.Bits() != 8 && !s.IsPred() || t.Bits() != 8 && !t.IsPred() {
			return c.Errorf("BitCast between %s and %s: widths differ", s, t)
		}
		if t.IsPred() {
			c.Set(0, xb.Ne(xb.BitcastConvert(x, hlo.U8), FullLike(xb.BitcastConvert(x, hlo.U8), 0)))
		} else {
			c.Set(0, xb.BitcastConvert(xb.Convert(x, hlo.U8), t))
		}
	case s.Bits() != t.Bits():
		return c.Errorf("BitCast between %s and %s: widths differ", s, t)
	default:
		c.Set(0, xb.BitcastConvert(x, t))
	}
	return nil
}

// castHost runs Cast on concrete values: to and from strings here,
// numbers through the lowering on the evaluator.
func castHost(h *HostCtx) error {
	x := h.Tensor(0)
	if x == nil {
		return h.Errorf("input 0 must be a tensor")
	}
	to, ok := castTarget(h.Node, func() (onnx.ElemType, bool) {
		t := h.Tensor(1)
		if t == nil {
			return 0, false
		}
		return t.ElemType(), true
	})
	if !ok {
		return h.Errorf("target type input is missing")
	}
	if !x.IsString() && to != onnx.String {
		in := []*onnx.Tensor{x}
		if h.Node.Op == "CastLike" {
			in = append(in, h.Tensor(1))
		}
		l := &Lowerer{Opsets: map[string]int{"": h.Opset}, Env: NewEnv(nil)}
		out, err := l.Evaluate(h.Node, in)
		if err != nil {
			return err
		}
		h.Set(0, onnx.TensorValue(out[0]))
		return nil
	}
	dims := x.Dims()
	switch {
	case x.IsString() && to == onnx.String:
		h.Set(0, onnx.TensorValue(x))
	case to == onnx.String:
		strs := make([]string, x.Lit.Len())
		dt := x.Lit.DType()
		for i := range strs {
			switch {
			case dt.IsPred():
				if x.Lit.GetBool(i) {
					strs[i] = "1"
				} else {
					strs[i] = "0"
				}
			case dt.IsSigned():
				strs[i] = strconv.FormatInt(x.Lit.GetInt64(i), 10)
			case dt.IsUnsigned():
				strs[i] = strconv.FormatUint(x.Lit.GetUint64(i), 10)
			default:
				strs[i] = castFormatFloat(x.Lit.GetFloat64(i), dt)
			}
		}
		t, err := onnx.NewStringTensor(strs, dims...)
		if err != nil {
			return err
		}
		h.Set(0, onnx.TensorValue(t))
	default:
		t := to.HLO()
		if t == hlo.Invalid || t.IsComplex() {
			return h.Errorf("Cast from string to %v is not supported", to)
		}
		// Parse as float64, then convert with the numeric rules.
		lit := hlo.NewLiteral(hlo.ArrayShape(hlo.F64, dims...))
		for i, s := range x.Strs {
			lit.SetFloat64(i, castParseFloat(s))
		}
		if t.IsInteger() {
			il := hlo.NewLiteral(hlo.ArrayShape(t, dims...))
			for i, s := range x.Strs {
				if v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
					il.SetInt64(i, v)
				} else if v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64); err == nil {
					il.SetUint64(i, v)
				} else {
					il.SetInt64(i, int64(lit.GetFloat64(i)))
				}
			}
			h.Set(0, onnx.LiteralValue(il))
			return nil
		}
		b := xb.New("cast_string")
		y, err := castOp(b.Constant(lit), t, h.Node.Int("saturate", 1) != 0, h.Node.Str("round_mode", "up"))
		if err != nil {
			return h.Errorf("%v", err)
		}
		out, err := castRun(b, y)
		if err != nil {
			return err
		}
		h.Set(0, onnx.LiteralValue(out))
	}
	return nil
}

// castRun evaluates y, built in b from constants.
func castRun(b *xb.Builder, y *xb.Op) (*hlo.Literal, error) {
	m, err := b.Build(b.Tuple(y))
	if err != nil {
		return nil, err
	}
	res, err := eval.Run(m)
	if err != nil {
		return nil, err
	}
	return res.Elements()[0], nil
}

// castParseFloat reads a number or ONNX's INF/NaN spellings.
func castParseFloat(s string) float64 {
	s = strings.TrimSpace(s)
	switch strings.ToUpper(s) {
	case "INF", "+INF", "INFINITY", "+INFINITY":
		return math.Inf(1)
	case "-INF", "-INFINITY":
		return math.Inf(-1)
	case "NAN", "+NAN", "-NAN":
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// castFormatFloat formats a float for Cast to string: NaN, INF and -INF
// (the spellings ONNX reads back), else like numpy's str.
func castFormatFloat(v float64, t hlo.DType) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "INF"
	case math.IsInf(v, -1):
		return "-INF"
	}
	bits := 64
	if t.Bits() <= 32 {
		bits = 32
	}
	// numpy's str: positional with a ".0" between 1e-4 and 1e16, else
	// scientific ("1e-07"); shortest digits that read back.
	if a := math.Abs(v); a == 0 || (a >= 1e-4 && a < 1e16) {
		s := strconv.FormatFloat(v, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	return strconv.FormatFloat(v, 'e', -1, bits)
}
