package hlo

import "fmt"

// InferShape computes the result shape of in from its opcode, operands and
// attributes (XLA's ShapeInference). Shapes get default layouts.
func InferShape(in *Instruction) (Shape, error) {
	ops := in.Operands
	switch {
	case in.Opcode == OpTuple:
		elems := make([]Shape, len(ops))
		for i, o := range ops {
			elems[i] = o.Shape
		}
		return TupleShape(elems...), nil
	case in.Opcode == OpGetTupleElement:
		idx, _ := in.Int("index")
		if len(ops) != 1 || !ops[0].Shape.IsTuple() || idx < 0 || int(idx) >= len(ops[0].Shape.Tuple) {
			return Shape{}, fmt.Errorf("bad get-tuple-element")
		}
		return ops[0].Shape.Tuple[idx].Clone(), nil
	case in.Opcode == OpCompare:
		if len(ops) != 2 {
			return Shape{}, fmt.Errorf("compare needs 2 operands")
		}
		return withDefaultLayout(ops[0].Shape.WithDType(Pred)), nil
	case in.Opcode.IsElementwise() && len(ops) > 0:
		for _, o := range ops {
			if o.Shape.Rank() > 0 {
				return withDefaultLayout(o.Shape.Clone()), nil
			}
		}
		return withDefaultLayout(ops[0].Shape.Clone()), nil
	}
	return Shape{}, fmt.Errorf("the shape of %s cannot be inferred; write it", in.Opcode)
}

func withDefaultLayout(s Shape) Shape {
	s.SetDefaultLayout()
	return s
}
