package collective

import (
	"encoding/binary"
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// ragged-all-to-all(input, output, input_offsets, send_sizes,
// output_offsets, recv_sizes) moves rows (slices along dimension 0)
// between the members of a group. The four metadata operands have
// k×U entries (read flattened, row-major), U updates per member: for
// update i to member j, entry j*U+i says which rows of this device's
// input to send (input_offsets, send_sizes), where they go in member
// j's output (output_offsets: an offset in the receiver's buffer, as in
// jax.lax.ragged_all_to_all), and how many rows this device receives
// from member j (recv_sizes). The result is this device's output with
// the received rows written over it; rows nobody writes keep output's
// values.
//
// Each member sends every other one message: a header of its U
// (output offset, size) pairs, then the rows. The receiver checks the
// sizes against its recv_sizes and writes the rows where the header
// says, in group order of senders, then update order.

// ragged is one execution's operands.
type ragged struct {
	input, output, out *hlo.Literal
	rowBytes, inRows   int
	outRows            int
	updates            int // U
	// inOff, sendSize, outOff, recvSize are the metadata, flattened.
	inOff, sendSize, outOff, recvSize []int64
}

const raggedEntry = 16 // header bytes per update: output offset, size

func raggedAllToAll(c *call, ops []*hlo.Literal, out *hlo.Literal) error {
	r, err := readRagged(ops, out, len(c.group))
	if err != nil {
		return err
	}
	k := len(c.group)
	// Pack every message before writing the result, which may be in an
	// operand's buffer.
	lens := make([]int, 2*k)
	for j := range k {
		lens[j] = r.messageBytes(j, r.sendSize)
		if j != c.me {
			lens[k+j] = r.messageBytes(j, r.recvSize)
		}
	}
	total := 0
	for _, n := range lens {
		total += n
	}
	scr := scratch(total)
	defer scr.release()
	free := scr.bytes(total)
	msgs := make([][]byte, 2*k)
	for i, n := range lens {
		msgs[i], free = free[:n:n], free[n:]
	}
	for j := range k {
		if err := r.pack(msgs[j], j); err != nil {
			return err
		}
	}
	if dst, src := r.out.RawBytes(), r.output.RawBytes(); !sameStorage(dst, src) {
		copy(dst, src)
	}
	var sends, recvs []Message
	for j, peer := range c.group {
		if j != c.me {
			sends = append(sends, Message{Peer: peer, Data: msgs[j]})
			recvs = append(recvs, Message{Peer: peer, Data: msgs[k+j]})
		}
	}
	if err := c.exchange(0, sends, recvs); err != nil {
		return err
	}
	for j := range k {
		m := msgs[k+j]
		if j == c.me {
			m = msgs[j]
		}
		if err := r.unpack(m, j); err != nil {
			return err
		}
	}
	return nil
}

// messageBytes is the size of the message to or from member j, whose
// row counts are sizes[j*U:(j+1)*U].
func (r *ragged) messageBytes(j int, sizes []int64) int {
	n := raggedEntry * r.updates
	for _, s := range sizes[j*r.updates : (j+1)*r.updates] {
		n += int(s) * r.rowBytes
	}
	return n
}

// pack writes the message to member j: its header, then its rows.
func (r *ragged) pack(dst []byte, j int) error {
	src := r.input.RawBytes()
	body := dst[raggedEntry*r.updates:]
	for i := range r.updates {
		e := j*r.updates + i
		off, n := r.inOff[e], r.sendSize[e]
		if off < 0 || n < 0 || off+n > int64(r.inRows) {
			return fmt.Errorf("update %d to member %d sends rows [%d, %d+%d) of an input of %d rows", i, j, off, off, n, r.inRows)
		}
		if o := r.outOff[e]; o < 0 || o+n > int64(r.outRows) {
			return fmt.Errorf("update %d to member %d writes rows [%d, %d+%d) of an output of %d rows", i, j, o, o, n, r.outRows)
		}
		binary.LittleEndian.PutUint64(dst[raggedEntry*i:], uint64(r.outOff[e]))
		binary.LittleEndian.PutUint64(dst[raggedEntry*i+8:], uint64(n))
		b := int(n) * r.rowBytes
		copy(body[:b], src[int(off)*r.rowBytes:])
		body = body[b:]
	}
	return nil
}

// unpack writes the rows of the message from member j into the result.
func (r *ragged) unpack(m []byte, j int) error {
	dst := r.out.RawBytes()
	body := m[raggedEntry*r.updates:]
	for i := range r.updates {
		off := int64(binary.LittleEndian.Uint64(m[raggedEntry*i:]))
		n := int64(binary.LittleEndian.Uint64(m[raggedEntry*i+8:]))
		if want := r.recvSize[j*r.updates+i]; n != want {
			return fmt.Errorf("member %d sends %d rows in update %d, recv_sizes expects %d", j, n, i, want)
		}
		if off < 0 || off+n > int64(r.outRows) {
			return fmt.Errorf("member %d writes rows [%d, %d+%d) of an output of %d rows", j, off, off, n, r.outRows)
		}
		b := int(n) * r.rowBytes
		copy(dst[int(off)*r.rowBytes:], body[:b])
		body = body[b:]
	}
	return nil
}

// readRagged checks the operands and reads the metadata for a group of k.
func readRagged(ops []*hlo.Literal, out *hlo.Literal, k int) (*ragged, error) {
	if len(ops) != 6 || out == nil || out.Shape().IsTuple() {
		return nil, fmt.Errorf("ragged-all-to-all takes 6 operands and an array result, has %d operands", len(ops))
	}
	r := &ragged{input: ops[0], output: ops[1], out: out}
	for i, l := range []*hlo.Literal{r.input, r.output, r.out} {
		if s := l.Shape(); !s.IsArray() || l.IsElided() || s.IsDynamic() || l.Data() == nil || s.Rank() == 0 {
			return nil, fmt.Errorf("buffer %d is %s: ragged-all-to-all moves rows of static arrays with values", i, s.HumanString())
		}
	}
	if r.output.DType() != r.input.DType() || r.out.DType() != r.input.DType() {
		return nil, fmt.Errorf("input %s, output %s and result %s differ in type", r.input.DType(), r.output.DType(), r.out.DType())
	}
	if err := sameDims(0, r.out, r.output.Shape().Dims); err != nil {
		return nil, err
	}
	in, o := r.input.Shape().Dims, r.output.Shape().Dims
	r.inRows, r.outRows = int(in[0]), int(o[0])
	es := elemBytes(r.input.DType())
	r.rowBytes = boxBytes(o[1:], es)
	if len(in) != len(o) || boxBytes(in[1:], es) != r.rowBytes {
		return nil, fmt.Errorf("input %v and output %v rows differ", in, o)
	}
	meta := []*[]int64{&r.inOff, &r.sendSize, &r.outOff, &r.recvSize}
	names := []string{"input_offsets", "send_sizes", "output_offsets", "recv_sizes"}
	for i, p := range meta {
		v, err := intValues(ops[2+i], names[i])
		if err != nil {
			return nil, err
		}
		if len(v) == 0 || len(v)%k != 0 || (i > 0 && len(v) != len(r.inOff)) {
			return nil, fmt.Errorf("%s has %d entries: want the same multiple of the group size (%d) in all four", names[i], len(v), k)
		}
		*p = v
	}
	r.updates = len(r.inOff) / k
	for j := range k {
		for i := range r.updates {
			e := j*r.updates + i
			if s := r.recvSize[e]; s < 0 || s > int64(r.outRows) {
				return nil, fmt.Errorf("recv_sizes[%d] is %d for an output of %d rows", e, s, r.outRows)
			}
			if s := r.sendSize[e]; s < 0 || s > int64(r.inRows) {
				return nil, fmt.Errorf("send_sizes[%d] is %d for an input of %d rows", e, s, r.inRows)
			}
		}
	}
	return r, nil
}
