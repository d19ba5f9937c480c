package graph

import (
	"fmt"
	"slices"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// Module is the whole model as one HLO module for the inputs' shapes:
// the graph inputs its parameters (in graph order, named after them), the
// graph outputs its result tuple (in graph order). It is what an
// ahead-of-time package compiles (`axle aot model.onnx`), so it exists
// only for a model whose every node runs in one compiled cluster: a node
// the compiled device refuses (a string op, a data-dependent shape, a
// random op), an input a lowering needs as a value (a Reshape's shape:
// the module would fix it), or an output the cluster does not compute
// (a constant) is an error naming it.
func Module(m *onnx.Model, inputs map[string]*onnx.Value) (*hlo.Module, error) {
	if err := checkOpsets(m); err != nil {
		return nil, err
	}
	cpuDev := &Device{Name: "cpu:0", Priority: 50, Compiled: true, Supports: cpuSupports}
	evalDev := &Device{Name: "eval:0", Priority: 10, Supports: evalSupports}
	p, err := newPlan(m.Graph, m.Opsets, []*Device{cpuDev, evalDev}, true, nil)
	if err != nil {
		return nil, prefix(m, err)
	}
	u, err := soleCluster(p)
	if err != nil {
		return nil, prefix(m, err)
	}
	g := m.Graph
	for _, vi := range g.Inputs {
		if inputs[vi.Name] == nil || inputs[vi.Name].Kind != onnx.KindTensor {
			return nil, fmt.Errorf("input %q: no tensor given for its shape", vi.Name)
		}
		if u.constArgs[vi.Name] == needValue {
			return nil, fmt.Errorf("input %q is read as a value by a lowering (a shape, an axis list): a compiled module would fix that value", vi.Name)
		}
	}
	// The graph's inputs and outputs in graph order, fed as parameters.
	one := &unit{id: u.id, nodes: u.nodes, dev: u.dev, constArgs: map[string]constNeed{}}
	for _, vi := range g.Inputs {
		if slices.Contains(u.inputs, vi.Name) {
			one.inputs = append(one.inputs, vi.Name)
		}
	}
	for _, vi := range g.Outputs {
		one.outputs = append(one.outputs, vi.Name)
	}
	var c compiled
	mod, err := buildCluster(p, one, inputs, moduleName(g.Name), &c, target{})
	if err != nil {
		return nil, prefix(m, err)
	}
	for _, vi := range g.Outputs {
		if _, ok := c.results[vi.Name]; !ok {
			return nil, fmt.Errorf("output %q is a constant of the model, not computed: nothing to compile for it", vi.Name)
		}
	}
	return mod, nil
}

// soleCluster is the plan's one unit when it is a compiled cluster
// holding every node; otherwise an error naming the first node elsewhere.
func soleCluster(p *plan) (*unit, error) {
	for i, d := range p.dev {
		if !d.Compiled {
			n := p.g.Nodes[i]
			return nil, fmt.Errorf("node %q (%s) runs on %s, not compiled: %s", n.Name, n.Op, d, p.why[i])
		}
	}
	if len(p.units) != 1 {
		return nil, fmt.Errorf("the nodes form %d clusters, not one (a path between them leaves the compiled device)", len(p.units))
	}
	return p.units[0], nil
}

// moduleName is the graph's name, or "model".
func moduleName(name string) string {
	if name == "" {
		return "model"
	}
	return name
}
