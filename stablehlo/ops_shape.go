package stablehlo

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

func init() {
	register(convertBroadcastInDim, "stablehlo.broadcast_in_dim")
	register(withInts(hlo.OpTranspose, "permutation", "dimensions"), "stablehlo.transpose")
	register(withInts(hlo.OpReverse, "dimensions", "dimensions"), "stablehlo.reverse")
	register(withInts(hlo.OpDynamicSlice, "slice_sizes", "dynamic_slice_sizes"), "stablehlo.dynamic_slice")
	register(withInts(hlo.OpDynamicUpdateSlice, "", ""), "stablehlo.dynamic_update_slice")
	register(convertReshape, "stablehlo.reshape")
	register(convertSlice, "stablehlo.slice")
	register(convertConcatenate, "stablehlo.concatenate")
	register(convertPad, "stablehlo.pad")
	register(convertIota, "stablehlo.iota")
	register(convertGetDimensionSize, "stablehlo.get_dimension_size")
	register(convertBroadcast, "stablehlo.broadcast")
}

// convertBroadcast is the deprecated broadcast: broadcast_sizes become new
// leading dimensions.
func convertBroadcast(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, sh, err := operandsAndShape(s, op)
	if err != nil {
		return nil, err
	}
	sizes, err := opInts(op, "broadcast_sizes")
	if err != nil {
		return nil, err
	}
	dims := make([]int64, ins[0].Shape.Rank())
	for i := range dims {
		dims[i] = int64(len(sizes) + i)
	}
	if !isStatic(sh) {
		sh = hlo.ArrayShape(sh.DType, append(slices.Clone(sizes), ins[0].Shape.Dims...)...)
	}
	return []*hlo.Instruction{s.add(hlo.OpBroadcast, sh, ins, hlo.Attr{Name: "dimensions", Value: dims})}, nil
}

// withInts converts an op whose one integer-list attribute (from) becomes
// an HLO attribute (to), the result shape the op's.
func withInts(code hlo.Opcode, from, to string) opFunc {
	return func(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
		ins, err := s.operands(op)
		if err != nil {
			return nil, err
		}
		sh, err := resultShape(op, 0)
		if err != nil {
			return nil, err
		}
		if isQuant(op) {
			return nil, fmt.Errorf("ops on quantized tensors: %w", ErrUnsupported)
		}
		var attrs []hlo.Attr
		if from != "" {
			v, err := opInts(op, from)
			if err != nil {
				return nil, err
			}
			if v == nil {
				v = []int64{}
			}
			attrs = append(attrs, hlo.Attr{Name: to, Value: v})
		}
		return []*hlo.Instruction{s.add(code, sh, ins, attrs...)}, nil
	}
}

func convertSlice(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := resultShape(op, 0)
	if err != nil {
		return nil, err
	}
	start, err := opInts(op, "start_indices")
	if err != nil {
		return nil, err
	}
	limit, err := opInts(op, "limit_indices")
	if err != nil {
		return nil, err
	}
	strides, err := opInts(op, "strides")
	if err != nil {
		return nil, err
	}
	strides = orOnes(strides, len(start))
	if len(limit) != len(start) || len(strides) != len(start) {
		return nil, fmt.Errorf("slice attributes of different lengths")
	}
	dims := make([]hlo.SliceDim, len(start))
	for i := range dims {
		dims[i] = hlo.SliceDim{Start: start[i], Limit: limit[i], Stride: strides[i]}
	}
	return []*hlo.Instruction{s.add(hlo.OpSlice, sh, ins, hlo.Attr{Name: "slice", Value: dims})}, nil
}

func convertConcatenate(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := resultShape(op, 0)
	if err != nil {
		return nil, err
	}
	d := opInt(op, "dimension", 0)
	return []*hlo.Instruction{s.add(hlo.OpConcatenate, sh, ins, hlo.Attr{Name: "dimensions", Value: []int64{d}})}, nil
}

func convertPad(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := resultShape(op, 0)
	if err != nil {
		return nil, err
	}
	lo, err := opInts(op, "edge_padding_low")
	if err != nil {
		return nil, err
	}
	hi, err := opInts(op, "edge_padding_high")
	if err != nil {
		return nil, err
	}
	in, err := opInts(op, "interior_padding")
	if err != nil {
		return nil, err
	}
	if len(hi) != len(lo) || len(in) != len(lo) {
		return nil, fmt.Errorf("pad attributes of different lengths")
	}
	cfg := make(hlo.PaddingConfig, len(lo))
	for i := range cfg {
		cfg[i] = hlo.PadDim{Lo: lo[i], Hi: hi[i], Interior: in[i]}
	}
	return []*hlo.Instruction{s.add(hlo.OpPad, sh, ins, hlo.Attr{Name: "padding", Value: cfg})}, nil
}

func convertIota(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	sh, err := resultShape(op, 0)
	if err != nil {
		return nil, err
	}
	d := opInt(op, "iota_dimension", 0)
	return []*hlo.Instruction{s.add(hlo.OpIota, sh, nil, hlo.Attr{Name: "iota_dimension", Value: d})}, nil
}

// convertGetDimensionSize yields the (static, after refinement) size as a
// constant, converted to the result type.
func convertGetDimensionSize(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := resultShape(op, 0)
	if err != nil {
		return nil, err
	}
	d := opInt(op, "dimension", 0)
	if d < 0 || int(d) >= ins[0].Shape.Rank() {
		return nil, fmt.Errorf("dimension %d out of range", d)
	}
	return []*hlo.Instruction{s.scalar(sh.DType, float64(ins[0].Shape.Dims[d]))}, nil
}

func convertBroadcastInDim(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, sh, err := operandsAndShape(s, op)
	if err != nil {
		return nil, err
	}
	dims, err := opInts(op, "broadcast_dimensions")
	if err != nil {
		return nil, err
	}
	if !isStatic(sh) {
		// A `?` result dimension is the operand dimension mapped to it.
		for i, d := range dims {
			if int(d) < sh.Rank() && sh.Dims[d] < 0 {
				sh.Dims[d] = ins[0].Shape.Dims[i]
			}
		}
		if !isStatic(sh) {
			return nil, fmt.Errorf("broadcast_in_dim to a dynamic dimension no operand dimension gives: %w", ErrUnsupported)
		}
	}
	out, err := s.broadcastInDim(ins[0], sh, dims)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{out}, nil
}

// broadcastInDim broadcasts x to sh with x's dimension i at dims[i]. A
// size-1 dimension may stretch, which HLO's broadcast does not allow: such
// dimensions are reshaped away first.
func (s *scope) broadcastInDim(x *hlo.Instruction, sh hlo.Shape, dims []int64) (*hlo.Instruction, error) {
	if len(dims) != x.Shape.Rank() {
		return nil, fmt.Errorf("broadcast_dimensions has %d entries for rank %d", len(dims), x.Shape.Rank())
	}
	keep, keepDims := []int64{}, []int64{}
	for d, n := range x.Shape.Dims {
		if dims[d] < 0 || int(dims[d]) >= sh.Rank() {
			return nil, fmt.Errorf("broadcast dimension %d out of range", dims[d])
		}
		switch {
		case n == sh.Dims[dims[d]]:
			keep = append(keep, n)
			keepDims = append(keepDims, dims[d])
		case n != 1:
			return nil, fmt.Errorf("operand of shape %s does not broadcast to %s", x.Shape.HumanString(), sh.HumanString())
		}
	}
	if len(keep) != x.Shape.Rank() {
		x = s.add(hlo.OpReshape, hlo.ArrayShape(x.Shape.DType, keep...), []*hlo.Instruction{x})
	}
	return s.add(hlo.OpBroadcast, sh, []*hlo.Instruction{x}, hlo.Attr{Name: "dimensions", Value: keepDims}), nil
}

// convertReshape refines one `?` result dimension from the element count.
func convertReshape(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, sh, err := operandsAndShape(s, op)
	if err != nil {
		return nil, err
	}
	if !isStatic(sh) {
		known, unknown := int64(1), -1
		for i, d := range sh.Dims {
			if d >= 0 {
				known *= d
			} else if unknown < 0 {
				unknown = i
			} else {
				return nil, fmt.Errorf("reshape to several dynamic dimensions: %w", ErrUnsupported)
			}
		}
		if known == 0 {
			return nil, fmt.Errorf("reshape of a dynamic dimension beside a zero one: %w", ErrUnsupported)
		}
		sh.Dims[unknown] = ins[0].Shape.NumElements() / known
	}
	return []*hlo.Instruction{s.add(hlo.OpReshape, sh, ins)}, nil
}
