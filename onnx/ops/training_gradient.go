package ops

import (
	"slices"

	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/xb"
)

// Gradient (ai.onnx.preview.training) differentiates the node's own graph:
// the gradient of the value named by attribute y with respect to the
// values named by xs (zs are further inputs held fixed), as the
// vector-Jacobian product with a seed of ones. The nodes from the xs to y
// are lowered again, unfolded, over the node's inputs (the xs then the
// zs), and differentiated with xb's automatic differentiation. The values
// those nodes read besides the xs and zs must be in the node's cluster's
// scope (initializers, graph inputs, or values of the cluster): the
// planner does not yet count them as the node's inputs.
func init() {
	Register(Op{Name: "Gradient", Domain: "ai.onnx.preview.training", Lower: lowerGradient})
}

func lowerGradient(c *Ctx) error {
	xs, zs, y := c.Node.Strs("xs"), c.Node.Strs("zs"), c.Node.Str("y", "")
	if y == "" || len(xs) == 0 {
		return c.Errorf("needs attributes xs and y")
	}
	if len(c.In) != len(xs)+len(zs) {
		return c.Errorf("%d inputs, attributes name %d xs and %d zs", len(c.In), len(xs), len(zs))
	}
	l, ok := c.Sub.(*Lowerer)
	if !ok || c.Node.Graph == nil {
		return c.Unsupported("differentiating needs the node's graph")
	}
	nodes := gradientPath(c.Node.Graph, y, append(slices.Clone(xs), zs...))
	sub := &Lowerer{Opsets: l.Opsets, Env: NewEnv(l.Env), NoFold: true}
	wrt := make([]*xb.Op, len(xs))
	for i, name := range append(slices.Clone(xs), zs...) {
		if !c.Has(i) {
			return c.Errorf("input %d (%s) is required", i, name)
		}
		// A fresh op per x, so that y depends on it and on nothing folded.
		op := xb.Copy(c.Input(i))
		sub.Env.Set(name, FromOp(op))
		if i < len(xs) {
			wrt[i] = op
		}
	}
	if err := sub.LowerNodes(c.B, nodes); err != nil {
		return err
	}
	yv, ok := sub.Env.Get(y)
	if !ok {
		return c.Errorf("y %q was not computed", y)
	}
	yo := yv.In(c.B)
	seed := FullLike(yo, 1)
	for i, g := range xb.VJP(yo, seed, wrt...) {
		c.Set(i, g)
	}
	return nil
}

// gradientPath lists, in graph order, the nodes of g that y depends on
// through values not in stop.
func gradientPath(g *onnx.Graph, y string, stop []string) []*onnx.Node {
	producer := map[string]*onnx.Node{}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			producer[o] = n
		}
	}
	need := map[*onnx.Node]bool{}
	var visit func(v string)
	visit = func(v string) {
		if slices.Contains(stop, v) {
			return
		}
		n, ok := producer[v]
		if !ok || need[n] {
			return
		}
		need[n] = true
		for _, in := range n.Inputs {
			if in != "" {
				visit(in)
			}
		}
	}
	visit(y)
	var out []*onnx.Node
	for _, n := range g.Nodes {
		if need[n] {
			out = append(out, n)
		}
	}
	return out
}
