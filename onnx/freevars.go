package onnx

import "sort"

// Subgraphs are the node's subgraph attributes in a fixed order (GRAPH
// attributes by name, then GRAPHS attributes by name).
func (n *Node) Subgraphs() []*Graph {
	var out []*Graph
	keys := make([]string, 0, len(n.Graphs))
	for k := range n.Graphs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, n.Graphs[k])
	}
	keys = keys[:0]
	for k := range n.GraphLists {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, n.GraphLists[k]...)
	}
	return out
}

// FreeVars are the values g reads from enclosing scopes (outer-scope
// references of a subgraph), in first-use order.
func (g *Graph) FreeVars() []string {
	defined := map[string]bool{}
	for _, vi := range g.Inputs {
		defined[vi.Name] = true
	}
	for name := range g.Initializers {
		defined[name] = true
	}
	var out []string
	seen := map[string]bool{}
	use := func(v string) {
		if v != "" && !defined[v] && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			use(v)
		}
		for _, sub := range n.Subgraphs() {
			for _, v := range sub.FreeVars() {
				use(v)
			}
		}
		for _, o := range n.Outputs {
			if o != "" {
				defined[o] = true
			}
		}
	}
	for _, vi := range g.Outputs {
		use(vi.Name)
	}
	return out
}
