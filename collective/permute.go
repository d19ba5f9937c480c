package collective

import (
	"errors"

	"github.com/axle-ml/axle/hlo"
)

// permute moves each operand to the device its source_target_pairs name
// (PermutePeers) and receives the one sent to this device; a device no
// pair targets gets zeros (operation_semantics, CollectivePermute).
// Operand i of a combined permute uses phase i.
func permute(c *call, ops, outs []*hlo.Literal) error {
	if c.in.HasAttr("slice_sizes") {
		return errors.New("the in-place form (slice_sizes, offsets) is not supported")
	}
	to, from, err := PermutePeers(c.in, c.p.Assign, c.p.Device)
	if err != nil {
		return err
	}
	self := c.p.Device
	for i, op := range ops {
		if err := sameDims(i, outs[i], op.Shape().Dims); err != nil {
			return err
		}
		src, dst := op.RawBytes(), outs[i].RawBytes()
		send, buf := detach([][]byte{src}, [][]byte{dst})
		var sends, recvs []Message
		if to >= 0 && to != self {
			sends = []Message{{Peer: to, Data: send[0]}}
		}
		if from >= 0 && from != self {
			recvs = []Message{{Peer: from, Data: dst}}
		}
		err := c.exchange(i, sends, recvs)
		switch {
		case err != nil:
		case from == self:
			copy(dst, src)
		case from < 0:
			clear(dst)
		}
		if buf != nil {
			buf.release()
		}
		if err != nil {
			return err
		}
	}
	return nil
}
