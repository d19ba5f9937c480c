package opt

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
	m "github.com/axle-ml/axle/hlo/match"
	"github.com/axle-ml/axle/pass"
)

// ReshapeMover sinks reshapes and transposes below elementwise ops (XLA's
// ReshapeMover): op(reshape(a), reshape(b)) becomes reshape(op(a, b))
// when every operand is a reshape of the same input shape or a constant
// with all elements equal (rebroadcast to the input shape). One reshape
// then replaces several, and the reshapes gather where later passes can
// cancel them. A reshape with other users stays put, since moving it
// would duplicate it. Transposes move further, through broadcast
// operands, reductions, pads and concatenations (see sinkTransposes).
var ReshapeMover = pass.Func("reshape-mover", runReshapeMover)

func runReshapeMover(mod *hlo.Module) (bool, error) {
	names := hlo.NewNameSet(mod)
	changed := false
	for _, c := range mod.Computations {
		users := c.Users()
		b := &builder{c: c, names: names}
		for _, in := range append([]*hlo.Instruction(nil), c.Instructions...) {
			if repl := sinkReshape(b, in, users); repl != nil {
				c.ReplaceAllUses(in, repl)
				changed = true
			}
		}
		if b.err != nil {
			return changed, b.err
		}
		if b.added {
			if err := c.SortTopologically(); err != nil {
				return changed, err
			}
		}
		moved, err := sinkTransposes(c, names)
		changed = changed || moved
		if err != nil {
			return changed, err
		}
	}
	if changed {
		removeDead(mod)
	}
	return changed, nil
}

func sinkReshape(b *builder, in *hlo.Instruction, users map[*hlo.Instruction][]*hlo.Instruction) *hlo.Instruction {
	if !in.Opcode.IsElementwise() || len(in.Operands) == 0 || !in.Shape.IsArray() || in.Opcode == hlo.OpRng {
		return nil
	}
	var first *hlo.Instruction // the reshape all others must match
	for _, o := range in.Operands {
		if o.Opcode != hlo.OpReshape {
			if _, ok := m.EffectiveScalar(o); ok {
				continue
			}
			return nil
		}
		if len(users[o]) != 1 {
			return nil
		}
		if first == nil {
			first = o
			continue
		}
		x, y := first.Operands[0].Shape, o.Operands[0].Shape
		if o.Opcode != first.Opcode || !x.SameDims(y) || !slices.Equal(o.Dimensions(), first.Dimensions()) {
			return nil
		}
	}
	if first == nil {
		return nil
	}
	inner := first.Operands[0].Shape.Dims
	ops := make([]*hlo.Instruction, len(in.Operands))
	for i, o := range in.Operands {
		if o.Opcode == hlo.OpReshape {
			ops[i] = o.Operands[0] // checked above to match first
			continue
		}
		lit, _ := m.EffectiveScalar(o)
		s := b.withShape(hlo.OpConstant, hlo.ScalarShape(lit.DType()), nil)
		s.Literal = scalarOf(lit)
		ops[i] = b.broadcast(s, inner, nil)
	}
	op := b.withShape(in.Opcode, hlo.ArrayShape(in.Shape.DType, inner...), ops, in.Attrs...)
	return b.withShape(hlo.OpReshape, in.Shape, []*hlo.Instruction{op})
}

// scalarOf is the first element of l as a scalar literal.
func scalarOf(l *hlo.Literal) *hlo.Literal {
	s := hlo.NewLiteral(hlo.ScalarShape(l.DType()))
	s.SetBits(0, l.Bits(0))
	if l.DType().IsComplex() {
		s.SetComplex128(0, l.GetComplex128(0))
	}
	return s
}
