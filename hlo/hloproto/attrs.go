package hloproto

import (
	"slices"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// P is short for the instruction proto in the codec table.
type P = HloInstructionProto

// codec maps one Axle attribute to the HloInstructionProto fields XLA keeps
// it in. enc reports false when the value does not fit those fields; dec
// returns the value and whether the fields say the attribute is present
// (not at its default), which is all a proto XLA wrote can tell.
type codec struct {
	enc func(p *P, op hlo.Opcode, v any) bool
	dec func(p *P, op hlo.Opcode) (any, bool)
}

func intCodec(f func(*P) *int64) codec {
	return codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool { i, ok := v.(int64); *f(p) = i; return ok },
		dec: func(p *P, _ hlo.Opcode) (any, bool) { return *f(p), *f(p) != 0 },
	}
}

func int32Codec(f func(*P) *int32) codec {
	return codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			i, ok := v.(int64)
			*f(p) = int32(i)
			return ok && int64(int32(i)) == i
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) { return int64(*f(p)), *f(p) != 0 },
	}
}

func boolCodec(f func(*P) *bool) codec {
	return codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool { b, ok := v.(bool); *f(p) = b; return ok },
		dec: func(p *P, _ hlo.Opcode) (any, bool) { return *f(p), *f(p) },
	}
}

func intsCodec(f func(*P) *[]int64) codec {
	return codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool { l, ok := v.([]int64); *f(p) = slices.Clone(l); return ok },
		dec: func(p *P, _ hlo.Opcode) (any, bool) { return slices.Clone(*f(p)), len(*f(p)) > 0 },
	}
}

// msgIntsCodec is intsCodec for a list inside a message: encoding creates
// the message, decoding reads through nil-safe getters and never does.
func msgIntsCodec(w func(*P) *[]int64, r func(*P) []int64) codec {
	return codec{
		enc: intsCodec(w).enc,
		dec: func(p *P, _ hlo.Opcode) (any, bool) { return slices.Clone(r(p)), len(r(p)) > 0 },
	}
}

func stringCodec(f func(*P) *string) codec {
	return codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool { s, ok := v.(string); *f(p) = s; return ok },
		dec: func(p *P, _ hlo.Opcode) (any, bool) { return *f(p), *f(p) != "" },
	}
}

func bytesCodec(f func(*P) *[]byte) codec {
	return codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool { s, ok := v.(string); *f(p) = []byte(s); return ok },
		dec: func(p *P, _ hlo.Opcode) (any, bool) { return string(*f(p)), len(*f(p)) > 0 },
	}
}

// enumCodec maps a bare-word attribute to a proto enum whose value names are
// prefix + the word in upper case (lower: the word is written in lower case).
func enumCodec(names map[int32]string, values map[string]int32, prefix string, lower bool, get func(*P) int32, set func(*P, int32)) codec {
	return codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			e, ok := v.(hlo.Enum)
			n, known := values[prefix+strings.ToUpper(string(e))]
			set(p, n)
			return ok && known
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			w := strings.TrimPrefix(names[get(p)], prefix)
			if lower {
				w = strings.ToLower(w)
			}
			return hlo.Enum(w), get(p) != 0
		},
	}
}

// wordCodec maps a bare-word attribute to a string field.
func wordCodec(f func(*P) *string) codec {
	return codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool { e, ok := v.(hlo.Enum); *f(p) = string(e); return ok },
		dec: func(p *P, _ hlo.Opcode) (any, bool) { return hlo.Enum(*f(p)), *f(p) != "" },
	}
}

func dotDims(p *P) *DotDimensionNumbers {
	if p.DotDimensionNumbers == nil {
		p.DotDimensionNumbers = &DotDimensionNumbers{}
	}
	return p.DotDimensionNumbers
}

func gatherDims(p *P) *GatherDimensionNumbers {
	if p.GatherDimensionNumbers == nil {
		p.GatherDimensionNumbers = &GatherDimensionNumbers{}
	}
	return p.GatherDimensionNumbers
}

func scatterDims(p *P) *ScatterDimensionNumbers {
	if p.ScatterDimensionNumbers == nil {
		p.ScatterDimensionNumbers = &ScatterDimensionNumbers{}
	}
	return p.ScatterDimensionNumbers
}

func precision(p *P) *PrecisionConfig {
	if p.PrecisionConfig == nil {
		p.PrecisionConfig = &PrecisionConfig{}
	}
	return p.PrecisionConfig
}

func triangular(p *P) *TriangularSolveOptions {
	if p.TriangularSolveOptions == nil {
		p.TriangularSolveOptions = &TriangularSolveOptions{}
	}
	return p.TriangularSolveOptions
}

// The dimension-number attributes decode from a copy so that decoding never
// adds empty messages to a proto being read.
func readGather(p *P) *GatherDimensionNumbers {
	if p.GatherDimensionNumbers == nil {
		return &GatherDimensionNumbers{}
	}
	return p.GatherDimensionNumbers
}

func readScatter(p *P) *ScatterDimensionNumbers {
	if p.ScatterDimensionNumbers == nil {
		return &ScatterDimensionNumbers{}
	}
	return p.ScatterDimensionNumbers
}

func readTriangular(p *P) *TriangularSolveOptions {
	if p.TriangularSolveOptions == nil {
		return &TriangularSolveOptions{}
	}
	return p.TriangularSolveOptions
}

// codecs maps attribute names to XLA's fields, as XLA's
// HloInstruction::ToProto fills them.
var codecs = map[string]codec{
	"dimensions":          intsCodec(func(p *P) *[]int64 { return &p.Dimensions }),
	"index":               intCodec(func(p *P) *int64 { return &p.TupleIndex }),
	"feature_group_count": intCodec(func(p *P) *int64 { return &p.FeatureGroupCount }),
	"batch_group_count":   intCodec(func(p *P) *int64 { return &p.BatchGroupCount }),
	"channel_id":          intCodec(func(p *P) *int64 { return &p.ChannelId }),
	"feature_index":       intCodec(func(p *P) *int64 { return &p.FeatureIndex }),
	"delta":               intCodec(func(p *P) *int64 { return &p.Delta }),
	"k":                   intCodec(func(p *P) *int64 { return &p.K }),
	"num_carries":         intCodec(func(p *P) *int64 { return &p.NumCarries }),
	"exponent_bits":       int32Codec(func(p *P) *int32 { return &p.ExponentBits }),
	"mantissa_bits":       int32Codec(func(p *P) *int32 { return &p.MantissaBits }),

	"is_stable":                   boolCodec(func(p *P) *bool { return &p.IsStable }),
	"indices_are_sorted":          boolCodec(func(p *P) *bool { return &p.IndicesAreSorted }),
	"unique_indices":              boolCodec(func(p *P) *bool { return &p.UniqueIndices }),
	"constrain_layout":            boolCodec(func(p *P) *bool { return &p.ConstrainLayout }),
	"use_global_device_ids":       boolCodec(func(p *P) *bool { return &p.UseGlobalDeviceIds }),
	"is_host_transfer":            boolCodec(func(p *P) *bool { return &p.IsHostTransfer }),
	"custom_call_has_side_effect": boolCodec(func(p *P) *bool { return &p.CustomCallHasSideEffect }),
	"largest":                     boolCodec(func(p *P) *bool { return &p.Largest }),
	"is_composite":                boolCodec(func(p *P) *bool { return &p.IsComposite }),
	"is_reverse":                  boolCodec(func(p *P) *bool { return &p.IsReverse }),

	"dynamic_slice_sizes": intsCodec(func(p *P) *[]int64 { return &p.DynamicSliceSizes }),
	"fft_length":          intsCodec(func(p *P) *[]int64 { return &p.FftLength }),

	"custom_call_target":     stringCodec(func(p *P) *string { return &p.CustomCallTarget }),
	"async_execution_thread": stringCodec(func(p *P) *string { return &p.AsyncExecutionThread }),
	"infeed_config":          bytesCodec(func(p *P) *[]byte { return &p.InfeedConfig }),
	"outfeed_config":         bytesCodec(func(p *P) *[]byte { return &p.OutfeedConfig }),

	"direction": wordCodec(func(p *P) *string { return &p.ComparisonDirection }),
	"type":      wordCodec(func(p *P) *string { return &p.ComparisonType }),
	"kind":      wordCodec(func(p *P) *string { return &p.FusionKind }),

	"fft_type": enumCodec(FftType_name, FftType_value, "", false,
		func(p *P) int32 { return int32(p.FftType) }, func(p *P, v int32) { p.FftType = FftType(v) }),
	"distribution": enumCodec(RandomDistribution_name, RandomDistribution_value, "", true,
		func(p *P) int32 { return int32(p.Distribution) }, func(p *P, v int32) { p.Distribution = RandomDistribution(v) }),
	"api_version": enumCodec(CustomCallApiVersion_name, CustomCallApiVersion_value, "", false,
		func(p *P) int32 { return int32(p.CustomCallApiVersion) }, func(p *P, v int32) { p.CustomCallApiVersion = CustomCallApiVersion(v) }),
	"schedule": enumCodec(CustomCallSchedule_name, CustomCallSchedule_value, "", false,
		func(p *P) int32 { return int32(p.CustomCallSchedule) }, func(p *P, v int32) { p.CustomCallSchedule = CustomCallSchedule(v) }),
	"transpose_a": enumCodec(TriangularSolveOptions_Transpose_name, TriangularSolveOptions_Transpose_value, "", false,
		func(p *P) int32 { return int32(readTriangular(p).TransposeA) },
		func(p *P, v int32) { triangular(p).TransposeA = TriangularSolveOptions_Transpose(v) }),

	"left_side": {
		enc: func(p *P, _ hlo.Opcode, v any) bool { b, ok := v.(bool); triangular(p).LeftSide = b; return ok },
		dec: func(p *P, _ hlo.Opcode) (any, bool) { return readTriangular(p).LeftSide, readTriangular(p).LeftSide },
	},
	"unit_diagonal": {
		enc: func(p *P, _ hlo.Opcode, v any) bool { b, ok := v.(bool); triangular(p).UnitDiagonal = b; return ok },
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			return readTriangular(p).UnitDiagonal, readTriangular(p).UnitDiagonal
		},
	},
	"lower": {
		enc: func(p *P, op hlo.Opcode, v any) bool {
			b, ok := v.(bool)
			if op == hlo.OpCholesky {
				p.CholeskyOptions = &CholeskyOptions{Lower: b}
			} else {
				triangular(p).Lower = b
			}
			return ok
		},
		dec: func(p *P, op hlo.Opcode) (any, bool) {
			b := readTriangular(p).Lower
			if op == hlo.OpCholesky {
				b = p.GetCholeskyOptions().GetLower()
			}
			return b, b
		},
	},

	"iota_dimension": {
		enc: func(p *P, _ hlo.Opcode, v any) bool { i, ok := v.(int64); p.Dimensions = []int64{i}; return ok },
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			if len(p.Dimensions) != 1 {
				return int64(0), false
			}
			return p.Dimensions[0], true
		},
	},
	"epsilon": {
		enc: func(p *P, _ hlo.Opcode, v any) bool { f, ok := v.(float64); p.Epsilon = float32(f); return ok },
		dec: func(p *P, _ hlo.Opcode) (any, bool) { return float64(p.Epsilon), p.Epsilon != 0 },
	},
	"cross_program_prefetch_index": {
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			i, ok := v.(int64)
			p.OptionalCrossProgramPrefetchIndex = &HloInstructionProto_CrossProgramPrefetchIndex{CrossProgramPrefetchIndex: int32(i)}
			return ok && int64(int32(i)) == i
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			x, ok := p.OptionalCrossProgramPrefetchIndex.(*HloInstructionProto_CrossProgramPrefetchIndex)
			if !ok {
				return int64(0), false
			}
			return int64(x.CrossProgramPrefetchIndex), true
		},
	},

	"lhs_batch_dims":       msgIntsCodec(func(p *P) *[]int64 { return &dotDims(p).LhsBatchDimensions }, func(p *P) []int64 { return p.GetDotDimensionNumbers().GetLhsBatchDimensions() }),
	"lhs_contracting_dims": msgIntsCodec(func(p *P) *[]int64 { return &dotDims(p).LhsContractingDimensions }, func(p *P) []int64 { return p.GetDotDimensionNumbers().GetLhsContractingDimensions() }),
	"rhs_batch_dims":       msgIntsCodec(func(p *P) *[]int64 { return &dotDims(p).RhsBatchDimensions }, func(p *P) []int64 { return p.GetDotDimensionNumbers().GetRhsBatchDimensions() }),
	"rhs_contracting_dims": msgIntsCodec(func(p *P) *[]int64 { return &dotDims(p).RhsContractingDimensions }, func(p *P) []int64 { return p.GetDotDimensionNumbers().GetRhsContractingDimensions() }),

	"offset_dims":                 msgIntsCodec(func(p *P) *[]int64 { return &gatherDims(p).OffsetDims }, func(p *P) []int64 { return p.GetGatherDimensionNumbers().GetOffsetDims() }),
	"collapsed_slice_dims":        msgIntsCodec(func(p *P) *[]int64 { return &gatherDims(p).CollapsedSliceDims }, func(p *P) []int64 { return p.GetGatherDimensionNumbers().GetCollapsedSliceDims() }),
	"start_index_map":             msgIntsCodec(func(p *P) *[]int64 { return &gatherDims(p).StartIndexMap }, func(p *P) []int64 { return p.GetGatherDimensionNumbers().GetStartIndexMap() }),
	"operand_batching_dims":       msgIntsCodec(func(p *P) *[]int64 { return &gatherDims(p).OperandBatchingDims }, func(p *P) []int64 { return p.GetGatherDimensionNumbers().GetOperandBatchingDims() }),
	"start_indices_batching_dims": msgIntsCodec(func(p *P) *[]int64 { return &gatherDims(p).StartIndicesBatchingDims }, func(p *P) []int64 { return p.GetGatherDimensionNumbers().GetStartIndicesBatchingDims() }),

	"update_window_dims":            msgIntsCodec(func(p *P) *[]int64 { return &scatterDims(p).UpdateWindowDims }, func(p *P) []int64 { return p.GetScatterDimensionNumbers().GetUpdateWindowDims() }),
	"inserted_window_dims":          msgIntsCodec(func(p *P) *[]int64 { return &scatterDims(p).InsertedWindowDims }, func(p *P) []int64 { return p.GetScatterDimensionNumbers().GetInsertedWindowDims() }),
	"scatter_dims_to_operand_dims":  msgIntsCodec(func(p *P) *[]int64 { return &scatterDims(p).ScatterDimsToOperandDims }, func(p *P) []int64 { return p.GetScatterDimensionNumbers().GetScatterDimsToOperandDims() }),
	"input_batching_dims":           msgIntsCodec(func(p *P) *[]int64 { return &scatterDims(p).InputBatchingDims }, func(p *P) []int64 { return p.GetScatterDimensionNumbers().GetInputBatchingDims() }),
	"scatter_indices_batching_dims": msgIntsCodec(func(p *P) *[]int64 { return &scatterDims(p).ScatterIndicesBatchingDims }, func(p *P) []int64 { return p.GetScatterDimensionNumbers().GetScatterIndicesBatchingDims() }),
}
