package axle

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// fingerprint hashes what a compilation depends on: the module's header,
// each computation's instructions, and the entry's name and parameter
// shapes with their layouts (the executable names them in errors). Other
// instructions' names are left out: modules that differ only in them
// share an executable.
//
// Each computation is hashed once, from its instructions' canonical text
// (shape, opcode, operand shapes, attributes), their operands' positions,
// and the hashes of the computations they call (a Merkle hash), so the
// work is linear in the module however many call sites share a callee.
// A call back into a computation being hashed (a cycle, which the
// verifier rejects) hashes as a reference to it rather than recursing.
func fingerprint(m *hlo.Module) [sha256.Size]byte {
	f := fingerprinter{sums: map[*hlo.Computation][sha256.Size]byte{}, open: map[*hlo.Computation]int{},
		bulk: bulkDigests(m)}
	h := sha256.New()
	header := *m
	header.Computations = nil
	h.Write([]byte(hlotext.Print(&header, hlotext.CanonicalForm)))
	for _, c := range m.Computations {
		sum := f.computation(c)
		h.Write(sum[:])
	}
	if m.Entry != nil {
		sum := f.computation(m.Entry)
		h.Write(sum[:])
		fmt.Fprintf(h, "\x00entry %s\x00", m.Entry.Name)
		for _, p := range m.Entry.Params {
			fmt.Fprintf(h, "%s %s\x00", p.Name, p.Shape.String())
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

type fingerprinter struct {
	sums map[*hlo.Computation][sha256.Size]byte
	// open numbers the computations being hashed, outermost first.
	open map[*hlo.Computation]int
	// bulk holds the digests of the module's large constants' bytes.
	bulk map[*hlo.Literal][sha256.Size]byte
}

func (f *fingerprinter) computation(c *hlo.Computation) [sha256.Size]byte {
	if sum, ok := f.sums[c]; ok {
		return sum
	}
	if depth, ok := f.open[c]; ok {
		var ref [sha256.Size]byte
		copy(ref[:], "cycle:"+strconv.Itoa(depth))
		return ref
	}
	f.open[c] = len(f.open)
	h := sha256.New()
	fmt.Fprintf(h, "computation %s %q\x00", c.Name, c.ExecutionThread)
	pos := make(map[*hlo.Instruction]int, len(c.Instructions))
	for i, in := range c.Instructions {
		pos[in] = i
	}
	for _, in := range c.Instructions {
		if in == c.Root {
			h.Write([]byte("ROOT "))
		}
		lone, callees := withoutCallees(in)
		h.Write([]byte(hlotext.PrintInstruction(lone, hlotext.CanonicalForm)))
		fmt.Fprintf(h, " param %d operands", in.ParamNumber)
		for _, o := range in.Operands {
			p, ok := pos[o]
			if !ok {
				p = -1 // not of this computation: the verifier's to reject
			}
			fmt.Fprintf(h, " %d", p)
		}
		h.Write([]byte{0})
		// Constants are hashed as raw bytes, never printed: printing a
		// model's weights as decimal text took seconds.
		if in.Opcode == hlo.OpConstant && in.Literal != nil {
			f.literal(h, in.Literal)
		}
		for _, callee := range callees {
			sum := f.computation(callee)
			h.Write(sum[:])
		}
	}
	delete(f.open, c)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	f.sums[c] = sum
	return sum
}

// withoutCallees returns in, or a shallow copy of it whose computation
// attributes name their position among the callees instead (the
// canonical printer would print the bodies in place, recursively), with
// the callees in order.
func withoutCallees(in *hlo.Instruction) (*hlo.Instruction, []*hlo.Computation) {
	callees := in.CalledComputations()
	if len(callees) == 0 {
		return in, nil
	}
	lone := *in
	lone.Attrs = slices.Clone(in.Attrs)
	for i, a := range lone.Attrs {
		switch v := a.Value.(type) {
		case *hlo.Computation:
			lone.Attrs[i].Value = hlo.Enum("callee")
		case []*hlo.Computation:
			lone.Attrs[i].Value = hlo.Enum("callees" + strconv.Itoa(len(v)))
		}
	}
	return &lone, callees
}

// literal hashes l's elements and bytes into h, large arrays' bytes as
// their digests (bulkDigests).
func (f *fingerprinter) literal(h hash.Hash, l *hlo.Literal) {
	for _, e := range l.Elements() {
		f.literal(h, e)
	}
	b := l.RawBytes()
	if len(b) < bulkBytes {
		h.Write(b)
		return
	}
	sum, ok := f.bulk[l]
	if !ok {
		sum = bulkDigest(b)
	}
	fmt.Fprintf(h, "bulk %d\x00", len(b))
	h.Write(sum[:])
}

const (
	// bulkBytes is the size from which a constant's bytes are hashed as
	// a digest of digests of bulkChunk-byte pieces, the pieces over the
	// threads: SHA-256 runs at about 2 GB/s a core, and a model's
	// weights hashed on one took ResNet-50 halfwidth's first call 19 ms.
	bulkBytes = 256 << 10
	bulkChunk = 256 << 10
)

// bulkDigests digests the bytes of m's large constants (array literals
// of bulkBytes or more, tuple elements included), their pieces spread
// over GOMAXPROCS goroutines.
func bulkDigests(m *hlo.Module) map[*hlo.Literal][sha256.Size]byte {
	var lits []*hlo.Literal
	seen := map[*hlo.Literal]bool{}
	var add func(l *hlo.Literal)
	add = func(l *hlo.Literal) {
		for _, e := range l.Elements() {
			add(e)
		}
		if !seen[l] && len(l.RawBytes()) >= bulkBytes {
			seen[l] = true
			lits = append(lits, l)
		}
	}
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Opcode == hlo.OpConstant && in.Literal != nil {
				add(in.Literal)
			}
		}
	}
	if len(lits) == 0 {
		return nil
	}
	type piece struct {
		b   []byte
		sum [sha256.Size]byte
	}
	var pieces []piece
	first := make([]int, len(lits)+1) // lits[i]'s pieces start at first[i]
	for i, l := range lits {
		first[i] = len(pieces)
		b := l.RawBytes()
		for lo := 0; lo < len(b); lo += bulkChunk {
			pieces = append(pieces, piece{b: b[lo:min(lo+bulkChunk, len(b))]})
		}
	}
	first[len(lits)] = len(pieces)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(pieces)) {
		wg.Go(func() {
			for k := int(next.Add(1) - 1); k < len(pieces); k = int(next.Add(1) - 1) {
				pieces[k].sum = sha256.Sum256(pieces[k].b)
			}
		})
	}
	wg.Wait()
	out := make(map[*hlo.Literal][sha256.Size]byte, len(lits))
	for i, l := range lits {
		h := sha256.New()
		for _, p := range pieces[first[i]:first[i+1]] {
			h.Write(p.sum[:])
		}
		out[l] = [sha256.Size]byte(h.Sum(nil))
	}
	return out
}

// bulkDigest is bulkDigests' digest of one array's bytes b, on the
// calling goroutine: the digest of its pieces' digests.
func bulkDigest(b []byte) [sha256.Size]byte {
	h := sha256.New()
	for lo := 0; lo < len(b); lo += bulkChunk {
		sum := sha256.Sum256(b[lo:min(lo+bulkChunk, len(b))])
		h.Write(sum[:])
	}
	return [sha256.Size]byte(h.Sum(nil))
}
