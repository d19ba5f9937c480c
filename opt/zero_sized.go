package opt

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// ZeroSizedElimination replaces instructions producing arrays with no
// elements by empty constants (XLA's ZeroSizedHloElimination): nothing
// needs computing. Side-effecting instructions, parameters and constants
// stay.
var ZeroSizedElimination = pass.Func("zero-sized-elimination", runZeroSized)

func runZeroSized(m *hlo.Module) (bool, error) {
	fx := newEffects()
	changed := false
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Opcode == hlo.OpConstant || in.Opcode == hlo.OpParameter || !in.Shape.IsArray() ||
				in.Shape.NumElements() != 0 || in.Shape.IsDynamic() || fx.instruction(in) || len(in.ControlPredecessors) > 0 {
				continue
			}
			in.Opcode, in.Operands, in.Attrs, in.Literal = hlo.OpConstant, nil, keepGenericAttrs(in.Attrs), hlo.NewLiteral(in.Shape)
			changed = true
		}
	}
	if changed {
		removeDead(m)
	}
	return changed, nil
}
