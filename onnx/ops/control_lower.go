package ops

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// lowerIf inlines the taken branch when the condition is known at compile
// time, and otherwise emits an HLO conditional whose operand is a tuple of
// the branches' free variables that are not compile-time constants.
func lowerIf(c *Ctx) error {
	if c.Sub == nil {
		return c.Unsupported("subgraphs cannot be lowered here")
	}
	thenG, elseG := c.Node.Graphs["then_branch"], c.Node.Graphs["else_branch"]
	if thenG == nil || elseG == nil {
		return c.Errorf("then_branch and else_branch are required")
	}
	if !c.Has(0) {
		return c.Errorf("the condition is required")
	}
	if t := c.In[0].Const; t != nil {
		cond, ok := ctlBool(t)
		if !ok {
			return c.Errorf("the condition must be a one-element tensor")
		}
		g := elseG
		if cond {
			g = thenG
		}
		outs, err := c.Sub.LowerSubgraph(c.B, g, nil, nil)
		if err != nil {
			return err
		}
		for i, v := range outs {
			if v == nil {
				return c.Unsupported("branch output %d is not a tensor", i)
			}
		}
		c.Out = outs
		return nil
	}
	// Free variables known at compile time resolve by name inside the
	// branches; the others become operands.
	var names []string
	var operands []*xb.Op
	for _, g := range []*[]string{ptr(thenG.FreeVars()), ptr(elseG.FreeVars())} {
		for _, name := range *g {
			if slices.Contains(names, name) {
				continue
			}
			v, ok := c.Sub.Lookup(name)
			if !ok {
				return c.Errorf("a branch reads %q, which is not defined", name)
			}
			if v.Const != nil {
				continue
			}
			op := v.In(c.B)
			if op == nil {
				return c.Unsupported("a branch reads %q, which has no HLO value", name)
			}
			names = append(names, name)
			operands = append(operands, op)
		}
	}
	pred := c.Input(0)
	if pred.Rank() != 0 {
		if numElems(pred.Dims()) != 1 {
			return c.Errorf("the condition must be a one-element tensor")
		}
		pred = xb.Reshape(pred)
	}
	if pred.DType() != hlo.Pred {
		pred = xb.Ne(pred, ScalarLike(pred, 0))
	}
	arg := c.B.Tuple(operands...)
	var firstErr error
	var thenShapes []hlo.Shape
	branch := func(g *graphRef, record bool) xb.Body {
		return func(sb *xb.Builder, x *xb.Op) *xb.Op {
			caps := map[string]*Val{}
			for i, name := range names {
				caps[name] = FromOp(xb.GetTupleElement(x, i))
			}
			outs, err := c.Sub.LowerSubgraph(sb, g.g, nil, caps)
			if err == nil && len(outs) != len(c.Node.Outputs) {
				err = c.Unsupported("branch %q gives %d outputs, the node has %d", g.g.Name, len(outs), len(c.Node.Outputs))
			}
			var ops []*xb.Op
			var shapes []hlo.Shape
			for i, v := range outs {
				if err != nil {
					break
				}
				op := v.In(sb)
				if op == nil {
					err = c.Unsupported("branch output %d is not a numeric tensor", i)
					break
				}
				ops = append(ops, op)
				shapes = append(shapes, op.Shape())
			}
			if err == nil {
				if record {
					thenShapes = shapes
				} else {
					for i := range shapes {
						if i >= len(thenShapes) || !shapes[i].Equal(thenShapes[i]) {
							err = c.Unsupported("the branches' output %d shapes differ", i)
							break
						}
					}
				}
			}
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return sb.Tuple()
			}
			return sb.Tuple(ops...)
		}
	}
	res := xb.Cond(pred, arg, branch(&graphRef{thenG}, true), arg, branch(&graphRef{elseG}, false))
	if firstErr != nil {
		return firstErr
	}
	if err := c.B.Err(); err != nil {
		return fmt.Errorf("%s: %v: %w", c.Node.Describe(), err, ErrUnsupported)
	}
	for i := range c.Node.Outputs {
		c.Set(i, xb.GetTupleElement(res, i))
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

type graphRef struct{ g *onnx.Graph }
