package opt

import (
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// MapInliner replaces map(x1..xn), to_apply=c by array-shaped copies of
// c's instructions (XLA's MapInliner, generalised from a single op to a
// whole scalar body), so a backend sees a plain elementwise chain it can
// fuse instead of a per-element call. It fires only when every
// instruction of c is a parameter, a constant or a scalar elementwise op:
// those mean the same thing applied to whole arrays. Anything else (calls,
// reductions, non-scalar values) leaves the map alone.
var MapInliner = pass.Func("map-inliner", runMapInliner)

func runMapInliner(m *hlo.Module) (bool, error) {
	names := hlo.NewNameSet(m)
	changed := false
	for _, c := range m.Computations {
		b := &builder{c: c, names: names}
		for _, in := range slices.Clone(c.Instructions) {
			if !inlinableMap(in) {
				continue
			}
			c.ReplaceAllUses(in, inlineMap(b, in))
			c.RemoveInstructions(map[*hlo.Instruction]bool{in: true})
			changed = true
		}
		if b.err != nil {
			return changed, b.err
		}
		if b.added {
			if err := c.SortTopologically(); err != nil {
				return changed, err
			}
		}
	}
	if changed {
		removeDeadComputations(m)
	}
	return changed, nil
}

// inlinableMap reports whether in is a map the inliner can expand: every
// dimension mapped in order, operands of the map's own dimensions and of
// the parameters' element types (the evaluator passes each element through
// unconverted), and a scalar elementwise body.
func inlinableMap(in *hlo.Instruction) bool {
	comp := in.Computation("to_apply")
	if in.Opcode != hlo.OpMap || comp == nil || len(in.ControlPredecessors) > 0 || !in.Shape.IsArray() {
		return false
	}
	dims, _ := in.Ints("dimensions")
	if len(dims) != in.Shape.Rank() {
		return false
	}
	for i, d := range dims {
		if d != int64(i) {
			return false
		}
	}
	if len(comp.Params) != len(in.Operands) {
		return false
	}
	for i, o := range in.Operands {
		p := comp.Params[i]
		if p == nil || !o.Shape.SameDims(in.Shape) || o.Shape.DType != p.Shape.DType {
			return false
		}
	}
	for _, x := range comp.Instructions {
		if !scalarElementwise(x) {
			return false
		}
	}
	return true
}

// scalarElementwise reports whether x, as an instruction of a mapped
// computation, has the same meaning on arrays: a parameter, a constant or
// an elementwise op, all on scalars. A scalar bitcast-convert keeps its
// width, so it is elementwise too.
func scalarElementwise(x *hlo.Instruction) bool {
	if !x.Shape.IsScalar() || len(x.ControlPredecessors) > 0 {
		return false
	}
	for _, o := range x.Operands {
		if !o.Shape.IsScalar() {
			return false
		}
	}
	switch {
	case x.Opcode == hlo.OpParameter, x.Opcode == hlo.OpConstant:
		return true
	case x.Opcode == hlo.OpBitcastConvert:
		return x.Operands[0].Shape.DType.Bits() == x.Shape.DType.Bits()
	}
	return x.Opcode.IsElementwise()
}

// inlineMap copies map's computation into map's computation, parameters
// bound to the map's operands, constants broadcast to the map's shape and
// every op given the map's shape with its own element type. It returns the
// copy of the root.
func inlineMap(b *builder, m *hlo.Instruction) *hlo.Instruction {
	comp := m.Computation("to_apply")
	copies := map[*hlo.Instruction]*hlo.Instruction{}
	for _, x := range comp.Instructions {
		switch x.Opcode {
		case hlo.OpParameter:
			copies[x] = m.Operands[x.ParamNumber]
		case hlo.OpConstant:
			copies[x] = b.mapConstant(x, m.Shape)
		default:
			operands := make([]*hlo.Instruction, len(x.Operands))
			for k, o := range x.Operands {
				operands[k] = copies[o]
			}
			copies[x] = b.c.AddInstruction(&hlo.Instruction{Name: b.names.Unique(x.Name), Opcode: x.Opcode,
				Shape: m.Shape.WithDType(x.Shape.DType), Operands: operands, Attrs: slices.Clone(x.Attrs)})
			b.added = true
		}
	}
	return copies[comp.Root]
}

// mapConstant copies the scalar constant x and broadcasts it to the map's
// shape (with x's element type), unless the map itself is a scalar.
func (b *builder) mapConstant(x *hlo.Instruction, s hlo.Shape) *hlo.Instruction {
	lit := x.Literal.Clone()
	k := b.c.AddInstruction(&hlo.Instruction{Name: b.names.Unique(x.Name), Opcode: hlo.OpConstant,
		Shape: x.Shape.Clone(), Literal: lit, Attrs: slices.Clone(x.Attrs)})
	b.added = true
	if s.Rank() == 0 {
		return k
	}
	bc := b.broadcast(k, s.Dims, nil)
	if bc != nil {
		bc.Shape = s.WithDType(x.Shape.DType)
	}
	return bc
}
