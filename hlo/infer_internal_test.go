package hlo

import (
	"fmt"
	"testing"
)

// TestEveryOpcodeHasRule: adding an opcode without a shape rule (even
// cannotInfer) would make InferShape report it as unknown.
func TestEveryOpcodeHasRule(t *testing.T) {
	for op := OpInvalid + 1; op < numOpcodes; op++ {
		if inferRules[op] == nil {
			t.Errorf("opcode %s has no shape rule in any infer_*.go table", op)
		}
	}
}

// attrSets are attribute lists from plausible to absurd, so that every
// rule meets missing, out-of-range and mistyped attributes.
func attrSets() [][]Attr {
	scalarComp := func(n int, result Shape) *Computation {
		c := &Computation{Name: fmt.Sprintf("c%d", n)}
		for i := range n {
			p := &Instruction{Name: fmt.Sprint("p", i), Opcode: OpParameter, ParamNumber: int64(i), Shape: ScalarShape(F32)}
			c.AddInstruction(p)
			c.Params = append(c.Params, p)
		}
		c.Root = c.AddInstruction(&Instruction{Name: "r", Opcode: OpParameter, Shape: result})
		return c
	}
	good := scalarComp(2, ScalarShape(F32))
	pred := scalarComp(2, ScalarShape(Pred))
	one := scalarComp(1, ScalarShape(F32))
	rootless := &Computation{Name: "rootless", Params: []*Instruction{nil}}
	return [][]Attr{
		nil,
		{
			{"dimensions", []int64{1}}, {"index", int64(1)}, {"iota_dimension", int64(1)}, {"k", int64(1)},
			{"feature_index", int64(1)}, {"slice", []SliceDim{{0, 1, 1}, {0, 1, 1}}},
			{"padding", PaddingConfig{{1, 1, 0}, {0, 0, 0}}}, {"window", NewWindow(1, 1)},
			{"dim_labels", &ConvDimNumbers{InputBatch: 0, InputFeature: 1, KernelInput: 0, KernelOutput: 1, OutputBatch: 0, OutputFeature: 1}},
			{"dynamic_slice_sizes", []int64{1, 1}}, {"fft_type", Enum("RFFT")}, {"fft_length", []int64{3}},
			{"to_apply", good}, {"condition", pred}, {"body", one}, {"calls", one}, {"select", pred}, {"scatter", good},
			{"true_computation", one}, {"false_computation", one},
			{"replica_groups", [][]int64{{0, 1}}}, {"exponent_bits", int64(5)}, {"mantissa_bits", int64(2)},
			{"lhs_contracting_dims", []int64{1}}, {"rhs_contracting_dims", []int64{0}},
			{"offset_dims", []int64{1}}, {"collapsed_slice_dims", []int64{0}}, {"start_index_map", []int64{0}},
			{"slice_sizes", []int64{1, 1}}, {"index_vector_dim", int64(1)}, {"update_window_dims", []int64{1}},
			{"inserted_window_dims", []int64{0}}, {"scatter_dims_to_operand_dims", []int64{0}},
			{"distribution", Enum("rng_uniform")}, {"outfeed_shape", ScalarShape(F32)},
		},
		{
			{"dimensions", []int64{7, -2}}, {"index", int64(-1)}, {"iota_dimension", int64(-4)}, {"k", int64(-1)},
			{"feature_index", int64(9)}, {"slice", []SliceDim{{5, 1, 0}}}, {"padding", PaddingConfig{{-9, -9, -1}}},
			{"window", &Window{Dims: []WindowDim{{Size: 0, Stride: 0, PadLo: -9}}}},
			{"dim_labels", &ConvDimNumbers{InputBatch: 9, InputFeature: -1, InputSpatial: []int64{4, 4}, KernelSpatial: []int64{1}, OutputSpatial: []int64{1, 2}}},
			{"dynamic_slice_sizes", []int64{-1}}, {"fft_type", Enum("IRFFT")}, {"fft_length", []int64{}},
			{"to_apply", rootless}, {"condition", rootless}, {"body", good}, {"calls", rootless},
			{"branch_computations", []*Computation{nil, one}}, {"replica_groups", IotaReplicaGroups("[x]<=")},
			{"lhs_batch_dims", []int64{5}}, {"rhs_batch_dims", []int64{0, 0}}, {"lhs_contracting_dims", []int64{-1}},
			{"offset_dims", []int64{3, 1}}, {"collapsed_slice_dims", []int64{9}}, {"start_index_map", []int64{0, 0}},
			{"operand_batching_dims", []int64{0}}, {"slice_sizes", []int64{99}}, {"index_vector_dim", int64(9)},
			{"update_window_dims", []int64{5}}, {"inserted_window_dims", []int64{0, 0}}, {"input_batching_dims", []int64{0}},
			{"channel_id", int64(1)}, {"use_global_device_ids", true}, {"feature_group_count", int64(0)},
			{"batch_group_count", int64(-2)}, {"transpose_a", Enum("SIDEWAYS")}, {"distribution", Enum("other")},
		},
	}
}

// TestInferNoPanic runs every rule on a pool of operand shapes and attribute
// sets: bad input must give errors, never panics.
func TestInferNoPanic(t *testing.T) {
	pool := []Shape{
		ScalarShape(F32), ArrayShape(F32, 2, 3), ScalarShape(S32), ArrayShape(Pred, 2, 3), ArrayShape(U8, 2, 4),
		ArrayShape(C64, 2), TupleShape(ArrayShape(F32, 2), ScalarShape(U32), TokenShape()), TokenShape(),
		{DType: F32, Dims: []int64{Unbounded, 3}, Dynamic: []bool{true, false}}, ArrayShape(F32, 0),
	}
	declaredShapes := []Shape{{}, ArrayShape(F32, 2, 3), TupleShape(TupleShape(ArrayShape(F32, 2, 3)), ArrayShape(F32, 2, 3))}
	var operandLists [][]Shape
	operandLists = append(operandLists, nil)
	for _, a := range pool {
		operandLists = append(operandLists, []Shape{a})
		for _, b := range pool {
			operandLists = append(operandLists, []Shape{a, b})
			for _, c := range pool[:2] {
				operandLists = append(operandLists, []Shape{a, b, c}, []Shape{a, b, c, c, b, a})
			}
		}
	}
	sets := attrSets()
	for op := OpInvalid + 1; op < numOpcodes; op++ {
		for _, attrs := range sets {
			for _, d := range declaredShapes {
				for _, ops := range operandLists {
					in := &Instruction{Name: "x", Opcode: op, Attrs: attrs, Shape: d}
					for i, s := range ops {
						in.Operands = append(in.Operands, &Instruction{Name: fmt.Sprint("o", i), Opcode: OpParameter, Shape: s})
					}
					func() {
						defer func() {
							if r := recover(); r != nil {
								t.Fatalf("%s with operands %s, shape %s, attrs %v: panic: %v", op, shapeList(ops), d, attrs, r)
							}
						}()
						InferShape(in)
					}()
				}
			}
		}
	}
}
