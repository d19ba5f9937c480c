package stablehlo

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// StableHLO's while, if and case regions may use values of the enclosing
// function; HLO computations capture nothing. Such values (other than
// constants, which are rebuilt inside) are passed in: appended to the
// while loop's state, or to the conditional's branch operand.

// freeValues lists, in first-use order, the values regions use but do not
// define, constants excepted.
func freeValues(regions []*mlir.Region) []*mlir.Value {
	defined := map[*mlir.Value]bool{}
	seen := map[*mlir.Value]bool{}
	var out []*mlir.Value
	var walk func(rs []*mlir.Region)
	walk = func(rs []*mlir.Region) {
		for _, r := range rs {
			for _, b := range r.Blocks {
				for _, a := range b.Args {
					defined[a] = true
				}
				for _, op := range b.Ops {
					for _, v := range op.Operands {
						if defined[v] || seen[v] || (v.Def != nil && v.Def.Name == "stablehlo.constant") {
							continue
						}
						seen[v] = true
						out = append(out, v)
					}
					walk(op.Regions)
					for _, v := range op.Results {
						defined[v] = true
					}
				}
			}
		}
	}
	walk(regions)
	return out
}

// tupleComp converts a one-block region into a computation taking one
// tuple parameter: the block's arguments are its first elements, the
// captured values the next ones. extra are appended to the root tuple
// (the captured values a loop body passes on); asTuple forces a tuple
// root even for one result.
func (s *scope) tupleComp(stem string, r *mlir.Region, param hlo.Shape, captured []*mlir.Value, passCaptures, asTuple bool) (*hlo.Computation, error) {
	if len(r.Blocks) != 1 {
		return nil, fmt.Errorf("region of %d blocks: %w", len(r.Blocks), ErrUnsupported)
	}
	b := r.Blocks[0]
	comp := s.c.newComp(stem)
	inner := newScope(s.c, comp, s)
	p := inner.param(0, param, "state")
	n := len(b.Args)
	if n+len(captured) != len(param.Tuple) {
		return nil, fmt.Errorf("region takes %d arguments and %d captured values, the state has %d", n, len(captured), len(param.Tuple))
	}
	for i, a := range b.Args {
		inner.vals[a] = inner.gte(p, i)
	}
	var passed []*hlo.Instruction
	for j, v := range captured {
		g := inner.gte(p, n+j)
		inner.vals[v] = g
		passed = append(passed, g)
	}
	res, err := inner.block(b)
	if err != nil {
		return nil, err
	}
	if passCaptures {
		res = append(res, passed...)
	}
	if asTuple || len(res) != 1 {
		comp.Root = inner.tuple(res)
	} else {
		comp.Root = res[0]
	}
	return comp, nil
}

func (s *scope) getAll(vs []*mlir.Value) ([]*hlo.Instruction, error) {
	out := make([]*hlo.Instruction, len(vs))
	for i, v := range vs {
		in, err := s.get(v)
		if err != nil {
			return nil, err
		}
		out[i] = in
	}
	return out, nil
}

func convertWhile(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	if len(op.Regions) != 2 {
		return nil, fmt.Errorf("want two regions, have %d", len(op.Regions))
	}
	ins, err := s.operands(op)
	if err != nil {
		return nil, err
	}
	captured := freeValues(op.Regions)
	capIns, err := s.getAll(captured)
	if err != nil {
		return nil, err
	}
	state := s.tuple(append(append([]*hlo.Instruction(nil), ins...), capIns...))
	cond, err := s.tupleComp("while_cond", op.Regions[0], state.Shape, captured, false, false)
	if err != nil {
		return nil, err
	}
	body, err := s.tupleComp("while_body", op.Regions[1], state.Shape, captured, true, true)
	if err != nil {
		return nil, err
	}
	w := s.add(hlo.OpWhile, state.Shape, []*hlo.Instruction{state},
		hlo.Attr{Name: "condition", Value: cond}, hlo.Attr{Name: "body", Value: body})
	out := make([]*hlo.Instruction, len(op.Results))
	for i := range out {
		out[i] = s.gte(w, i)
	}
	return out, nil
}

// conditional converts if and case: the selector, then one branch per
// region, each taking the tuple of the values the branches capture.
func conditional(s *scope, op *mlir.Op, selectorIsPred bool) ([]*hlo.Instruction, error) {
	if len(op.Operands) != 1 || len(op.Regions) == 0 {
		return nil, fmt.Errorf("want a selector and branches")
	}
	sel, err := s.get(op.Operands[0])
	if err != nil {
		return nil, err
	}
	captured := freeValues(op.Regions)
	capIns, err := s.getAll(captured)
	if err != nil {
		return nil, err
	}
	arg := s.tuple(capIns)
	branches := make([]*hlo.Computation, len(op.Regions))
	for i, r := range op.Regions {
		if branches[i], err = s.tupleComp("branch", r, arg.Shape, captured, false, true); err != nil {
			return nil, err
		}
	}
	shapes := make([]hlo.Shape, len(op.Results))
	for i := range op.Results {
		if shapes[i], err = resultShape(op, i); err != nil {
			return nil, err
		}
	}
	operands := []*hlo.Instruction{sel}
	for range branches {
		operands = append(operands, arg)
	}
	var attrs []hlo.Attr
	if selectorIsPred {
		attrs = []hlo.Attr{{Name: "true_computation", Value: branches[0]}, {Name: "false_computation", Value: branches[1]}}
	} else {
		attrs = []hlo.Attr{{Name: "branch_computations", Value: branches}}
	}
	c := s.add(hlo.OpConditional, hlo.TupleShape(shapes...), operands, attrs...)
	out := make([]*hlo.Instruction, len(op.Results))
	for i := range out {
		out[i] = s.gte(c, i)
	}
	return out, nil
}

func convertIf(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	if len(op.Regions) != 2 {
		return nil, fmt.Errorf("want two regions, have %d", len(op.Regions))
	}
	return conditional(s, op, true)
}

func convertCase(s *scope, op *mlir.Op) ([]*hlo.Instruction, error) {
	return conditional(s, op, false)
}
