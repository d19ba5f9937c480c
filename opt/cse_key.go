package opt

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// cseKeys builds CSE keys. An instruction's key holds its called
// computations as digests of their bodies, each computed once per run:
// printing the bodies in place (the canonical form) repeats a callee at
// every call site inside them, exponential in a call graph that shares
// callees along many levels.
type cseKeys struct {
	bodies map[*hlo.Computation]string
	// open numbers the computations being digested, outermost first.
	open map[*hlo.Computation]int
}

func newCSEKeys() *cseKeys {
	return &cseKeys{bodies: map[*hlo.Computation]string{}, open: map[*hlo.Computation]int{}}
}

// key is the canonical text of the instruction (shape, opcode, operand
// shapes, attributes), its called computations' body digests, and its
// operands' identities. Constants of one shape share a key and are told
// apart by comparing literals, which stops at the first differing
// element; hashing every element of big weights on every run would cost
// far more.
func (k *cseKeys) key(in *hlo.Instruction) string {
	var b strings.Builder
	lone, callees := withoutCallees(in)
	b.WriteString(hlotext.PrintInstruction(lone, hlotext.CanonicalForm))
	for _, c := range callees {
		b.WriteString(" body ")
		b.WriteString(k.body(c))
	}
	for _, o := range in.Operands {
		fmt.Fprintf(&b, " %p", o)
	}
	return b.String()
}

// body digests what c computes, names aside: each instruction's
// canonical text, parameter number, operand positions, constant bytes and
// callees' digests, and which is the root. Equal bodies under different
// names get one digest, as their in-place canonical texts were equal.
func (k *cseKeys) body(c *hlo.Computation) string {
	if d, ok := k.bodies[c]; ok {
		return d
	}
	if depth, ok := k.open[c]; ok { // a cycle, which the verifier rejects
		return "cycle:" + strconv.Itoa(depth)
	}
	k.open[c] = len(k.open)
	h := sha256.New()
	fmt.Fprintf(h, "%q\x00", c.ExecutionThread)
	pos := make(map[*hlo.Instruction]int, len(c.Instructions))
	for i, in := range c.Instructions {
		pos[in] = i
	}
	for _, in := range c.Instructions {
		k.digestInstruction(h, in, c, pos)
	}
	delete(k.open, c)
	d := fmt.Sprintf("%x", h.Sum(nil))
	k.bodies[c] = d
	return d
}

func (k *cseKeys) digestInstruction(h hash.Hash, in *hlo.Instruction, c *hlo.Computation, pos map[*hlo.Instruction]int) {
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
	// The canonical text of a lone constant leaves its value out.
	if in.Opcode == hlo.OpConstant && in.Literal != nil {
		digestLiteral(h, in.Literal)
	}
	for _, cc := range callees {
		h.Write([]byte(k.body(cc)))
	}
}

func digestLiteral(h hash.Hash, l *hlo.Literal) {
	if l.IsElided() {
		h.Write([]byte("elided"))
		return
	}
	for _, e := range l.Elements() {
		digestLiteral(h, e)
	}
	h.Write(l.RawBytes())
}

// withoutCallees returns in, or a shallow copy of it whose computation
// attributes are placeholders (the canonical printer would print the
// bodies in place, recursively), with the callees in order.
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
