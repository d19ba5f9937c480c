package ops

import (
	"math"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// binaryOps are the ONNX ops that are one HLO binary op after numpy
// broadcasting.
var binaryOps = map[string]func(x, y *xb.Op) *xb.Op{
	"Add": xb.Add, "Sub": xb.Sub, "Mul": xb.Mul,
}

// unaryOps are the ONNX ops that are one HLO unary op (or a short
// composition of them) on a float tensor.
var unaryOps = map[string]func(x *xb.Op) *xb.Op{
	"Exp": xb.Exp, "Sqrt": xb.Sqrt, "Tanh": xb.Tanh, "Sigmoid": xb.Logistic,
	"Log": xb.Log, "Sin": xb.Sin, "Cos": xb.Cos, "Tan": xb.Tan, "Erf": xb.Erf,
	"Ceil": xb.Ceil, "Floor": xb.Floor, "Round": xb.Round,
	"Reciprocal": func(x *xb.Op) *xb.Op { return xb.Div(ScalarLike(x, 1), x) },
	"Acos":       func(x *xb.Op) *xb.Op { return xb.Atan2(elemSqrt1m(x), x) },
	"Asin":       func(x *xb.Op) *xb.Op { return xb.Atan2(x, elemSqrt1m(x)) },
	"Atan":       func(x *xb.Op) *xb.Op { return xb.Atan2(x, FullLike(x, 1)) },
	"Sinh": func(x *xb.Op) *xb.Op {
		return xb.Mul(xb.Sub(xb.Expm1(x), xb.Expm1(xb.Neg(x))), ScalarLike(x, 0.5))
	},
	"Cosh": func(x *xb.Op) *xb.Op {
		return xb.Mul(xb.Add(xb.Exp(x), xb.Exp(xb.Neg(x))), ScalarLike(x, 0.5))
	},
	"Asinh": func(x *xb.Op) *xb.Op {
		// sign(x) * log1p(|x| + x²/(1+sqrt(x²+1))), accurate near 0.
		a := xb.Abs(x)
		x2 := xb.Mul(x, x)
		s := xb.Sqrt(xb.Add(x2, ScalarLike(x, 1)))
		r := xb.Log1p(xb.Add(a, xb.Div(x2, xb.Add(s, ScalarLike(x, 1)))))
		return xb.Select(xb.Lt(x, ScalarLike(x, 0)), xb.Neg(r), r)
	},
	"Acosh": func(x *xb.Op) *xb.Op {
		return xb.Log(xb.Add(x, xb.Sqrt(xb.Sub(xb.Mul(x, x), ScalarLike(x, 1)))))
	},
	"Atanh": func(x *xb.Op) *xb.Op {
		// 0.5 * log1p(2x/(1-x))
		q := xb.Div(xb.Add(x, x), xb.Sub(ScalarLike(x, 1), x))
		return xb.Mul(xb.Log1p(q), ScalarLike(x, 0.5))
	},
}

// elemSqrt1m is sqrt(1-x²), as sqrt((1-x)(1+x)) for accuracy near ±1.
func elemSqrt1m(x *xb.Op) *xb.Op {
	one := ScalarLike(x, 1)
	return xb.Sqrt(xb.Mul(xb.Sub(one, x), xb.Add(one, x)))
}

// elemLowFloat reports whether t is a float type narrower than 32 bits,
// whose composite computations run in f32 and round once at the end.
func elemLowFloat(t hlo.DType) bool { return t.IsFloat() && t.Bits() < 32 }

// elemUp converts x to f32 when it is a narrow float; back converts a
// result to x's type.
func elemUp(x *xb.Op) (up *xb.Op, back func(*xb.Op) *xb.Op) {
	t := x.DType()
	if !elemLowFloat(t) {
		return x, func(y *xb.Op) *xb.Op { return y }
	}
	return xb.Convert(x, hlo.F32), func(y *xb.Op) *xb.Op { return xb.Convert(y, t) }
}

// elemUnary lowers f applied to input 0 (in f32 for narrow floats).
func elemUnary(f func(x *xb.Op) *xb.Op) func(c *Ctx) error {
	return func(c *Ctx) error {
		x := c.Input(0)
		if x == nil {
			return c.Errorf("input 0 is required")
		}
		if !x.DType().IsFloat() && !x.DType().IsComplex() {
			return c.Unsupported("%s of %s", c.Node.Op, x.DType())
		}
		u, back := elemUp(x)
		c.Set(0, back(f(u)))
		return nil
	}
}

func init() {
	for name, f := range binaryOps {
		elemRegister(Op{Name: name, Lower: func(c *Ctx) error {
			x, y := c.Input(0), c.Input(1)
			if x == nil || y == nil {
				return c.Errorf("two inputs are required")
			}
			if x.DType() != y.DType() {
				return c.Errorf("input types %s and %s differ", x.DType(), y.DType())
			}
			x, y = elemBroadcast2(c, x, y)
			c.Set(0, f(x, y))
			return nil
		}})
	}
	for name, f := range unaryOps {
		elemRegister(Op{Name: name, Lower: elemUnary(f)})
	}
	elemRegister(Op{Name: "Relu", Lower: func(c *Ctx) error {
		x := c.Input(0)
		c.Set(0, xb.Max(x, FullLike(x, 0)))
		return nil
	}})
	elemRegister(Op{Name: "Neg", Lower: func(c *Ctx) error {
		x := c.Input(0)
		if t := x.DType(); !t.IsSigned() && !t.IsFloat() {
			return c.Unsupported("Neg of %s", t)
		}
		c.Set(0, xb.Neg(x))
		return nil
	}})
	elemRegister(Op{Name: "Abs", Lower: func(c *Ctx) error {
		x := c.Input(0)
		switch t := x.DType(); {
		case t.IsUnsigned():
			c.Set(0, x)
		case t.IsSigned(), t.IsFloat():
			c.Set(0, xb.Abs(x))
		default:
			return c.Unsupported("Abs of %s", t)
		}
		return nil
	}})
	elemRegister(Op{Name: "Sign", Lower: func(c *Ctx) error {
		x := c.Input(0)
		switch t := x.DType(); {
		case t.IsUnsigned():
			c.Set(0, xb.Convert(xb.Ne(x, FullLike(x, 0)), t))
		case t.IsSigned(), t.IsFloat():
			c.Set(0, xb.Sign(x))
		default:
			return c.Unsupported("Sign of %s", t)
		}
		return nil
	}})
	elemRegister(Op{Name: "Div", Lower: lowerDiv})
	elemRegister(Op{Name: "Pow", Lower: lowerPow})
	elemRegister(Op{Name: "Mod", Lower: lowerMod})
	elemRegister(Op{Name: "Max", Lower: elemVariadic(xb.Max, false)})
	elemRegister(Op{Name: "Min", Lower: elemVariadic(xb.Min, false)})
	elemRegister(Op{Name: "Sum", Lower: elemVariadic(xb.Add, false)})
	elemRegister(Op{Name: "Mean", Lower: elemVariadic(xb.Add, true)})
	elemRegister(Op{Name: "Where", Lower: lowerWhere})
	elemRegister(Op{Name: "IsNaN", Lower: func(c *Ctx) error {
		x := c.Input(0)
		if !x.DType().IsFloat() {
			c.Set(0, xb.Ne(FullLike(x, 0), FullLike(x, 0)))
			return nil
		}
		c.Set(0, xb.Ne(x, x))
		return nil
	}})
	elemRegister(Op{Name: "IsInf", Lower: lowerIsInf})
	elemRegister(Op{Name: "Clip", Lower: lowerClip})
}

func lowerDiv(c *Ctx) error {
	x, y := c.Input(0), c.Input(1)
	if x.DType() != y.DType() {
		return c.Errorf("input types %s and %s differ", x.DType(), y.DType())
	}
	x, y = elemBroadcast2(c, x, y)
	c.Set(0, xb.Div(x, y))
	return nil
}

// lowerPow: the result has the base's type; the exponent may have another.
func lowerPow(c *Ctx) error {
	x, y := c.Input(0), c.Input(1)
	x, y = elemBroadcast2(c, x, y)
	xt, yt := x.DType(), y.DType()
	switch {
	case xt.IsFloat() && (yt.IsFloat() || yt.IsInteger()):
		xu, back := elemUp(x)
		c.Set(0, back(xb.Pow(xu, xb.Convert(y, xu.DType()))))
	case xt.IsInteger() && yt.IsInteger():
		if yt != xt {
			y = xb.Convert(y, xt)
		}
		c.Set(0, xb.Pow(x, y))
	case xt.IsInteger() && yt.IsFloat():
		r := xb.Pow(xb.Convert(x, hlo.F64), xb.Convert(y, hlo.F64))
		c.Set(0, xb.Convert(r, xt))
	default:
		return c.Unsupported("Pow of %s and %s", xt, yt)
	}
	return nil
}

// lowerMod: fmod=1 is C's fmod (sign of the dividend); fmod=0 takes the
// sign of the divisor (Python's %).
func lowerMod(c *Ctx) error {
	x, y := c.Input(0), c.Input(1)
	if x.DType() != y.DType() {
		return c.Errorf("input types %s and %s differ", x.DType(), y.DType())
	}
	x, y = elemBroadcast2(c, x, y)
	t := x.DType()
	fmod := c.Node.Int("fmod", 0) != 0
	xu, back := elemUp(x)
	yu, _ := elemUp(y)
	r := xb.Rem(xu, yu)
	if fmod || t.IsUnsigned() {
		c.Set(0, back(r))
		return nil
	}
	zero := FullLike(r, 0)
	// r != 0 and sign(r) != sign(y): r += y
	fix := xb.And(xb.Ne(r, zero), xb.Ne(xb.Lt(r, zero), xb.Lt(yu, zero)))
	c.Set(0, back(xb.Select(fix, xb.Add(r, yu), r)))
	return nil
}

// elemVariadic folds f over all inputs with numpy broadcasting (Mean
// divides the sum by the input count).
func elemVariadic(f func(x, y *xb.Op) *xb.Op, mean bool) func(c *Ctx) error {
	return func(c *Ctx) error {
		var xs []*xb.Op
		for i := range c.In {
			if x := c.Input(i); x != nil {
				xs = append(xs, x)
			}
		}
		if len(xs) == 0 {
			return c.Errorf("no inputs")
		}
		for _, x := range xs[1:] {
			if x.DType() != xs[0].DType() {
				return c.Errorf("input types %s and %s differ", xs[0].DType(), x.DType())
			}
		}
		xs = Broadcast(c.B, xs...)
		acc := xs[0]
		for _, x := range xs[1:] {
			acc = f(acc, x)
		}
		if mean {
			acc = xb.Div(acc, ScalarLike(acc, float64(len(xs))))
		}
		c.Set(0, acc)
		return nil
	}
}

func lowerWhere(c *Ctx) error {
	cond, x, y := c.Input(0), c.Input(1), c.Input(2)
	if cond.DType() != hlo.Pred {
		cond = xb.Ne(cond, FullLike(cond, 0))
	}
	r := Broadcast(c.B, cond, x, y)
	c.Set(0, xb.Select(r[0], r[1], r[2]))
	return nil
}

func lowerIsInf(c *Ctx) error {
	x := c.Input(0)
	if !x.DType().IsFloat() {
		c.Set(0, xb.Ne(FullLike(x, 0), FullLike(x, 0)))
		return nil
	}
	pos := c.Node.Int("detect_positive", 1) != 0
	neg := c.Node.Int("detect_negative", 1) != 0
	inf := math.Inf(1)
	switch {
	case pos && neg:
		c.Set(0, xb.Eq(xb.Abs(x), FullLike(x, inf)))
	case pos:
		c.Set(0, xb.Eq(x, FullLike(x, inf)))
	case neg:
		c.Set(0, xb.Eq(x, FullLike(x, -inf)))
	default:
		c.Set(0, xb.Ne(FullLike(x, 0), FullLike(x, 0)))
	}
	return nil
}

// lowerClip: min and max are attributes before opset 11, optional scalar
// inputs since. The result is min(max(x, lo), hi), so lo > hi gives hi.
func lowerClip(c *Ctx) error {
	x := c.Input(0)
	var lo, hi *xb.Op
	if c.Opset < 11 {
		if c.Node.Has("min") {
			lo = ScalarLike(x, float64(c.Node.Float("min", 0)))
		}
		if c.Node.Has("max") {
			hi = ScalarLike(x, float64(c.Node.Float("max", 0)))
		}
	} else {
		lo, hi = c.Input(1), c.Input(2)
	}
	scalar := func(v *xb.Op) (*xb.Op, error) {
		if v == nil {
			return nil, nil
		}
		if n := numElems(v.Dims()); n != 1 {
			return nil, c.Errorf("min and max must be scalars, got %v", v.Dims())
		}
		if v.Rank() != 0 {
			v = xb.Reshape(v)
		}
		if v.DType() != x.DType() {
			return nil, c.Errorf("bound type %s differs from input type %s", v.DType(), x.DType())
		}
		return v, nil
	}
	var err error
	if lo, err = scalar(lo); err != nil {
		return err
	}
	if hi, err = scalar(hi); err != nil {
		return err
	}
	y := x
	if lo != nil {
		y = xb.Max(y, lo)
	}
	if hi != nil {
		y = xb.Min(y, hi)
	}
	c.Set(0, y)
	return nil
}

// elemBroadcast2 brings a binary op's operands to a common shape: numpy
// broadcasting, or before opset 7, with broadcast=1, the legacy rule where
// y's dims line up with x's from axis (default: the trailing dims).
func elemBroadcast2(c *Ctx, x, y *xb.Op) (*xb.Op, *xb.Op) {
	if c.Opset < 7 && c.Node.Int("broadcast", 0) != 0 && c.Node.Has("axis") && y.Rank() < x.Rank() {
		axis := c.Node.Int("axis", 0)
		if axis < 0 {
			axis += int64(x.Rank())
		}
		if axis >= 0 && int(axis)+y.Rank() <= x.Rank() {
			d := make([]int64, x.Rank())
			for i := range d {
				d[i] = 1
			}
			copy(d[axis:], y.Dims())
			y = xb.Reshape(y, d...)
		}
	}
	return Broadcast2(c.B, x, y)
}

// elemRegister registers an op of this family with its lowering guarded:
// its required inputs must be given and numeric.
func elemRegister(o Op) {
	if f := o.Lower; f != nil {
		n := elemArity(o.Name)
		o.Lower = func(c *Ctx) error {
			for i := 0; i < n; i++ {
				if !c.Has(i) {
					return c.Errorf("input %d is required", i)
				}
				if c.Input(i) == nil {
					return c.Unsupported("input %d is not a numeric tensor", i)
				}
			}
			return f(c)
		}
	}
	Register(o)
}

// elemArity is the number of required inputs of an op of this family.
func elemArity(name string) int {
	switch name {
	case "Where":
		return 3
	case "Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "BitwiseAnd", "BitwiseOr",
		"BitwiseXor", "BitShift", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
		"PRelu", "SwiGLU":
		return 2
	}
	return 1
}
