package stablehlo

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// Quantized tensors (`!quant.uniform`) are held in HLO as their storage
// integers. uniform_quantize and uniform_dequantize follow the spec's
// quantize and dequantize; every other op with quantized operands or
// results is dequantize_op_quantize: its quantized operands are
// dequantized, the op runs on the expressed (float) type, and its
// quantized results are quantized again — per tensor or per axis.

func init() {
	register(convertUniformQuantize, "stablehlo.uniform_quantize")
	register(convertUniformDequantize, "stablehlo.uniform_dequantize")
}

func quantOf(t mlir.Type) (mlir.QuantType, bool) {
	q, ok := elemType(t).(mlir.QuantType)
	return q, ok
}

// expressedType is t with its quantized element type replaced by the
// expressed type.
func expressedType(t mlir.Type) mlir.Type {
	q, ok := quantOf(t)
	if !ok {
		return t
	}
	if tt, isTensor := t.(mlir.TensorType); isTensor {
		tt.Elem = q.Expressed
		return tt
	}
	return q.Expressed
}

// quantParams returns q's scales and zero points as tensors of shape sh
// (per tensor: splats; per axis: broadcast along the axis).
func (s *scope) quantParams(q mlir.QuantType, sh hlo.Shape, scaleType, zpType hlo.DType) (scale, zp *hlo.Instruction, err error) {
	if q.Axis < 0 {
		if len(q.Scales) != 1 || len(q.ZeroPoints) != 1 {
			return nil, nil, fmt.Errorf("per-tensor quantization with %d scales", len(q.Scales))
		}
		return s.splat(sh.WithDType(scaleType), q.Scales[0]), s.splat(sh.WithDType(zpType), float64(q.ZeroPoints[0])), nil
	}
	if q.Axis >= sh.Rank() || int64(len(q.Scales)) != sh.Dims[q.Axis] || len(q.ZeroPoints) != len(q.Scales) {
		return nil, nil, fmt.Errorf("per-axis quantization along %d of %s with %d scales", q.Axis, sh.HumanString(), len(q.Scales))
	}
	vec := func(t hlo.DType, v func(i int) float64) *hlo.Instruction {
		l := hlo.NewLiteral(hlo.ArrayShape(t, int64(len(q.Scales))))
		for i := range q.Scales {
			l.SetFloat64(i, v(i))
		}
		return s.add(hlo.OpBroadcast, sh.WithDType(t), []*hlo.Instruction{s.constant(l)}, hlo.Attr{Name: "dimensions", Value: []int64{int64(q.Axis)}})
	}
	scale = vec(scaleType, func(i int) float64 { return q.Scales[i] })
	zp = vec(zpType, func(i int) float64 { return float64(q.ZeroPoints[i]) })
	return scale, zp, nil
}

// storageRange is q's clamping range.
func storageRange(q mlir.QuantType, t hlo.DType) (lo, hi float64) {
	if q.HasRange {
		return float64(q.StorageMin), float64(q.StorageMax)
	}
	bits := t.Bits()
	if t.IsUnsigned() {
		return 0, float64(uint64(1)<<bits - 1)
	}
	return -float64(int64(1) << (bits - 1)), float64(int64(1)<<(bits-1) - 1)
}

// dequantize is (x - zero_point) times the scale. The spec subtracts in
// the storage type, which wraps (127 - (-128) in i8); the reference
// interpreter does not, so the subtraction happens in the expressed type,
// where every storage value and zero point is exact.
func (s *scope) dequantize(x *hlo.Instruction, q mlir.QuantType) (*hlo.Instruction, error) {
	et, err := dtypeOf(q.Expressed)
	if err != nil {
		return nil, err
	}
	scale, zp, err := s.quantParams(q, x.Shape, et, et)
	if err != nil {
		return nil, err
	}
	b := eb{s, x.Shape.WithDType(et)}
	return b.mul(b.sub(b.convert(x, et), zp), scale), nil
}

// quantize is round_nearest_even(clamp(x / scale + zero_point)) in the
// expressed type, converted to the storage type.
func (s *scope) quantize(x *hlo.Instruction, q mlir.QuantType) (*hlo.Instruction, error) {
	st, err := dtypeOf(q.Storage)
	if err != nil {
		return nil, err
	}
	if !x.Shape.DType.IsFloat() {
		return nil, fmt.Errorf("quantize of %s: %w", x.Shape.DType, ErrUnsupported)
	}
	scale, zp, err := s.quantParams(q, x.Shape, x.Shape.DType, x.Shape.DType)
	if err != nil {
		return nil, err
	}
	b := eb{s, x.Shape}
	lo, hi := storageRange(q, st)
	v := b.add(b.div(x, scale), zp)
	v = s.add(hlo.OpClamp, x.Shape, []*hlo.Instruction{b.c(lo), v, b.c(hi)})
	v = b.un(hlo.OpRoundNearestEven, v)
	return b.convert(v, st), nil
}

func convertUniformQuantize(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	q, ok := quantOf(op.Results[0].Type)
	if !ok {
		return nil, fmt.Errorf("uniform_quantize to a non-quantized type")
	}
	x := ins[0]
	if qin, isQ := quantOf(op.Operands[0].Type); isQ {
		if x, err = s.dequantize(x, qin); err != nil {
			return nil, err
		}
	}
	out, err := s.quantize(x, q)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{out}, nil
}

func convertUniformDequantize(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	q, ok := quantOf(op.Operands[0].Type)
	if !ok {
		return nil, fmt.Errorf("uniform_dequantize of a non-quantized type")
	}
	out, err := s.dequantize(ins[0], q)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{out}, nil
}

// quantOp runs op as dequantize_op_quantize: op is converted as a copy
// whose quantized types are replaced by their expressed types.
func quantOp(s *scope, op *mlir.Op, fn opFunc) ([]*hlo.Instruction, error) {
	if len(op.Regions) != 0 {
		return nil, fmt.Errorf("quantized %s with regions: %w", op.Name, ErrUnsupported)
	}
	shadow := *op
	shadow.Operands = make([]*mlir.Value, len(op.Operands))
	for i, v := range op.Operands {
		in, err := s.get(v)
		if err != nil {
			return nil, err
		}
		if q, ok := quantOf(v.Type); ok {
			if in, err = s.dequantize(in, q); err != nil {
				return nil, err
			}
		}
		nv := &mlir.Value{Name: v.Name, Type: expressedType(v.Type)}
		s.vals[nv] = in
		shadow.Operands[i] = nv
	}
	shadow.Results = make([]*mlir.Value, len(op.Results))
	for i, r := range op.Results {
		shadow.Results[i] = &mlir.Value{Name: r.Name, Type: expressedType(r.Type), Def: &shadow, Index: i}
	}
	res, err := fn(s, &shadow)
	if err != nil {
		return nil, err
	}
	for i, r := range op.Results {
		if q, ok := quantOf(r.Type); ok && i < len(res) {
			if res[i], err = s.quantize(res[i], q); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}
