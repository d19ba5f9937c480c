package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/xb"
)

// ONNX Runtime's quantized products (com.microsoft): its quantize_dynamic
// writes MatMulInteger with DynamicQuantizeLinear, and its optimizer folds
// them with their scaling into DynamicQuantizeMatMul (A float, quantized
// per call) and MatMulIntegerToFloat (A already quantized). Both are the
// exact s32 product of the zero-point-shifted operands (mmInteger, which
// the CPU backend runs on its 8-bit GEMM), then scaled by a_scale·b_scale
// (per tensor, or per column of B) and the bias added, in f32.

func init() {
	msRegister(
		Op{Name: "DynamicQuantizeMatMul", Lower: lowerDynamicQuantizeMatMul},
		Op{Name: "MatMulIntegerToFloat", Lower: lowerMatMulIntegerToFloat},
	)
}

// lowerDynamicQuantizeMatMul: A (float) quantized as DynamicQuantizeLinear
// does (u8, its range widened to hold 0), times B (u8 or s8) with
// b_zero_point; inputs A, B, b_scale, b_zero_point, bias.
func lowerDynamicQuantizeMatMul(c *Ctx) error {
	a, b, bScale := c.Input(0), c.Input(1), c.Input(2)
	if a == nil || b == nil || bScale == nil {
		return c.Errorf("DynamicQuantizeMatMul needs A, B and b_scale")
	}
	if a.DType() != hlo.F32 {
		return c.Unsupported("A of %s (float32 only, as ONNX Runtime)", a.DType())
	}
	qa, aScale, aZero := dynamicQuantizeU8(c.B, a)
	return msIntegerToFloat(c, qa, b, aScale, bScale, aZero, c.Input(3), c.Input(4))
}

// lowerMatMulIntegerToFloat: inputs A, B (u8 or s8), a_scale, b_scale,
// a_zero_point, b_zero_point, bias.
func lowerMatMulIntegerToFloat(c *Ctx) error {
	a, b, aScale, bScale := c.Input(0), c.Input(1), c.Input(2), c.Input(3)
	if a == nil || b == nil || aScale == nil || bScale == nil {
		return c.Errorf("MatMulIntegerToFloat needs A, B, a_scale and b_scale")
	}
	return msIntegerToFloat(c, a, b, aScale, bScale, c.Input(4), c.Input(5), c.Input(6))
}

// msIntegerToFloat is (A - za)·(B - zb) in s32, converted to f32, times
// aScale·bScale, plus bias: a scale or zero point of B is per tensor or
// per column (its last dimension N), bias per column.
func msIntegerToFloat(c *Ctx, a, b, aScale, bScale, za, zb, bias *xb.Op) error {
	for _, s := range []*xb.Op{aScale, bScale} {
		if s.DType() != hlo.F32 {
			return c.Unsupported("scale of %s (float32 only, as ONNX Runtime)", s.DType())
		}
	}
	if numElems(aScale.Dims()) != 1 || za != nil && numElems(za.Dims()) != 1 {
		return c.Unsupported("A's scale and zero point per tensor only, got %v and %v", aScale.Dims(), dimsOf(za))
	}
	acc, err := mmInteger(c, a, b, za, zb)
	if err != nil {
		return err
	}
	y := xb.Convert(acc, hlo.F32)
	scale := xb.Mul(xb.Reshape(aScale), msColumnVector(bScale))
	y, scale = Broadcast2(c.B, y, scale)
	y = xb.Mul(y, scale)
	if bias != nil {
		if bias.DType() != hlo.F32 {
			return c.Errorf("bias has type %s, not float32", bias.DType())
		}
		var bb *xb.Op
		y, bb = Broadcast2(c.B, y, bias)
		y = xb.Add(y, bb)
	}
	c.Set(0, y)
	return nil
}

// msColumnVector is B's scale as a scalar or a vector along the columns
// (a [1, N] or [N] tensor), ready to broadcast against the product.
func msColumnVector(v *xb.Op) *xb.Op {
	if numElems(v.Dims()) == 1 {
		return xb.Reshape(v)
	}
	return xb.Reshape(v, numElems(v.Dims()))
}

func dimsOf(v *xb.Op) []int64 {
	if v == nil {
		return nil
	}
	return v.Dims()
}
