package opt

import (
	"fmt"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/pass"
)

// CSE merges instructions that compute the same value (XLA's HloCSE): same
// opcode, shape with layout, attributes, operands and, for called
// computations, equal bodies. Instructions with side effects (rng
// included) are never merged, nor are parameters or instructions with
// control edges; constants merge when their literals are equal.
var CSE = pass.Func("cse", runCSE)

func runCSE(m *hlo.Module) (bool, error) {
	fx := newEffects()
	changed := false
	for _, c := range m.Computations {
		changed = cseComputation(c, fx) || changed
	}
	if changed {
		// Merged-away instructions are now unused.
		for _, c := range m.Computations {
			removeDeadInstructions(c, fx)
		}
	}
	return changed, nil
}

func cseComputation(c *hlo.Computation, fx *effects) bool {
	seen := map[string][]*hlo.Instruction{}
	changed := false
	for _, in := range c.Instructions {
		if !cseCandidate(in, fx) {
			continue
		}
		key := cseKey(in)
		found := false
		for _, prev := range seen[key] {
			if in.Opcode != hlo.OpConstant || prev.Literal.Equal(in.Literal) {
				changed = c.ReplaceAllUses(in, prev) || changed
				found = true
				break
			}
		}
		if !found {
			seen[key] = append(seen[key], in)
		}
	}
	return changed
}

func cseCandidate(in *hlo.Instruction, fx *effects) bool {
	switch {
	case in.Opcode == hlo.OpParameter, len(in.ControlPredecessors) > 0, fx.instruction(in):
		return false
	case in.Opcode == hlo.OpConstant:
		return in.Literal != nil && !in.Literal.IsElided()
	}
	return true
}

// cseKey is the canonical text of the instruction (shape, opcode, operand
// shapes, attributes, called computations' bodies) plus its operands'
// identities. Constants of one shape share a key and are told apart by
// comparing literals, which stops at the first differing element; hashing
// every element of big weights on every run would cost far more.
func cseKey(in *hlo.Instruction) string {
	var b strings.Builder
	b.WriteString(hlotext.PrintInstruction(in, hlotext.CanonicalForm))
	for _, o := range in.Operands {
		fmt.Fprintf(&b, " %p", o)
	}
	return b.String()
}
