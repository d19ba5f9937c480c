package eval

import (
	"fmt"
	"sort"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// custom-call runs foreign code in XLA; the evaluator knows the targets
// below, whose meaning XLA itself defines, and refuses every other one by
// name.

func init() {
	register(evalCustomCall, hlo.OpCustomCall)
}

var customCallTargets = map[string]handler{
	// Sharding and host-offloading annotations: the value is unchanged on
	// a single device.
	"Sharding":                  ccIdentity,
	"SPMDFullToShardShape":      ccIdentity,
	"SPMDShardToFullShape":      ccIdentity,
	"MoveToHost":                ccIdentity,
	"MoveToDevice":              ccIdentity,
	"annotate_device_placement": ccIdentity,
	"LayoutConstraint":          ccIdentity,
	// SetBound only tightens the static bound of a dynamic dimension.
	"SetBound": ccIdentity,
	// The buffer's contents are unspecified; zeros are one valid choice.
	"AllocateBuffer": func(_ *Evaluator, in *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
		return hlo.NewLiteral(in.Shape), nil
	},
	"PadToStatic":    ccPadToStatic,
	"SliceToDynamic": ccSliceToDynamic,
	// XLA's TopK custom call: (values, s32 indices) of the largest k along
	// the last dimension, as the top-k instruction without a comparator.
	"TopK": evalTopK,
}

// CustomCallTargets lists the custom-call targets the evaluator runs.
func CustomCallTargets() []string {
	out := make([]string, 0, len(customCallTargets))
	for t := range customCallTargets {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

func evalCustomCall(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	target, _ := in.StringAttr("custom_call_target")
	h, ok := customCallTargets[target]
	if !ok {
		return nil, unsupportedTarget(target)
	}
	return h(e, in, ops)
}

func unsupportedTarget(target string) error {
	return fmt.Errorf("unsupported custom-call target %q (the evaluator runs %s): %w",
		target, strings.Join(CustomCallTargets(), ", "), ErrUnimplemented)
}

func ccIdentity(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if len(ops) != 1 || !in.Shape.IsArray() || !in.Shape.SameDims(ops[0].Shape()) {
		return nil, fmt.Errorf("custom-call target expects one operand of the result's shape %s", in.Shape.HumanString())
	}
	return ops[0], nil
}

// ccPadToStatic returns (the data with every dimension static, then each
// dimension's dynamic size as an s32 scalar).
func ccPadToStatic(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	if len(in.Shape.Tuple) != x.Shape().Rank()+1 {
		return nil, fmt.Errorf("PadToStatic of %s needs a result tuple of the data and %d sizes", x.Shape().HumanString(), x.Shape().Rank())
	}
	data, err := hlo.NewLiteralFromData(in.Shape.Tuple[0], x.Clone().Data())
	if err != nil {
		return nil, err
	}
	elems := []*hlo.Literal{data}
	for d := range x.Shape().Rank() {
		s := hlo.NewLiteral(in.Shape.Tuple[d+1])
		s.SetInt64(0, x.DynamicSize(d))
		elems = append(elems, s)
	}
	return hlo.MakeTupleLiteral(elems...), nil
}

// ccSliceToDynamic takes (data, one s32 size per dimension) and marks the
// result's dynamic dimensions with those sizes.
func ccSliceToDynamic(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if len(ops) != in.Shape.Rank()+1 {
		return nil, fmt.Errorf("SliceToDynamic to %s takes the data and %d sizes", in.Shape.HumanString(), in.Shape.Rank())
	}
	out, err := hlo.NewLiteralFromData(in.Shape, ops[0].Clone().Data())
	if err != nil {
		return nil, err
	}
	for d := range in.Shape.Rank() {
		if in.Shape.IsDynamicDim(d) {
			if err := out.SetDynamicSize(d, ops[d+1].GetInt64(0)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
