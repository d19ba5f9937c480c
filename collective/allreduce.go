package collective

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// An all-reduce is a reduce-scatter followed by an all-gather of the
// reduced chunks: member i receives chunk i of every member's operand,
// folds the k values in group order into chunk i of its result, then
// sends that chunk to every other member. Each member sends and receives
// 2(k-1)/k of the operand, as a ring does, yet every element is folded
// in the canonical order op(op(op(x0, x1), x2), ...) on exactly one
// device, so results do not depend on the transport or on k's layout.
// Operand i of a tuple form uses phases 2i and 2i+1.

func allReduce(c *call, ops, outs []*hlo.Literal, apply ScalarApply) error {
	reducers := map[hlo.DType]reducer{}
	for i, op := range ops {
		if err := sameDims(i, outs[i], op.Shape().Dims); err != nil {
			return err
		}
		r, err := reducerFor(reducers, c.in, op.DType(), apply)
		if err != nil {
			return err
		}
		es := elemBytes(op.DType())
		src, dst := op.RawBytes(), outs[i].RawBytes()
		chunks := evenChunks(src, len(src)/es, len(c.group), es)
		outChunks := evenChunks(dst, len(dst)/es, len(c.group), es)
		if err := reduceChunks(c, 2*i, r, chunks, outChunks[c.me]); err != nil {
			return err
		}
		if err := gatherChunks(c, 2*i+1, outChunks); err != nil {
			return err
		}
	}
	return nil
}

// reduceScatter reduces along scatter_dimension: member i's result is
// the fold, in group order, of every member's piece i.
func reduceScatter(c *call, ops, outs []*hlo.Literal, apply ScalarApply) error {
	d, err := oneDim(c.in)
	if err != nil {
		return err
	}
	k := len(c.group)
	reducers := map[hlo.DType]reducer{}
	for i, op := range ops {
		s := op.Shape()
		es := elemBytes(s.DType)
		outer, piece, err := splitDim(s.Dims, d, k, es)
		if err != nil {
			return err
		}
		want := slices.Clone(s.Dims)
		want[d] /= int64(k)
		if err := sameDims(i, outs[i], want); err != nil {
			return err
		}
		r, err := reducerFor(reducers, c.in, s.DType, apply)
		if err != nil {
			return err
		}
		src := op.RawBytes()
		chunks := blocks(src, k, outer*piece)
		var packed *buffer
		if outer > 1 {
			packed = scratch(len(src))
			chunks = blocks(packed.bytes(len(src)), k, outer*piece)
			for j := range k {
				gatherBlock(chunks[j], src, j, outer, k, piece)
			}
		}
		err = reduceChunks(c, i, r, chunks, outs[i].RawBytes())
		if packed != nil {
			packed.release()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func reducerFor(cache map[hlo.DType]reducer, in *hlo.Instruction, t hlo.DType, apply ScalarApply) (reducer, error) {
	if r, ok := cache[t]; ok {
		return r, nil
	}
	r, err := newReducer(in.Computation("to_apply"), t, apply)
	if err != nil {
		return reducer{}, err
	}
	cache[t] = r
	return r, nil
}

// evenChunks cuts buf, n elements of es bytes, into k runs of n/k or
// n/k+1 elements, the longer ones first.
func evenChunks(buf []byte, n, k, es int) [][]byte {
	out := make([][]byte, k)
	at := 0
	for j := range k {
		size := n / k
		if j < n%k {
			size++
		}
		out[j] = buf[at*es : (at+size)*es : (at+size)*es]
		at += size
	}
	return out
}

// reduceChunks sends chunks[j] to member j, receives every member's
// chunk for this one, and folds them in group order into dst.
func reduceChunks(c *call, phase int, r reducer, chunks [][]byte, dst []byte) error {
	k, me := len(c.group), c.me
	if len(dst) != len(chunks[me]) {
		return fmt.Errorf("a reduced chunk of %d bytes for a result chunk of %d", len(chunks[me]), len(dst))
	}
	buf := scratch((k - 1) * len(dst))
	defer buf.release()
	recv := blocks(buf.bytes((k-1)*len(dst)), k-1, len(dst))
	var sends, recvs []Message
	xs := make([][]byte, k)
	for j, peer := range c.group {
		if j == me {
			continue
		}
		sends = append(sends, Message{Peer: peer, Data: chunks[j]})
		xs[j] = recv[len(recvs)]
		recvs = append(recvs, Message{Peer: peer, Data: xs[j]})
	}
	if err := c.exchange(phase, sends, recvs); err != nil {
		return err
	}
	xs[me] = chunks[me]
	if me > 0 && overlaps(dst, xs[me]) {
		// Folding starts by writing x0 over dst: an in-place operand's own
		// chunk must be saved first.
		xs[me] = slices.Clone(xs[me])
	}
	return r.reduceInto(dst, xs)
}

// gatherChunks sends this member's chunks[me] to every other member and
// receives each member's into chunks[j].
func gatherChunks(c *call, phase int, chunks [][]byte) error {
	var sends, recvs []Message
	for j, peer := range c.group {
		if j == c.me {
			continue
		}
		sends = append(sends, Message{Peer: peer, Data: chunks[c.me]})
		recvs = append(recvs, Message{Peer: peer, Data: chunks[j]})
	}
	return c.exchange(phase, sends, recvs)
}
