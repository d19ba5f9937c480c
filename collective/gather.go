package collective

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// allGather concatenates every member's operand along
// all_gather_dimension, in group order. Along the major dimension (or
// any whose preceding dimensions are 1) each member's block is a
// contiguous run of the result and is received in place; otherwise
// blocks arrive in scratch and are scattered row by row. Operand i of a
// tuple form uses phase i.
func allGather(c *call, ops, outs []*hlo.Literal) error {
	d, err := oneDim(c.in)
	if err != nil {
		return err
	}
	k := len(c.group)
	for i, op := range ops {
		s := op.Shape()
		want := slices.Clone(s.Dims)
		if d < 0 || d >= len(want) {
			return fmt.Errorf("dimension %d is out of range for operand %d, %s", d, i, s.HumanString())
		}
		want[d] *= int64(k)
		if err := sameDims(i, outs[i], want); err != nil {
			return err
		}
		src, dst := op.RawBytes(), outs[i].RawBytes()
		outer, piece, err := splitDim(want, d, k, elemBytes(s.DType))
		if err != nil {
			return err
		}
		if err := gatherOne(c, i, src, dst, outer, piece); err != nil {
			return err
		}
	}
	return nil
}

// gatherOne gathers src, [outer][piece], from every member into dst,
// [outer][k][piece].
func gatherOne(c *call, phase int, src, dst []byte, outer, piece int) error {
	k := len(c.group)
	if outer == 1 {
		parts := blocks(dst, k, len(src))
		copy(parts[c.me], src)
		return gatherChunks(c, phase, parts)
	}
	buf := scratch(k * len(src))
	defer buf.release()
	parts := blocks(buf.bytes(k*len(src)), k, len(src))
	parts[c.me] = src
	if err := gatherChunks(c, phase, parts); err != nil {
		return err
	}
	for j, p := range parts {
		scatterBlock(dst, p, j, outer, k, piece)
	}
	return nil
}

// allToAll: with split_dimensions={d} each member's operand is cut into
// k pieces along d, piece j sent to member j, and the pieces received
// concatenated along d in group order; the tuple form sends operand j
// to member j and result i is what member i sent.
func allToAll(c *call, ops, outs []*hlo.Literal) error {
	if len(c.in.Dimensions()) == 0 {
		return allToAllTuple(c, ops, outs)
	}
	d, err := oneDim(c.in)
	if err != nil {
		return err
	}
	if len(ops) != 1 {
		return fmt.Errorf("the array form of all-to-all takes one operand, has %d", len(ops))
	}
	s := ops[0].Shape()
	if err := sameDims(0, outs[0], s.Dims); err != nil {
		return err
	}
	k := len(c.group)
	outer, piece, err := splitDim(s.Dims, d, k, elemBytes(s.DType))
	if err != nil {
		return err
	}
	src, dst := ops[0].RawBytes(), outs[0].RawBytes()
	if outer == 1 {
		return swapChunks(c, blocks(src, k, piece), blocks(dst, k, piece))
	}
	// Pack the pieces to send, receive into scratch, then scatter: one
	// buffer of twice the operand.
	buf := scratch(2 * len(src))
	defer buf.release()
	all := buf.bytes(2 * len(src))
	send, recv := blocks(all[:len(src)], k, outer*piece), blocks(all[len(src):], k, outer*piece)
	for j := range k {
		gatherBlock(send[j], src, j, outer, k, piece)
	}
	if err := swapChunks(c, send, recv); err != nil {
		return err
	}
	for j := range k {
		scatterBlock(dst, recv[j], j, outer, k, piece)
	}
	return nil
}

func allToAllTuple(c *call, ops, outs []*hlo.Literal) error {
	k := len(c.group)
	if len(ops) != k {
		return fmt.Errorf("the tuple form of all-to-all takes one operand per participant (%d), has %d", k, len(ops))
	}
	send, recv := make([][]byte, k), make([][]byte, k)
	for j := range k {
		if err := sameDims(j, outs[j], ops[j].Shape().Dims); err != nil {
			return err
		}
		send[j], recv[j] = ops[j].RawBytes(), outs[j].RawBytes()
	}
	return swapChunks(c, send, recv)
}

// swapChunks sends send[j] to member j and receives member j's into
// recv[j]; this member's own goes by copy.
func swapChunks(c *call, send, recv [][]byte) error {
	if len(send[c.me]) != len(recv[c.me]) {
		return fmt.Errorf("a piece of %d bytes for a result piece of %d", len(send[c.me]), len(recv[c.me]))
	}
	send, buf := detach(send, recv)
	if buf != nil {
		defer buf.release()
	}
	var sends, recvs []Message
	for j, peer := range c.group {
		if j == c.me {
			continue
		}
		sends = append(sends, Message{Peer: peer, Data: send[j]})
		recvs = append(recvs, Message{Peer: peer, Data: recv[j]})
	}
	if err := c.exchange(0, sends, recvs); err != nil {
		return err
	}
	copy(recv[c.me], send[c.me])
	return nil
}

// detach copies the sends into scratch when a receive would overwrite
// one (results in their operands' buffers): a peer may still be reading
// a send while this device receives.
func detach(send, recv [][]byte) ([][]byte, *buffer) {
	clash := false
	for _, s := range send {
		for _, r := range recv {
			clash = clash || overlaps(s, r)
		}
	}
	if !clash {
		return send, nil
	}
	n := 0
	for _, s := range send {
		n += len(s)
	}
	buf := scratch(n)
	all, out := buf.bytes(n), make([][]byte, len(send))
	for j, s := range send {
		out[j] = all[:len(s):len(s)]
		copy(out[j], s)
		all = all[len(s):]
	}
	return out, buf
}

// broadcast gives every member the operands of the group's first member
// (collective-broadcast); operand i uses phase i.
func broadcast(c *call, ops, outs []*hlo.Literal) error {
	for i, op := range ops {
		if err := sameDims(i, outs[i], op.Shape().Dims); err != nil {
			return err
		}
		src, dst := op.RawBytes(), outs[i].RawBytes()
		if c.me != 0 {
			if err := c.exchange(i, nil, []Message{{Peer: c.group[0], Data: dst}}); err != nil {
				return err
			}
			continue
		}
		var sends []Message
		for _, peer := range c.group[1:] {
			sends = append(sends, Message{Peer: peer, Data: src})
		}
		if err := c.exchange(i, sends, nil); err != nil {
			return err
		}
		copy(dst, src)
	}
	return nil
}
