package collective

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/axle-ml/axle/hlo"
)

// Do performs collective instruction in as participant p: ops are its
// operands, out is preallocated storage for its result (an array
// literal, or a tuple literal of arrays for tuple forms). Do writes out
// and returns nil, or an error naming the instruction.
//
// For the async start forms out is the result part only (the caller
// builds the start tuple): all-reduce-start's is all-reduce's,
// all-gather-start's is in.Shape.Tuple[1], collective-permute-start's is
// in.Shape.Tuple[1].
//
// The in-place collective-permute (slice_sizes) and ragged-all-to-all
// take their operands as written, tuples included (input, output, start
// indices or ragged metadata); out is the output's shape, and Do fills
// it with output's values before writing what it receives.
//
// apply evaluates a reduction computation on two scalars, for to_apply
// computations the typed folds do not recognize; it may be nil, and then
// such computations are an error.
//
// out may share storage with an operand of the same size (an in-place
// buffer); any other overlap is undefined.
func Do(p *Participant, in *hlo.Instruction, ops []*hlo.Literal, out *hlo.Literal, apply ScalarApply) error {
	if err := do(p, in, ops, out, apply); err != nil {
		return fmt.Errorf("%s %s: %w", in.Opcode, in.Name, err)
	}
	return nil
}

func do(p *Participant, in *hlo.Instruction, ops []*hlo.Literal, out *hlo.Literal, apply ScalarApply) error {
	if p == nil || p.Assign == nil || p.Net == nil {
		return errors.New("the participant has no device assignment or transport")
	}
	if (in.Opcode == hlo.OpCollectivePermute || in.Opcode == hlo.OpCollectivePermuteStart) && in.HasAttr("slice_sizes") {
		return permuteInPlace(newCall(p, in, nil, 0), ops, out)
	}
	if in.Opcode == hlo.OpRaggedAllToAll {
		group, me, err := GroupOf(in, p.Assign, p.Device)
		if err != nil {
			return err
		}
		return raggedAllToAll(newCall(p, in, group, me), ops, out)
	}
	outs, err := arrays(ops, out)
	if err != nil {
		return err
	}
	if in.Opcode == hlo.OpCollectivePermute || in.Opcode == hlo.OpCollectivePermuteStart {
		return permute(newCall(p, in, nil, 0), ops, outs)
	}
	if in.Opcode == hlo.OpCollectiveBroadcast && !inSomeGroup(in, p) {
		// StableHLO's collective_broadcast: a process in no group gets
		// zeros.
		for _, o := range outs {
			clear(o.RawBytes())
		}
		return nil
	}
	group, me, err := GroupOf(in, p.Assign, p.Device)
	if err != nil {
		return err
	}
	c := newCall(p, in, group, me)
	switch in.Opcode {
	case hlo.OpAllReduce, hlo.OpAllReduceStart:
		return allReduce(c, ops, outs, apply)
	case hlo.OpReduceScatter:
		return reduceScatter(c, ops, outs, apply)
	case hlo.OpAllGather, hlo.OpAllGatherStart:
		return allGather(c, ops, outs)
	case hlo.OpAllToAll:
		return allToAll(c, ops, outs)
	case hlo.OpCollectiveBroadcast:
		return broadcast(c, ops, outs)
	}
	return fmt.Errorf("not a collective Do performs")
}

// inSomeGroup reports whether p's device is in one of in's groups (an
// error forming them counts as yes, for GroupOf to report).
func inSomeGroup(in *hlo.Instruction, p *Participant) bool {
	groups, err := Groups(in, p.Assign)
	if err != nil {
		return true
	}
	for _, g := range groups {
		if slices.Contains(g, p.Device) {
			return true
		}
	}
	return false
}

// call is one execution of a collective on one device: its group, its
// place in it, and the key every exchange of the execution derives from.
type call struct {
	p     *Participant
	in    *hlo.Instruction
	group []int
	me    int
	key   Key
}

func newCall(p *Participant, in *hlo.Instruction, group []int, me int) *call {
	op := in.Name
	if in.Parent != nil {
		op = in.Parent.Name + "/" + in.Name
	}
	return &call{p: p, in: in, group: group, me: me, key: p.Key(op)}
}

// exchange runs one phase of the execution; with nothing to move it
// does not reach the transport.
func (c *call) exchange(phase int, sends, recvs []Message) error {
	if len(sends) == 0 && len(recvs) == 0 {
		return nil
	}
	k := c.key
	k.Phase = uint32(phase)
	return c.p.Net.Exchange(c.p.context(), c.p.Device, k, sends, recvs)
}

// arrays checks ops and out's leaves are array literals with storage,
// one leaf per operand, and returns the leaves.
func arrays(ops []*hlo.Literal, out *hlo.Literal) ([]*hlo.Literal, error) {
	if out == nil {
		return nil, errors.New("no result storage")
	}
	outs := []*hlo.Literal{out}
	if out.Shape().IsTuple() {
		outs = out.Elements()
	}
	if len(ops) == 0 || len(outs) != len(ops) {
		return nil, fmt.Errorf("%d operands for a result of %d arrays", len(ops), len(outs))
	}
	for i := range ops {
		for _, l := range []*hlo.Literal{ops[i], outs[i]} {
			s := l.Shape()
			if !s.IsArray() || l.IsElided() || s.IsDynamic() || l.Data() == nil {
				return nil, fmt.Errorf("operand %d or its result is %s: collectives move static arrays with values", i, s.HumanString())
			}
		}
		if ops[i].DType() != outs[i].DType() {
			return nil, fmt.Errorf("operand %d is %s but its result is %s", i, ops[i].DType(), outs[i].DType())
		}
	}
	return outs, nil
}

// elemBytes is the storage of one element: a byte for every type of 8
// bits or fewer (s4, pred, f8...), as hlo.Literal keeps them.
func elemBytes(t hlo.DType) int { return max(t.Bits(), 8) / 8 }

// splitDim returns, for a row-major array of dims split into k equal
// pieces along d, how many outer rows there are (the product of the
// dimensions before d) and the bytes of one piece of one row.
func splitDim(dims []int64, d, k int, es int) (outer, piece int, err error) {
	if d < 0 || d >= len(dims) {
		return 0, 0, fmt.Errorf("dimension %d is out of range for rank %d", d, len(dims))
	}
	if dims[d]%int64(k) != 0 {
		return 0, 0, fmt.Errorf("dimension %d of size %d does not split among %d participants", d, dims[d], k)
	}
	outer, inner := 1, es
	for i, n := range dims {
		if i < d {
			outer *= int(n)
		} else {
			inner *= int(n)
		}
	}
	return outer, inner / k, nil
}

// oneDim is the instruction's single gather, scatter or split dimension.
func oneDim(in *hlo.Instruction) (int, error) {
	d := in.Dimensions()
	if len(d) != 1 {
		return 0, fmt.Errorf("needs one dimension, has %v", d)
	}
	return int(d[0]), nil
}

// overlaps reports whether a and b share any byte.
func overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// sameDims checks a result leaf has the dimensions want.
func sameDims(i int, out *hlo.Literal, want []int64) error {
	got := out.Shape().Dims
	if len(got) != len(want) {
		return fmt.Errorf("result %d is %s, want dimensions %v", i, out.Shape().HumanString(), want)
	}
	for j := range got {
		if got[j] != want[j] {
			return fmt.Errorf("result %d is %s, want dimensions %v", i, out.Shape().HumanString(), want)
		}
	}
	return nil
}
