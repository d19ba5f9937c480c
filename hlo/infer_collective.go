package hlo

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Shape rules of collectives. Their sizes depend on how many devices take
// part: the size of a replica group when groups are written, else the
// module's replica or partition count (XLA's GetSubgroupSize).

var collectiveRules = map[Opcode]inferRule{
	OpAllReduce:              inferAllReduce,
	OpAllReduceStart:         inferAllReduce,
	OpAllReduceDone:          inferAllReduceDone,
	OpCollectiveBroadcast:    inferAllReduce,
	OpAllGather:              inferAllGather,
	OpAllGatherStart:         inferAllGather,
	OpAllGatherDone:          inferTupleElement1,
	OpReduceScatter:          inferReduceScatter,
	OpAllToAll:               inferAllToAll,
	OpRaggedAllToAll:         inferRaggedAllToAll,
	OpCollectivePermute:      inferCollectivePermute,
	OpCollectivePermuteStart: inferCollectivePermute,
	OpCollectivePermuteDone:  inferTupleElement1,
	OpCollectiveReduce:       cannotInfer,
}

// GroupMode is XLA's CollectiveOpGroupMode: what the ids in a
// collective's replica groups name and which devices each group spans.
type GroupMode uint8

const (
	// CrossReplica groups replicas of the same partition.
	CrossReplica GroupMode = iota
	// CrossPartition groups partitions of the same replica.
	CrossPartition
	// CrossReplicaAndPartition groups replicas and, with each, every
	// partition.
	CrossReplicaAndPartition
	// FlattenedID groups devices named replica*partitions+partition.
	FlattenedID
)

// CollectiveGroupMode is the group mode of a collective instruction.
func CollectiveGroupMode(in *Instruction) (GroupMode, error) { return collectiveMode(in) }

// collectiveMode derives the group mode from channel_id and
// use_global_device_ids, as XLA's GetCollectiveOpGroupMode does; ops
// without use_global_device_ids treat a channel as cross-partition.
func collectiveMode(in *Instruction) (GroupMode, error) {
	_, channel := in.Int("channel_id")
	global := in.Bool("use_global_device_ids")
	switch {
	case !channel && global:
		return 0, errors.New("use_global_device_ids=true is only allowed with a channel_id")
	case !channel:
		return CrossReplica, nil
	case !in.Opcode.AcceptsAttr("use_global_device_ids"):
		return CrossPartition, nil
	case global:
		return FlattenedID, nil
	}
	return CrossReplicaAndPartition, nil
}

// replicaGroups returns the written replica groups: as lists, or for
// iota groups (`[2,4]<=[8]`) their group size. present reports whether
// groups are written at all; a form Axle cannot read (such as mesh axes)
// is present with neither.
func replicaGroups(in *Instruction) (groups [][]int64, iotaSize int64, present bool) {
	v, ok := in.Attr("replica_groups")
	if !ok {
		return nil, 0, false
	}
	switch g := v.(type) {
	case [][]int64:
		return g, 0, len(g) > 0
	case IotaReplicaGroups:
		return nil, iotaGroupSize(string(g)), true
	}
	return nil, 0, true
}

// iotaGroupSize reads the group size of `[groups,size]<=[...]`, or 0.
func iotaGroupSize(s string) int64 {
	head, _, ok := strings.Cut(s, "<=")
	head = strings.TrimSpace(head)
	if !ok || !strings.HasPrefix(head, "[") || !strings.HasSuffix(head, "]") {
		return 0
	}
	parts := strings.Split(head[1:len(head)-1], ",")
	if len(parts) != 2 {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(parts[1]), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// moduleOf returns the module of an instruction added to a computation of
// one, or nil (as while the parser is still building it).
func moduleOf(in *Instruction) *Module {
	if in.Parent == nil {
		return nil
	}
	return in.Parent.Parent
}

// subgroupSize is the number of devices in each group of a collective, or
// 0 when it cannot be known (no groups written and no module to ask).
func subgroupSize(in *Instruction) (int64, error) {
	mode, err := collectiveMode(in)
	if err != nil {
		return 0, err
	}
	groups, written, present := replicaGroups(in)
	if len(groups) > 0 {
		written = int64(len(groups[0]))
	}
	if present && written == 0 {
		return 0, nil // groups Axle cannot read: the size is unknown
	}
	m := moduleOf(in)
	replicas, partitions := int64(0), int64(0)
	if m != nil {
		replicas, partitions = max(m.ReplicaCount, 1), max(m.NumPartitions, 1)
	}
	switch mode {
	case CrossReplica, CrossReplicaAndPartition:
		n := written
		if n == 0 {
			n = replicas
		}
		if mode == CrossReplicaAndPartition {
			n *= partitions
		}
		return n, nil
	case FlattenedID:
		if written == 0 {
			return 0, errors.New("replica groups must be specified in flattened-id mode")
		}
		return written, nil
	}
	if written == 0 {
		return partitions, nil
	}
	return written, nil
}

func checkArrays(ops []Shape, what string) error {
	for i, s := range ops {
		if err := expectArray(s, fmt.Sprintf("operand %d of %s", i, what)); err != nil {
			return err
		}
	}
	return nil
}

// oneOrTuple is the result convention of variadic collectives: the shape
// itself for one operand, else a tuple.
func oneOrTuple(shapes []Shape) Shape {
	if len(shapes) == 1 {
		return shapes[0]
	}
	return TupleShape(shapes...)
}

func inferAllReduce(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) == 0 {
		return Shape{}, errors.New("needs at least one operand")
	}
	if err := checkArrays(ops, in.Opcode.String()); err != nil {
		return Shape{}, err
	}
	out := make([]Shape, len(ops))
	for i, s := range ops {
		out[i] = withDefaultLayout(s.Clone())
	}
	return oneOrTuple(out), nil
}

func inferAllReduceDone(_ *Instruction, ops []Shape) (Shape, error) {
	return ops[0].Clone(), nil
}

func inferTupleElement1(in *Instruction, ops []Shape) (Shape, error) {
	s := ops[0]
	if !s.IsTuple() || len(s.Tuple) < 2 {
		return Shape{}, fmt.Errorf("expects the tuple shape of the matching start op, got %s", s.HumanString())
	}
	return s.Tuple[1].Clone(), nil
}

// shardCount is the factor by which a gather or scatter dimension changes:
// taken from the written result shape when there is one (as XLA's verifier
// does) and checked against the group size, else the group size.
func shardCount(in *Instruction, in0, out0 Shape, dim int64, gather bool) (int64, error) {
	group, err := subgroupSize(in)
	if err != nil {
		return 0, err
	}
	if out0.IsArray() && dim < int64(out0.Rank()) && dim < int64(in0.Rank()) {
		num, den := out0.Dims[dim], in0.Dims[dim]
		if !gather {
			num, den = den, num
		}
		if den > 0 {
			n := (num + den - 1) / den
			if group > 1 && n != group {
				return 0, fmt.Errorf("shard_count = %d, subgroup_size = %d", n, group)
			}
			return n, nil
		}
	}
	if group == 0 {
		return 0, fmt.Errorf("the number of participants is unknown: %w", ErrCannotInfer)
	}
	return group, nil
}

// gatherOutput returns the written output shape of operand i of an
// all-gather, all-gather-start or reduce-scatter, if any.
func gatherOutput(in *Instruction, i, n int) Shape {
	d, ok := declared(in)
	if !ok {
		return Shape{}
	}
	if in.Opcode == OpAllGatherStart {
		if !d.IsTuple() || len(d.Tuple) < 2 {
			return Shape{}
		}
		d = d.Tuple[1]
	}
	if n == 1 {
		return d
	}
	if !d.IsTuple() || i >= len(d.Tuple) {
		return Shape{}
	}
	return d.Tuple[i]
}

// inferAllGather: the gather dimension grows by the number of shards.
func inferAllGather(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) == 0 {
		return Shape{}, errors.New("needs at least one operand")
	}
	if err := checkArrays(ops, in.Opcode.String()); err != nil {
		return Shape{}, err
	}
	dim, err := oneDimension(in)
	if err != nil {
		return Shape{}, err
	}
	for _, s := range ops {
		if dim < 0 || dim >= int64(s.Rank()) {
			return Shape{}, fmt.Errorf("all-gather dimension %d is out of bounds for %s", dim, s.HumanString())
		}
	}
	shards, err := shardCount(in, ops[0], gatherOutput(in, 0, len(ops)), dim, true)
	if err != nil {
		return Shape{}, err
	}
	out := make([]Shape, len(ops))
	for i, s := range ops {
		o := withDefaultLayout(s.Clone())
		if o.Dims[dim] != Unbounded {
			o.Dims[dim] *= shards
		}
		out[i] = o
	}
	if in.Opcode == OpAllGatherStart {
		ins := make([]Shape, len(ops))
		for i, s := range ops {
			ins[i] = s.Clone()
		}
		return TupleShape(oneOrTuple(ins), oneOrTuple(out)), nil
	}
	return oneOrTuple(out), nil
}

// inferReduceScatter: the scatter dimension shrinks by the number of shards.
func inferReduceScatter(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) == 0 {
		return Shape{}, errors.New("needs at least one operand")
	}
	if err := checkArrays(ops, "reduce-scatter"); err != nil {
		return Shape{}, err
	}
	dim, err := oneDimension(in)
	if err != nil {
		return Shape{}, err
	}
	for _, s := range ops {
		if dim < 0 || dim >= int64(s.Rank()) {
			return Shape{}, fmt.Errorf("scatter dimension %d is out of bounds for %s", dim, s.HumanString())
		}
	}
	shards, err := shardCount(in, ops[0], gatherOutput(in, 0, len(ops)), dim, false)
	if err != nil {
		return Shape{}, err
	}
	out := make([]Shape, len(ops))
	for i, s := range ops {
		o := withDefaultLayout(s.Clone())
		if o.Dims[dim] != Unbounded {
			if o.Dims[dim]%shards != 0 {
				return Shape{}, fmt.Errorf("reduce-scatter operand scatter dimension size %d must be dividable by shard_count %d", o.Dims[dim], shards)
			}
			o.Dims[dim] /= shards
		}
		out[i] = o
	}
	return oneOrTuple(out), nil
}

// inferAllToAll: with dimensions={d} the array form (split and concatenate
// along d, so the shape is kept); without, the tuple form with one operand
// per participant.
func inferAllToAll(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) == 0 {
		return Shape{}, errors.New("needs at least one operand")
	}
	if err := checkArrays(ops, "all-to-all"); err != nil {
		return Shape{}, err
	}
	count, err := subgroupSize(in)
	if err != nil {
		return Shape{}, err
	}
	if dims := in.Dimensions(); len(dims) > 0 {
		if len(ops) != 1 || len(dims) != 1 {
			return Shape{}, errors.New("the array form of all-to-all takes one operand and one split dimension")
		}
		x, d := ops[0], dims[0]
		if d < 0 || d >= int64(x.Rank()) {
			return Shape{}, fmt.Errorf("all-to-all split_dimension %d is out-of-bounds in shape %s", d, x.HumanString())
		}
		if count > 0 && x.Dims[d] != Unbounded && x.Dims[d]%count != 0 {
			return Shape{}, fmt.Errorf("all-to-all split dimension size %d must be dividable by split_count %d", x.Dims[d], count)
		}
		return withDefaultLayout(x.Clone()), nil
	}
	if count > 0 && int64(len(ops)) != count {
		return Shape{}, fmt.Errorf("the tuple form of all-to-all takes one operand per participant: %d, has %d", count, len(ops))
	}
	for i, s := range ops {
		if !compatibleShapes(s, ops[0], exactTypes) {
			return Shape{}, fmt.Errorf("all-to-all has operands with different shapes: the 0th operand shape %s, but the %dth operand has shape %s", ops[0].HumanString(), i, s.HumanString())
		}
	}
	return TupleShape(ops...), nil
}

// inferRaggedAllToAll: operands (input, output, input_offsets, send_sizes,
// output_offsets, recv_sizes); the result is the output buffer.
func inferRaggedAllToAll(_ *Instruction, ops []Shape) (Shape, error) {
	if err := checkArrays(ops[:2], "ragged-all-to-all"); err != nil {
		return Shape{}, err
	}
	for i, s := range ops[2:] {
		if !s.IsArray() || !s.DType.IsInteger() {
			return Shape{}, fmt.Errorf("operand %d of ragged-all-to-all must be an integer array, got %s", i+2, s.HumanString())
		}
	}
	if !sameTypeIgnoringFP(ops[0].DType, ops[1].DType) || ops[0].Rank() != ops[1].Rank() {
		return Shape{}, fmt.Errorf("input and output of ragged-all-to-all must have the same element type and rank: %s vs %s", ops[0].HumanString(), ops[1].HumanString())
	}
	return withDefaultLayout(ops[1].Clone()), nil
}

// inferCollectivePermute: the operand's shape, or for the in-place form
// (input, output, input_offsets, output_offsets, with slice_sizes) the
// output's. The start op returns (input, output, contexts...), where the
// contexts are backend specific and taken from the written shape.
func inferCollectivePermute(in *Instruction, ops []Shape) (Shape, error) {
	if len(ops) == 0 {
		return Shape{}, errors.New("needs at least one operand")
	}
	inplace := in.HasAttr("slice_sizes")
	var input, output Shape
	switch {
	case inplace:
		if len(ops) != 4 {
			return Shape{}, fmt.Errorf("the in-place form takes 4 operands, has %d", len(ops))
		}
		input, output = ops[0].Clone(), ops[1].Clone()
	case len(ops) == 1:
		if err := expectArray(ops[0], "operand of "+in.Opcode.String()); err != nil {
			return Shape{}, err
		}
		input, output = ops[0].Clone(), withDefaultLayout(ops[0].Clone())
	default:
		input, output = TupleShape(ops...), TupleShape(ops...)
	}
	if in.Opcode == OpCollectivePermute {
		return output, nil
	}
	elems := []Shape{input, output}
	if d, ok := declared(in); ok && d.IsTuple() && len(d.Tuple) > 2 {
		elems = append(elems, d.Tuple[2:]...)
	} else if !ok {
		elems = append(elems, ScalarShape(U32), ScalarShape(U32))
	}
	return TupleShape(elems...), nil
}
