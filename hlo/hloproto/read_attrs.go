package hloproto

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// attrs sets in's attributes: in the order and form Axle's manifest
// records when Axle wrote the proto, else from XLA's fields alone.
func (r *reader) attrs(ip *P, in *hlo.Instruction) error {
	called, err := r.called(ip)
	if err != nil {
		return err
	}
	ext := &AxleInstruction{}
	has, err := getExt(ip, ext)
	if err != nil {
		return err
	}
	if !has {
		return xlaAttrs(ip, in, called)
	}
	var callNames []string
	counts := map[string]int64{}
	for _, a := range ext.Attrs {
		if c := a.Verbatim.GetComputations(); c != nil {
			callNames = append(callNames, a.Name)
			counts[a.Name] = c.Count
		}
	}
	taken := map[string][]*hlo.Computation{}
	for _, name := range xlaCallOrder(in.Opcode, callNames) {
		n := counts[name]
		if n < 0 || n > int64(len(called)) {
			return fmt.Errorf("attribute %s takes %d of the %d called_computation_ids left", name, n, len(called))
		}
		taken[name], called = called[:n], called[n:]
	}
	if len(called) > 0 {
		return fmt.Errorf("%d called_computation_ids are in no attribute", len(called))
	}
	for _, a := range ext.Attrs {
		v, err := r.attrValue(ip, in, a, taken)
		if err != nil {
			return fmt.Errorf("attribute %s: %w", a.Name, err)
		}
		in.Attrs = append(in.Attrs, hlo.Attr{Name: a.Name, Value: v})
	}
	return nil
}

func (r *reader) attrValue(ip *P, in *hlo.Instruction, a *AxleAttr, taken map[string][]*hlo.Computation) (any, error) {
	if c := a.Verbatim.GetComputations(); c != nil {
		if c.List {
			return taken[a.Name], nil
		}
		if len(taken[a.Name]) != 1 {
			return nil, fmt.Errorf("takes %d computations, want 1", len(taken[a.Name]))
		}
		return taken[a.Name][0], nil
	}
	if a.Verbatim != nil {
		return valueFromProto(a.Verbatim, "instruction "+in.Name)
	}
	cd, ok := codecs[a.Name]
	if !ok {
		return nil, fmt.Errorf("has no value")
	}
	v, _ := cd.dec(ip, in.Opcode)
	if v == nil {
		return nil, fmt.Errorf("has no valid value in its XLA fields")
	}
	return v, nil
}

// alwaysPrinted are the attributes XLA's text prints even at their zero
// value, by opcode.
var alwaysPrinted = map[hlo.Opcode][]string{
	hlo.OpGetTupleElement:    {"index"},
	hlo.OpBroadcast:          {"dimensions"},
	hlo.OpTranspose:          {"dimensions"},
	hlo.OpReduce:             {"dimensions"},
	hlo.OpConcatenate:        {"dimensions"},
	hlo.OpReverse:            {"dimensions"},
	hlo.OpSort:               {"dimensions"},
	hlo.OpAllGather:          {"dimensions"},
	hlo.OpReduceScatter:      {"dimensions"},
	hlo.OpIota:               {"iota_dimension"},
	hlo.OpGather:             {"offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim", "slice_sizes"},
	hlo.OpScatter:            {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "index_vector_dim"},
	hlo.OpDot:                {"lhs_contracting_dims", "rhs_contracting_dims"},
	hlo.OpSlice:              {"slice"},
	hlo.OpPad:                {"padding"},
	hlo.OpDynamicSlice:       {"dynamic_slice_sizes"},
	hlo.OpConvolution:        {"dim_labels"},
	hlo.OpCustomCall:         {"custom_call_target"},
	hlo.OpAllReduce:          {"replica_groups"},
	hlo.OpCompare:            {"direction"},
	hlo.OpFusion:             {"kind"},
	hlo.OpFft:                {"fft_type", "fft_length"},
	hlo.OpRng:                {"distribution"},
	hlo.OpBatchNormGrad:      {"epsilon", "feature_index"},
	hlo.OpBatchNormInference: {"epsilon", "feature_index"},
	hlo.OpBatchNormTraining:  {"epsilon", "feature_index"},
	hlo.OpReducePrecision:    {"exponent_bits", "mantissa_bits"},
}

// xlaAttrs reads the attributes of a proto XLA wrote: each attribute the
// opcode takes whose fields are set (or that XLA always prints), in XLA's
// printing order, and the called computations by opcode.
func xlaAttrs(ip *P, in *hlo.Instruction, called []*hlo.Computation) error {
	always := map[string]bool{}
	for _, n := range alwaysPrinted[in.Opcode] {
		always[n] = true
	}
	names := append(append([]string{}, in.Opcode.Info().Attrs...), hlo.GenericAttrs...)
	for _, name := range names {
		cd, ok := codecs[name]
		if !ok || !in.Opcode.AcceptsAttr(name) {
			continue
		}
		if v, present := cd.dec(ip, in.Opcode); v != nil && (present || always[name]) {
			in.SetAttr(name, v)
		}
	}
	if (in.Opcode == hlo.OpCollectivePermute || in.Opcode == hlo.OpCollectivePermuteStart) && len(ip.DynamicSliceSizes) > 0 && len(in.Operands) > 0 {
		in.SetAttr("slice_sizes", permuteSliceSizes(ip.DynamicSliceSizes, in.Operands[0].Shape))
	}
	if len(called) == 0 {
		return nil
	}
	switch in.Opcode {
	case hlo.OpWhile:
		if len(called) != 2 {
			return fmt.Errorf("while has %d called_computation_ids, want 2 (body, condition)", len(called))
		}
		in.SetAttr("condition", called[1])
		in.SetAttr("body", called[0])
	case hlo.OpSelectAndScatter:
		if len(called) != 2 {
			return fmt.Errorf("select-and-scatter has %d called_computation_ids, want 2 (select, scatter)", len(called))
		}
		in.SetAttr("select", called[0])
		in.SetAttr("scatter", called[1])
	case hlo.OpConditional:
		if len(in.Operands) > 0 && in.Operands[0].Shape.DType == hlo.Pred && len(called) == 2 {
			in.SetAttr("true_computation", called[0])
			in.SetAttr("false_computation", called[1])
		} else {
			in.SetAttr("branch_computations", called)
		}
	case hlo.OpCustomCall:
		in.SetAttr("called_computations", called)
	case hlo.OpFusion, hlo.OpAsyncStart, hlo.OpAsyncUpdate, hlo.OpAsyncDone, hlo.OpCall:
		if in.Opcode == hlo.OpCall {
			in.SetAttr("to_apply", called[0])
		} else {
			in.SetAttr("calls", called[0])
		}
	default:
		if len(called) != 1 {
			return fmt.Errorf("%s has %d called_computation_ids, want 1", in.Opcode, len(called))
		}
		in.SetAttr("to_apply", called[0])
	}
	return nil
}

// permuteSliceSizes splits XLA's flattened slice sizes of an in-place
// collective-permute into one list per buffer: as many sizes each as the
// rank of the input (of each tuple element in turn).
func permuteSliceSizes(flat []int64, input hlo.Shape) [][]int64 {
	var ranks []int
	if input.IsTuple() {
		for _, e := range input.Tuple {
			ranks = append(ranks, e.Rank())
		}
	} else {
		ranks = []int{input.Rank()}
	}
	if len(ranks) == 0 {
		ranks = []int{1} // an empty tuple: a malformed proto, read one size a list
	}
	out := [][]int64{}
	for i := 0; len(flat) > 0; i++ {
		r := min(max(ranks[i%len(ranks)], 1), len(flat))
		out = append(out, append([]int64{}, flat[:r]...))
		flat = flat[r:]
	}
	return out
}
