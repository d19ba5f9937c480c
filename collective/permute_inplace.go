package collective

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// The in-place collective-permute,
//
//	collective-permute(input, output, input_start_indices, output_start_indices), slice_sizes={...}
//
// (and its -start form) sends, for each source_target_pair, the box of
// the source's input at its input start indices to the target, which
// writes it into a copy of its output at its output start indices. Each
// device's start indices describe its own buffers: a sender's input
// indices say what it reads, a receiver's output indices where it
// writes. A device no pair targets returns its output unchanged.
//
// The start-index operands are, as XLA's HLO verifier checks them:
// for array buffers a tuple of rank scalars (one index) or a tuple of K
// such tuples (K indices); for tuple buffers a tuple with one of those
// per buffer. With K indices a source (and a target) may appear in up to
// K pairs (the verifier's allowed count); the pairs are read as K equal
// consecutive blocks, block j using index j, so that a forward ring
// followed by a backward ring (XLA's MultipleReadWrite tests) reads and
// writes distinct boxes. slice_sizes lists one size per buffer and
// index, buffer-major (buffer b, index j at b*K+j). Start indices are
// clamped into the array as dynamic-slice clamps them.

// inPlaceBuf is one buffer of an in-place permute.
type inPlaceBuf struct {
	input, output, out *hlo.Literal
	es                 int
	// from and to are the input and output start indices of each index
	// j, sizes its box's size.
	from, to, sizes [][]int64
}

// inPlacePeers is, for one block of pairs, whom this device sends to and
// receives from (-1 for none).
type inPlacePeers struct{ to, from int }

func permuteInPlace(c *call, ops []*hlo.Literal, out *hlo.Literal) error {
	bufs, k, err := inPlaceBuffers(c.in, ops, out)
	if err != nil {
		return err
	}
	peers, err := inPlaceBlocks(c.in, c.p.Assign, c.p.Device, k)
	if err != nil {
		return err
	}
	self := c.p.Device
	// Pack every box this device sends before writing any result: the
	// result may be in an operand's buffer.
	total := 0
	for _, b := range bufs {
		for j, pr := range peers {
			n := boxBytes(b.sizes[j], b.es)
			if pr.to >= 0 {
				total += n
			}
			if pr.from >= 0 && pr.from != self {
				total += n
			}
		}
	}
	scr := scratch(total)
	defer scr.release()
	free := scr.bytes(total)
	take := func(n int) []byte {
		b := free[:n:n]
		free = free[n:]
		return b
	}
	sends, recvs := make([][]byte, len(bufs)*k), make([][]byte, len(bufs)*k)
	for i, b := range bufs {
		for j, pr := range peers {
			size, n := b.sizes[j], boxBytes(b.sizes[j], b.es)
			if pr.to >= 0 {
				dims := b.input.Shape().Dims
				sends[i*k+j] = take(n)
				packBox(sends[i*k+j], b.input.RawBytes(), dims, clampStart(b.from[j], size, dims), size, b.es)
			}
			if pr.from >= 0 && pr.from != self {
				recvs[i*k+j] = take(n)
			}
		}
	}
	for _, b := range bufs {
		if dst, src := b.out.RawBytes(), b.output.RawBytes(); !sameStorage(dst, src) {
			copy(dst, src)
		}
	}
	for i, b := range bufs {
		for j, pr := range peers {
			if err := inPlaceExchange(c, i*k+j, pr, sends[i*k+j], recvs[i*k+j]); err != nil {
				return err
			}
			if pr.from < 0 {
				continue
			}
			src := recvs[i*k+j]
			if pr.from == self {
				src = sends[i*k+j]
			}
			dims := b.out.Shape().Dims
			unpackBox(b.out.RawBytes(), src, dims, clampStart(b.to[j], b.sizes[j], dims), b.sizes[j], b.es)
		}
	}
	return nil
}

// inPlaceExchange moves one box: phase is buffer×K+index.
func inPlaceExchange(c *call, phase int, pr inPlacePeers, send, recv []byte) error {
	var sends, recvs []Message
	if pr.to >= 0 && pr.to != c.p.Device {
		sends = []Message{{Peer: pr.to, Data: send}}
	}
	if pr.from >= 0 && pr.from != c.p.Device {
		recvs = []Message{{Peer: pr.from, Data: recv}}
	}
	return c.exchange(phase, sends, recvs)
}

// inPlaceBlocks splits source_target_pairs into k consecutive blocks and
// returns this device's peers in each.
func inPlaceBlocks(in *hlo.Instruction, a *Assignment, device, k int) ([]inPlacePeers, error) {
	pairs, err := devicePairs(in, a, device)
	if err != nil {
		return nil, err
	}
	if len(pairs)%k != 0 {
		return nil, fmt.Errorf("%d source_target_pairs do not split into %d blocks, one per start index", len(pairs), k)
	}
	per := len(pairs) / k
	out := make([]inPlacePeers, k)
	for j := range out {
		out[j] = inPlacePeers{to: -1, from: -1}
		for _, pr := range pairs[j*per : (j+1)*per] {
			if pr[0] == device {
				if out[j].to >= 0 {
					return nil, fmt.Errorf("device %d is a source twice in block %d of source_target_pairs", device, j)
				}
				out[j].to = pr[1]
			}
			if pr[1] == device {
				if out[j].from >= 0 {
					return nil, fmt.Errorf("device %d is a target twice in block %d of source_target_pairs", device, j)
				}
				out[j].from = pr[0]
			}
		}
	}
	return out, nil
}

// devicePairs maps source_target_pairs to devices: replica ids of
// device's partition, or with a channel id partition ids of its replica
// (as PermutePeers reads them).
func devicePairs(in *hlo.Instruction, a *Assignment, device int) ([][2]int, error) {
	r, p, ok := a.Logical(device)
	if !ok {
		return nil, fmt.Errorf("device %d is not in the device assignment", device)
	}
	mode, err := hlo.CollectiveGroupMode(in)
	if err != nil {
		return nil, err
	}
	limit, dev := a.Replicas, func(id int) int { return a.Device(id, p) }
	if mode != hlo.CrossReplica {
		limit, dev = a.Partitions, func(id int) int { return a.Device(r, id) }
	}
	v, _ := in.Attr("source_target_pairs")
	written, _ := v.([][]int64)
	out := make([][2]int, len(written))
	for i, pr := range written {
		if len(pr) != 2 || pr[0] < 0 || pr[1] < 0 || pr[0] >= int64(limit) || pr[1] >= int64(limit) {
			return nil, fmt.Errorf("source_target_pairs entry %v is outside 0..%d", pr, limit-1)
		}
		out[i] = [2]int{dev(int(pr[0])), dev(int(pr[1]))}
	}
	return out, nil
}

// inPlaceBuffers reads and checks the operands: the buffers, their start
// indices and box sizes, and K, the number of indices per buffer.
func inPlaceBuffers(in *hlo.Instruction, ops []*hlo.Literal, out *hlo.Literal) ([]inPlaceBuf, int, error) {
	if len(ops) != 4 || out == nil {
		return nil, 0, fmt.Errorf("the in-place form takes (input, output, input_start_indices, output_start_indices) and a result, has %d operands", len(ops))
	}
	tuple := ops[0].Shape().IsTuple()
	inputs, outputs, results := leaves(ops[0]), leaves(ops[1]), leaves(out)
	if len(outputs) != len(inputs) || len(results) != len(inputs) {
		return nil, 0, fmt.Errorf("%d input buffers, %d output buffers and %d results", len(inputs), len(outputs), len(results))
	}
	from, err := startIndices(ops[2], tuple, len(inputs), "input_start_indices")
	if err != nil {
		return nil, 0, err
	}
	to, err := startIndices(ops[3], tuple, len(inputs), "output_start_indices")
	if err != nil {
		return nil, 0, err
	}
	sizes, err := sliceSizes(in)
	if err != nil {
		return nil, 0, err
	}
	k := len(from[0])
	if k == 0 || len(sizes) != len(inputs)*k {
		return nil, 0, fmt.Errorf("slice_sizes has %d sizes for %d buffers of %d start indices each", len(sizes), len(inputs), k)
	}
	bufs := make([]inPlaceBuf, len(inputs))
	for b := range bufs {
		bufs[b] = inPlaceBuf{input: inputs[b], output: outputs[b], out: results[b],
			es: elemBytes(inputs[b].DType()), from: from[b], to: to[b], sizes: sizes[b*k : (b+1)*k]}
		if err := bufs[b].check(b, k); err != nil {
			return nil, 0, err
		}
	}
	return bufs, k, nil
}

// check validates one buffer: arrays with values of one type, the result
// shaped as the output, and every index and box fitting both arrays.
func (b *inPlaceBuf) check(i, k int) error {
	for _, l := range []*hlo.Literal{b.input, b.output, b.out} {
		if s := l.Shape(); !s.IsArray() || l.IsElided() || s.IsDynamic() || l.Data() == nil {
			return fmt.Errorf("buffer %d is %s: collectives move static arrays with values", i, s.HumanString())
		}
	}
	if b.output.DType() != b.input.DType() || b.out.DType() != b.input.DType() {
		return fmt.Errorf("buffer %d: input %s, output %s and result %s differ in type", i,
			b.input.DType(), b.output.DType(), b.out.DType())
	}
	if err := sameDims(i, b.out, b.output.Shape().Dims); err != nil {
		return err
	}
	in, out := b.input.Shape().Dims, b.output.Shape().Dims
	if len(b.from) != k || len(b.to) != k {
		return fmt.Errorf("buffer %d has %d input and %d output start indices, want %d of each", i, len(b.from), len(b.to), k)
	}
	for j := range k {
		size := b.sizes[j]
		if len(b.from[j]) != len(in) || len(b.to[j]) != len(out) || len(size) != len(in) || len(in) != len(out) {
			return fmt.Errorf("buffer %d, index %d: start indices %v and %v and slice size %v for arrays of rank %d and %d",
				i, j, b.from[j], b.to[j], size, len(in), len(out))
		}
		for d, s := range size {
			if s < 0 || s > in[d] || s > out[d] {
				return fmt.Errorf("buffer %d: slice size %v does not fit input %v and output %v", i, size, in, out)
			}
		}
	}
	return nil
}

// leaves are a literal's arrays: itself, or a tuple's elements.
func leaves(l *hlo.Literal) []*hlo.Literal {
	if l.Shape().IsTuple() {
		return l.Elements()
	}
	return []*hlo.Literal{l}
}

// startIndices reads a start-index operand as [buffer][index][dimension].
func startIndices(l *hlo.Literal, tuple bool, n int, what string) ([][][]int64, error) {
	if !tuple {
		idx, err := indexTuples(l, what)
		return [][][]int64{idx}, err
	}
	if !l.Shape().IsTuple() || len(l.Elements()) != n {
		return nil, fmt.Errorf("%s is %s: want a tuple of one entry per buffer (%d)", what, l.Shape().HumanString(), n)
	}
	out := make([][][]int64, n)
	for b, el := range l.Elements() {
		idx, err := indexTuples(el, what)
		if err != nil {
			return nil, err
		}
		out[b] = idx
	}
	return out, nil
}

// indexTuples reads one buffer's start indices: a tuple of scalars (one
// index) or a tuple of such tuples.
func indexTuples(l *hlo.Literal, what string) ([][]int64, error) {
	if !l.Shape().IsTuple() {
		return nil, fmt.Errorf("%s is %s: want a tuple of scalars or of tuples of scalars", what, l.Shape().HumanString())
	}
	els := l.Elements()
	if len(els) == 0 || !els[0].Shape().IsTuple() {
		idx, err := scalars(l, what)
		return [][]int64{idx}, err
	}
	out := make([][]int64, len(els))
	for j, el := range els {
		idx, err := scalars(el, what)
		if err != nil {
			return nil, err
		}
		out[j] = idx
	}
	return out, nil
}

// scalars reads a tuple of integer scalars.
func scalars(l *hlo.Literal, what string) ([]int64, error) {
	if !l.Shape().IsTuple() {
		return nil, fmt.Errorf("%s element is %s: want a tuple of scalars", what, l.Shape().HumanString())
	}
	out := make([]int64, len(l.Elements()))
	for d, el := range l.Elements() {
		v, err := intValues(el, what)
		if err != nil {
			return nil, err
		}
		if len(v) != 1 || el.Shape().Rank() != 0 {
			return nil, fmt.Errorf("%s element is %s: want a scalar", what, el.Shape().HumanString())
		}
		out[d] = v[0]
	}
	return out, nil
}

// sliceSizes is the slice_sizes attribute as a list of sizes.
func sliceSizes(in *hlo.Instruction) ([][]int64, error) {
	v, _ := in.Attr("slice_sizes")
	switch s := v.(type) {
	case [][]int64:
		return s, nil
	case []int64:
		return [][]int64{s}, nil
	}
	return nil, fmt.Errorf("slice_sizes is %v: want a list of sizes", v)
}
