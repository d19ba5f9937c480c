package hlo

// Attr is one `name=value` attribute of an instruction, kept in an ordered
// list so that printing follows XLA's order and unknown attributes survive.
//
// Value holds one of these Go types, chosen by the attribute's kind
// (AttrKindOf):
//
//	int64, bool, float64, []int64, []bool, [][]int64, Enum, string (a
//	quoted string, unescaped), Raw (verbatim text), *Computation,
//	[]*Computation, *Window, *ConvDimNumbers, PaddingConfig, []SliceDim,
//	[]Enum, Shape, []Shape, *Literal, IotaReplicaGroups.
type Attr struct {
	Name  string
	Value any
}

// Enum is a bare identifier value such as LT, kLoop, FFT or b01f_01io->b01f.
type Enum string

// Raw is attribute text Axle keeps verbatim and prints back unchanged
// (metadata, sharding, backend_config, frontend_attributes, ...).
type Raw string

// IotaReplicaGroups is the compact replica group list `[2,2]<=[4]`, kept verbatim.
type IotaReplicaGroups string

// AttrKind says how an attribute's value is written in HLO text.
type AttrKind uint8

const (
	KindUnknown AttrKind = iota // not an attribute Axle knows: kept as Raw
	KindInt
	KindBool
	KindFloat
	KindInts
	KindBools
	KindIntsOrLists // {1,2} or {{1,2},{3}}
	KindIntLists
	KindEnum
	KindEnums
	KindString
	KindRaw
	KindComputation  // name, or {a, b} for a list
	KindComputations // {a, b}
	KindInstructions // {a, b}
	KindWindow
	KindDimLabels
	KindPadding
	KindSlice
	KindShape
	KindShapes
	KindLiteral
	KindReplicaGroups
)

var attrKinds = map[string]AttrKind{
	"index": KindInt, "iota_dimension": KindInt, "feature_group_count": KindInt, "batch_group_count": KindInt,
	"channel_id": KindInt, "index_vector_dim": KindInt, "exponent_bits": KindInt, "mantissa_bits": KindInt,
	"feature_index": KindInt, "cross_program_prefetch_index": KindInt, "inferred_dimension": KindInt,
	"delta": KindInt, "k": KindInt, "num_carries": KindInt,

	"is_stable": KindBool, "indices_are_sorted": KindBool, "unique_indices": KindBool, "constrain_layout": KindBool,
	"use_global_device_ids": KindBool, "is_host_transfer": KindBool, "custom_call_has_side_effect": KindBool,
	"largest": KindBool, "left_side": KindBool, "lower": KindBool, "unit_diagonal": KindBool, "is_composite": KindBool,
	"is_reverse": KindBool, "is_associative": KindBool, "has_dynamic_root": KindBool,

	"epsilon": KindFloat,

	"dimensions": KindInts, "dynamic_slice_sizes": KindInts, "fft_length": KindInts,
	"lhs_batch_dims": KindInts, "lhs_contracting_dims": KindInts, "rhs_batch_dims": KindInts, "rhs_contracting_dims": KindInts,
	"lhs_ragged_dims": KindInts, "rhs_group_dims": KindInts,
	"offset_dims": KindInts, "collapsed_slice_dims": KindInts, "start_index_map": KindInts,
	"operand_batching_dims": KindInts, "start_indices_batching_dims": KindInts,
	"update_window_dims": KindInts, "inserted_window_dims": KindInts, "scatter_dims_to_operand_dims": KindInts,
	"input_batching_dims": KindInts, "scatter_indices_batching_dims": KindInts,
	"slice_sizes": KindIntsOrLists,

	"parameter_replication": KindBools,
	"source_target_pairs":   KindIntLists,
	"replica_groups":        KindReplicaGroups,

	"direction": KindEnum, "type": KindEnum, "kind": KindEnum, "fft_type": KindEnum, "distribution": KindEnum,
	"algorithm": KindEnum, "transpose_a": KindEnum, "api_version": KindEnum, "schedule": KindEnum,
	"conv_kind": KindEnum, "mode": KindEnum,

	"operand_precision": KindEnums,

	"custom_call_target": KindString, "infeed_config": KindString, "outfeed_config": KindString,
	"async_execution_thread": KindString,

	"to_apply": KindComputation, "calls": KindComputation, "condition": KindComputation, "body": KindComputation,
	"select": KindComputation, "scatter": KindComputation, "true_computation": KindComputation,
	"false_computation": KindComputation,

	"branch_computations": KindComputations, "called_computations": KindComputations,
	"control-predecessors": KindInstructions,

	"window":                     KindWindow,
	"dim_labels":                 KindDimLabels,
	"padding":                    KindPadding,
	"slice":                      KindSlice,
	"outfeed_shape":              KindShape,
	"operand_layout_constraints": KindShapes,
	"literal":                    KindLiteral,

	"sharding": KindRaw, "metadata": KindRaw, "frontend_attributes": KindRaw, "backend_config": KindRaw,
	"origin": KindRaw, "original_value": KindRaw, "statistics": KindRaw, "result_accuracy": KindRaw,
	"domain": KindRaw, "output_to_operand_aliasing": KindRaw, "sparsity": KindRaw,
}

// AttrKindOf returns the kind of a named attribute; KindUnknown for names
// no opcode uses.
func AttrKindOf(name string) AttrKind { return attrKinds[name] }

// attrRank orders attributes for printing: the opcode's own attributes in
// table order, then the generic ones, then unknown ones in their given order.
func attrRank(op Opcode, name string) int {
	for i, a := range opTable[op].Attrs {
		if a == name {
			return i
		}
	}
	for i, a := range GenericAttrs {
		if a == name {
			return 100 + i
		}
	}
	return 1000
}
