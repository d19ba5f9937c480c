package opt

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// The algebraic simplifier (XLA's AlgebraicSimplifier) is a table of named
// rewrite rules. A rule looks at one instruction, usually through a
// pattern of package match, and returns the instruction that replaces it
// (an existing one or one it built), or nil. The driver tries the rules of
// each instruction's opcode in table order, first match wins, and leaves
// the replaced instructions to DCE; a fixed-point group in the pipeline
// repeats it until nothing fires.

// rule is one named rewrite.
type rule struct {
	name    string
	ops     []hlo.Opcode
	rewrite func(b *builder, in *hlo.Instruction) *hlo.Instruction
}

// Simplifier is the algebraic simplifier pass. Trace, if set, is told the
// name of every rule that fires and on which instruction.
type Simplifier struct {
	Trace func(rule string, in *hlo.Instruction)
}

// Simplify is the simplifier as a pass, without tracing.
var Simplify pass.Pass = &Simplifier{}

// Name is the pass name.
func (*Simplifier) Name() string { return "algsimp" }

// Rules lists the rule names in table order.
func Rules() []string {
	var out []string
	for _, r := range simplifyRules() {
		out = append(out, r.name)
	}
	return out
}

// Run applies the rules once to every instruction of every computation.
func (s *Simplifier) Run(m *hlo.Module) (bool, error) {
	byOp := map[hlo.Opcode][]rule{}
	for _, r := range simplifyRules() {
		for _, op := range r.ops {
			byOp[op] = append(byOp[op], r)
		}
	}
	names := hlo.NewNameSet(m)
	changed := false
	for _, c := range m.Computations {
		b := &builder{c: c, names: names, uses: c.UseIndex()}
		for _, in := range slices.Clone(c.Instructions) {
			for _, r := range byOp[in.Opcode] {
				repl := r.rewrite(b, in)
				if repl == nil || repl == in {
					continue
				}
				if repl.Shape.DType != in.Shape.DType || !repl.Shape.SameDims(in.Shape) {
					return changed, fmt.Errorf("rule %s replaced %s (%s) by %s (%s)", r.name, in.Name,
						in.Shape.HumanString(), repl.Name, repl.Shape.HumanString())
				}
				b.uses.ReplaceAllUses(in, repl)
				changed = true
				if s.Trace != nil {
					s.Trace(r.name, in)
				}
				break
			}
		}
		if b.added {
			if err := c.SortTopologically(); err != nil {
				return changed, err
			}
		}
		if b.err != nil {
			return changed, b.err
		}
	}
	if changed {
		removeDead(m)
	}
	return changed, nil
}

// builder adds new instructions to a computation for rules. Shapes are
// inferred; a rule whose build fails records the error and returns nil.
type builder struct {
	c     *hlo.Computation
	names *hlo.NameSet
	uses  *hlo.UseIndex // c's readers, the instructions added included (the simplifier's)
	added bool
	err   error
}

// addInstruction appends in to c and to the readers' index.
func (b *builder) addInstruction(in *hlo.Instruction) *hlo.Instruction {
	b.added = true
	if b.uses != nil { // the simplifier's; other passes' builders keep none
		b.uses.Add(in)
	}
	return b.c.AddInstruction(in)
}

// add appends a new instruction (sorted into place after the pass).
func (b *builder) add(op hlo.Opcode, operands []*hlo.Instruction, attrs ...hlo.Attr) *hlo.Instruction {
	if b.err != nil {
		return nil
	}
	in, err := hlo.NewInstruction(b.names.Unique(op.String()), op, operands, attrs...)
	if err != nil {
		b.err = err
		return nil
	}
	return b.addInstruction(in)
}

// scalar returns a new scalar constant of type t with value v.
func (b *builder) scalar(t hlo.DType, v float64) *hlo.Instruction {
	lit := hlo.NewLiteral(hlo.ScalarShape(t))
	switch {
	case t.IsPred():
		lit.SetBool(0, v != 0)
	case t.IsInteger():
		lit.SetInt64(0, int64(v))
	default:
		lit.SetFloat64(0, v)
	}
	in := &hlo.Instruction{Name: b.names.Unique("constant"), Opcode: hlo.OpConstant, Shape: lit.Shape(), Literal: lit}
	return b.addInstruction(in)
}

// splat returns v broadcast to the shape of like (a scalar constant if
// like is a scalar).
func (b *builder) splat(like *hlo.Instruction, v float64) *hlo.Instruction {
	s := b.scalar(like.Shape.DType, v)
	if like.Shape.Rank() == 0 {
		return s
	}
	return b.broadcast(s, like.Shape.Dims, nil)
}

// broadcast builds broadcast(x) to dims with x's dimensions at positions.
func (b *builder) broadcast(x *hlo.Instruction, dims []int64, positions []int64) *hlo.Instruction {
	if b.err != nil {
		return nil
	}
	in := &hlo.Instruction{Name: b.names.Unique("broadcast"), Opcode: hlo.OpBroadcast, Shape: hlo.ArrayShape(x.Shape.DType, dims...),
		Operands: []*hlo.Instruction{x}, Attrs: []hlo.Attr{{Name: "dimensions", Value: nonNil(positions)}}}
	return b.addInstruction(in)
}

// withShape builds an instruction whose result shape is given rather than
// inferred (reshape needs it).
func (b *builder) withShape(op hlo.Opcode, s hlo.Shape, operands []*hlo.Instruction, attrs ...hlo.Attr) *hlo.Instruction {
	if b.err != nil {
		return nil
	}
	in := &hlo.Instruction{Name: b.names.Unique(op.String()), Opcode: op, Shape: s.Clone(), Operands: operands, Attrs: attrs}
	return b.addInstruction(in)
}

func nonNil(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}
