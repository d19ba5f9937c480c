package graph

import (
	"fmt"
	"io"
)

// logPlan prints each node's device and cluster, as TensorFlow's
// log_device_placement does, then each cluster's size.
func (s *Session) logPlan(w io.Writer, p *plan, indent string) {
	for i, n := range p.g.Nodes {
		u := p.units[p.unitOf[i]]
		where := u.String()
		if !u.dev.Compiled {
			where = "op by op"
		}
		fmt.Fprintf(w, "%s%s: %s, %s", indent, n.Describe(), p.dev[i], where)
		if p.why[i] != "" {
			fmt.Fprintf(w, " (soft placement: %s)", p.why[i])
		}
		fmt.Fprintln(w)
	}
	for _, u := range p.units {
		if u.dev.Compiled {
			fmt.Fprintf(w, "%s%s on %s: %d nodes, %d inputs (%d by value), %d outputs\n", indent, u, u.dev, len(u.nodes), len(u.inputs), len(u.constArgs), len(u.outputs))
		}
	}
}
