package graph

import "strconv"

// Placement is where a node of the main graph runs.
type Placement struct {
	Node    string // the node's name ("#N" for an unnamed node: its index)
	Op      string
	Device  string // "cpu:0", "eval:0"
	Cluster int    // the cluster's number, or -1 when the node runs op by op
	// Why holds the refusals of the devices preferred to Device (soft
	// placement), "" if it runs on its first choice.
	Why string
}

// Placements lists every node of the main graph with its device and
// cluster, in graph order.
func (s *Session) Placements() []Placement {
	p := s.plan
	out := make([]Placement, len(p.g.Nodes))
	for i, n := range p.g.Nodes {
		name := n.Name
		if name == "" {
			name = "#" + strconv.Itoa(i)
		}
		u := p.units[p.unitOf[i]]
		c := -1
		if u.dev.Compiled {
			c = u.id
		}
		out[i] = Placement{Node: name, Op: n.Op, Device: p.dev[i].Name, Cluster: c, Why: p.why[i]}
	}
	return out
}
