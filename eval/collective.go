package eval

import (
	"context"
	"fmt"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/hlo"
)

// The evaluator runs one replica of one partition. Given a Participant
// (the runtime's multi-device launches give one to each device's
// evaluator), collectives exchange values with the other devices through
// package collective, as the CPU backend's do. Without one, a collective
// whose group is this one participant computes what operation_semantics
// gives for a group of one: all-reduce, all-gather, reduce-scatter,
// all-to-all and collective-broadcast return their operands unchanged;
// the in-place collective-permute and ragged-all-to-all run through
// package collective on a participant alone (collective.Alone). A group
// of more participants is refused, since the other participants' values
// do not exist here.

func init() {
	register(evalSoleParticipant, hlo.OpAllReduce, hlo.OpAllReduceStart, hlo.OpAllGather,
		hlo.OpReduceScatter, hlo.OpAllToAll, hlo.OpCollectiveBroadcast)
	register(evalAllGatherStart, hlo.OpAllGatherStart)
	register(evalCollectivePermute, hlo.OpCollectivePermute, hlo.OpCollectivePermuteStart)
	register(evalRaggedAllToAll, hlo.OpRaggedAllToAll)
	register(evalDone, hlo.OpAllGatherDone, hlo.OpCollectivePermuteDone, hlo.OpAsyncDone)
	register(evalPassThrough, hlo.OpAllReduceDone)
	register(evalReplicaID, hlo.OpReplicaID)
	register(evalPartitionID, hlo.OpPartitionID)
}

// soleParticipant checks that each result leaf has its operand's
// dimensions, which is what a group of one produces.
func soleParticipant(in *hlo.Instruction, ops []*hlo.Literal, result hlo.Shape) (*hlo.Literal, error) {
	leaves := []hlo.Shape{result}
	if result.IsTuple() {
		leaves = result.Tuple
	}
	if len(leaves) != len(ops) {
		return nil, fmt.Errorf("%d operands but %d results", len(ops), len(leaves))
	}
	for i, l := range leaves {
		if !l.SameDims(ops[i].Shape()) {
			return nil, fmt.Errorf("%s over more than one participant (operand %d is %s, result %s) on a single device: declare the devices (replica_count, num_partitions; axle run --replica-count N)",
				in.Opcode, i, ops[i].Shape().HumanString(), l.HumanString())
		}
	}
	if result.IsTuple() {
		return hlo.MakeTupleLiteral(ops...), nil
	}
	return ops[0], nil
}

func evalSoleParticipant(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if e.Participant != nil {
		return e.collective(in, ops, in.Shape)
	}
	return soleParticipant(in, ops, in.Shape)
}

// collective runs in across devices, into a new literal of shape result.
func (e *Evaluator) collective(in *hlo.Instruction, ops []*hlo.Literal, result hlo.Shape) (*hlo.Literal, error) {
	return e.collectiveAs(e.Participant, in, ops, result)
}

func (e *Evaluator) collectiveAs(p *collective.Participant, in *hlo.Instruction, ops []*hlo.Literal, result hlo.Shape) (*hlo.Literal, error) {
	out := hlo.NewLiteral(result)
	apply := func(c *hlo.Computation, a, b *hlo.Literal) (*hlo.Literal, error) { return e.Computation(c, a, b) }
	if err := collective.Do(p, in, ops, out, apply); err != nil {
		return nil, err
	}
	return out, nil
}

// alone is the participant of a single-device run, for the collectives
// whose group of one package collective computes (the in-place permute,
// ragged-all-to-all): replica 0 of partition 0 by itself.
func (e *Evaluator) alone(in *hlo.Instruction) (*collective.Participant, error) {
	if e.Participant != nil {
		return e.Participant, nil
	}
	if e.ReplicaID != 0 || e.PartitionID != 0 {
		return nil, fmt.Errorf("%s on replica %d, partition %d alone: declare the devices (replica_count, num_partitions; axle run --replica-count N)",
			in.Opcode, e.ReplicaID, e.PartitionID)
	}
	return collective.Alone(context.Background()), nil
}

// evalRaggedAllToAll: across devices, or alone a group of one (which
// sends only to itself).
func evalRaggedAllToAll(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	p, err := e.alone(in)
	if err != nil {
		return nil, err
	}
	return e.collectiveAs(p, in, ops, in.Shape)
}

// evalAllGatherStart returns (operands, gathered results).
func evalAllGatherStart(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if !in.Shape.IsTuple() || len(in.Shape.Tuple) < 2 {
		return nil, fmt.Errorf("all-gather-start result %s is not a tuple (operands, results)", in.Shape.HumanString())
	}
	var res *hlo.Literal
	var err error
	if e.Participant != nil {
		res, err = e.collective(in, ops, in.Shape.Tuple[1])
	} else {
		res, err = soleParticipant(in, ops, in.Shape.Tuple[1])
	}
	if err != nil {
		return nil, err
	}
	input := res
	if len(ops) > 1 {
		input = hlo.MakeTupleLiteral(ops...)
	}
	return hlo.MakeTupleLiteral(input, res), nil
}

// evalDone returns element 1 of the start op's tuple: the result.
func evalDone(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	el := ops[0].Elements()
	if len(el) < 2 {
		return nil, fmt.Errorf("%s expects the tuple of its start op", in.Opcode)
	}
	return el[1], nil
}

// evalCollectivePermute: this replica receives its own value if a pair
// sends from it to itself, and zeros if no pair targets it
// (operation_semantics, CollectivePermute). A pair from another replica
// needs that replica, which the evaluator does not have.
func evalCollectivePermute(e *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if e.Participant != nil || in.HasAttr("slice_sizes") {
		p, err := e.alone(in)
		if err != nil {
			return nil, err
		}
		return e.permuteAcross(p, in, ops)
	}
	pairs, _ := in.Attr("source_target_pairs")
	self := int64(e.ReplicaID)
	received := false
	if ps, ok := pairs.([][]int64); ok {
		for _, p := range ps {
			if len(p) == 2 && p[1] == self {
				if p[0] != self {
					return nil, fmt.Errorf("collective-permute sends from replica %d to %d: the evaluator runs a single replica", p[0], p[1])
				}
				received = true
			}
		}
	}
	input := ops[0]
	if len(ops) > 1 {
		input = hlo.MakeTupleLiteral(ops...)
	}
	output := input
	if !received {
		output = hlo.NewLiteral(input.Shape())
	}
	if in.Opcode == hlo.OpCollectivePermute {
		return output, nil
	}
	elems := []*hlo.Literal{input, output}
	for _, s := range in.Shape.Tuple[2:] {
		elems = append(elems, hlo.NewLiteral(s)) // backend contexts
	}
	return hlo.MakeTupleLiteral(elems...), nil
}

// permuteAcross is collective-permute (or its start form) between
// devices, p among them. The start form's tuple begins with the input:
// the operands, or the in-place form's input buffer.
func (e *Evaluator) permuteAcross(p *collective.Participant, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if in.Opcode == hlo.OpCollectivePermute {
		return e.collectiveAs(p, in, ops, in.Shape)
	}
	if !in.Shape.IsTuple() || len(in.Shape.Tuple) < 2 {
		return nil, fmt.Errorf("collective-permute-start result %s is not a tuple (operands, results, ...)", in.Shape.HumanString())
	}
	res, err := e.collectiveAs(p, in, ops, in.Shape.Tuple[1])
	if err != nil {
		return nil, err
	}
	input := ops[0]
	if len(ops) > 1 && !in.HasAttr("slice_sizes") {
		input = hlo.MakeTupleLiteral(ops...)
	}
	elems := []*hlo.Literal{input, res}
	for _, s := range in.Shape.Tuple[2:] {
		elems = append(elems, hlo.NewLiteral(s))
	}
	return hlo.MakeTupleLiteral(elems...), nil
}

func evalReplicaID(e *Evaluator, in *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
	out := hlo.NewLiteral(in.Shape)
	out.SetUint64(0, uint64(e.ReplicaID))
	return out, nil
}

func evalPartitionID(e *Evaluator, in *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
	out := hlo.NewLiteral(in.Shape)
	out.SetUint64(0, uint64(e.PartitionID))
	return out, nil
}
