package stablehlo

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// Dynamic shapes as jax.export writes them (`tensor<?x4xf32>`) are refined
// to static ones while converting, as jax.export's shape refinement does:
// the entry's arguments take the concrete shapes of Options.ArgShapes; a
// result whose type has `?` dimensions takes the shape HLO's shape
// inference computes from the (already static) operands; and the ops
// whose result shape is an operand's value (dynamic_broadcast_in_dim,
// dynamic_reshape, dynamic_iota, dynamic_pad, real_dynamic_slice,
// dynamic_gather) fold that operand to a constant. The leading scalar
// integer arguments of a shape-polymorphic entry are its dimension
// variables: their values are the `?` sizes of the other arguments.

func init() {
	register(convertDynamicBroadcastInDim, "stablehlo.dynamic_broadcast_in_dim")
	register(convertDynamicReshape, "stablehlo.dynamic_reshape")
	register(convertDynamicIota, "stablehlo.dynamic_iota")
	register(convertRealDynamicSlice, "stablehlo.real_dynamic_slice")
	register(convertDynamicPad, "stablehlo.dynamic_pad")
	register(convertDynamicGather, "stablehlo.dynamic_gather")
	register(convertDynamicConv, "stablehlo.dynamic_conv")
}

// isStatic reports whether every dimension of s (and its elements) is known.
func isStatic(s hlo.Shape) bool {
	if s.IsTuple() {
		for _, e := range s.Tuple {
			if !isStatic(e) {
				return false
			}
		}
		return true
	}
	return !slices.Contains(s.Dims, hlo.Unbounded)
}

// refineAdd completes an instruction whose written shape has `?`
// dimensions by shape inference from its operands.
func refineAdd(in *hlo.Instruction) error {
	sh, err := hlo.InferShape(in)
	if err != nil || !isStatic(sh) {
		return fmt.Errorf("cannot refine the dynamic result shape %s of %s: %w", in.Shape.HumanString(), in.Opcode, ErrUnsupported)
	}
	in.Shape = sh
	return nil
}

// fold evaluates an instruction that depends on no parameter (a shape
// computation) and returns its value.
func (s *scope) fold(in *hlo.Instruction) (*hlo.Literal, error) {
	if in.Opcode == hlo.OpConstant {
		return in.Literal, nil
	}
	var order []*hlo.Instruction
	seen := map[*hlo.Instruction]bool{}
	var visit func(x *hlo.Instruction) error
	visit = func(x *hlo.Instruction) error {
		if seen[x] {
			return nil
		}
		seen[x] = true
		if x.Opcode == hlo.OpParameter {
			return fmt.Errorf("shape operand depends on argument %s: %w", x.Name, ErrUnsupported)
		}
		for _, o := range x.Operands {
			if err := visit(o); err != nil {
				return err
			}
		}
		order = append(order, x)
		return nil
	}
	if err := visit(in); err != nil {
		return nil, err
	}
	comp := &hlo.Computation{Name: "fold", IsEntry: true}
	m := hlo.NewModule("fold")
	clones := map[*hlo.Instruction]*hlo.Instruction{}
	for _, x := range order {
		c := *x
		c.Operands = make([]*hlo.Instruction, len(x.Operands))
		for i, o := range x.Operands {
			c.Operands[i] = clones[o]
		}
		clones[x] = comp.AddInstruction(&c)
	}
	comp.Root = clones[in]
	m.AddComputation(comp)
	m.Entry = comp
	lit, err := eval.Run(m)
	if err != nil {
		return nil, fmt.Errorf("folding a shape operand: %w", err)
	}
	return lit, nil
}

// foldInts folds an integer tensor operand to its values.
func (s *scope) foldInts(in *hlo.Instruction) ([]int64, error) {
	lit, err := s.fold(in)
	if err != nil {
		return nil, err
	}
	out := make([]int64, lit.Len())
	for i := range out {
		out[i] = lit.GetInt64(i)
	}
	return out, nil
}

// shapeFromOperand is the static shape whose dimensions operand i holds.
func shapeFromOperand(s *scope, op *mlir.Op, ins []*hlo.Instruction, i int) (hlo.Shape, error) {
	dims, err := s.foldInts(ins[i])
	if err != nil {
		return hlo.Shape{}, err
	}
	dt, err := dtypeOf(elemType(op.Results[0].Type))
	if err != nil {
		return hlo.Shape{}, err
	}
	sh := hlo.ArrayShape(dt, dims...)
	if err := fitsType(sh, op.Results[0].Type); err != nil {
		return hlo.Shape{}, err
	}
	return sh, nil
}

func convertDynamicBroadcastInDim(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := shapeFromOperand(s, op, ins, 1)
	if err != nil {
		return nil, err
	}
	dims, err := opInts(op, "broadcast_dimensions")
	if err != nil {
		return nil, err
	}
	out, err := s.broadcastInDim(ins[0], sh, dims)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{out}, nil
}

func convertDynamicReshape(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := shapeFromOperand(s, op, ins, 1)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{s.add(hlo.OpReshape, sh, ins[:1])}, nil
}

func convertDynamicIota(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sh, err := shapeFromOperand(s, op, ins, 0)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{s.add(hlo.OpIota, sh, nil, hlo.Attr{Name: "iota_dimension", Value: opInt(op, "iota_dimension", 0)})}, nil
}

// convertRealDynamicSlice is a slice when its bounds fold to constants,
// else (unit strides, and sizes that fold as limit − start or a static
// result type) a dynamic-slice.
func convertRealDynamicSlice(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	start, err1 := s.foldInts(ins[1])
	limit, err2 := s.foldInts(ins[2])
	strides, err3 := s.foldInts(ins[3])
	if err1 == nil && err2 == nil && err3 == nil {
		dims := make([]hlo.SliceDim, len(start))
		out := make([]int64, len(start))
		for i := range dims {
			dims[i] = hlo.SliceDim{Start: start[i], Limit: limit[i], Stride: strides[i]}
			out[i] = (limit[i] - start[i] + strides[i] - 1) / strides[i]
		}
		return []*hlo.Instruction{s.add(hlo.OpSlice, hlo.ArrayShape(ins[0].Shape.DType, out...), ins[:1], hlo.Attr{Name: "slice", Value: dims})}, nil
	}
	if err3 != nil || slices.ContainsFunc(strides, func(v int64) bool { return v != 1 }) {
		return nil, fmt.Errorf("real_dynamic_slice with strides from arguments: %w", ErrUnsupported)
	}
	if sizes, ok := s.symbolicSizes(ins[1], ins[2]); ok {
		if out, ok := dynamicSliceBySize(s, ins[0], ins[1], sizes); ok {
			return out, nil
		}
	}
	sh, err := resultShape(op, 0)
	if err != nil || !isStatic(sh) {
		return nil, fmt.Errorf("real_dynamic_slice with bounds from arguments and a dynamic result: %w", ErrUnsupported)
	}
	return dynamicSliceOf(s, ins[0], ins[1], sh)
}

// dynamicSliceOf slices sh's dimensions of x at the starts held in the
// rank-1 tensor starts.
func dynamicSliceOf(s *scope, x, starts *hlo.Instruction, sh hlo.Shape) ([]*hlo.Instruction, error) {
	operands := []*hlo.Instruction{x}
	scalar := hlo.ArrayShape(starts.Shape.DType)
	for i := range x.Shape.Rank() {
		sl := s.add(hlo.OpSlice, hlo.ArrayShape(starts.Shape.DType, 1), []*hlo.Instruction{starts},
			hlo.Attr{Name: "slice", Value: []hlo.SliceDim{{Start: int64(i), Limit: int64(i + 1), Stride: 1}}})
		operands = append(operands, s.add(hlo.OpReshape, scalar, []*hlo.Instruction{sl}))
	}
	return []*hlo.Instruction{s.add(hlo.OpDynamicSlice, sh, operands, hlo.Attr{Name: "dynamic_slice_sizes", Value: slices.Clone(sh.Dims)})}, nil
}

func convertDynamicPad(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	var vals [3][]int64
	for i := range vals {
		if vals[i], err = s.foldInts(ins[2+i]); err != nil {
			return nil, err
		}
	}
	cfg := make(hlo.PaddingConfig, ins[0].Shape.Rank())
	out := make([]int64, len(cfg))
	for i := range cfg {
		cfg[i] = hlo.PadDim{Lo: vals[0][i], Hi: vals[1][i], Interior: vals[2][i]}
		n := ins[0].Shape.Dims[i]
		out[i] = cfg[i].Lo + cfg[i].Hi + n + max(n-1, 0)*cfg[i].Interior
	}
	return []*hlo.Instruction{s.add(hlo.OpPad, hlo.ArrayShape(ins[0].Shape.DType, out...), ins[:2], hlo.Attr{Name: "padding", Value: cfg})}, nil
}

// convertDynamicGather is gather with its slice sizes folded.
func convertDynamicGather(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	sizes, err := s.foldInts(ins[2])
	if err != nil {
		return nil, err
	}
	attrs, err := gatherAttrs(op)
	if err != nil {
		return nil, err
	}
	attrs = append(attrs, hlo.Attr{Name: "slice_sizes", Value: sizes})
	in, err := s.infer(hlo.OpGather, ins[:2], attrs...)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{in}, nil
}

// convertDynamicConv is a convolution whose padding operand folds to a
// constant.
func convertDynamicConv(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	if len(op.Operands) != 3 {
		return nil, fmt.Errorf("dynamic_conv wants 3 operands, has %d", len(op.Operands))
	}
	pad, err := s.get(op.Operands[2])
	if err != nil {
		return nil, err
	}
	vals, err := s.foldInts(pad)
	if err != nil {
		return nil, err
	}
	shadow := *op
	shadow.Operands = op.Operands[:2]
	shadow.Attrs = []mlir.NamedAttr{{Name: "padding", Value: mlir.DenseArrayAttr{Elem: mlir.IntType{Width: 64}, Ints: vals}}}
	for _, a := range op.Attrs {
		if a.Name != "padding" {
			shadow.Attrs = append(shadow.Attrs, a)
		}
	}
	return convertConvolution(s, &shadow)
}

// shapeAssertion checks one of jax.export's shape assertions (a
// custom_call @shape_assertion(%ok, %v0, %v1, ...) whose error_message
// refers to the values as {0}, {1}, ...) at conversion time, as
// jax.export's shape refinement does: the predicate depends only on the
// arguments' shapes, so it folds to a constant. True, the op vanishes;
// false, conversion fails with JAX's message (which names the argument,
// `args[1].shape[0]`) with the values filled in.
func shapeAssertion(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	if len(ins) == 0 {
		return nil, errors.New("shape_assertion without a predicate")
	}
	ok, err := s.fold(ins[0])
	if err != nil {
		return nil, fmt.Errorf("shape_assertion not decided by the argument shapes: %w", err)
	}
	if ok.GetInt64(0) != 0 {
		return nil, nil
	}
	msg := stringAttr(op.Attr("error_message"))
	for i := len(ins) - 1; i >= 1; i-- { // {10} before {1}
		v, err := s.fold(ins[i])
		if err != nil {
			return nil, fmt.Errorf("shape_assertion value %d: %w", i-1, err)
		}
		msg = strings.ReplaceAll(msg, "{"+strconv.Itoa(i-1)+"}", strconv.FormatInt(v.GetInt64(0), 10))
	}
	if msg == "" {
		msg = "the argument shapes do not satisfy the module's shape assertion"
	}
	return nil, errors.New(msg)
}
