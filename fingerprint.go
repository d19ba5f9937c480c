package axle

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"slices"
	"strconv"

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
	f := fingerprinter{sums: map[*hlo.Computation][sha256.Size]byte{}, open: map[*hlo.Computation]int{}}
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
			hashLiteral(h, in.Literal)
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

func hashLiteral(h hash.Hash, l *hlo.Literal) {
	for _, e := range l.Elements() {
		hashLiteral(h, e)
	}
	h.Write(l.RawBytes())
}
