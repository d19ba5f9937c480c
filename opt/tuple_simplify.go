package opt

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// TupleSimplifier removes tuple round trips (XLA's TupleSimplifier):
// get-tuple-element(tuple(a0, a1, ...), i) is ai, and tuple(gte(x, 0), ...,
// gte(x, n-1)) rebuilding all n elements of x in order is x.
var TupleSimplifier = pass.Func("tuple-simplifier", runTupleSimplifier)

func runTupleSimplifier(m *hlo.Module) (bool, error) {
	changed := false
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			var repl *hlo.Instruction
			switch in.Opcode {
			case hlo.OpGetTupleElement:
				idx, _ := in.Int("index")
				if t := in.Operands[0]; t.Opcode == hlo.OpTuple && int(idx) < len(t.Operands) {
					repl = t.Operands[idx]
				}
			case hlo.OpTuple:
				repl = rebuiltTuple(in)
			}
			if repl != nil && repl != in {
				changed = c.ReplaceAllUses(in, repl) || changed
			}
		}
	}
	if changed {
		removeDead(m)
	}
	return changed, nil
}

// rebuiltTuple returns x when t is tuple(gte(x,0), ..., gte(x,n-1)) for an
// x with exactly n elements and the same shape.
func rebuiltTuple(t *hlo.Instruction) *hlo.Instruction {
	var src *hlo.Instruction
	for i, o := range t.Operands {
		idx, _ := o.Int("index")
		if o.Opcode != hlo.OpGetTupleElement || int(idx) != i || (src != nil && o.Operands[0] != src) {
			return nil
		}
		src = o.Operands[0]
	}
	if src == nil || !src.Shape.IsTuple() || len(src.Shape.Tuple) != len(t.Operands) || !src.Shape.Compatible(t.Shape) {
		return nil
	}
	return src
}
