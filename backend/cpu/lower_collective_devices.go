package cpu

import (
	"context"
	"fmt"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/hlo"
)

// Collectives across devices: in a multi-device launch every device's
// frame carries its collective.Participant, and each collective moves
// data through collective.Do, the code the evaluator runs too, so both
// engines give identical results. Run as a single device (no
// participant), a collective keeps its single-device kernel (a copy or
// the operand itself); one that needs other devices fails, naming them.

// collectiveOpcodes are the ops lowerCollectiveKernel takes.
var collectiveOpcodes = opcodes(hlo.OpAllReduce, hlo.OpAllReduceStart, hlo.OpAllGather, hlo.OpAllGatherStart,
	hlo.OpReduceScatter, hlo.OpAllToAll, hlo.OpCollectiveBroadcast, hlo.OpCollectivePermute, hlo.OpCollectivePermuteStart,
	hlo.OpRaggedAllToAll)

// lowerCollectiveKernel lowers a collective for both cases: with a
// participant through collective.Do, without one through the
// single-device kernel when there is one. The in-place collective-permute
// and ragged-all-to-all have none: alone they run through collective.Do
// on a participant alone (a group of one), as the evaluator runs them.
// Their out buffer may be an operand's; Do first fills it with the
// output operand's values, which untouched elements keep.
func lowerCollectiveKernel(c *compiler, in *hlo.Instruction) (lowered, bool) {
	single, _, ok := lowerSingleDevice(in, c.threads)
	if !ok {
		single = nil
	}
	result, wrap, ok := collectiveResult(in)
	if !ok {
		return lowered{}, false
	}
	alone := in.Opcode == hlo.OpRaggedAllToAll || in.HasAttr("slice_sizes")
	buffered := arrayBytes(in.Shape) >= 0
	return lowered{how: "collective", k: func(ev *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		part := ev.part
		if part == nil {
			switch {
			case single != nil:
				return single(ev, out, ops)
			case !alone || ev.ReplicaID != 0 || ev.PartitionID != 0:
				return nil, fmt.Errorf("%s needs several devices: run it on a multi-device client (ClientOptions.Devices, axle run --devices)", in.Name)
			}
			part = collective.Alone(context.Background())
		}
		var res *hlo.Literal
		if buffered {
			res = arrayOut(result, out)
		} else {
			res = hlo.NewLiteral(result)
		}
		if err := collective.Do(part, in, ops, res, ev.applyScalar); err != nil {
			return nil, err
		}
		return wrap(res, ops), nil
	}}, true
}

// collectiveResult returns the shape collective.Do writes and how the
// instruction's value is made of it: the value itself, or for the start
// forms the tuple (operands, result, contexts...).
func collectiveResult(in *hlo.Instruction) (hlo.Shape, func(res *hlo.Literal, ops []*hlo.Literal) *hlo.Literal, bool) {
	same := func(res *hlo.Literal, _ []*hlo.Literal) *hlo.Literal { return res }
	switch in.Opcode {
	case hlo.OpAllGatherStart, hlo.OpCollectivePermuteStart:
	default:
		return in.Shape, same, true
	}
	if !in.Shape.IsTuple() || len(in.Shape.Tuple) < 2 {
		return hlo.Shape{}, nil, false
	}
	contexts := in.Shape.Tuple[2:]
	inPlace := in.HasAttr("slice_sizes") // the tuple begins with the input buffer alone
	return in.Shape.Tuple[1], func(res *hlo.Literal, ops []*hlo.Literal) *hlo.Literal {
		input := ops[0]
		if len(ops) > 1 && !inPlace {
			input = hlo.MakeTupleLiteral(ops...)
		}
		return withContexts(contexts, input, res)
	}, true
}

// applyScalar evaluates a reduction computation collective.Do does not
// fold itself, on the frame's evaluator.
func (s *runState) applyScalar(c *hlo.Computation, a, b *hlo.Literal) (*hlo.Literal, error) {
	e, err := s.evaluator()
	if err != nil {
		return nil, err
	}
	return e.Computation(c, a, b)
}
