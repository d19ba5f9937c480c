package cpu

import (
	"cmp"
	"fmt"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
)

// Single-device ops: an executable runs one replica of one partition, as
// the evaluator does, so collectives over a group of one, the async
// wrappers, barriers, dependencies and sharding annotations all return
// (a tuple of) their operands, ids are the evaluator's, and a
// collective-permute nobody sends to gives zeros (eval/collective.go,
// control.go, custom_call.go). Each is lowered to a source picking the
// result's literal at run time, as the evaluator does: a value without a
// buffer of its own (tuple, token, dynamic shape) is that literal, whose
// elements may be operands' literals (buffer assignment keeps those alive
// as long as the tuple); an array with a buffer is copied into it.
// Anything the evaluator would refuse (a group of several participants, a
// permute from another replica at compile time) is declined, so the
// evaluator reports it.

// source picks an instruction's value from its operands' values.
type source func(ev *runState, ops []*hlo.Literal) (*hlo.Literal, error)

// lowerSingleDevice compiles the collectives and the other ops whose
// meaning on one device is a copy or a constant.
func lowerSingleDevice(in *hlo.Instruction, threads int) (kernel, string, bool) {
	if l, ok := singleDeviceLowerings[in.Opcode]; ok {
		k, ok := l.lower(in, threads)
		return k, cmp.Or(l.name, in.Opcode.String()), ok
	}
	switch in.Opcode {
	case hlo.OpAllReduce, hlo.OpAllReduceStart, hlo.OpAllGather, hlo.OpReduceScatter,
		hlo.OpAllToAll, hlo.OpCollectiveBroadcast:
		if !soleParticipant(in, in.Shape) {
			return nil, "", false
		}
		return deliver(in, threads, operandsAs(in.Shape)), "collective", copyable(in, 0)
	case hlo.OpAllGatherDone, hlo.OpCollectivePermuteDone:
		return deliver(in, threads, elementValue(in, 1, 2)), "collective", elementCopyable(in, 1)
	case hlo.OpAllReduceDone:
		return deliver(in, threads, operandValue(0)), "collective", copyable(in, 0)
	case hlo.OpOptimizationBarrier, hlo.OpDomain, hlo.OpAddDependency, hlo.OpAsyncUpdate:
		return deliver(in, threads, operandValue(0)), in.Opcode.String(), copyable(in, 0)
	case hlo.OpCopy:
		// Array copies are movement's; this takes tuples, tokens and
		// dynamic shapes, which the evaluator passes on as they are.
		return deliver(in, threads, operandValue(0)), "copy", arrayBytes(in.Shape) < 0 && len(in.Operands) == 1
	case hlo.OpAsyncDone:
		return deliver(in, threads, elementValue(in, 1, 2)), "async-done", elementCopyable(in, 1)
	case hlo.OpCopyDone:
		return deliver(in, threads, elementValue(in, 0, 1)), "copy-done", elementCopyable(in, 0)
	case hlo.OpAfterAll:
		tok := hlo.NewLiteral(hlo.TokenShape()) // holds nothing: shared by every execution
		return func(*runState, *hlo.Literal, []*hlo.Literal) (*hlo.Literal, error) { return tok, nil },
			"after-all", in.Shape.IsToken()
	case hlo.OpCustomCall:
		return lowerCustomCall(in, threads)
	}
	// rng-get-and-update-state advances a counter kept in the evaluator's
	// unexported state; only the evaluator can advance it.
	return nil, "", false
}

// singleDeviceLowerings are the single-device ops lowered by a function
// of their own, each with its kernel's name (none: the opcode's).
var singleDeviceLowerings = map[hlo.Opcode]struct {
	name  string
	lower func(in *hlo.Instruction, threads int) (kernel, bool)
}{
	hlo.OpAllGatherStart:         {"collective", lowerAllGatherStart},
	hlo.OpCollectivePermute:      {"collective", lowerCollectivePermute},
	hlo.OpCollectivePermuteStart: {"collective", lowerCollectivePermute},
	hlo.OpCopyStart:              {"", lowerCopyStart},
	hlo.OpReplicaID:              {"", lowerDeviceID},
	hlo.OpPartitionID:            {"", lowerDeviceID},
	hlo.OpGetDimensionSize:       {"", lowerGetDimensionSize},
	hlo.OpSetDimensionSize:       {"", lowerSetDimensionSize},
	hlo.OpDynamicReshape:         {"", lowerDynamicReshape},
}

// soleParticipant says whether each leaf of result has its operand's
// dimensions, which is what a group of one gives (the evaluator checks
// exactly this, and refuses any other instruction).
func soleParticipant(in *hlo.Instruction, result hlo.Shape) bool {
	leaves := []hlo.Shape{result}
	if result.IsTuple() {
		leaves = result.Tuple
	}
	if len(leaves) != len(in.Operands) {
		return false
	}
	for i, l := range leaves {
		if !l.SameDims(in.Operands[i].Shape) || l.DType != in.Operands[i].Shape.DType {
			return false
		}
	}
	return true
}

// operandsAs is the value of shape s made of the operands: the tuple of
// them, or the one operand.
func operandsAs(s hlo.Shape) source {
	if s.IsTuple() {
		return func(_ *runState, ops []*hlo.Literal) (*hlo.Literal, error) {
			return hlo.MakeTupleLiteral(ops...), nil // (copies the slice: ops is scratch)
		}
	}
	return operandValue(0)
}

func operandValue(k int) source {
	return func(_ *runState, ops []*hlo.Literal) (*hlo.Literal, error) { return ops[k], nil }
}

// elementValue is element k of operand 0's tuple, which must have at least n
// elements (done ops read their start op's tuple).
func elementValue(in *hlo.Instruction, k, n int) source {
	return func(_ *runState, ops []*hlo.Literal) (*hlo.Literal, error) {
		el := ops[0].Elements()
		if len(el) < n {
			return nil, fmt.Errorf("%s expects the tuple of its start op, not %s", in.Opcode, ops[0].Shape().HumanString())
		}
		return el[k], nil
	}
}

// copyable says whether deliver can compile in with operand k as its
// source: a value without a buffer takes any source; an array with one
// needs a static array of its element type and size.
func copyable(in *hlo.Instruction, k int) bool {
	return k < len(in.Operands) && copies(in.Operands[k].Shape, in.Shape)
}

// elementCopyable is copyable for element k of operand 0's tuple.
func elementCopyable(in *hlo.Instruction, k int) bool {
	if len(in.Operands) != 1 {
		return false
	}
	t := in.Operands[0].Shape
	return t.IsTuple() && k < len(t.Tuple) && copies(t.Tuple[k], in.Shape)
}

func copies(from, to hlo.Shape) bool {
	if arrayBytes(to) < 0 {
		return true
	}
	return plainArray(from) && from.DType == to.DType && from.NumElements() == to.NumElements()
}

// deliver turns a source into a kernel: the source's literal itself for
// a value without a buffer, else a copy into the buffer.
func deliver(in *hlo.Instruction, threads int, src source) kernel {
	if arrayBytes(in.Shape) < 0 {
		return func(ev *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
			return src(ev, ops)
		}
	}
	return func(ev *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		v, err := src(ev, ops)
		if err != nil {
			return nil, err
		}
		out = arrayOut(in.Shape, out)
		return out, copyArray(out, v, threads)
	}
}

// arrayOut is out when it is an array buffer for s, else a new literal.
func arrayOut(s hlo.Shape, out *hlo.Literal) *hlo.Literal {
	if out == nil || out.Data() == nil || out.DType() != s.DType || int64(out.Len()) != s.NumElements() {
		return hlo.NewLiteral(s)
	}
	return out
}

// copyArray copies src's elements into dst, which has its element type
// and count: one memmove, split across threads when it is large.
func copyArray(dst, src *hlo.Literal, threads int) error {
	if src.DType() != dst.DType() || src.Len() != dst.Len() {
		return fmt.Errorf("cannot copy %s into %s", src.Shape().HumanString(), dst.Shape().HumanString())
	}
	d, s := bytesOf(dst), bytesOf(src)
	if sameStorage(dst, src) {
		return nil
	}
	splitBytes(len(d), dst.Len(), threads, func(lo, hi int) { copy(d[lo:hi], s[lo:hi]) })
	return nil
}

// clearArray sets every element of l to zero (+0, false): all-zero bytes.
func clearArray(l *hlo.Literal, threads int) {
	b := bytesOf(l)
	splitBytes(len(b), l.Len(), threads, func(lo, hi int) { clear(b[lo:hi]) })
}

// splitBytes runs f over [0, n) bytes holding elems elements, in one
// piece per thread when the work is worth waking them (pieces are whole
// cache lines, so threads never share one).
func splitBytes(n, elems, threads int, f func(lo, hi int)) {
	if threads <= 1 || elems < kernels.MinParallelWork {
		f(0, n)
		return
	}
	kernels.Parallel(threads, func(t int) {
		lo, hi := n*t/threads&^63, n*(t+1)/threads&^63
		if t == threads-1 {
			hi = n
		}
		f(lo, hi)
	})
}

// lowerAllGatherStart: (operands, gathered results), where with one
// operand both are that operand.
func lowerAllGatherStart(in *hlo.Instruction, _ int) (kernel, bool) {
	if !in.Shape.IsTuple() || len(in.Shape.Tuple) != 2 || !soleParticipant(in, in.Shape.Tuple[1]) {
		return nil, false
	}
	res := operandsAs(in.Shape.Tuple[1])
	return func(ev *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		r, _ := res(ev, ops)
		input := r
		if len(ops) > 1 {
			input = hlo.MakeTupleLiteral(ops...)
		}
		return hlo.MakeTupleLiteral(input, r), nil
	}, true
}

// lowerCollectivePermute: this replica receives its own value when a
// pair sends from it to itself, zeros when no pair targets it, and a
// pair from another replica is an error (as in the evaluator, which has
// only this replica). The replica is the evaluator's, read at run time.
// The start form gives (input, output, zero contexts...).
func lowerCollectivePermute(in *hlo.Instruction, threads int) (kernel, bool) {
	if in.HasAttr("slice_sizes") || len(in.Operands) == 0 {
		return nil, false // in-place permute: the evaluator refuses it too
	}
	start := in.Opcode == hlo.OpCollectivePermuteStart
	if start && (!in.Shape.IsTuple() || len(in.Shape.Tuple) < 2) {
		return nil, false
	}
	var pairs [][2]int64
	v, _ := in.Attr("source_target_pairs")
	if ps, ok := v.([][]int64); ok {
		for _, p := range ps {
			if len(p) == 2 {
				pairs = append(pairs, [2]int64{p[0], p[1]})
			}
		}
	}
	received := func(ev *runState) (bool, error) {
		self, got := int64(ev.ReplicaID), false
		for _, p := range pairs {
			if p[1] == self {
				if p[0] != self {
					return false, fmt.Errorf("collective-permute sends from replica %d to %d: a compiled executable runs a single replica", p[0], p[1])
				}
				got = true
			}
		}
		return got, nil
	}
	if !start && arrayBytes(in.Shape) > 0 {
		if !copyable(in, 0) || len(in.Operands) != 1 {
			return nil, false
		}
		return func(ev *runState, out *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
			got, err := received(ev)
			if err != nil {
				return nil, err
			}
			out = arrayOut(in.Shape, out)
			if !got {
				clearArray(out, threads)
				return out, nil
			}
			return out, copyArray(out, ops[0], threads)
		}, true
	}
	var contexts []hlo.Shape
	if start {
		contexts = in.Shape.Tuple[2:]
	}
	return func(ev *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		got, err := received(ev)
		if err != nil {
			return nil, err
		}
		input := ops[0]
		if len(ops) > 1 {
			input = hlo.MakeTupleLiteral(ops...)
		}
		output := input
		if !got {
			output = hlo.NewLiteral(input.Shape())
		}
		if !start {
			return output, nil
		}
		return withContexts(contexts, input, output), nil
	}, true
}

// withContexts is the tuple of elems then a zero value per context shape
// (the backend contexts of XLA's async tuples, meaningless here).
func withContexts(contexts []hlo.Shape, elems ...*hlo.Literal) *hlo.Literal {
	for _, s := range contexts {
		elems = append(elems, hlo.NewLiteral(s))
	}
	return hlo.MakeTupleLiteral(elems...)
}

// lowerCopyStart: the copy is done at once, so destination and source
// both hold the operand.
func lowerCopyStart(in *hlo.Instruction, _ int) (kernel, bool) {
	if !in.Shape.IsTuple() || len(in.Shape.Tuple) < 2 || len(in.Operands) != 1 {
		return nil, false
	}
	contexts := in.Shape.Tuple[2:]
	return func(_ *runState, _ *hlo.Literal, ops []*hlo.Literal) (*hlo.Literal, error) {
		return withContexts(contexts, ops[0], ops[0]), nil
	}, true
}

// lowerDeviceID writes the evaluator's replica or partition id (what the
// evaluator returns for it) into element 0, zeros elsewhere.
func lowerDeviceID(in *hlo.Instruction, _ int) (kernel, bool) {
	if arrayBytes(in.Shape) <= 0 {
		return nil, false
	}
	partition := in.Opcode == hlo.OpPartitionID
	return func(ev *runState, out *hlo.Literal, _ []*hlo.Literal) (*hlo.Literal, error) {
		out = arrayOut(in.Shape, out)
		clearArray(out, 1)
		id := ev.ReplicaID
		if partition {
			id = ev.PartitionID
		}
		out.SetUint64(0, uint64(id))
		return out, nil
	}, true
}
